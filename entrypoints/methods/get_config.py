"""``memory.get_config``: the effective configuration, never a secret; the default
transport is the edge's to report (``entrypoints.build_defaults``)."""

from __future__ import annotations

from msgspec import UNSET, UnsetType

from local_mcp_memory.application.get_config import ConfigView, get_config
from local_mcp_memory.application.services import Services
from local_mcp_memory.entrypoints.methods import wire
from local_mcp_memory.entrypoints.build_defaults import DEFAULT_TRANSPORT
from local_mcp_memory.entrypoints.methods.method import Method


class TransportDefaultsView(wire.View):
    default_transport: str


class EmbedderView(wire.View):
    provider: str
    model: str
    dim: int | None
    base_url: str | UnsetType = UNSET


class StoreView(wire.View):
    type: str
    path: str | UnsetType = UNSET
    url: str | UnsetType = UNSET


class PathsView(wire.View):
    config_path: str
    data_dir: str


class ConfigResult(wire.View):
    transport_defaults: TransportDefaultsView
    embedder: EmbedderView
    store: StoreView
    paths: PathsView


def config_view(config: ConfigView) -> ConfigResult:
    return ConfigResult(
        transport_defaults=TransportDefaultsView(default_transport=DEFAULT_TRANSPORT),
        embedder=EmbedderView(
            provider=config.provider,
            model=config.model,
            dim=config.dim,
            base_url=config.base_url if config.base_url is not None else UNSET,
        ),
        store=StoreView(
            type=config.store_type,
            path=config.store_path if config.store_path is not None else UNSET,
            url=config.store_url if config.store_url is not None else UNSET,
        ),
        paths=PathsView(config_path=config.config_path, data_dir=config.data_dir),
    )


def run(params: wire.NoParams, services: Services) -> ConfigResult:
    return config_view(get_config(services))


METHOD = Method(
    name="memory.get_config",
    params=wire.NoParams,
    result=ConfigResult,
    run=run,
    title="Show the server's configuration",
    description=(
        "Show the server's configuration: the embedder (provider, model, dimension), the store, the "
        "config and data paths, and the default transport. Never shows an API key."
    ),
    read_only=True,
    idempotent=True,
)
