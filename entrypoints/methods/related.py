"""``memory.related``: the notes linked to or from one note, newest link first."""

from __future__ import annotations

from typing import Literal

from local_mcp_memory.application.links import GetRelated, RelatedNote, related
from local_mcp_memory.application.services import Services, at
from local_mcp_memory.domain.link import Relation
from local_mcp_memory.entrypoints.methods import wire
from local_mcp_memory.entrypoints.methods.method import Method


class RelatedParams(wire.Params):
    id: str
    relation: str | None = None

    def command(self) -> GetRelated:
        relation = None if self.relation is None else at("relation", Relation, self.relation)
        return GetRelated(wire.note_id(self.id), relation)


class RelatedView(wire.View):
    id: str
    relation: str
    direction: Literal["out", "in"]
    note: wire.StoredNoteView


class RelatedResult(wire.View):
    items: list[RelatedView]


def related_view(found: RelatedNote) -> RelatedView:
    return RelatedView(
        id=found.stored.note.id.value,
        relation=found.relation.value,
        direction=found.direction,
        note=wire.stored_view(found.stored),
    )


def run(params: RelatedParams, services: Services) -> RelatedResult:
    return RelatedResult(items=[related_view(r) for r in related(params.command(), services)])


METHOD = Method(
    name="memory.related",
    params=RelatedParams,
    result=RelatedResult,
    run=run,
    title="Notes linked to a note",
    description=(
        "The notes linked to or from a note, newest link first, optionally of one relation; direction out: "
        "this note links to the other. Follows a decision to what replaced it or what it relates to."
    ),
    left_out="the newest links come first; memory_get reads a listed note whole",
    read_only=True,
    idempotent=True,
)
