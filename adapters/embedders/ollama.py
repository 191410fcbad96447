"""``OllamaEmbedder``: a local or remote Ollama server.

``POST {base_url}/api/embed`` with ``{"model", "input": [...]}`` (Ollama >= 0.3.4). Servers
older than that answer it with a plain-text 404; the embedder then uses
``POST {base_url}/api/embeddings`` with ``{"model", "prompt"}``, one text per request, and
keeps doing so. A JSON 404 (``{"error": "model ... not found"}``) means the model is not
pulled: ``EmbedderNotConfigured`` saying ``ollama pull <model>``.

The dimension is whatever the model answers (nomic-embed-text: 768). The first load of a
model into Ollama can take a while, hence the long read timeout. Retries and error
mapping: ``adapters.embedders.remote``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence

import httpx
import msgspec
import numpy as np
import structlog

from local_mcp_memory.application.errors import EmbedderRejected
from local_mcp_memory.application.ports import EmbedKind
from local_mcp_memory.application.redaction import mask_url
from local_mcp_memory.adapters.embedders.remote import Backoff, EmbeddingHttp, Hints, standins, unit_rows

log = structlog.get_logger()

PROVIDER = "ollama"


class _Embed(msgspec.Struct):
    embeddings: list[list[float]]


class _LegacyEmbedding(msgspec.Struct):
    embedding: list[float]


_EMBED = msgspec.json.Decoder(_Embed)
_LEGACY = msgspec.json.Decoder(_LegacyEmbedding)


class OllamaEmbedder:
    """Vectors from Ollama: float32, shape ``(n, dim)``, L2-normalized."""

    def __init__(
        self,
        client: httpx.Client,
        *,
        model: str = "nomic-embed-text",
        base_url: str = "http://localhost:11434",
        batch_size: int = 32,
        timeout: httpx.Timeout = httpx.Timeout(120.0, connect=5.0),
        backoff: Backoff = Backoff(),
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self._model = model
        self._base = base_url.rstrip("/")
        self._batch_size = batch_size
        self._legacy = False
        self._dim: int | None = None
        hints = Hints(
            unreachable="is Ollama running? start it with `ollama serve`, or set embedder.baseUrl",
            auth="check the proxy or server in front of Ollama at embedder.baseUrl",
            not_found=f"pull the model with `ollama pull {model}`, or check embedder.model and embedder.baseUrl",
        )
        self._http = EmbeddingHttp(client, PROVIDER, hints, timeout=timeout, backoff=backoff, sleep=sleep, rng=rng)

    def __repr__(self) -> str:
        return f"OllamaEmbedder(model={self._model!r}, base_url={mask_url(self._base)!r})"

    @property
    def provider(self) -> str:
        return PROVIDER

    @property
    def model(self) -> str:
        return self._model

    def embed(self, texts: Sequence[str], kind: EmbedKind = "passage") -> np.ndarray:
        chunks = [
            self._embed_batch(standins(texts[start : start + self._batch_size]))
            for start in range(0, len(texts), self._batch_size)
        ]
        return np.concatenate(chunks) if chunks else np.empty((0, self._dim or 0), dtype=np.float32)

    def _embed_batch(self, batch: list[str]) -> np.ndarray:
        rows = self._legacy_rows(batch) if self._legacy else self._rows(batch)
        vectors = unit_rows(rows, PROVIDER, f"{PROVIDER}:{self._model}", self._dim)
        self._dim = vectors.shape[1]
        return vectors

    def _rows(self, batch: list[str]) -> list[list[float]]:
        url = f"{self._base}/api/embed"
        response = self._http.post(url, {"model": self._model, "input": batch})
        if response.status_code == 404 and not _is_json(response):
            log.info("ollama_legacy_endpoint", reason="/api/embed answered 404; using /api/embeddings")
            self._legacy = True
            return self._legacy_rows(batch)
        rows = self._http.decode(url, response, _EMBED).embeddings
        if len(rows) != len(batch):
            raise EmbedderRejected(PROVIDER, response.status_code, f"{mask_url(url)} returned {len(rows)} vectors for {len(batch)} texts")
        return rows

    def _legacy_rows(self, batch: list[str]) -> list[list[float]]:
        url = f"{self._base}/api/embeddings"
        return [
            self._http.decode(url, self._http.post(url, {"model": self._model, "prompt": text}), _LEGACY).embedding
            for text in batch
        ]


def _is_json(response: httpx.Response) -> bool:
    return response.headers.get("content-type", "").startswith("application/json")
