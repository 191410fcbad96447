"""``memory.search``: notes of a project ranked by meaning, words or both."""

from __future__ import annotations

from local_mcp_memory.application.get_note import superseded_by
from local_mcp_memory.application.search import Mode, SearchNotes, search
from local_mcp_memory.application.services import Services, at
from local_mcp_memory.domain.time import TimeWindow
from local_mcp_memory.entrypoints.methods import wire
from local_mcp_memory.entrypoints.methods.method import Method


class SearchParams(wire.Params):
    """``mode``: "hybrid" (the default: keyword and meaning blended), "semantic" (meaning
    only) or "keyword" (BM25 only); null or absent means the default."""

    project_id: str
    query: str
    group_id: str | None = None
    top_k: int | None = None
    tags: list[str] | None = None
    since: str | None = None
    until: str | None = None
    mode: Mode | None = None
    include_superseded: bool | None = None

    def command(self) -> SearchNotes:
        window = at("since", TimeWindow, wire.instant(self.since, "since"), wire.instant(self.until, "until"))
        optional = {"top_k": self.top_k, "mode": self.mode}
        return SearchNotes(
            project_id=self.project_id,
            query=self.query,
            group_id=wire.group_or_none(self.group_id),
            tags=wire.tags(self.tags),
            window=window,
            include_superseded=bool(self.include_superseded),
            **{k: v for k, v in optional.items() if v is not None},
        )


class SearchResult(wire.View):
    namespace: str
    results: list[wire.HitView]


def run(params: SearchParams, services: Services) -> SearchResult:
    command = params.command()
    found = search(command, services)
    if command.include_superseded:
        views = [wire.hit_view(h, superseded_by(h.stored.note.id, services)) for h in found.hits]
    else:
        views = [wire.hit_view(h) for h in found.hits]
    return SearchResult(namespace=str(found.namespace), results=views)


METHOD = Method(
    name="memory.search",
    params=SearchParams,
    result=SearchResult,
    run=run,
    title="Search notes by meaning",
    description=(
        "Find stored notes by meaning and by exact words. Call it at the start of a task and before deciding "
        "anything an earlier session may have settled (conventions, architecture, past bugs). query: a short "
        "description of what you need. groupId narrows to one topic; tags: only notes carrying all of them; "
        "since/until: ISO 8601 UTC bounds on createdAt. mode: \"hybrid\" (default), \"semantic\" (meaning only, "
        f"for paraphrases) or \"keyword\" (exact words: a function name, an error code). topK: 1..{SearchNotes.MAX_TOP_K}, "
        "default 5. Best first, score 0..1. Superseded notes only with includeSuperseded. Long texts are shortened: memory_get returns the whole note."
    ),
    left_out=(
        "call memory_search again with a smaller topK or a narrower groupId or tags; memory_get with an id "
        "returns one whole note"
    ),
    read_only=True,
    idempotent=True,
)
