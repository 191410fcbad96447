from __future__ import annotations

from typing import Any

import attrs

from application.errors import InvalidRequest
from application.services import Services
from application.settings import PROVIDERS
from domain.identifiers import Namespace

UNCHANGED: Any = type("Unchanged", (), {"__repr__": lambda self: "UNCHANGED"})()


@attrs.frozen
class SetEmbedder:
    """A change of the live embedder: fields left ``UNCHANGED`` keep their value, ``None``
    resets model or baseUrl to the provider's default and removes a stored apiKey.
    A new provider resets model and baseUrl unless they are given too."""

    provider: Any = UNCHANGED
    model: Any = UNCHANGED
    base_url: Any = UNCHANGED
    api_key: Any = attrs.field(default=UNCHANGED, repr=False)

    def __attrs_post_init__(self) -> None:
        if self.provider is not UNCHANGED and self.provider not in PROVIDERS:
            raise InvalidRequest("embedder.provider", f"must be one of {', '.join(PROVIDERS)}", self.provider)
        for field, value in (("embedder.model", self.model), ("embedder.apiKey", self.api_key)):
            if value not in (UNCHANGED, None) and not value.strip():
                raise InvalidRequest(field, "must be a non-blank string or null")
        if self.base_url not in (UNCHANGED, None) and not self.base_url.startswith(("http://", "https://")):
            raise InvalidRequest("embedder.baseUrl", "must start with http:// or https://", self.base_url)


@attrs.frozen
class SetConfig:
    embedder: SetEmbedder | None = None


def set_config(command: SetConfig, services: Services) -> Namespace:
    """Probe the new embedder once, then persist it; a failed probe changes nothing."""
    change = command.embedder
    if change is None:
        return services.embedding.namespace()
    wanted = services.embedding.settings
    if change.provider is not UNCHANGED and change.provider != wanted.provider:
        wanted = attrs.evolve(wanted, provider=change.provider, model=None, base_url=None)
    given = {k: getattr(change, k) for k in ("model", "base_url", "api_key")}
    wanted = attrs.evolve(wanted, **{k: v for k, v in given.items() if v is not UNCHANGED})
    return services.embedding.switch(wanted)
