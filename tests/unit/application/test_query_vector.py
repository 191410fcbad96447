"""A query's vector computed beside a store's work (application/query_vector.py)."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from local_mcp_memory.application.errors import EmbedderUnavailable, StoreError
from local_mcp_memory.application.query_vector import QueryVector, SideThreads
from local_mcp_memory.domain.identifiers import Namespace

NS = Namespace("test", "model", 2)
VECTOR = np.array([1.0, 0.0], dtype=np.float32)


class Embedding:
    """Computes VECTOR (or raises ``failure``) and records on which thread, how often."""

    def __init__(self, failure: Exception | None = None) -> None:
        self.failure, self.threads = failure, []

    def __call__(self):
        self.threads.append(threading.current_thread())
        if self.failure is not None:
            raise self.failure
        return NS, [VECTOR]


@pytest.fixture
def side():
    threads = SideThreads(2)
    yield threads
    threads.close()


def test_the_vector_is_computed_once_on_the_thread_that_asks(side: SideThreads) -> None:
    embedding = Embedding()
    vector = QueryVector(NS, embedding, side)
    assert embedding.threads == []
    assert vector.result() is VECTOR and vector.result() is VECTOR
    assert embedding.threads == [threading.current_thread()]


def test_work_alongside_runs_on_a_side_thread_while_the_vector_is_computed_here(side: SideThreads) -> None:
    began = threading.Event()
    embedding = Embedding()

    def work() -> threading.Thread:
        began.set()
        return threading.current_thread()

    def slow_embedding():
        assert began.wait(5), "the work did not begin while the vector was computed"
        return embedding()

    ran_on, vector = QueryVector(NS, slow_embedding, side).alongside(work)
    assert vector is VECTOR and embedding.threads == [threading.current_thread()]
    assert ran_on is not threading.current_thread() and ran_on.name.startswith("search-side")


def test_work_no_side_thread_has_begun_is_done_on_the_calling_thread() -> None:
    side = SideThreads(1)
    release = threading.Event()
    blocker = side.start(lambda: release.wait(5))  # the one thread, busy
    try:
        assert side.start(lambda: None) is None  # none free: the caller does the work
        ran_on, _ = QueryVector(NS, Embedding(), side).alongside(threading.current_thread)
        assert ran_on is threading.current_thread()
    finally:
        release.set()
        assert blocker is not None and blocker.result() is True
        side.close()


def test_the_embeddings_failure_is_raised_first_once_the_work_is_done(side: SideThreads) -> None:
    failure, ended = EmbedderUnavailable("test", None, "timed out"), []

    def work():
        time.sleep(0.1)
        ended.append(True)
        raise StoreError("cannot read the note store", "/data")

    with pytest.raises(EmbedderUnavailable) as raised:
        QueryVector(NS, Embedding(failure), side).alongside(work)
    assert raised.value is failure and ended == [True]


def test_the_works_failure_is_raised_when_the_vector_is_computed(side: SideThreads) -> None:
    error = StoreError("cannot read the note store", "/data")

    def work():
        raise error

    with pytest.raises(StoreError) as raised:
        QueryVector(NS, Embedding(), side).alongside(work)
    assert raised.value is error


def test_leaving_the_block_computes_a_vector_no_one_asked_for_and_raises_its_failure(side: SideThreads) -> None:
    failure = EmbedderUnavailable("test", None, "timed out")
    with pytest.raises(EmbedderUnavailable):
        with QueryVector(NS, Embedding(failure), side):
            pass
    with pytest.raises(EmbedderUnavailable):  # over another failure: the embedding came first
        with QueryVector(NS, Embedding(failure), side):
            raise StoreError("cannot read the note store", "/data")
    embedding = Embedding()
    with QueryVector(NS, embedding, side) as vector:
        assert vector.result() is VECTOR
    assert len(embedding.threads) == 1


def test_a_vector_computed_at_once_takes_its_namespace_from_the_embedding(side: SideThreads) -> None:
    embedding = Embedding()
    vector = QueryVector.computed(embedding, side)
    assert vector.namespace == NS and vector.result() is VECTOR and len(embedding.threads) == 1
    with pytest.raises(EmbedderUnavailable):
        QueryVector.computed(Embedding(EmbedderUnavailable("test", None, "down")), side)
