"""Steps the PostgreSQL store's integration tests share."""

from __future__ import annotations

import threading

from local_mcp_memory.adapters.postgres_store import PostgresNoteStore


def open_at_once(url: str, count: int) -> tuple[list[PostgresNoteStore], list[BaseException]]:
    """``count`` stores opened on ``url`` by as many threads released together, as servers
    starting at the same moment: the stores that opened and what the others raised. The
    caller closes the stores."""
    opened: list[PostgresNoteStore] = []
    failed: list[BaseException] = []
    barrier = threading.Barrier(count)

    def open_one() -> None:
        barrier.wait()
        try:
            opened.append(PostgresNoteStore(url, timeout=20))
        except BaseException as exc:  # reported to the caller
            failed.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return opened, failed
