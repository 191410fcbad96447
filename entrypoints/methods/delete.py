"""``memory.delete``: remove a note and its vectors."""

from __future__ import annotations

from local_mcp_memory.application.delete_note import DeleteNote, delete_note
from local_mcp_memory.application.services import Services
from local_mcp_memory.entrypoints.methods import wire
from local_mcp_memory.entrypoints.methods.method import Method


class DeleteParams(wire.Params):
    id: str

    def command(self) -> DeleteNote:
        return DeleteNote(wire.note_id(self.id))


def run(params: DeleteParams, services: Services) -> wire.OkResult:
    delete_note(params.command(), services)
    return wire.OkResult(ok=True)


# A second delete of an id answers -32004 (not found) and changes nothing further, so the
# call is idempotent in MCP's sense: repeating it has no additional effect.
METHOD = Method(
    name="memory.delete",
    params=DeleteParams,
    result=wire.OkResult,
    run=run,
    title="Delete a note",
    description=(
        "Delete one note by id: only when it is wrong or the user asks (to correct one, memory_update)."
    ),
    destructive=True,
    idempotent=True,
)
