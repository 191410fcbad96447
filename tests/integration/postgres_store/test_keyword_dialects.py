"""BM25 is written twice: in numpy (``adapters.keyword_index``, behind the local store and the
in-memory one) and in SQL (``adapters.postgres_store.queries``, which also skips postings that
cannot change the answer). Generated corpora, queries, filters and depths must get the same
keyword candidates from both: the same ids in the one tie order of every store (``rank`` of
the score from the highest, then the newer note, then the smaller id), scores equal within
1e-9. The corpora are built to tie: duplicated texts, shared instants, terms held by most
notes beside rare ones, so that sums of the same terms added in another order meet.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from local_mcp_memory.adapters.keyword_index import rank
from local_mcp_memory.adapters.postgres_store import PostgresNoteStore
from local_mcp_memory.application.ports import Candidate, CandidateQuery, NoteStore
from local_mcp_memory.domain.identifiers import CanonicalProjectId, GroupId, Namespace, NoteId
from local_mcp_memory.domain.note import Note, NoteFilter, Tags
from tests.fakes.memory_store import InMemoryNoteStore
from tests.postgres_server import EmbeddedPostgres, postgres  # noqa: F401  (fixture)

NS = Namespace("local", "test-model", 4)
T0 = datetime(2025, 3, 1, tzinfo=timezone.utc)
COMMON = ["alpha", "beta"]  # in most notes
MIDDLING = ["gamma", "delta", "epsilon"]
RARE = [f"rare{i}" for i in range(12)]
FILLER = ["filler", "padding"]
_projects = itertools.count()


@pytest.fixture(scope="module")
def database(postgres: EmbeddedPostgres) -> Iterator[PostgresNoteStore]:  # noqa: F811
    """One database for the module; every example writes into a project of its own."""
    name = postgres.new_database()
    store = PostgresNoteStore(postgres.url(name))
    yield store
    store.close()
    postgres.drop_database(name)


words = st.lists(
    st.one_of(
        st.sampled_from(COMMON), st.sampled_from(MIDDLING), st.sampled_from(RARE), st.sampled_from(FILLER)
    ),
    min_size=1,
    max_size=12,
)
note_specs = st.tuples(words, st.integers(0, 5), st.integers(0, 2), st.booleans(), st.integers(1, 3))
"""(words, minute, group, tagged, copies): copies > 1 stores the same text that many times."""
questions = st.tuples(
    st.lists(st.sampled_from(COMMON + MIDDLING + RARE + ["absent"]), min_size=1, max_size=5),
    st.sampled_from(["project", "group", "tag"]),
    st.integers(1, 25),
)


def keyword(store: NoteStore, text: str, where: NoteFilter, depth: int) -> list[Candidate]:
    return list(store.candidates(CandidateQuery(where, depth, text=text)).keyword)


def tie_order(found: list[Candidate]) -> list[Candidate]:
    """``found`` in the one tie order of every store."""
    return sorted(found, key=lambda c: (-rank(c.score), -c.created_at.timestamp(), c.id))


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(corpus=st.lists(note_specs, min_size=1, max_size=40), asked=st.lists(questions, min_size=1, max_size=6))
def test_sql_and_numpy_bm25_give_the_same_candidates_in_the_same_tie_order(
    database: PostgresNoteStore, corpus: list, asked: list
) -> None:
    project = CanonicalProjectId(f"/dialects/{next(_projects)}")
    reference = InMemoryNoteStore()
    serial = itertools.count()
    for spec_words, minute, group, tagged, copies in corpus:
        for _ in range(copies):
            i = next(serial)
            note = Note(NoteId.new(), project, GroupId(f"g{group}"), " ".join(spec_words),
                        T0 + timedelta(minutes=minute), tags=Tags(("t",) if tagged else ()))
            vector = np.eye(NS.dim, dtype=np.float32)[i % NS.dim]
            database.put(note, NS, vector)
            reference.put(note, NS, vector)
    for terms, scope, depth in asked:
        where = {"project": NoteFilter(project), "group": NoteFilter(project, GroupId("g1")),
                 "tag": NoteFilter(project, tags=Tags(("t",)))}[scope]
        text = " ".join(terms)
        got, want = keyword(database, text, where, depth), keyword(reference, text, where, depth)
        assert [c.id for c in got] == [c.id for c in want], (text, scope, depth)
        assert [c.score for c in got] == pytest.approx([c.score for c in want], abs=1e-9)
        assert got == tie_order(got) and want == tie_order(want)
