"""``memory.unlink``: remove one link; says whether there was one."""

from __future__ import annotations

from local_mcp_memory.application.links import UnlinkNotes, unlink_notes
from local_mcp_memory.application.services import Services
from local_mcp_memory.entrypoints.methods import wire
from local_mcp_memory.entrypoints.methods.link import RELATIONS, LinkParams
from local_mcp_memory.entrypoints.methods.method import Method


class UnlinkResult(wire.View):
    ok: bool
    removed: bool


def run(params: LinkParams, services: Services) -> UnlinkResult:
    return UnlinkResult(ok=True, removed=unlink_notes(UnlinkNotes(params.key()), services))


METHOD = Method(
    name="memory.unlink",
    params=LinkParams,
    result=UnlinkResult,
    run=run,
    title="Remove a link",
    description=(
        "Remove the link from fromId to toId with this relation (the notes stay). "
        f"{RELATIONS} removed says whether there was such a link."
    ),
    destructive=True,
    idempotent=True,
)
