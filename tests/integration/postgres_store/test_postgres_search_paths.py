"""The read side of the PostgreSQL store takes one of two paths by the filter of a question:
the whole project (only expired and superseded notes left out) or a narrowed scope (a group,
tags or a time window). Both paths give the same answers.

* Keyword: for the whole project, the ids of the expired and superseded notes come with the
  change feed's query and the in-process BM25 leaves them out itself; a narrowed scope asks
  the database about the notes the index proposes. Both equal the in-memory store's answers.
* Spread: for the whole project, one scan of the sample index reading each picked vector;
  for a narrowed scope, picks from the index alone, then their vectors. The same notes
  picked give the same mean and deviation, exactly.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

import attrs
import numpy as np
import pytest

from local_mcp_memory.adapters.postgres_store import PostgresNoteStore
from local_mcp_memory.application.ports import CandidateQuery, NoteStore
from local_mcp_memory.domain.identifiers import CanonicalProjectId, GroupId, Namespace, NoteId
from local_mcp_memory.domain.link import Link, LinkKey, Relation
from local_mcp_memory.domain.note import Note, NoteFilter, Tags
from local_mcp_memory.domain.time import TimeWindow
from tests.fakes.memory_store import InMemoryNoteStore
from tests.postgres_server import EmbeddedPostgres, postgres, postgres_url  # noqa: F401  (fixtures)

NS = Namespace("local", "test-model", 8)
T0 = datetime(2025, 3, 1, tzinfo=timezone.utc)
NOW = T0 + timedelta(days=30)
WORDS = "paint wall ladder brush roller primer ceiling window door floor".split()
QUESTIONS = ("paint", "wall ladder", "primer ceiling door", "brush roller window floor", "absent words")


@pytest.fixture()
def stores(postgres_url: str) -> Iterator[tuple[PostgresNoteStore, InMemoryNoteStore]]:  # noqa: F811
    store = PostgresNoteStore(postgres_url)
    yield store, InMemoryNoteStore()
    store.close()


def corpus(project: CanonicalProjectId, count: int, seed: int) -> list[tuple[Note, np.ndarray]]:
    """Notes in two groups, a third tagged, every fifth expired at ``NOW`` (some others
    expiring later), with vectors of random directions."""
    rng = np.random.default_rng(seed)
    notes = []
    for i in range(count):
        expires = NOW - timedelta(hours=1) if i % 5 == 4 else (NOW + timedelta(days=1) if i % 7 == 0 else None)
        note = Note(
            NoteId.new(), project, GroupId(f"g{i % 2}"), " ".join(rng.choice(WORDS, size=int(rng.integers(1, 6)))),
            T0 + timedelta(minutes=i // 2), tags=Tags(("t",) if i % 3 == 0 else ()), expires_at=expires,
        )
        vector = rng.standard_normal(NS.dim).astype(np.float32)
        notes.append((note, vector / np.linalg.norm(vector)))
    return notes


def fill(store: NoteStore, notes: list[tuple[Note, np.ndarray]], superseded: list[int]) -> None:
    for note, vector in notes:
        store.put(note, NS, vector)
    for i in superseded:  # the next note replaces the note i
        store.link(Link(LinkKey(notes[i + 1][0].id, notes[i][0].id, Relation("supersedes")), T0))


def keyword(store: NoteStore, text: str, where: NoteFilter, depth: int) -> list[tuple[str, float]]:
    return [(c.id, c.score) for c in store.candidates(CandidateQuery(where, depth, text=text)).keyword]


@pytest.mark.parametrize("depth", [1, 5, 40])
def test_keyword_candidates_leave_out_expired_and_superseded_notes_on_both_paths_as_the_in_memory_store(
    stores: tuple[PostgresNoteStore, InMemoryNoteStore], depth: int
) -> None:
    database, reference = stores
    project = CanonicalProjectId("/paths/keyword")
    notes = corpus(project, 60, seed=depth)
    fill(database, notes, superseded=[0, 10, 21, 33])
    fill(reference, notes, superseded=[0, 10, 21, 33])
    # note 33 is replaced by note 34, expired at NOW: it is shown again
    hidden = {notes[i][0].id.value for i in (0, 10, 21)} | {n.id.value for n, _ in notes if n.expires_at == NOW - timedelta(hours=1)}
    filters = {
        "whole project, live": NoteFilter(project, now=NOW),
        "whole project, superseded too": NoteFilter(project, now=NOW, include_superseded=True),
        "whole project, no clock": NoteFilter(project),
        "group": NoteFilter(project, GroupId("g1"), now=NOW),
        "tag": NoteFilter(project, tags=Tags(("t",)), now=NOW),
        "window": NoteFilter(project, window=TimeWindow(T0 + timedelta(minutes=3), T0 + timedelta(minutes=20)), now=NOW),
    }
    for name, where in filters.items():
        for text in QUESTIONS:
            got, want = keyword(database, text, where, depth), keyword(reference, text, where, depth)
            assert [i for i, _ in got] == [i for i, _ in want], (name, text)
            assert [s for _, s in got] == pytest.approx([s for _, s in want], abs=1e-9), (name, text)
    live = [i for text in QUESTIONS for i, _ in keyword(database, text, filters["whole project, live"], 60)]
    assert live and not hidden & set(live)
    everything = {i for text in QUESTIONS for i, _ in keyword(database, text, NoteFilter(project, include_superseded=True), 60)}
    assert hidden <= everything  # the filter left them out, not the corpus


def spread(store: NoteStore, vector: np.ndarray, where: NoteFilter, sample: int) -> tuple[int, float, float]:
    found = store.candidates(CandidateQuery(where, 1, NS, vector, spread_sample=sample)).spread
    return found.count, found.mean, found.std


@pytest.mark.parametrize("sample", [1, 7, 1024])
def test_the_spread_of_the_whole_project_equals_that_of_a_narrowed_scope_holding_the_same_notes(
    stores: tuple[PostgresNoteStore, InMemoryNoteStore], sample: int
) -> None:
    database, _ = stores
    project = CanonicalProjectId("/paths/spread")
    notes = [(attrs.evolve(n, group_id=GroupId("only"), tags=Tags(("all",))), v) for n, v in corpus(project, 50, seed=sample)]
    fill(database, notes, superseded=[2, 17])
    query = np.random.default_rng(99).standard_normal(NS.dim).astype(np.float32)
    for now in (NOW, None):
        whole = spread(database, query, NoteFilter(project, now=now), sample)
        narrowed = [
            NoteFilter(project, GroupId("only"), now=now),
            NoteFilter(project, tags=Tags(("all",)), now=now),
            NoteFilter(project, window=TimeWindow(since=T0 - timedelta(days=1)), now=now),
        ]
        for where in narrowed:  # the whole project's: from its vectors held in the server (float32 sums in numpy)
            count, mean, std = spread(database, query, where, sample)
            assert count == whole[0] and (mean, std) == pytest.approx(whole[1:], abs=1e-6), where
        live = 50 - (2 + 10 if now is not None else 2)  # superseded, and expired at NOW
        assert whole[0] == min(sample, live)


def test_a_project_known_to_be_small_is_scanned_exactly_without_counting_with_the_same_semantic_candidates(
    stores: tuple[PostgresNoteStore, InMemoryNoteStore],
) -> None:
    """A question with words builds (or catches up) the project's keyword index first, whose
    size bounds the scope: the statement then skips counting it. A question without words
    counts; both are exact scans here and agree with the in-memory store."""
    database, reference = stores
    project = CanonicalProjectId("/paths/small")
    notes = corpus(project, 40, seed=3)
    fill(database, notes, superseded=[5])
    fill(reference, notes, superseded=[5])
    query = np.random.default_rng(5).standard_normal(NS.dim).astype(np.float32)
    query /= np.linalg.norm(query)
    for where in (NoteFilter(project, now=NOW), NoteFilter(project, GroupId("g0"), now=NOW), NoteFilter(project)):
        for depth in (1, 10, 60):
            counted = database.candidates(CandidateQuery(where, depth, NS, query)).semantic
            bounded = database.candidates(CandidateQuery(where, depth, NS, query, text="paint wall")).semantic
            want = reference.candidates(CandidateQuery(where, depth, NS, query)).semantic
            assert [c.id for c in bounded] == [c.id for c in counted] == [c.id for c in want], (where, depth)
            assert [c.score for c in bounded] == pytest.approx([c.score for c in want], abs=1e-6)
    assert database._keywords.notes(project.value) == 40
