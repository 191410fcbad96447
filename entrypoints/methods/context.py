"""``memory.context``: what to know of a project at the start of a session, as markdown."""

from __future__ import annotations

from local_mcp_memory.application.context import GetContext, get_context
from local_mcp_memory.application.context_markdown import Budget
from local_mcp_memory.application.services import Services
from local_mcp_memory.entrypoints.methods import wire
from local_mcp_memory.entrypoints.methods.texts import PROJECT
from local_mcp_memory.entrypoints.methods.method import Method


class ContextParams(wire.Params):
    project_id: str
    group_id: str | None = None
    query: str | None = None
    limit: int | None = None

    def command(self) -> GetContext:
        return GetContext(
            project_id=self.project_id,
            group_id=wire.group_or_none(self.group_id),
            query=self.query,
            limit=self.limit,
        )


class ContextResult(wire.View):
    namespace: str
    text: str
    items: list[wire.StoredNoteView]


def run(params: ContextParams, services: Services) -> ContextResult:
    context = get_context(params.command(), services)
    return ContextResult(
        namespace=str(context.namespace), text=context.text, items=[wire.stored_view(s) for s in context.items]
    )


METHOD = Method(
    name="memory.context",
    params=ContextParams,
    result=ContextResult,
    run=run,
    title="Session context of a project",
    description=(
        "One markdown page of what to know before working on a project: its global settings (conventions, "
        "recommended embedder, group prefixes), its newest notes and, with query, the notes most relevant to "
        "it, each note listed once with its id. Call it once at the start of a session; use memory_search "
        "for a specific question. groupId narrows the notes, not the settings. limit counts notes in total, "
        f"1..{GetContext.MAX_LIMIT}, default {GetContext.DEFAULT_LIMIT}; with query the larger half goes to "
        f"the relevant ones. The page has at most {Budget().total:,} characters: long notes are cut with "
        "\"…\" (memory_get with the id returns one whole) and notes that no longer fit are left out. "
        f"items holds the notes shown, in the page's order. {PROJECT}"
    ),
    left_out=(
        "call memory_context again with a smaller limit or a groupId; memory_get with an id returns one whole note"
    ),
    read_only=True,
    idempotent=True,
)
