"""An ``EmbedderFactory`` for tests: every setting gets a ``HashingEmbedder``.

The embedder reports the requested provider and model, so namespaces change with the
settings exactly as they do with real embedders. A provider the server does not know is
refused with ``EmbedderNotConfigured``, as ``DefaultEmbedderFactory`` refuses it.
"""

from __future__ import annotations

from local_mcp_memory.application.errors import EmbedderNotConfigured
from local_mcp_memory.application.settings import EmbedderSettings
from tests.fakes.hashing_embedder import HashingEmbedder


class HashingEmbedderFactory:
    def __init__(self, dim: int = 64) -> None:
        self.dim = dim

    def create(self, settings: EmbedderSettings) -> HashingEmbedder:
        if settings.provider not in EmbedderSettings.DEFAULT_MODELS:
            raise EmbedderNotConfigured(settings.provider, f"unknown embedder provider {settings.provider!r}")
        return HashingEmbedder(self.dim)
