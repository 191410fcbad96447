"""A process that uses PostgresNoteStore directly, for the durability tests (the notes and
vectors of ``store_worker``).

    python postgres_worker.py write URL TAG START COUNT
        put notes TAG/START.. one by one, printing each index once put has returned
    python postgres_worker.py share URL TAG COUNT OTHER_TAG
        write COUNT notes, then wait to see the other writer's COUNT too, print "ok"
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from mcp_memory.adapters.postgres_store import PostgresNoteStore  # noqa: E402
from mcp_memory.domain.note import NoteFilter  # noqa: E402
from tests.integration.store_worker import NS, PROJECT, expected_note, expected_vector  # noqa: E402


def write(url: str, tag: str, start: int, count: int) -> None:
    store = PostgresNoteStore(url)
    for index in range(start, start + count):
        store.put(expected_note(tag, index), NS, expected_vector(tag, index))
        print(index, flush=True)


def share(url: str, tag: str, count: int, other: str) -> None:
    store = PostgresNoteStore(url)
    for index in range(count):
        store.put(expected_note(tag, index), NS, expected_vector(tag, index))
    deadline = time.monotonic() + 60
    while len(store.list_recent(NoteFilter(PROJECT), 10 * count)) < 2 * count:
        if time.monotonic() > deadline:
            print("timeout", flush=True)
            return
        time.sleep(0.02)
    wanted = [expected_note(t, i) for t in (tag, other) for i in range(count)]
    missing = [n.id.value for n in wanted if (s := store.get(n.id)) is None or s.note != n]
    listed = {s.note.id.value for s in store.list_recent(NoteFilter(PROJECT), 10 * count)}
    print("ok" if not missing and listed == {n.id.value for n in wanted} else f"missing {missing[:3]}", flush=True)
    store.close()


if __name__ == "__main__":
    mode, *args = sys.argv[1:]
    if mode == "write":
        write(args[0], args[1], int(args[2]), int(args[3]))
    else:
        share(args[0], args[1], int(args[2]), args[3])
