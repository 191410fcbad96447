from __future__ import annotations

from typing import ClassVar, Literal

import attrs

from application.errors import InvalidRequest
from application.ports import Hit
from application.ranking import HYBRID_KEYWORD_WEIGHT, blend, keyword_scores, similarity_scores
from application.services import Services
from domain.identifiers import GroupId, Namespace
from domain.note import NoteFilter, Tags
from domain.time import TimeWindow

Mode = Literal["semantic", "keyword", "hybrid"]
MODES: tuple[Mode, ...] = ("semantic", "keyword", "hybrid")
DEFAULT_MODE: Mode = "hybrid"
HYBRID_DEPTH = 50  # candidates taken from each ranking before blending, at least


@attrs.frozen
class SearchNotes:
    project_id: str
    query: str
    group_id: GroupId | None = None
    top_k: int = 5
    tags: Tags = Tags()
    window: TimeWindow = TimeWindow()
    mode: Mode = DEFAULT_MODE

    MAX_TOP_K: ClassVar[int] = 100
    QUERY_MAX: ClassVar[int] = 10_000

    def __attrs_post_init__(self) -> None:
        if not 1 <= self.top_k <= self.MAX_TOP_K:
            raise InvalidRequest("topK", f"must be an integer in 1..{self.MAX_TOP_K}", self.top_k)
        if not self.query.strip():
            raise InvalidRequest("query", "must be a non-blank string", self.query)
        if len(self.query) > self.QUERY_MAX:
            raise InvalidRequest("query", f"must be at most {self.QUERY_MAX} characters", len(self.query))
        if self.mode not in MODES:
            raise InvalidRequest("mode", f"must be one of {', '.join(MODES)}", self.mode)


@attrs.frozen
class SearchResults:
    namespace: Namespace
    hits: list[Hit]


def search(command: SearchNotes, services: Services) -> SearchResults:
    where = NoteFilter(
        services.project(command.project_id), command.group_id, command.tags, command.window
    )
    k = command.top_k
    if command.mode == "keyword":
        hits = keyword_scores(services.store.keyword_search(command.query, where, k))
        return SearchResults(services.embedding.namespace(), hits)
    namespace, (vector,) = services.embedding.embed([command.query], "query")
    if command.mode == "semantic":
        return SearchResults(namespace, similarity_scores(services.store.search(namespace, vector, where, k)))
    depth = max(k * 4, HYBRID_DEPTH)
    semantic = similarity_scores(services.store.search(namespace, vector, where, depth))
    keyword = keyword_scores(services.store.keyword_search(command.query, where, depth))
    return SearchResults(namespace, blend(semantic, keyword, HYBRID_KEYWORD_WEIGHT, depth)[:k])
