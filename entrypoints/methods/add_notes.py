"""``memory.add_notes``: store a batch of notes, all or none; answers their ids in order."""

from __future__ import annotations

from local_mcp_memory.application.add_note import AddNote
from local_mcp_memory.application.add_notes import AddNotes, add_notes
from local_mcp_memory.application.services import Services
from local_mcp_memory.domain.errors import InvalidValue
from local_mcp_memory.entrypoints.methods import wire
from local_mcp_memory.entrypoints.methods.texts import GROUPS, PROJECT
from local_mcp_memory.entrypoints.methods.add_note import AddNoteParams
from local_mcp_memory.entrypoints.methods.method import Method


class AddNotesParams(wire.Params):
    """Up to ``AddNotes.MAX_NOTES`` notes, each shaped like ``memory.add_note``'s params."""

    notes: list[AddNoteParams]

    def command(self) -> AddNotes:
        return AddNotes(tuple(_item(i, note) for i, note in enumerate(self.notes)))


def _item(index: int, note: AddNoteParams) -> AddNote:
    try:
        return note.command()
    except InvalidValue as exc:
        raise exc.at(f"notes[{index}]") from None


class AddNotesResult(wire.View):
    """``duplicates``: the indexes of the entries that were not written because a live note
    (or an earlier entry) of their project and group holds the same text; their id is that note's.
    ``possiblySupersedes``: per entry, in order, ids of older stored notes of its project it likely
    replaces, as ``memory.add_note`` answers them (possibly empty; empty for a duplicate)."""

    ids: list[str]
    namespace: str
    duplicates: list[int]
    possibly_supersedes: list[list[str]]


def run(params: AddNotesParams, services: Services) -> AddNotesResult:
    added = add_notes(params.command(), services)
    return AddNotesResult(
        ids=[i.value for i in added.ids],
        namespace=str(added.namespace),
        duplicates=added.duplicates,
        possibly_supersedes=[[i.value for i in named] for named in added.possibly_supersedes],
    )


METHOD = Method(
    name="memory.add_notes",
    params=AddNotesParams,
    result=AddNotesResult,
    run=run,
    title="Store several notes",
    description=(
        f"Store several notes at once (1..{AddNotes.MAX_NOTES}), each shaped like memory_add_note's arguments; use it "
        f"to save a batch of findings or an imported list. {GROUPS} {PROJECT} Returns the ids in order; "
        "duplicates lists the indexes of notes not written because a stored note already says exactly the same "
        "(their id is that note's); possiblySupersedes names, per note, older notes it may replace: check them "
        "with memory_get and pass the really obsolete ones in supersedes through memory_update."
    ),
    left_out=(
        "every note was stored, only this list of their ids was cut; memory_list_recent lists the newest "
        "notes with their ids"
    ),
)
