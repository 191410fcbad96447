"""``memory.drop_namespace``: remove an older namespace's vectors once no note calls it home."""

from __future__ import annotations

from local_mcp_memory.application.drop_namespace import DropNamespace, drop_namespace
from local_mcp_memory.application.services import Services
from local_mcp_memory.entrypoints.methods import wire
from local_mcp_memory.entrypoints.methods.method import Method


class DropNamespaceParams(wire.Params):
    namespace: str

    def command(self) -> DropNamespace:
        return DropNamespace(wire.namespace(self.namespace, "namespace"))


class DropNamespaceResult(wire.View):
    ok: bool
    namespace: str
    dropped: int


def run(params: DropNamespaceParams, services: Services) -> DropNamespaceResult:
    command = params.command()
    dropped = drop_namespace(command, services)
    return DropNamespaceResult(ok=True, namespace=str(command.namespace), dropped=dropped)


METHOD = Method(
    name="memory.drop_namespace",
    params=DropNamespaceParams,
    result=DropNamespaceResult,
    run=run,
    title="Drop an old model's vectors",
    description=(
        "Remove the vectors of an old namespace (\"provider:model:dim\") that no note calls home any "
        "more, after memory_reembed. Only when the user asks."
    ),
    destructive=True,
    idempotent=True,
)
