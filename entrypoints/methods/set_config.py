"""``memory.set_config``: switch the live embedder (probed first; a failed probe changes
nothing); answers the namespace now in effect."""

from __future__ import annotations

from msgspec import UNSET, UnsetType

from local_mcp_memory.application.services import Services
from local_mcp_memory.application.set_config import UNCHANGED, SetConfig, SetEmbedder, set_config
from local_mcp_memory.entrypoints.methods import wire
from local_mcp_memory.entrypoints.methods.method import Method


class EmbedderParams(wire.Params):
    provider: str | UnsetType = UNSET
    model: str | None | UnsetType = UNSET
    base_url: str | None | UnsetType = UNSET
    api_key: str | None | UnsetType = UNSET


class SetConfigParams(wire.Params):
    embedder: EmbedderParams | None = None

    def command(self) -> SetConfig:
        if self.embedder is None:
            return SetConfig()
        given = {f: getattr(self.embedder, f) for f in EmbedderParams.__struct_fields__}
        return SetConfig(SetEmbedder(**{k: UNCHANGED if v is UNSET else v for k, v in given.items()}))


class SetConfigResult(wire.View):
    ok: bool
    effective_namespace: str


def run(params: SetConfigParams, services: Services) -> SetConfigResult:
    namespace = set_config(params.command(), services)
    return SetConfigResult(ok=True, effective_namespace=str(namespace))


METHOD = Method(
    name="memory.set_config",
    params=SetConfigParams,
    result=SetConfigResult,
    run=run,
    title="Change the embedder",
    description=(
        "Change the embedder (provider \"local\", \"openai\" or \"ollama\"; model; baseUrl; apiKey). "
        "Only do this when the user asks: a new provider or model starts a new namespace, and notes "
        "stored under the old one are not found until re-embedded (memory_reembed)."
    ),
    destructive=True,
    idempotent=True,
)
