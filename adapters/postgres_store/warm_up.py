"""``WarmUp``: a server's store building, right after it opens and before any search asks,
what the first searches of its large projects would otherwise wait for or run without.

A project of more than ``EXACT_SCAN_MAX`` notes costs its first search the load of its
keyword index (about a second at 100k notes), and its searches walk PostgreSQL's HNSW index
until the graph of its own (``vector_graph``), which that first search starts, is built:
22-27 s of one core at 100k vectors, which competed for the cores with the searches of a
freshly started server. So a server's store warms them up on a thread of its own, over a
connection of its own, as soon as it opens: the projects above ``EXACT_SCAN_MAX`` notes,
largest first, each one's keyword index loaded, then the graph of each namespace in which it
holds more than ``EXACT_SCAN_MAX`` vectors built (one build at a time: at most one core), while
searches are answered as they would be without it. Bounded: it stops at the first project
that would not fit what is left of the keyword indexes' or the vectors' budget (it never lets
out what a search has loaded), and smaller projects stay lazy (their first search loads
them in under a second). Closing the store stops it between two steps, cancelling a
statement in progress; the graph build it waits for is stopped by the vector cache's close.
It logs ``postgres_store.warmed`` when done, with the projects and seconds it took.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager

import psycopg
import structlog

from local_mcp_memory.adapters.postgres_store.keywords import PostgresKeywords
from local_mcp_memory.adapters.postgres_store.queries import EXACT_SCAN_MAX
from local_mcp_memory.adapters.postgres_store.rebuild import Background
from local_mcp_memory.adapters.postgres_store.vector_cache import COUNT_SQL, VectorCache

log = structlog.get_logger()

LARGE_SQL = "SELECT project, notes FROM keyword_totals WHERE notes > %(least)s ORDER BY notes DESC, project"
"""The projects worth warming, largest first."""

POLL = 0.2
"""Seconds between two looks at whether the store is closing while a graph is built."""


class WarmUp(Background):
    """The warm-up of one store, on a thread started at once (see the module)."""

    def __init__(
        self, connect: Callable[[], AbstractContextManager[psycopg.Connection]], keywords: PostgresKeywords, vectors: VectorCache,
    ) -> None:
        super().__init__("store-warm-up", self._run, connect, keywords, vectors)
        self._thread.start()

    def _run(self, connect: Callable[[], AbstractContextManager[psycopg.Connection]], keywords: PostgresKeywords,
             vectors: VectorCache) -> None:
        started, warmed = time.monotonic(), []
        try:
            with connect() as conn:
                if not self._attach(conn):
                    return
                large = conn.execute(LARGE_SQL, {"least": EXACT_SCAN_MAX}).fetchall()
                spaces = [space for (space,) in conn.execute("SELECT id FROM namespaces ORDER BY id").fetchall()]
                for project, notes in large:
                    held = [space for space in spaces if self._large_in(conn, project, space)]
                    if notes > keywords.room() or 2 * notes * len(held) > vectors.room():
                        break  # a graph holds each vector twice (``vector_graph``)
                    keywords.warm(conn, project)
                    for space in held:
                        if not self._built(vectors, project, space):
                            return
                    warmed.append(project)
            self._attach(None)
            log.info("postgres_store.warmed", projects=len(warmed), seconds=round(time.monotonic() - started, 1))
        except (psycopg.Error, RuntimeError, MemoryError) as exc:
            if not self._stopping:
                log.warning("postgres_store.warm_up_failed", error=str(exc).strip(), projects=len(warmed))
        finally:
            self._attach(None)

    def _large_in(self, conn: psycopg.Connection, project: str, space: int) -> bool:
        """Whether ``project`` holds more than ``EXACT_SCAN_MAX`` vectors in ``space``."""
        return conn.execute(COUNT_SQL, {"space": space, "project": project}).fetchone()[0] > EXACT_SCAN_MAX

    def _built(self, vectors: VectorCache, project: str, space: int) -> bool:
        """Build ``project``'s graph in ``space`` and wait for it; False when closing."""
        build = vectors.warm(project, space)
        while build is not None and not build.wait(POLL):
            if self._stopping:
                return False
        return not self._stopping
