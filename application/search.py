from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import ClassVar, Literal

import attrs

from application.errors import InvalidRequest
from application.ports import Hit, StoredNote
from application.ranking import (
    CONTEXT_SEEDS,
    HYBRID_KEYWORD_WEIGHT,
    SPREAD_SAMPLE,
    blend,
    calibrated_scores,
    keyword_scores,
    similarity_scores,
    with_context,
)
from application.services import Services
from domain.identifiers import GroupId, Namespace
from domain.note import NoteFilter, Tags
from domain.time import TimeWindow

Mode = Literal["semantic", "keyword", "hybrid"]
MODES: tuple[Mode, ...] = ("semantic", "keyword", "hybrid")
DEFAULT_MODE: Mode = "hybrid"
HYBRID_DEPTH = 30  # candidates taken from each ranking before blending, at least (20-50 measure alike)


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
            raise InvalidRequest("top_k", f"must be an integer in 1..{self.MAX_TOP_K}", self.top_k)
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
    return SearchResults(namespace, _hybrid(command.query, vector, namespace, where, k, services))


def _hybrid(
    query: str, vector: Sequence[float], namespace: Namespace, where: NoteFilter, k: int, services: Services
) -> list[Hit]:
    """Keyword and calibrated meaning blended, then the best hits' neighbours (``ranking``)."""
    depth = max(k, HYBRID_DEPTH)  # not more for a larger topK: its first results stay the same
    spread = services.store.similarity_spread(namespace, vector, where, SPREAD_SAMPLE)
    semantic = calibrated_scores(services.store.search(namespace, vector, where, depth), spread)
    keyword = keyword_scores(services.store.keyword_search(query, where, depth))
    fused = blend(semantic, keyword, HYBRID_KEYWORD_WEIGHT, depth)
    seeds = [h.stored.note.id for h in fused[:CONTEXT_SEEDS]]
    adjacent = services.store.adjacent(seeds, where)
    known = {h.stored.note.id.value for h in fused}
    unscored = {s.note.id.value: s for near in adjacent.values() for s in near}  # one each, if two seeds share it
    fetched = [s for key, s in unscored.items() if key not in known]
    if fetched:
        exact = calibrated_scores([Hit(s, _cosine(services, s, namespace, vector)) for s in fetched], spread)
        fused = blend(semantic, keyword, HYBRID_KEYWORD_WEIGHT, depth, exact)
    links = {seed.value: [s.note.id.value for s in near] for seed, near in adjacent.items()}
    return with_context(fused, links)[:k]


def _cosine(services: Services, stored: StoredNote, namespace: Namespace, query: Sequence[float]) -> float:
    """The cosine of a note's vector in ``namespace`` with ``query`` (both unit length); -1
    (the lowest) for a note that has none there."""
    vector = services.store.vector(stored.note.id, namespace)
    return -1.0 if vector is None else float(sum(map(operator.mul, query, vector)))
