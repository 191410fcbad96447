"""``memory.add_note``: store one note; answers its id and namespace."""

from __future__ import annotations

from typing import Any

from msgspec import UNSET, UnsetType

from local_mcp_memory.application.add_note import AddNote, add_note
from local_mcp_memory.application.services import Services
from local_mcp_memory.domain.note import IMPORTANCE_DEFAULT
from local_mcp_memory.entrypoints.methods import wire
from local_mcp_memory.entrypoints.methods.method import Method


class AddNoteParams(wire.Params):
    project_id: str
    group_id: str
    text: str
    title: str | None = None
    tags: list[str] | None = None
    source: str | None = None
    created_at: str | None = None
    metadata: dict[str, Any] | None = None
    expires_at: str | None = None
    importance: float | None = None
    supersedes: list[str] | None = None

    def command(self) -> AddNote:
        return AddNote(
            project_id=self.project_id,
            group_id=wire.group(self.group_id),
            text=self.text,
            title=self.title,
            tags=wire.tags(self.tags),
            source=self.source,
            created_at=wire.instant(self.created_at, "created_at"),
            metadata=self.metadata,
            expires_at=wire.instant(self.expires_at, "expires_at"),
            importance=IMPORTANCE_DEFAULT if self.importance is None else self.importance,
            supersedes=wire.note_ids(self.supersedes, "supersedes"),
        )


class AddNoteResult(wire.View):
    """``duplicate`` is present (true) only when the note was not written because a live
    note of the project and group holds the same text; ``id`` is that note's.
    ``possiblySupersedes``: ids of older notes of the project the new note likely replaces
    (always present, possibly empty; empty for a duplicate)."""

    id: str
    namespace: str
    possibly_supersedes: list[str]
    duplicate: bool | UnsetType = UNSET


def run(params: AddNoteParams, services: Services) -> AddNoteResult:
    added = add_note(params.command(), services)
    return AddNoteResult(
        id=added.id.value,
        namespace=str(added.namespace),
        possibly_supersedes=[i.value for i in added.possibly_supersedes],
        duplicate=True if added.duplicate else UNSET,
    )


METHOD = Method(
    name="memory.add_note",
    params=AddNoteParams,
    result=AddNoteResult,
    run=run,
    title="Store a note",
    description=(
        "Store one note so that later sessions find it: a decision and its reason, a convention, a non-obvious "
        "fix, a finding, a summary at the end of a task. One short self-contained fact (readable without this "
        "conversation), with a title and a few tags. Never store secrets. Answers the new note's id, or with "
        "duplicate: true the id of a stored note that already says exactly this (nothing is written). "
        "possiblySupersedes names older notes (at most two) this one may replace: check each with memory_get and, "
        "if it is really obsolete, pass its id in supersedes (memory_update of the new note) so it leaves search "
        "and recall."
    ),
)
