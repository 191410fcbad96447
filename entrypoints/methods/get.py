"""``memory.get``: one note by id, whole, with its home namespace."""

from __future__ import annotations

from local_mcp_memory.application.get_note import GetNote, get_note, superseded_by
from local_mcp_memory.application.services import Services
from local_mcp_memory.entrypoints.methods import wire
from local_mcp_memory.entrypoints.methods.method import Method


class GetParams(wire.Params):
    id: str

    def command(self) -> GetNote:
        return GetNote(wire.note_id(self.id))


def run(params: GetParams, services: Services) -> wire.StoredNoteView:
    command = params.command()
    return wire.stored_view(get_note(command, services), superseded_by(command.id, services))


METHOD = Method(
    name="memory.get",
    params=GetParams,
    result=wire.StoredNoteView,
    run=run,
    title="Read one note",
    description=(
        "Read one whole note by its id (search and list results shorten long texts); supersededBy names newer notes replacing it."
    ),
    left_out=(
        "the note is too long for one tool result; `mcp-memory export` or the memory.get JSON-RPC method "
        "give it whole"
    ),
    read_only=True,
    idempotent=True,
)
