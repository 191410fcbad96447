"""A compaction that fails never fails the write it follows, leaves no temporary files,
and is tried again later, not on every write. The disk fills for real: the writer runs
in a process whose file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored) makes writes past it
fail with EFBIG, as a full disk makes them fail with ENOSPC."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import structlog

from local_mcp_memory.adapters.faiss_store import FaissNoteStore
from tests.integration.small_store import NS, build as build_small_store, note, vector

WRITER = textwrap.dedent(
    """
    import resource, signal, sys
    from pathlib import Path
    import structlog
    structlog.configure(logger_factory=structlog.PrintLoggerFactory(sys.stderr))
    from local_mcp_memory.adapters.faiss_store import FaissNoteStore
    from local_mcp_memory.application.errors import StoreError
    from tests.integration.small_store import NS, note, vector

    data, limit, compact_after = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    store = FaissNoteStore(data, compact_after_records=compact_after)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    try:
        store.put(note(40, "written while the disk is full " + "x" * 400), NS, vector(40))
        print("ok", flush=True)
    except StoreError as exc:
        print("failed", exc.path, flush=True)
    store.close()
    """
)


def write_with_file_size_limit(data: Path, limit: int, compact_after: int) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", WRITER, str(data), str(limit), str(compact_after)],
        capture_output=True,
        timeout=60,
        cwd=Path(__file__).parents[3],
    )


def leftovers(data: Path) -> list[str]:
    return [p.name for p in data.rglob("*") if ".tmp-" in p.name]


def compacted_small_store(data: Path) -> Path:
    """The small store folded into its snapshot: a journal of one header line, a
    ``notes.bin`` of several kilobytes."""
    build_small_store(data)
    store = FaissNoteStore(data)
    store.compact()
    store.close()
    (journal,) = data.glob("journal-*.jsonl")
    return journal


def test_a_write_whose_compaction_hits_a_full_disk_is_answered_ok_and_kept(tmp_path: Path) -> None:
    data = tmp_path / "data"
    journal = compacted_small_store(data)
    # room for the journal's next line, not for the snapshot's notes.bin
    assert (next(data.glob("snapshot-*")) / "notes.bin").stat().st_size > 2048 > journal.stat().st_size + 1200
    done = write_with_file_size_limit(data, 2048, compact_after=1)
    assert done.stdout == b"ok\n", done.stderr
    assert b"store.compaction_failed" in done.stderr and b"File too large" in done.stderr
    assert leftovers(data) == []
    assert [p.name for p in data.glob("snapshot-*")] == ["snapshot-00000002"]  # still the live one
    store = FaissNoteStore(data)
    try:
        assert store.get(note(40).id).note.text.startswith("written while the disk is full")
    finally:
        store.close()


def test_a_write_whose_journal_append_hits_a_full_disk_is_refused_and_leaves_nothing(tmp_path: Path) -> None:
    data = tmp_path / "data"
    build_small_store(data)
    (journal,) = data.glob("journal-*.jsonl")
    before = journal.read_bytes()
    done = write_with_file_size_limit(data, len(before) + 100, compact_after=100_000)
    assert done.stdout.split() == [b"failed", str(data).encode()], done.stderr
    assert journal.read_bytes() == before
    assert leftovers(data) == []


def test_a_failed_compaction_is_retried_only_after_more_records(tmp_path: Path) -> None:
    data = tmp_path / "data"
    build_small_store(data)
    (journal,) = data.glob("journal-*.jsonl")
    lines = journal.read_bytes().split(b"\n")
    data_bytes = bytearray(journal.read_bytes())
    data_bytes[len(lines[0]) + 1 + len(lines[1]) - 5] ^= 0x40  # damage: compaction must refuse
    journal.write_bytes(bytes(data_bytes))
    store = FaissNoteStore(data, compact_after_records=1, compact_retry_records=4)
    try:
        with structlog.testing.capture_logs() as logs:
            for index in range(50, 60):
                store.put(note(index), NS, vector(index))
    finally:
        store.close()
    failures = [e for e in logs if e["event"] == "store.compaction_failed"]
    assert len(failures) == 3 and "damage" in failures[0]["reason"]  # writes 1, 5 and 9 of 10
    assert leftovers(data) == []


def test_compaction_after_the_disk_has_room_again_succeeds(tmp_path: Path) -> None:
    data = tmp_path / "data"
    compacted_small_store(data)
    assert write_with_file_size_limit(data, 2048, compact_after=1).stdout == b"ok\n"
    store = FaissNoteStore(data, compact_after_records=1)
    try:
        store.put(note(41), NS, vector(41))
        assert store.get(note(40).id) is not None and store.get(note(41).id) is not None
    finally:
        store.close()
    assert [p.name for p in data.glob("snapshot-*")] == ["snapshot-00000003"]
