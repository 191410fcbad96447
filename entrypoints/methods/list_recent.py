"""``memory.list_recent``: the newest notes of a project, newest first."""

from __future__ import annotations

from local_mcp_memory.application.get_note import superseded_by
from local_mcp_memory.application.list_recent import ListRecent, list_recent
from local_mcp_memory.application.services import Services
from local_mcp_memory.entrypoints.methods import wire
from local_mcp_memory.entrypoints.methods.method import Method


class ListRecentParams(wire.Params):
    project_id: str
    group_id: str | None = None
    limit: int | None = None
    tags: list[str] | None = None
    include_superseded: bool | None = None

    def command(self) -> ListRecent:
        return ListRecent(
            project_id=self.project_id,
            group_id=wire.group_or_none(self.group_id),
            limit=self.limit,
            tags=wire.tags(self.tags),
            include_superseded=bool(self.include_superseded),
        )


class ListRecentResult(wire.View):
    namespace: str
    items: list[wire.StoredNoteView]


def run(params: ListRecentParams, services: Services) -> ListRecentResult:
    command = params.command()
    recent = list_recent(command, services)
    if command.include_superseded:
        items = [wire.stored_view(s, superseded_by(s.note.id, services)) for s in recent.items]
    else:
        items = [wire.stored_view(s) for s in recent.items]
    return ListRecentResult(namespace=str(recent.namespace), items=items)


METHOD = Method(
    name="memory.list_recent",
    params=ListRecentParams,
    result=ListRecentResult,
    run=run,
    title="List recent notes",
    description=(
        "The newest notes of the project, newest first (optionally of one groupId, with all the given tags): "
        "what was recorded lately, when there is no specific question to search for. "
        f"limit: 1..{ListRecent.MAX_LIMIT}, default {ListRecent.DEFAULT_LIMIT}."
    ),
    left_out=(
        "call memory_list_recent again with a smaller limit, a groupId or tags; memory_get with an id "
        "returns one whole note"
    ),
    read_only=True,
    idempotent=True,
)
