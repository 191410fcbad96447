"""Keyword relevance for notes: Okapi BM25 over title, text and tags, one index per project.

Shared by every ``NoteStore`` adapter. The index is derived data: a store feeds it every
put and delete (its own and, for a shared store, those replayed from other processes) and
never persists it. A project's index is built lazily, on the first keyword search in that
project, from the store's notes (``load``); until then adds and removes for it are no-ops.

Terms come from ``text_analysis`` (normalization, CJK n-grams, stop words, stemming), the
same for notes and queries.

Scores (``KeywordIndex.search``) are BM25 divided by the query's weight, the sum of the idf
of its distinct terms (a term absent from the project counts with the largest idf), capped
at 1: about 1 for a note of average length holding every query term once, less for a note
missing the query's rarer terms. Such a score says how much of the query's information a
note matches, so it can be compared across queries and mixed with a cosine. Not thread-safe: the store
serializes calls.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping

import numpy as np

from local_mcp_memory.adapters import long_lived
from local_mcp_memory.adapters.text_analysis import document_tokens, tokens

K1 = 0.9
B = 0.5
"""BM25 term saturation and length normalization. Notes are short and their lengths vary
less than web pages': a milder length penalty than the textbook 1.2 / 0.75 measured better on
LoCoMo conversations 26, 30, 41 (recall@5 of hybrid 0.563 -> 0.581) and held on 42, 43
(0.569 -> 0.575), the paraphrase set unchanged; checked again with round 2's ranking on all five
(``bench/retrieval_study.py``, hybrid recall@5): 1.2 / 0.75 0.647, 0.9 / 0.75 0.657,
1.2 / 0.5 0.664, against 0.670 for 0.9 / 0.5."""

RANK_SCALE = 1e9
"""Keyword candidates are ordered by ``rank(score)`` (``floor(score * RANK_SCALE)``) from
the highest, then the newer note, then the smaller id: the one tie order of every store.
Scores equal but for their last bits (a sum of the same terms added in another order, as
PostgreSQL adds them in its plan's order) are a tie, broken the same way everywhere; two
scores count as different only when they differ by more than about 1e-9, far above the
rounding of a sum of a few dozen terms and far below any difference that means something."""


def rank(score: float) -> float:
    """The part of a keyword score that orders candidates (``RANK_SCALE``)."""
    return math.floor(score * RANK_SCALE)


Loader = Callable[[str], Iterable[tuple[str, int, list[str]]]]

PREPARED_MIN = 1_000
"""Terms held by at least this many notes of a project get their scoring arrays when the
project's index is built, not at the first search that asks for them: turning a posting of
10,000-15,000 notes into arrays takes about a millisecond, and a freshly started server
paid it for each common term of its first few dozen keyword searches (keyword p95 about
twice the later one's at 100k notes in a project). A rarer term's arrays cost microseconds
when first asked; building them all would double the postings' memory for little."""


class _ProjectIndex:
    """One project's postings. Each note has a slot (reused after it is removed); per term,
    the slots holding it with their term frequencies: a dict to update, and numpy arrays,
    built on first use after a change, to score with."""

    def __init__(self) -> None:
        self.slot_of: dict[str, int] = {}
        self.ids: list[str | None] = []
        self.lengths = np.zeros(0, dtype=np.float64)
        self.created = np.zeros(0, dtype=np.int64)  # each slot's createdAt, for ties
        self.postings: dict[str, dict[int, int]] = {}
        self._vocabulary: dict[int, tuple[str, ...]] = {}
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._free: list[int] = []
        self.total = 0

    def __len__(self) -> int:
        return len(self.slot_of)

    def add(self, doc_id: str, created: int, terms: list[str]) -> None:
        self.add_counts(doc_id, created, Counter(terms))

    def add_counts(self, doc_id: str, created: int, counts: Mapping[str, int]) -> None:
        """Index (or re-index) one note from its terms' counts."""
        self.remove(doc_id)
        if self._free:
            slot = self._free.pop()
        else:
            slot = len(self.ids)
            self.ids.append(None)
            if slot >= self.lengths.shape[0]:
                self.lengths = np.concatenate([self.lengths, np.zeros(max(64, slot), dtype=np.float64)])
                self.created = np.concatenate([self.created, np.zeros(max(64, slot), dtype=np.int64)])
        self.created[slot] = created
        length = 0
        for term, count in counts.items():
            self.postings.setdefault(term, {})[slot] = count
            self._arrays.pop(term, None)
            length += count
        self.slot_of[doc_id] = slot
        self.ids[slot] = doc_id
        self._vocabulary[slot] = tuple(counts)
        self.lengths[slot] = length
        self.total += length

    def remove(self, doc_id: str) -> None:
        slot = self.slot_of.pop(doc_id, None)
        if slot is None:
            return
        self.total -= int(self.lengths[slot])
        for term in self._vocabulary.pop(slot):
            docs = self.postings[term]
            del docs[slot]
            self._arrays.pop(term, None)
            if not docs:
                del self.postings[term]
        self.ids[slot] = None
        self.lengths[slot] = 0.0
        self._free.append(slot)

    def prepare(self, min_notes: int) -> None:
        """Build the scoring arrays of every term held by at least ``min_notes`` notes."""
        for term, docs in self.postings.items():
            if len(docs) >= min_notes:
                self._posting(term)

    def _posting(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        arrays = self._arrays.get(term)
        if arrays is None:
            docs = self.postings.get(term) or {}
            slots = np.fromiter(docs.keys(), dtype=np.int64, count=len(docs))
            counts = np.fromiter(docs.values(), dtype=np.float64, count=len(docs))
            arrays = self._arrays[term] = (slots, counts)
        return arrays

    def scores(self, query_terms: Iterable[str]) -> tuple[np.ndarray, np.ndarray, float]:
        """The slots of every note sharing a term with the query, their BM25, and the query's
        weight (a note's score is its BM25 divided by the weight, capped at 1)."""
        n = len(self.slot_of)
        if n == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64), 1.0
        flat = K1 * (1.0 - B)  # the length norm is flat + slope * length
        slope = K1 * B / (self.total / n or 1.0)
        total = np.zeros(len(self.ids), dtype=np.float64)
        weight = 0.0
        for term in sorted(set(query_terms)):  # one summation order, whatever the hash seed
            slots, counts = self._posting(term) if term in self.postings else (None, None)
            found = 0 if slots is None else slots.shape[0]
            idf = math.log(1.0 + (n - found + 0.5) / (found + 0.5))
            weight += idf
            if found:
                total[slots] += idf * (K1 + 1.0) * counts / (counts + flat + slope * self.lengths[slots])
        hit = np.flatnonzero(total > 0.0)
        return hit, total[hit], weight


class KeywordIndex:
    """BM25 per project. ``load(project)`` yields ``(note id, createdAt, document_tokens(...))``
    for every note of a project; it is called once, on that project's first search. A
    createdAt is a number, the newer the larger (microseconds since the epoch); it orders ties.
    ``load`` None: projects are built by ``build`` only (one never built finds nothing).
    ``term`` maps each query token to the form the notes' terms were stored in (a store
    that shortens long terms, as PostgreSQL's does); the identity by default."""

    def __init__(self, load: Loader | None, term: Callable[[str], str] | None = None) -> None:
        self._load = load
        self._term = term
        self._projects: dict[str, _ProjectIndex] = {}

    def add(
        self, project: str, doc_id: str, created: int, title: str | None, text: str, tags: Iterable[str]
    ) -> None:
        """Index (or re-index) one note; a no-op until the project is first searched."""
        index = self._projects.get(project)
        if index is not None:
            index.add(doc_id, created, document_tokens(title, text, tags))

    def add_counts(self, project: str, doc_id: str, created: int, counts: Mapping[str, int]) -> None:
        """Index (or re-index) one note from its stored terms' counts; a no-op until the
        project is built."""
        index = self._projects.get(project)
        if index is not None:
            index.add_counts(doc_id, created, counts)

    def remove(self, project: str, doc_id: str) -> None:
        index = self._projects.get(project)
        if index is not None:
            index.remove(doc_id)

    def build(self, project: str, entries: Iterable[tuple[str, int, Mapping[str, int]]]) -> None:
        """(Re)build a project's index from ``(note id, createdAt, term counts)`` of each of
        its notes, the common terms' scoring arrays with it (``PREPARED_MIN``); kept only once
        whole, so a failing ``entries`` leaves no half index, and out of the collector's full
        passes once enough is built (``long_lived``)."""
        index = _ProjectIndex()
        for doc_id, created, counts in entries:
            index.add_counts(doc_id, created, counts)
        index.prepare(PREPARED_MIN)
        self._projects[project] = index
        long_lived.built(len(index))

    def size(self, project: str) -> int | None:
        """How many notes the project's index holds; None when it is not built."""
        index = self._projects.get(project)
        return None if index is None else len(index)

    def adopt(self, other: KeywordIndex) -> None:
        """Take over the project indexes ``other`` has built: for a store that reloaded
        the very notes ``other`` indexed (same ids and contents)."""
        self._projects = other._projects

    def search(
        self, project: str, query: str, top_k: int, accept: Callable[[list[str]], np.ndarray] | None = None
    ) -> list[tuple[str, float]]:
        """The ``top_k`` best (note id, score in (0, 1]) among accepted notes sharing at
        least one term with ``query``, by ``rank`` of the score; ties go to the newer note,
        then the smaller id.
        ``accept(ids)`` says which of ``ids`` may be returned (a bool array; asked about
        batches, never one note at a time); None: every note of the project."""
        if project not in self._projects:
            load = self._load(project) if self._load is not None else ()
            self.build(project, ((doc_id, created, Counter(terms)) for doc_id, created, terms in load))
        index = self._projects[project]
        query_tokens = tokens(query)
        if self._term is not None:
            query_tokens = [self._term(t) for t in query_tokens]
        slots, raw, weight = index.scores(query_tokens)
        if top_k <= 0 or raw.shape[0] == 0:
            return []
        want, decided = max(4 * top_k, 64), {}  # decided: slot -> accepted, asked once each
        while True:  # the best ``want`` raw scores, more while the filter or ties need them
            complete = want >= raw.shape[0]
            best = np.arange(raw.shape[0]) if complete else np.argpartition(-raw, want)[:want]
            scores = np.minimum(1.0, raw[best] / weight)
            ranks = np.floor(scores * RANK_SCALE)
            window = slots[best]
            order = _order(ranks, index.created[window], window, index.ids)
            picked = _first_accepted(order, window, index.ids, top_k, accept, decided)
            # exact once the window holds every note ranked at least as the k-th picked
            if complete or (len(picked) == top_k and ranks.min() < ranks[picked[-1]]):
                return [(index.ids[int(window[i])], float(scores[i])) for i in picked]
            want *= 4


def _order(ranks: np.ndarray, created: np.ndarray, window: np.ndarray, ids: list[str | None]) -> np.ndarray:
    """The one order of candidates: by rank from the highest, then the newer, then the
    smaller id. The ids (strings: slow to gather and sort) are read only when two notes of
    the window tie on both rank and createdAt."""
    order = np.lexsort((-created, -ranks))
    r, c = ranks[order], created[order]
    if np.any((r[1:] == r[:-1]) & (c[1:] == c[:-1])):
        order = np.lexsort((np.array([ids[slot] for slot in window.tolist()]), -created, -ranks))
    return order


def _first_accepted(
    order: np.ndarray, window: np.ndarray, ids: list[str | None], top_k: int,
    accept: Callable[[list[str]], np.ndarray] | None, decided: dict[int, bool],
) -> list[int]:
    """The first ``top_k`` positions of ``order`` that ``accept`` lets through, asking it in
    batches about the notes not ``decided`` yet (each note asked about once per search);
    ``ids``: the note id of each slot."""
    if accept is None:
        return order[:top_k].tolist()
    picked: list[int] = []
    step = max(2 * top_k, 64)
    for start in range(0, order.shape[0], step):
        chunk = order[start : start + step].tolist()
        unknown = [i for i in chunk if int(window[i]) not in decided]
        if unknown:
            for i, ok in zip(unknown, accept([ids[int(window[i])] for i in unknown]).tolist()):
                decided[int(window[i])] = bool(ok)
        picked += [i for i in chunk if decided[int(window[i])]]
        if len(picked) >= top_k:
            return picked[:top_k]
    return picked
