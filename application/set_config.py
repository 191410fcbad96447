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
        if self.model not in (UNCHANGED, None) and (len(self.model) > MODEL_MAX or not self.model.isprintable()):
            # the model's name is part of every note's namespace
            raise InvalidRequest("embedder.model", f"must be at most {MODEL_MAX} printable characters", self.model)
        if self.api_key not in (UNCHANGED, None) and (len(self.api_key) > API_KEY_MAX or not self.api_key.isprintable()):
            raise InvalidRequest("embedder.api_key", f"must be at most {API_KEY_MAX} printable characters")  # never echoed
        if self.base_url not in (UNCHANGED, None):
            problem = base_url_problem(self.base_url)
            if problem:
                raise InvalidRequest("embedder.base_url", problem, self.base_url)

    def applied_to(self, settings: EmbedderSettings) -> EmbedderSettings:
        if self.provider is not UNCHANGED and self.provider != settings.provider:
            settings = attrs.evolve(settings, provider=self.provider, model=None, base_url=None)
        given = {"model": self.model, "base_url": self.base_url, "api_key": self.api_key}
        return attrs.evolve(settings, **{k: v for k, v in given.items() if v is not UNCHANGED})


MODEL_MAX = 256
"""The longest model name taken: Ollama's and OpenAI's are a few dozen characters."""
API_KEY_MAX = 4096
"""The longest API key taken: OpenAI's are under 200 characters."""
BASE_URL_MAX = 2048
"""The longest base URL taken: a host name has 253 characters at most."""


def base_url_problem(url: str) -> str | None:
    """The rule ``url`` breaks as an embedder's base URL, or None: http or https, a host, a
    port in 1..65535 when one is given, brackets closed around an IPv6 address."""
    from urllib.parse import urlsplit

    if len(url) > BASE_URL_MAX:
        return f"must be at most {BASE_URL_MAX} characters"
    if not url.startswith(("http://", "https://")):
        return "must start with http:// or https://"
    try:
        parts = urlsplit(url)
        port = parts.port  # ValueError for a port that is no number or beyond 65535
    except ValueError as exc:
        return f"must be a URL ({exc})"
    if not parts.hostname:
        return "must name a host"
    if port == 0:
        return "must have a port in 1..65535"
    return None


@attrs.frozen
class SetConfig:
    embedder: SetEmbedder | None = None


def set_config(command: SetConfig, services: Services) -> Namespace:
    """Probe the new embedder once, then persist it; a failed probe changes nothing."""
    change = command.embedder
    if change is None:
        return services.embedding.namespace()
    return services.embedding.switch(change.applied_to)
