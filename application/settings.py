"""The user's settings, as the use cases see them (the file format is the adapter's)."""

from __future__ import annotations

from typing import ClassVar

import attrs

PROVIDERS = ("local", "openai", "ollama")


@attrs.frozen
class EmbedderSettings:
    """Which embedder runs. ``model``/``base_url`` None: the provider's default.

    ``api_key`` is the one stored in the config file; the environment's
    ``OPENAI_API_KEY`` wins over it and is never copied into the file.
    ``dims`` records the dimension learned for each ``provider:model``.
    """

    provider: str = "local"
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = attrs.field(default=None, repr=False)
    dims: dict[str, int] = attrs.field(factory=dict)

    DEFAULT_MODELS: ClassVar[dict[str, str]] = {
        "local": "all-MiniLM-L6-v2",
        "openai": "text-embedding-3-small",
        "ollama": "nomic-embed-text",
    }
    DEFAULT_BASE_URLS: ClassVar[dict[str, str]] = {
        "openai": "https://api.openai.com/v1",
        "ollama": "http://localhost:11434",
    }

    @property
    def effective_model(self) -> str:
        return self.model or self.DEFAULT_MODELS.get(self.provider, "")

    @property
    def effective_base_url(self) -> str | None:
        return self.base_url or self.DEFAULT_BASE_URLS.get(self.provider)

    @property
    def model_key(self) -> str:
        return f"{self.provider}:{self.effective_model}"

    @property
    def dim(self) -> int | None:
        return self.dims.get(self.model_key)


@attrs.frozen
class Settings:
    """What the use cases read and change. The stored file may hold more, for the other
    layers: a repository keeps it as it is."""

    embedder: EmbedderSettings = EmbedderSettings()
