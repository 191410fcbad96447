"""``memory.link``: a named, directed link from one note to another of its project."""

from __future__ import annotations

from local_mcp_memory.application.links import LinkNotes, link_notes
from local_mcp_memory.application.services import Services, at
from local_mcp_memory.domain.identifiers import NoteId
from local_mcp_memory.domain.link import LinkKey, Relation
from local_mcp_memory.entrypoints.methods import wire
from local_mcp_memory.entrypoints.methods.method import Method

RELATIONS = (
    "relation: lower case letters and underscores, 1-32 (e.g. supersedes, relates_to, depends_on, "
    "contradicts, implements)."
)


class LinkParams(wire.Params):
    from_id: str
    to_id: str
    relation: str

    def key(self) -> LinkKey:
        return LinkKey(at("from_id", NoteId, self.from_id), at("to_id", NoteId, self.to_id), at("relation", Relation, self.relation))

    def command(self) -> LinkNotes:
        return LinkNotes(self.key())


def run(params: LinkParams, services: Services) -> wire.OkResult:
    link_notes(params.command(), services)
    return wire.OkResult(ok=True)


METHOD = Method(
    name="memory.link",
    params=LinkParams,
    result=wire.OkResult,
    run=run,
    title="Link two notes",
    description=(
        f"Link a note to another of the same project (e.g. a decision that supersedes an old one). {RELATIONS} "
        "Linking twice is one link."
    ),
    idempotent=True,
)
