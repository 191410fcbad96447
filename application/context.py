"""Session context: what an agent should know of a project when a session starts."""

from __future__ import annotations

from typing import ClassVar

import attrs

from local_mcp_memory.application.context_markdown import Budget, Page, render
from local_mcp_memory.application.errors import InvalidRequest
from local_mcp_memory.application.ports import Hit, StoredNote
from local_mcp_memory.application.search import SearchNotes, search
from local_mcp_memory.application.services import Services
from local_mcp_memory.domain.identifiers import GroupId, Namespace
from local_mcp_memory.domain.note import NoteFilter


@attrs.frozen
class GetContext:
    project_id: str
    group_id: GroupId | None = None
    query: str | None = None
    limit: int | None = None

    DEFAULT_LIMIT: ClassVar[int] = 20
    MAX_LIMIT: ClassVar[int] = 100

    def __attrs_post_init__(self) -> None:
        if self.limit is not None and not 1 <= self.limit <= self.MAX_LIMIT:
            raise InvalidRequest("limit", f"must be an integer in 1..{self.MAX_LIMIT}", self.limit)
        if self.query is not None:
            SearchNotes(self.project_id, self.query)  # the same rules as a search's query

    @property
    def relevant_share(self) -> int:
        """With a query, half the limit (the larger half) goes to the most relevant notes."""
        limit = self.limit or self.DEFAULT_LIMIT
        return 0 if self.query is None else limit - limit // 2

    @property
    def recent_share(self) -> int:
        return (self.limit or self.DEFAULT_LIMIT) - self.relevant_share


@attrs.frozen
class SessionContext:
    """``text``: the markdown (``context_markdown.render``); ``items``: the notes it shows,
    in the order it shows them."""

    namespace: Namespace
    text: str
    items: list[StoredNote]


def get_context(command: GetContext, services: Services) -> SessionContext:
    namespace, page = _gather(command, services)
    return SessionContext(namespace or services.embedding.namespace(), page.text, page.items)


def context_text(command: GetContext, services: Services) -> str:
    """``get_context``'s text alone: without a query nothing is embedded, not even to learn
    the namespace (the command line prints this at every session start)."""
    return _gather(command, services)[1].text


def _gather(command: GetContext, services: Services) -> tuple[Namespace | None, Page]:
    project = services.project(command.project_id)
    now = services.clock.now()
    settings = list(services.maintenance.iter_globals(project))
    share = command.recent_share
    recent = services.reader.list_recent(NoteFilter(project, command.group_id, now=now), share) if share else []
    relevant: list[Hit] = []
    namespace = None
    if command.query is not None:
        # asked for as many as the limit, so that notes already listed as recent can be skipped
        ask = SearchNotes(command.project_id, command.query, command.group_id, top_k=command.recent_share + command.relevant_share)
        found = search(ask, services)
        listed = {s.note.id for s in recent}
        relevant = [hit for hit in found.hits if hit.stored.note.id not in listed][: command.relevant_share]
        namespace = found.namespace
    return namespace, render(project, command.group_id, command.query, settings, recent, relevant, Budget())
