"""A process that uses FaissNoteStore directly, for the durability tests.

    python store_worker.py write DATA_DIR TAG START COUNT COMPACT_AFTER
        put notes TAG/START.. one by one, printing each index once put has returned
    python store_worker.py batches DATA_DIR TAG START SIZE COMPACT_AFTER
        put_many notes TAG/START.. SIZE at a time, printing each batch's first index once put_many has returned
    python store_worker.py share DATA_DIR TAG COUNT COMPACT_AFTER OTHER_TAG
        write COUNT notes, then wait to see the other writer's COUNT too, print "ok"
    python store_worker.py compact DATA_DIR STOP_FILE
        compact over and over until STOP_FILE exists, print how many times
    python store_worker.py add DATA_DIR TAG COUNT COMPACT_AFTER AT
        wait until the epoch second AT, then add (with dedup) the COUNT texts of
        ``raced_note`` one call each, printing the id that holds each
"""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if __name__ == "__main__":  # run as a script: its folder, whose test rooms are named like packages
    sys.path[0] = str(ROOT)  # (http, mcp, packaging), gives way to the repository root

import numpy as np  # noqa: E402
import structlog  # noqa: E402

from local_mcp_memory.adapters.faiss_store import FaissNoteStore  # noqa: E402
from local_mcp_memory.application.ports import CandidateQuery, NoteStore  # noqa: E402
from local_mcp_memory.domain.identifiers import CanonicalProjectId, GroupId, Namespace, NoteId  # noqa: E402
from local_mcp_memory.domain.note import Note, NoteFilter, Tags  # noqa: E402

NS = Namespace("local", "worker-model", 16)
PROJECT = CanonicalProjectId("/tmp/durability-project")
T0 = datetime(2024, 1, 15, tzinfo=timezone.utc)


def expected_note(tag: str, index: int) -> Note:
    return Note(
        id=NoteId(str(uuid.uuid5(uuid.NAMESPACE_URL, f"{tag}/{index}"))),
        project_id=PROJECT,
        group_id=GroupId(f"g{index % 3}"),
        text=f"note {index} written by {tag}: 東京 durability",
        created_at=T0 + timedelta(seconds=index),
        title=f"title {index}",
        tags=Tags((tag, f"t{index % 2}")),
        metadata={"index": index, "tag": tag},
    )


def expected_vector(tag: str, index: int) -> np.ndarray:
    seed = uuid.uuid5(uuid.NAMESPACE_URL, f"{tag}/{index}").int % (2**32)
    v = np.random.default_rng(seed).standard_normal(NS.dim).astype(np.float32)
    return v / np.linalg.norm(v)


def write(data_dir: str, tag: str, start: int, count: int, compact_after: int) -> None:
    write_with(FaissNoteStore(Path(data_dir), compact_after_records=compact_after), tag, start, count)


def batches(data_dir: str, tag: str, start: int, size: int, compact_after: int) -> None:
    store = FaissNoteStore(Path(data_dir), compact_after_records=compact_after)
    while True:
        store.put_many([(expected_note(tag, i), expected_vector(tag, i)) for i in range(start, start + size)], NS)
        print(start, flush=True)
        start += size


def share(data_dir: str, tag: str, count: int, compact_after: int, other: str) -> None:
    share_with(FaissNoteStore(Path(data_dir), compact_after_records=compact_after), tag, count, other)


def write_with(store: NoteStore, tag: str, start: int, count: int) -> None:
    """Put notes TAG/START.. one by one, printing each index once put has returned."""
    for index in range(start, start + count):
        store.put(expected_note(tag, index), NS, expected_vector(tag, index))
        print(index, flush=True)


def share_with(store: NoteStore, tag: str, count: int, other: str) -> None:
    """Write COUNT notes, wait to see the other writer's COUNT too, then print "ok"."""
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


def raced_note(tag: str, index: int) -> Note:
    """Note ``index`` of writer ``tag`` in the dedup race: its own id, a text every writer shares."""
    return Note(
        id=NoteId(str(uuid.uuid5(uuid.NAMESPACE_URL, f"{tag}/raced/{index}"))),
        project_id=PROJECT,
        group_id=GroupId("raced"),
        text=f"raced  text {index}\n" if tag == "a" else f"raced text {index}",
        created_at=T0 + timedelta(seconds=index),
    )


def add(data_dir: str, tag: str, count: int, compact_after: int, at: float) -> None:
    store = FaissNoteStore(Path(data_dir), compact_after_records=compact_after)
    time.sleep(max(0.0, at - time.time()))
    for index in range(count):
        held = store.add([(raced_note(tag, index), expected_vector(tag, index))], NS, datetime.now(timezone.utc))
        print(held[0].value, flush=True)
    store.close()


def assert_holds(store: NoteStore, tag: str, indexes: list[int]) -> None:
    """Every acknowledged note of ``tag`` reads back as written and is found by its vector;
    closes ``store``."""
    try:
        for index in indexes:
            note = expected_note(tag, index)
            stored = store.get(note.id)
            assert stored is not None, f"acknowledged note {index} is missing"
            assert stored.note == note and stored.namespace == NS
            found = store.candidates(CandidateQuery(NoteFilter(PROJECT), 1, NS, expected_vector(tag, index)))
            assert found.semantic[0].id == note.id.value
        assert len(store.list_recent(NoteFilter(PROJECT), 100_000)) >= len(set(indexes))
    finally:
        store.close()


def run_worker(worker: str, *args: object) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, worker, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)


def compact(data_dir: str, stop_file: str) -> None:
    store = FaissNoteStore(Path(data_dir))
    times = 0
    while not Path(stop_file).exists():
        store.compact()
        times += 1
        time.sleep(0.01)
    print(times, flush=True)


if __name__ == "__main__":
    structlog.configure(logger_factory=structlog.PrintLoggerFactory(sys.stderr))  # stdout carries results
    mode, *args = sys.argv[1:]
    if mode == "write":
        write(args[0], args[1], int(args[2]), int(args[3]), int(args[4]))
    elif mode == "batches":
        batches(args[0], args[1], int(args[2]), int(args[3]), int(args[4]))
    elif mode == "share":
        share(args[0], args[1], int(args[2]), int(args[3]), args[4])
    elif mode == "add":
        add(args[0], args[1], int(args[2]), int(args[3]), float(args[4]))
    else:
        compact(args[0], args[1])
