"""A large space's partition through the real store on disk: built by compaction,
persisted in the snapshot, loaded by other processes, kept right by later writes."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest

from local_mcp_memory.adapters.faiss_store import FaissNoteStore
from local_mcp_memory.adapters.faiss_store.memory.partition import MIN_VECTORS
from local_mcp_memory.application.ports import CandidateQuery
from local_mcp_memory.domain.identifiers import CanonicalProjectId, GroupId, Namespace, NoteId
from local_mcp_memory.domain.note import Note, NoteFilter
from tests.integration.faiss_store.test_faiss_store_durability import flip_byte
from tests.unit.adapters.faiss_store.memory.test_partition import topics, unit

NS = Namespace("local", "partition-model", 64)
PROJECT = CanonicalProjectId("/tmp/partition-project")
T0 = datetime(2024, 3, 1, tzinfo=timezone.utc)
COUNT = MIN_VECTORS + 1_232  # the real threshold: a partition is trained at compaction


def note(index: int, group: str | None = None) -> Note:
    return Note(
        id=NoteId(str(uuid.uuid5(uuid.NAMESPACE_URL, f"partition/{index}"))),
        project_id=PROJECT,
        group_id=GroupId(group or f"g{index % 4}"),
        text=f"note {index}",
        created_at=T0 + timedelta(seconds=index),
    )


def found(store: FaissNoteStore, q: np.ndarray, where: NoteFilter, k: int) -> list[int]:
    """The indexes of the notes a semantic question finds, best first."""
    answer = store.candidates(CandidateQuery(where, k, NS, q))
    return [int(answer.notes[c.id].note.text.split()[1]) for c in answer.semantic]


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, np.ndarray, np.ndarray]:
    """A compacted store of COUNT notes around topics, written once (a thousand notes per
    durable write); its directory, vectors and queries."""
    vectors, centres = topics(COUNT, dim=NS.dim, seed=11)
    data = tmp_path_factory.mktemp("partitioned") / "data"
    store = FaissNoteStore(data, compact_after_records=10**9)
    for start in range(0, COUNT, 1_000):
        store.put_many([(note(i), vectors[i]) for i in range(start, min(COUNT, start + 1_000))], NS)
    store.compact()
    store.close()
    rng = np.random.default_rng(12)
    queries = unit(centres[rng.integers(0, len(centres), 40)] + 0.15 * rng.standard_normal((40, NS.dim)))
    return data, vectors, queries


@pytest.fixture
def partitioned(written, tmp_path: Path) -> tuple[Path, np.ndarray, np.ndarray]:
    """A copy of the written store for one test to change."""
    data, vectors, queries = written
    shutil.copytree(data, tmp_path / "data")
    return tmp_path / "data", vectors, queries


@pytest.fixture
def reopened(partitioned) -> Iterator[FaissNoteStore]:
    """The partitioned store, opened afresh as another process would."""
    store = FaissNoteStore(partitioned[0])
    yield store
    store.close()


def exact_top(vectors: np.ndarray, q: np.ndarray, rows: np.ndarray, k: int) -> list[int]:
    return rows[np.argsort(-(vectors[rows] @ q), kind="stable")[:k]].tolist()


def test_compaction_writes_a_partition_that_a_new_process_loads_and_searches_with(partitioned, reopened) -> None:
    data, vectors, queries = partitioned
    (snapshot,) = data.glob("snapshot-*")
    assert (snapshot / "space-0000.centroids.npy").exists() and (snapshot / "space-0000.lists.npy").exists()
    space = reopened._live.state.spaces[str(NS)]
    assert space.partition is not None and space.partition.usable
    every = np.arange(COUNT)
    hits = [set(found(reopened, q, NoteFilter(PROJECT), 10)) for q in queries]
    recall = np.mean([len(f & set(exact_top(vectors, q, every, 10))) / 10 for f, q in zip(hits, queries)])
    assert recall >= 0.99
    lists = space.slot_list.values[space.row_slot.values[:COUNT]]
    assert np.all(np.diff(lists[np.argsort(space.row_slot.values[:COUNT])]) >= 0)  # written grouped by list


def test_writes_after_the_partition_are_found_and_deletes_are_gone(partitioned, reopened) -> None:
    _data, _vectors, queries = partitioned
    store = reopened
    for j, q in enumerate(queries[:10]):  # a new note at each query: it must come first
        store.put(note(COUNT + j), NS, q)
    gone = [found(store, q, NoteFilter(PROJECT), 2)[1] for q in queries[10:20]]
    for i in gone:
        assert store.delete(note(i).id)
    for j, q in enumerate(queries[:10]):
        assert found(store, q, NoteFilter(PROJECT), 1) == [COUNT + j]
    for q in queries[10:20]:
        assert not set(gone) & set(found(store, q, NoteFilter(PROJECT), 30))
    store.compact()  # the new vectors join their lists in the next snapshot too
    for j, q in enumerate(queries[:10]):
        assert found(store, q, NoteFilter(PROJECT), 1) == [COUNT + j]


def test_a_narrow_filter_is_answered_exactly(partitioned, reopened) -> None:
    _data, vectors, queries = partitioned
    in_group = np.arange(1, COUNT, 4)  # group g1: a quarter of the space
    where = NoteFilter(PROJECT, GroupId("g1"))
    for q in queries:
        assert found(reopened, q, where, 10) == exact_top(vectors, q, in_group, 10)


def test_top_k_beyond_the_probed_lists_still_returns_k(partitioned, reopened) -> None:
    _data, _vectors, queries = partitioned
    assert len(found(reopened, queries[0], NoteFilter(PROJECT), COUNT - 5)) == COUNT - 5


@pytest.mark.parametrize("name", ["space-0000.centroids.npy", "space-0000.lists.npy"])
def test_a_damaged_partition_file_falls_back_to_exact_search_and_is_trained_again(partitioned, name: str) -> None:
    data, vectors, queries = partitioned
    (snapshot,) = data.glob("snapshot-*")
    path = snapshot / name
    flip_byte(path, path.stat().st_size - 3)
    store = FaissNoteStore(data)
    try:
        exact = np.argsort(-(vectors @ queries[0]), kind="stable")[:10]
        assert found(store, queries[0], NoteFilter(PROJECT), 10) == exact.tolist()
        store.compact()
        (snapshot,) = data.glob("snapshot-*")
        assert (snapshot / name).exists()
    finally:
        store.close()


def test_a_small_space_gets_no_partition(tmp_path: Path) -> None:
    store = FaissNoteStore(tmp_path / "data")
    vectors, _ = topics(50, dim=NS.dim)
    for i in range(50):
        store.put(note(i), NS, vectors[i])
    store.compact()
    (snapshot,) = (tmp_path / "data").glob("snapshot-*")
    assert not (snapshot / "space-0000.centroids.npy").exists()
    assert store._live.state.spaces[str(NS)].partition is None
    store.close()
