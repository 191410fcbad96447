"""``OpenAIEmbedder``: the OpenAI embeddings API, or any server that speaks it.

``POST {base_url}/embeddings`` with ``{"model", "input": [...]}`` and a bearer key; up to
``batch_size`` texts per request, answers reordered by their ``index``. Works with
OpenAI-compatible servers (vLLM, LM Studio, llama.cpp, LiteLLM, ...) through ``base_url``;
those that need no key get none (``require_key=False``).

The key is used for the ``Authorization`` header only: never logged, never in a message
or in ``repr``, and masked in the provider's error texts. Retries and error mapping: ``adapters.embedders.remote``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence

import httpx
import msgspec
import numpy as np

from local_mcp_memory.application.errors import EmbedderNotConfigured, EmbedderRejected
from local_mcp_memory.application.ports import EmbedKind
from local_mcp_memory.application.redaction import mask_url
from local_mcp_memory.adapters.embedders.remote import Backoff, EmbeddingHttp, Hints, standins, unit_rows

PROVIDER = "openai"
KEY_HINT = "set OPENAI_API_KEY or memory.set_config {embedder:{apiKey}}"


class _Item(msgspec.Struct):
    embedding: list[float]
    index: int = -1


class _Answer(msgspec.Struct):
    data: list[_Item]


_DECODER = msgspec.json.Decoder(_Answer)


class OpenAIEmbedder:
    """Vectors from ``{base_url}/embeddings``: float32, shape ``(n, dim)``, L2-normalized."""

    def __init__(
        self,
        client: httpx.Client,
        *,
        api_key: str | None,
        model: str = "text-embedding-3-small",
        base_url: str = "https://api.openai.com/v1",
        require_key: bool = True,
        batch_size: int = 256,
        timeout: httpx.Timeout = httpx.Timeout(60.0, connect=5.0),
        backoff: Backoff = Backoff(),
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self._api_key = api_key
        self._model = model
        self._url = base_url.rstrip("/") + "/embeddings"
        self._require_key = require_key
        self._batch_size = batch_size
        self._dim: int | None = None
        hints = Hints(
            unreachable="check your network, or embedder.baseUrl for an OpenAI-compatible server",
            auth=f"check the key: {KEY_HINT}",
            not_found=f"check embedder.model ({model!r}) and embedder.baseUrl",
        )
        self._http = EmbeddingHttp(
            client, PROVIDER, hints, timeout=timeout, backoff=backoff, sleep=sleep, rng=rng, secrets=(api_key,)
        )

    def __repr__(self) -> str:
        return f"OpenAIEmbedder(model={self._model!r}, url={mask_url(self._url)!r}, key={'set' if self._api_key else 'unset'})"

    @property
    def provider(self) -> str:
        return PROVIDER

    @property
    def model(self) -> str:
        return self._model

    def embed(self, texts: Sequence[str], kind: EmbedKind = "passage") -> np.ndarray:
        if self._require_key and not self._api_key:
            raise EmbedderNotConfigured(PROVIDER, f"the openai embedder needs an API key: {KEY_HINT}")
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        chunks = [
            self._embed_batch(list(texts[start : start + self._batch_size]), headers)
            for start in range(0, len(texts), self._batch_size)
        ]
        return np.concatenate(chunks) if chunks else np.empty((0, self._dim or 0), dtype=np.float32)

    def _embed_batch(self, batch: list[str], headers: dict[str, str]) -> np.ndarray:
        response = self._http.post(self._url, {"model": self._model, "input": standins(batch)}, headers)
        items = self._http.decode(self._url, response, _DECODER).data
        if len(items) != len(batch):
            raise EmbedderRejected(PROVIDER, response.status_code, f"{mask_url(self._url)} returned {len(items)} vectors for {len(batch)} texts")
        if all(item.index >= 0 for item in items):
            items = sorted(items, key=lambda item: item.index)
        vectors = unit_rows([item.embedding for item in items], PROVIDER, f"{PROVIDER}:{self._model}", self._dim)
        self._dim = vectors.shape[1]
        return vectors
