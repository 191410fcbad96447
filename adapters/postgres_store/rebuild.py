"""``GraphRebuild``: a server's rebuild of the HNSW graphs that still serve but were built
with other options (``schema.repair_hnsw`` finds them), on a thread of its own.

Opening a store never waits for it: the old graph serves searches until the new one, built
beside it (``schema.build_hnsw``), replaces it. At 100k vectors a build takes half a minute,
at a million several minutes; a server waiting that long to open is one its client gives up
on. One server builds while the others' attempts find the build lock held and do nothing.
Closing the store cancels a build in progress: the half-built graph is invalid, and the next
server's build drops it and starts again, so a rebuild is only ever finished by a process that
stays up for the whole of it. A build that fails is logged, and the old graph keeps serving.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import psycopg
import structlog

from local_mcp_memory.adapters.postgres_store.connection import connect
from local_mcp_memory.adapters.postgres_store.schema import build_hnsw
from local_mcp_memory.adapters.postgres_store.url import StoreUrl

log = structlog.get_logger()


class Background:
    """Work on a thread of its own over a connection of its own (``_attach``), which ``stop``
    cancels. The subclass starts ``_thread`` once it is set up."""

    def __init__(self, name: str, target: Callable[..., None], *args: object) -> None:
        self._lock = threading.Lock()
        self._conn: psycopg.Connection | None = None
        self._stopping = False
        self._thread = threading.Thread(target=target, args=args, name=name, daemon=True)

    def _attach(self, conn: psycopg.Connection | None) -> bool:
        """Make ``conn`` the one ``stop`` cancels (None: none); False when stopping."""
        with self._lock:
            self._conn = None if self._stopping else conn
            return not self._stopping

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the work is over; whether that happened within ``timeout`` seconds."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def stop(self) -> None:
        """Cancel the statement in progress, if any, and wait for the thread to end. A cancel
        that meets the work between two statements is sent again until the thread ends."""
        with self._lock:
            self._stopping = True
        while self._thread.is_alive():
            with self._lock:
                if self._conn is not None:
                    self._conn.cancel_safe()
            self._thread.join(0.2)


class GraphRebuild(Background):
    """Rebuilds each ``(space, dim)`` of ``stale`` in turn on a thread started at once, over a
    connection of its own (a build holds it for the whole build)."""

    def __init__(self, url: StoreUrl, timeout: float, stale: list[tuple[int, int]]) -> None:
        super().__init__("hnsw-rebuild", self._run, url, timeout, stale)
        self._thread.start()

    def _run(self, url: StoreUrl, timeout: float, stale: list[tuple[int, int]]) -> None:
        try:
            with connect(url, timeout) as conn:
                if not self._attach(conn):
                    return
                for space, dim in stale:
                    build_hnsw(conn, space, dim, wait=False)
        except psycopg.Error as exc:
            if not self._stopping:
                log.warning("postgres_store.hnsw_rebuild_failed", error=str(exc).strip())
        finally:
            self._attach(None)
