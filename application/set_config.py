from __future__ import annotations

from typing import Any

import attrs

from local_mcp_memory.application.errors import InvalidRequest
from local_mcp_memory.application.services import Services
from local_mcp_memory.application.settings import PROVIDERS, EmbedderSettings
from local_mcp_memory.domain.identifiers import Namespace

UNCHANGED: Any = type("Unchanged", (), {"__repr__": lambda self: "UNCHANGED"})()


@attrs.frozen
class SetEmbedder:
    """A change of the live embedder: fields left ``UNCHANGED`` keep their value, ``None``
    resets ``model`` or ``base_url`` to the provider's default and removes a stored
    ``api_key``. A new provider resets model and base URL unless they are given too."""

    provider: Any = UNCHANGED
    model: Any = UNCHANGED
    base_url: Any = UNCHANGED
    api_key: Any = attrs.field(default=UNCHANGED, repr=False)

    def __attrs_post_init__(self) -> None:
        if self.provider is not UNCHANGED and self.provider not in PROVIDERS:
            raise InvalidRequest("embedder.provider", f"must be one of {', '.join(PROVIDERS)}", self.provider)
        for field, value in (("embedder.model", self.model), ("embedder.api_key", self.api_key)):
            if value not in (UNCHANGED, None) and not value.strip():
                raise InvalidRequest(field, "must be a non-blank string or null")
        if self.base_url not in (UNCHANGED, None) and not self.base_url.startswith(("http://", "https://")):
            raise InvalidRequest("embedder.base_url", "must start with http:// or https://", self.base_url)

    def applied_to(self, settings: EmbedderSettings) -> EmbedderSettings:
        if self.provider is not UNCHANGED and self.provider != settings.provider:
            settings = attrs.evolve(settings, provider=self.provider, model=None, base_url=None)
        given = {"model": self.model, "base_url": self.base_url, "api_key": self.api_key}
        return attrs.evolve(settings, **{k: v for k, v in given.items() if v is not UNCHANGED})


@attrs.frozen
class SetConfig:
    embedder: SetEmbedder | None = None


def set_config(command: SetConfig, services: Services) -> Namespace:
    """Probe the new embedder once, then persist it; a failed probe changes nothing."""
    change = command.embedder
    if change is None:
        return services.embedding.namespace()
    return services.embedding.switch(change.applied_to)
