"""``memory.get_global``: a project's global setting by key (``found`` false when never set)."""

from __future__ import annotations

from typing import Any

from local_mcp_memory.application.get_global import GetGlobal, get_global
from local_mcp_memory.application.services import Services, at
from local_mcp_memory.application.upsert_global import KV_NAMESPACE
from local_mcp_memory.domain.identifiers import GlobalKey
from local_mcp_memory.domain.time import format_instant
from local_mcp_memory.entrypoints.methods import wire
from local_mcp_memory.entrypoints.methods.texts import PROJECT, STANDARD_KEYS
from local_mcp_memory.entrypoints.methods.method import Method


class GetGlobalParams(wire.Params):
    project_id: str
    key: str

    def command(self) -> GetGlobal:
        return GetGlobal(self.project_id, at("key", GlobalKey, self.key))


class GetGlobalResult(wire.View):
    namespace: str
    found: bool
    id: str | None
    value: Any
    updated_at: str | None


def run(params: GetGlobalParams, services: Services) -> GetGlobalResult:
    entry = get_global(params.command(), services)
    if entry is None:
        return GetGlobalResult(namespace=KV_NAMESPACE, found=False, id=None, value=None, updated_at=None)
    return GetGlobalResult(
        namespace=KV_NAMESPACE,
        found=True,
        id=entry.id,
        value=entry.value,
        updated_at=format_instant(entry.updated_at),
    )


METHOD = Method(
    name="memory.get_global",
    params=GetGlobalParams,
    result=GetGlobalResult,
    run=run,
    title="Read a global setting",
    description=(
        "Read a project-wide setting by key (found is false when it was never set). Read "
        "\"global.project.conventions\" at the start of work on a project, and the embedder keys before "
        f"suggesting an embedder. {STANDARD_KEYS} {PROJECT}"
    ),
    left_out=(
        "the value is too long for one tool result; `mcp-memory export` or the memory.get_global JSON-RPC "
        "method give it whole"
    ),
    read_only=True,
    idempotent=True,
)
