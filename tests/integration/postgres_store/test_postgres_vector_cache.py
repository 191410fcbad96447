"""A hybrid search of a whole project scores the project's vectors in the server process
(``vector_cache``): the same candidates, spread and neighbours as the statement that scores
them in PostgreSQL (a store holding no vectors, ``cached_vectors=0``), and it follows what
another server writes through the change feed: new and replaced vectors, deletes,
supersession, expiry, ``rehome`` and ``drop_namespace``."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from local_mcp_memory.adapters.postgres_store import PostgresNoteStore
from local_mcp_memory.adapters.postgres_store.queries import EXACT_SCAN_MAX
from local_mcp_memory.adapters.postgres_store.vector_cache import PREFIX, ProjectVectors
from local_mcp_memory.application.ports import CandidateQuery, Candidates
from local_mcp_memory.domain.identifiers import CanonicalProjectId, GroupId, Namespace, NoteId
from local_mcp_memory.domain.link import Link, LinkKey, Relation
from local_mcp_memory.domain.note import Note, NoteFilter
from tests.postgres_server import EmbeddedPostgres, postgres, postgres_url  # noqa: F401  (fixtures)

NS = Namespace("local", "test-model", 8)
OTHER = Namespace("local", "other-model", 8)
PROJECT = CanonicalProjectId("/cache/project")
T0 = datetime(2025, 3, 1, tzinfo=timezone.utc)
NOW = T0 + timedelta(days=30)
WORDS = "paint wall ladder brush roller primer ceiling window door floor".split()


@pytest.fixture()
def servers(postgres_url: str) -> Iterator[tuple[PostgresNoteStore, PostgresNoteStore, PostgresNoteStore]]:  # noqa: F811
    """The server holding vectors, another server writing, and one answering in SQL alone."""
    held, writer, plain = PostgresNoteStore(postgres_url), PostgresNoteStore(postgres_url), PostgresNoteStore(
        postgres_url, cached_vectors=0
    )
    yield held, writer, plain
    for store in (held, writer, plain):
        store.close()


def unit(rng: np.random.Generator) -> np.ndarray:
    vector = rng.standard_normal(NS.dim).astype(np.float32)
    return vector / np.linalg.norm(vector)


def notes(count: int, rng: np.random.Generator, start: int = 0) -> list[tuple[Note, np.ndarray]]:
    return [
        (Note(NoteId.new(), PROJECT, GroupId(f"g{i % 3}"), " ".join(rng.choice(WORDS, size=3)), T0 + timedelta(minutes=i)), unit(rng))
        for i in range(start, start + count)
    ]


def ask(store: PostgresNoteStore, vector: np.ndarray, text: str | None = "paint wall", depth: int = 10) -> Candidates:
    """A hybrid question (``text`` None: semantic) of the whole project."""
    where = NoteFilter(PROJECT, now=NOW)
    return store.candidates(CandidateQuery(where, depth, NS, vector, text, spread_sample=25, neighbours=True))


def same(found: Candidates, expected: Candidates) -> None:
    assert [c.id for c in found.semantic] == [c.id for c in expected.semantic]
    assert [c.created_at for c in found.semantic] == [c.created_at for c in expected.semantic]
    assert [c.score for c in found.semantic] == pytest.approx([c.score for c in expected.semantic], abs=1e-6)
    assert [c.id for c in found.keyword] == [c.id for c in expected.keyword]
    assert (found.spread.count, found.spread.mean, found.spread.std) == pytest.approx(
        (expected.spread.count, expected.spread.mean, expected.spread.std), abs=1e-6, nan_ok=True
    )  # a vector of zero length in the sample: pgvector's cosine is NaN, and the held copy's too
    assert {k: [n.id for n in v] for k, v in found.neighbours.items()} == {k: [n.id for n in v] for k, v in expected.neighbours.items()}
    for key, near in found.neighbours.items():  # their cosines: from the vectors held, as the statement gives them
        for mine, theirs in zip(near, expected.neighbours[key]):
            assert (mine.cosine is None) == (theirs.cosine is None)
            assert mine.cosine == pytest.approx(theirs.cosine, abs=1e-6)
    assert set(found.notes) == set(expected.notes)


def test_the_held_vectors_answer_as_the_statement_and_follow_another_servers_writes(
    servers: tuple[PostgresNoteStore, PostgresNoteStore, PostgresNoteStore],
) -> None:
    held, writer, plain = servers
    rng = np.random.default_rng(7)
    first = notes(80, rng)
    writer.put_many(first, NS)
    queries = [unit(rng) for _ in range(4)]

    def check() -> None:
        for q in queries:
            found = ask(held, q)
            same(found, ask(plain, q))
            same(ask(held, q, None), ask(plain, q, None))  # no keyword step: the copy follows the feed itself
            window = [NoteId(key) for key in found.notes]  # newer-first's cosines: from the copy, equal
            assert held.cosines(window, NS) == plain.cosines(window, NS)

    check()
    assert held._vectors._held  # the project is held, not searched in SQL
    assert held._vectors.vectors_of(held._spaces[str(NS)][0], [n.id.value for n, _ in first[:3]], held._keywords.seen) is not None
    writer.put_many(notes(10, rng, start=80), NS)  # new notes
    check()
    moved_note, _old = first[3]
    writer.put(moved_note, NS, queries[0])  # a vector replaced: now the best for queries[0]
    check()
    assert ask(held, queries[0]).semantic[0].id == moved_note.id.value
    writer.delete(first[5][0].id)
    writer.link(Link(LinkKey(first[7][0].id, first[6][0].id, Relation("supersedes")), T0))
    check()
    expiring = Note(NoteId.new(), PROJECT, GroupId("g0"), "paint wall", T0, expires_at=NOW - timedelta(hours=1))
    writer.put(expiring, NS, queries[1])  # expired at the question's now: never found
    check()
    assert expiring.id.value not in {c.id for c in ask(held, queries[1]).semantic}
    writer.rehome(NS, {first[9][0].id: queries[2]})  # a vector rewritten in place by a re-embedding
    check()
    assert ask(held, queries[2]).semantic[0].id == first[9][0].id.value
    window = [first[9][0].id, first[11][0].id, first[12][0].id]
    writer.rehome(NS, {first[11][0].id: queries[3]})
    held.candidates(CandidateQuery(NoteFilter(PROJECT, now=NOW), 5, text="paint"))  # the feed read, the copy not
    assert held.cosines(window, NS) == plain.cosines(window, NS)


def test_dropping_a_namespace_reaches_the_vectors_held_by_another_server(
    servers: tuple[PostgresNoteStore, PostgresNoteStore, PostgresNoteStore],
) -> None:
    held, writer, plain = servers
    rng = np.random.default_rng(8)
    batch = notes(30, rng)
    writer.put_many(batch, NS)
    q = unit(rng)
    same(ask(held, q), ask(plain, q))
    writer.rehome(OTHER, {note.id: vector for note, vector in batch[:20]})  # these now live in OTHER
    assert writer.drop_namespace(NS) == 20
    found, expected = ask(held, q), ask(plain, q)
    same(found, expected)
    assert {c.id for c in found.semantic} <= {note.id.value for note, _ in batch[20:]}


def test_a_prefix_of_a_large_project_answers_the_spread_only_while_it_reaches_the_sample() -> None:
    rng = np.random.default_rng(9)
    matrix = np.stack([unit(rng) for _ in range(PREFIX)])
    ids = [f"n{i:05d}" for i in range(PREFIX)]
    prefix = ProjectVectors(ids, np.arange(PREFIX, dtype=np.int64), matrix, complete=False, seen=1)
    q = unit(rng)
    spread = prefix.spread(q, 100, frozenset(ids[:10]))
    cosines = matrix[10:110] @ q
    assert spread is not None and spread.count == 100
    assert (spread.mean, spread.std) == pytest.approx((float(cosines.mean()), float(cosines.std())), abs=1e-6)
    assert prefix.spread(q, PREFIX, frozenset(ids[:1])) is None  # the rest of the project is not held
    counted = ProjectVectors(ids, np.arange(PREFIX, dtype=np.int64), matrix, complete=False, seen=1, count=EXACT_SCAN_MAX + 1)
    assert counted.large(frozenset()) and not counted.large(frozenset(ids[:1]))  # one hidden: the scope may be small
    whole = ProjectVectors(ids[:50], np.arange(50, dtype=np.int64), matrix[:50], complete=True, seen=1)
    assert whole.spread(q, 100, frozenset()).count == 50
    best = whole.nearest(q, 5, frozenset(ids[:2]))
    expected = sorted(range(2, 50), key=lambda i: -float(matrix[i] @ q))[:5]
    assert [c.id for c in best] == [ids[i] for i in expected]


def test_a_project_holding_a_zero_vector_is_searched_in_sql(
    servers: tuple[PostgresNoteStore, PostgresNoteStore, PostgresNoteStore],
) -> None:
    held, writer, plain = servers
    rng = np.random.default_rng(10)
    batch = notes(12, rng)
    batch[4] = (batch[4][0], np.zeros(NS.dim, dtype=np.float32))
    writer.put_many(batch, NS)
    q = unit(rng)
    found, expected = ask(held, q), ask(plain, q)
    assert [c.id for c in found.semantic] == [c.id for c in expected.semantic]


def test_a_project_larger_than_an_exact_scan_walks_the_graph_uncounted_with_the_same_answers(
    servers: tuple[PostgresNoteStore, PostgresNoteStore, PostgresNoteStore],
) -> None:
    held, writer, plain = servers
    rng = np.random.default_rng(11)
    batch = notes(EXACT_SCAN_MAX + 40, rng)
    writer.put_many(batch, NS)
    expired = Note(NoteId.new(), PROJECT, GroupId("g1"), "paint wall", T0, expires_at=NOW - timedelta(hours=1))
    writer.put(expired, NS, unit(rng))
    for q in [unit(rng) for _ in range(3)]:
        same(ask(held, q, depth=30), ask(plain, q, depth=30))
    (entry,) = held._vectors._held.values()
    assert not entry.complete and len(entry) == PREFIX and entry.large(frozenset({expired.id.value}))


def sent(vector: np.ndarray) -> bytes:
    """A vector in pgvector's binary form, as ``vector_send`` gives it."""
    return struct.pack(">hh", len(vector), 0) + np.asarray(vector, dtype=">f4").tobytes()


def test_a_whole_projects_copy_takes_the_feeds_changes_in_sample_order_from_empty_on() -> None:
    rng = np.random.default_rng(12)
    a, b, c = unit(rng), unit(rng), unit(rng)
    empty = ProjectVectors([], np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32), complete=True, seen=1)
    one = empty.changed([("b", 20, sent(b), 5), ("gone", None, None, None)], 2)
    two = one.changed([("a", 10, sent(a), -3), ("c", 30, sent(c), 5)], 3)  # "c" ties "b" on the hash: by id
    assert (two.ids, two.seen, list(two.created), list(two.hashes)) == (["a", "b", "c"], 3, [10, 20, 30], [-3, 5, 5])
    assert np.array_equal(two.matrix, np.stack([a, b, c]))
    three = two.changed([("b", None, None, None), ("a", 11, sent(c), -3)], 4)  # one removed, one replaced
    assert three.ids == ["a", "c"] and np.array_equal(three.matrix, np.stack([c, c])) and list(three.created) == [11, 30]


def test_an_empty_project_and_one_emptied_since_answer_nothing(
    servers: tuple[PostgresNoteStore, PostgresNoteStore, PostgresNoteStore],
) -> None:
    held, writer, plain = servers
    rng = np.random.default_rng(13)
    q = unit(rng)
    for text in ("paint wall", None):  # hybrid, then semantic (as a new note's check for what it supersedes asks)
        assert not ask(held, q, text).semantic and not ask(plain, q, text).semantic
    batch = notes(3, rng)
    writer.put_many(batch, NS)
    same(ask(held, q, None), ask(plain, q, None))
    for note, _vector in batch:
        writer.delete(note.id)
    for text in ("paint wall", None):
        found = ask(held, q, text)
        same(found, ask(plain, q, text))
        assert not found.semantic
