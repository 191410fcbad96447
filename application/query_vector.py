"""A search query's vector, computed while the store reads what needs none (``ports.PendingVector``)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from types import TracebackType
from typing import TypeVar

from local_mcp_memory.application.ports import Vector
from local_mcp_memory.domain.identifiers import Namespace

T = TypeVar("T")
Embedded = tuple[Namespace, Sequence[Vector]]


class SideThreads:
    """A few threads that run a store's work beside the embedding of a query. The caller's
    thread embeds (the longer part, on the core it holds: on a busy machine a thread woken
    for it would first wait for one); the work waits for no core either: while none of these
    threads has begun it, the caller takes it back."""

    def __init__(self, threads: int) -> None:
        self._threads = threads
        self._free = threading.Semaphore(threads)
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None  # created with the first work it runs

    def start(self, work: Callable[[], T]) -> Future[T] | None:
        """``work`` started on a free thread; None when every thread is busy."""
        if not self._free.acquire(blocking=False):
            return None
        try:
            with self._lock:
                if self._pool is None:
                    self._pool = ThreadPoolExecutor(self._threads, thread_name_prefix="search-side")
                future = self._pool.submit(work)
        except BaseException:
            self._free.release()
            raise
        future.add_done_callback(lambda _: self._free.release())
        return future

    def close(self) -> None:
        """Wait for the work running, and end the threads."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)


class QueryVector:
    """A search query's vector in ``namespace`` (``Embedding.query_vector``), computed on
    first ``result`` on the thread that asks, or by ``alongside`` beside a store's work.
    Used as a context manager around the search: leaving it computes the vector if no one
    asked for it and raises what the embedding raised, even when the store failed first (a
    search embedded its query before anything else, and fails as it did)."""

    def __init__(self, namespace: Namespace, compute: Callable[[], Embedded], side: SideThreads) -> None:
        self.namespace = namespace
        self._compute, self._side = compute, side
        self._outcome: Future[Embedded] | None = None

    @classmethod
    def computed(cls, compute: Callable[[], Embedded], side: SideThreads) -> QueryVector:
        """The vector computed now, its namespace learned from it (raises the embedding's failure)."""
        outcome = _settled(compute)
        found = cls(outcome.result()[0], compute, side)
        found._outcome = outcome
        return found

    def result(self) -> Vector:
        (vector,) = self._settle().result()[1]
        return vector

    def alongside(self, work: Callable[[], T]) -> tuple[T, Vector]:
        """``work()`` on a side thread while the vector is computed on this one; both done
        when it returns (what either raised is raised, the embedding's failure first)."""
        started = self._side.start(work)
        outcome = self._settle()
        if started is None or started.cancel():  # no thread free, or none began it yet
            started = _settled(work)
        done = started.exception()  # waits
        (vector,) = outcome.result()[1]
        if done is not None:
            raise done
        return started.result(), vector

    def _settle(self) -> Future[Embedded]:
        if self._outcome is None:
            self._outcome = _settled(self._compute)
        return self._outcome

    def __enter__(self) -> QueryVector:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        failure = self._settle().exception()
        if failure is not None and failure is not exc:
            raise failure


def _settled(compute: Callable[[], T]) -> Future[T]:
    """A done future holding what ``compute()`` returns or raises."""
    done: Future[T] = Future()
    try:
        done.set_result(compute())
    except Exception as exc:  # a failure raised where the result is asked for
        done.set_exception(exc)
    return done
