from __future__ import annotations

import functools
from collections import ChainMap
from collections.abc import Mapping, Sequence
from typing import ClassVar, Literal

import attrs

from local_mcp_memory.application import tool_kinds
from local_mcp_memory.application.errors import InvalidRequest
from local_mcp_memory.application.ports import Candidate, CandidateQuery, Candidates, Hit, PendingVector, StoredNote
from local_mcp_memory.application.query_dates import asks_about_past, named_period
from local_mcp_memory.application.query_names import names_known
from local_mcp_memory.application.ranking import (
    ANSWER_DEPTH,
    ANSWER_SHARED,
    CHANGED_Z,
    CONTEXT_SEEDS,
    FAR_LIFT_Z,
    HYBRID_KEYWORD_WEIGHT,
    NEWER_WINDOW,
    PAST_CHANGED_Z,
    PAST_SUBJECT_Z,
    SPREAD_SAMPLE,
    SUBJECT_Z,
    UNNAMED_KEYWORD_SHARE,
    asks_something,
    blend,
    brought_up,
    calibrated_neighbours,
    calibrated_scores,
    dated,
    keyword_scores,
    newer_first,
    similarity_scores,
    weighted,
    with_context,
)
from local_mcp_memory.application.services import Services
from local_mcp_memory.application.suggestions import UPDATE_CUE, shared_values, values_added, values_changed
from local_mcp_memory.domain.identifiers import GroupId, Namespace, NoteId
from local_mcp_memory.domain.note import NoteFilter, Tags
from local_mcp_memory.domain.time import TimeWindow

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
    include_superseded: bool = False

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
    """The notes found are recorded as read (``fading``)."""
    results = _search(command, services)
    services.reads.saw(hit.stored.note for hit in results.hits)
    return results


def _search(command: SearchNotes, services: Services) -> SearchResults:
    where = NoteFilter(
        services.project(command.project_id),
        command.group_id,
        command.tags,
        command.window,
        services.clock.now(),
        include_superseded=command.include_superseded,
    )
    k = command.top_k
    if command.mode == "keyword":
        found = services.reader.candidates(CandidateQuery(where, k, text=command.query))
        return SearchResults(services.embedding.namespace(), _hits(keyword_scores(found.keyword), found.notes))
    # the store reads what needs no vector (the filter, the keyword candidates) beside the query's embedding
    with services.embedding.query_vector(command.query) as vector:
        namespace = vector.namespace
        if command.mode == "semantic":
            found = services.reader.candidates(CandidateQuery(where, k, namespace, vector))
            return SearchResults(namespace, _hits(similarity_scores(found.semantic), found.notes))
        return SearchResults(namespace, _hybrid(command.query, vector, namespace, where, k, services))


def _hybrid(
    query: str, vector: PendingVector, namespace: Namespace, where: NoteFilter, k: int, services: Services
) -> list[Hit]:
    """Keyword and calibrated meaning blended, the period the query names, the best hits'
    neighbours, then the newer of two results about one subject first (``ranking``). For a
    query that names nothing the keyword hits name too (``query_names``), keywords weigh
    ``UNNAMED_KEYWORD_SHARE`` of their weight and no neighbour lends context."""
    depth = max(k, HYBRID_DEPTH)  # not more for a larger topK: its first results stay the same
    found = services.reader.candidates(CandidateQuery(where, depth, namespace, vector, query, SPREAD_SAMPLE))
    semantic = calibrated_scores(found.semantic, found.spread)
    keyword = keyword_scores(found.keyword)
    period = named_period(query)
    notes: Mapping[str, StoredNote] = found.notes  # and the seeds' neighbours' once known

    importance: dict[str, float] = {}  # each note's, read once though the candidates are ranked twice

    def prior(ranked: list[Candidate]) -> list[Candidate]:
        for c in ranked:
            if c.id not in importance:
                importance[c.id] = notes[c.id].note.importance
        return weighted(ranked, importance)

    named = names_known(query, (notes[c.id].note.text for c in found.keyword if c.id in notes))
    weight = HYBRID_KEYWORD_WEIGHT if named else HYBRID_KEYWORD_WEIGHT * UNNAMED_KEYWORD_SHARE
    fused = prior(dated(blend(semantic, keyword, weight, depth), period))
    # the neighbours of the seeds only (those of every candidate were most of the database's time)
    seeds = [seed.id for seed in fused[:CONTEXT_SEEDS]]
    context = services.reader.neighbours(seeds, where, namespace, vector.result()) if seeds else Candidates()
    links = {seed: context.neighbours.get(seed, ()) for seed in seeds}
    notes = ChainMap(found.notes, context.notes)
    known = {c.id for c in fused}
    # one each, if two seeds share a neighbour
    unscored = {n.id: n for near in links.values() for n in near if n.id not in known} if named else {}
    if unscored:
        exact = calibrated_neighbours(unscored.values(), found.spread)
        fused = prior(dated(blend(semantic, keyword, weight, depth, exact), period))
    adjacent = {seed: [n.id for n in near] for seed, near in links.items()}
    ranked = with_context(fused, adjacent if named else {}, limit=max(k, NEWER_WINDOW))
    if period is None:  # a question about a named period wants what was true then
        ranked = _newer_first(query, ranked, adjacent, namespace, notes, services)
    return _hits(ranked[:k], notes)


def _newer_first(
    query: str,
    ranked: list[Candidate],
    adjacent: dict[str, list[str]],
    namespace: Namespace,
    notes: Mapping[str, StoredNote],
    services: Services,
) -> list[Candidate]:
    """``ranking.newer_first`` over the ``NEWER_WINDOW`` best, whatever the topK (so that its
    first results stay the same), with their cosines (one store read) and, where it decides
    a pair, whether a note speaks of a change (``UPDATE_CUE``: a costly pattern, asked rarely)
    or the two name other values of one kind (``values_changed``, for a question about the
    present). A question about the past (``asks_about_past``) needs two notes more plainly
    about one subject (``PAST_SUBJECT_Z``) than one about the present; for one about the
    present, the best results first bring up their likely updates from the rest of the
    window (``ranking.brought_up``; a note that ends with a question mark states nothing; a
    newer note naming the older one's values and a number, version or path more counts too:
    ``values_added``), and two of the very best answers need less to be one subject
    (``ranking.ANSWER_DEPTH``) when they name other values than most of the window does
    (``shared_values``). Two neighbours in a group are a question and its answer, never a
    pair, only when one of them asks something (holds a "?")."""
    window = ranked[:NEWER_WINDOW]
    cosines = services.maintenance.cosines([NoteId(c.id) for c in window], namespace)

    def changed(note_id: str) -> bool:
        return UPDATE_CUE.search(notes[note_id].note.text) is not None

    def other_values(newer: str, older: str) -> bool:
        return values_changed(notes[newer].note.text, notes[older].note.text)

    def lifted_values(newer: str, older: str) -> bool:
        return other_values(newer, older) or values_added(notes[newer].note.text, notes[older].note.text)

    @functools.cache
    def window_values() -> frozenset[str]:  # read once, and only if a pair asks
        return shared_values((notes[c.id].note.text for c in window), ANSWER_SHARED)

    def answer_values(newer: str, older: str) -> bool:
        return values_changed(notes[newer].note.text, notes[older].note.text, window_values())

    def states(note_id: str) -> bool:
        return not notes[note_id].note.text.rstrip().endswith("?")

    def asks(note_id: str) -> bool:
        return asks_something(notes[note_id].note.text)

    def rivals(newer: str, older: str) -> bool:
        return tool_kinds.rivals(notes[newer].note.text, notes[older].note.text)

    if asks_about_past(query):
        ordered = newer_first(window, cosines, adjacent, changed, PAST_SUBJECT_Z, PAST_CHANGED_Z, asks=asks)
    else:
        window = brought_up(window, cosines, adjacent, lifted_values, states, far_subject=FAR_LIFT_Z, asks=asks)
        ordered = newer_first(
            window,
            cosines,
            adjacent,
            changed,
            SUBJECT_Z,
            CHANGED_Z,
            values_changed=other_values,
            answer_depth=ANSWER_DEPTH,
            answer_values=answer_values,
            asks=asks,
            rivals=rivals,
        )
    return ordered + ranked[NEWER_WINDOW:]


def newer_first_hits(query: str, hits: Sequence[Hit], namespace: Namespace, services: Services) -> list[Hit]:
    """``hits`` (highest first) with each note just above the best-ranked older note about
    the same subject (``ranking.newer_first``), each taking the score of its place; for a
    caller that ranks by meaning alone, where no neighbours are known."""
    ranked = [Candidate(h.stored.note.id.value, h.stored.note.created_at, h.score) for h in hits]
    notes = {h.stored.note.id.value: h.stored for h in hits}
    return _hits(_newer_first(query, ranked, {}, namespace, notes, services), notes)


def _hits(ranked: Sequence[Candidate], notes: Mapping[str, StoredNote]) -> list[Hit]:
    return [Hit(notes[c.id], c.score) for c in ranked]
