from __future__ import annotations

import attrs

from local_mcp_memory.application.redaction import mask_url
from local_mcp_memory.application.services import Services


@attrs.frozen
class ConfigView:
    """The effective configuration, without any secret: no API key, and the base URL with
    its userinfo masked (``http://***@host/v1``)."""

    provider: str
    model: str
    dim: int | None
    base_url: str | None
    store_type: str
    store_path: str | None
    config_path: str
    data_dir: str
    store_url: str | None = None


def get_config(services: Services) -> ConfigView:
    embedder = services.embedding.settings
    runtime = services.runtime
    return ConfigView(
        provider=embedder.provider,
        model=embedder.effective_model,
        dim=embedder.dim,
        base_url=_masked(embedder.effective_base_url),
        store_type=runtime.store_type,
        store_path=None if runtime.store_url else runtime.data_dir,
        config_path=runtime.config_path,
        data_dir=runtime.data_dir,
        store_url=runtime.store_url,
    )


def _masked(url: str | None) -> str | None:
    return None if url is None else mask_url(url)
