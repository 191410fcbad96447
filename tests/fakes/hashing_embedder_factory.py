"""An ``EmbedderFactory`` for tests: every setting gets a ``HashingEmbedder``.

The embedder reports the requested provider and model, so namespaces change with the
settings exactly as they do with real embedders.
"""

from __future__ import annotations

from application.settings import EmbedderSettings
from tests.fakes.hashing_embedder import HashingEmbedder


class HashingEmbedderFactory:
    def __init__(self, dim: int = 64) -> None:
        self.dim = dim

    def create(self, settings: EmbedderSettings) -> HashingEmbedder:
        return HashingEmbedder(self.dim, provider=settings.provider, model=settings.effective_model)
