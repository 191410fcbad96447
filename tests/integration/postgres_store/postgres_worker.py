"""A process that uses PostgresNoteStore directly, for the durability tests (the notes and
vectors of ``store_worker``).

    python postgres_worker.py write URL TAG START COUNT
        put notes TAG/START.. one by one, printing each index once put has returned
    python postgres_worker.py share URL TAG COUNT OTHER_TAG
        write COUNT notes, then wait to see the other writer's COUNT too, print "ok"
    python postgres_worker.py add URL TEXT AT
        open the store, wait until the epoch second AT, add (with dedup) one note of TEXT
        in store_worker's project, print the id that holds it
"""

from __future__ import annotations

import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from local_mcp_memory.adapters.postgres_store import PostgresNoteStore  # noqa: E402
from local_mcp_memory.domain.identifiers import GroupId, NoteId  # noqa: E402
from local_mcp_memory.domain.note import Note  # noqa: E402
from tests.integration.store_worker import NS, PROJECT, expected_vector, share_with, write_with  # noqa: E402


def write(url: str, tag: str, start: int, count: int) -> None:
    write_with(PostgresNoteStore(url), tag, start, count)


def share(url: str, tag: str, count: int, other: str) -> None:
    store = PostgresNoteStore(url)
    share_with(store, tag, count, other)
    store.close()


def add(url: str, text: str, at: float) -> None:
    store = PostgresNoteStore(url)
    store.get(NoteId.new())  # a pool connection ready before the start
    note = Note(NoteId.new(), PROJECT, GroupId("raced"), text, datetime.now(timezone.utc))
    time.sleep(max(0.0, at - time.time()))
    held = store.add([(note, expected_vector("raced", 0))], NS, datetime.now(timezone.utc))
    print(held[0].value, flush=True)
    store.close()


if __name__ == "__main__":
    mode, *args = sys.argv[1:]
    if mode == "write":
        write(args[0], args[1], int(args[2]), int(args[3]))
    elif mode == "add":
        add(args[0], args[1], float(args[2]))
    else:
        share(args[0], args[1], int(args[2]), args[3])
