from __future__ import annotations

from typing import ClassVar

import attrs

from local_mcp_memory.application.errors import InvalidRequest
from local_mcp_memory.application.ports import StoredNote
from local_mcp_memory.application.services import Services
from local_mcp_memory.domain.identifiers import GroupId, Namespace
from local_mcp_memory.domain.note import NoteFilter, Tags


@attrs.frozen
class ListRecent:
    project_id: str
    group_id: GroupId | None = None
    limit: int | None = None
    tags: Tags = Tags()
    include_superseded: bool = False

    DEFAULT_LIMIT: ClassVar[int] = 20
    MAX_LIMIT: ClassVar[int] = 200

    def __attrs_post_init__(self) -> None:
        if self.limit is not None and not 1 <= self.limit <= self.MAX_LIMIT:
            raise InvalidRequest("limit", f"must be an integer in 1..{self.MAX_LIMIT}", self.limit)


@attrs.frozen
class RecentNotes:
    namespace: Namespace
    items: list[StoredNote]


def list_recent(command: ListRecent, services: Services) -> RecentNotes:
    where = NoteFilter(
        services.project(command.project_id),
        command.group_id,
        command.tags,
        now=services.clock.now(),
        include_superseded=command.include_superseded,
    )
    items = services.reader.list_recent(where, command.limit or command.DEFAULT_LIMIT)
    return RecentNotes(services.embedding.namespace(), items)
