"""FaissNoteStore keeps every acknowledged write through kill -9, damaged files and
several processes writing and compacting at once."""

from __future__ import annotations

import random
import signal
import subprocess
import time
from pathlib import Path

import pytest

from local_mcp_memory.adapters.faiss_store import FaissNoteStore
from local_mcp_memory.adapters.faiss_store.format.framing import decode_line
from local_mcp_memory.application.errors import StoreCorrupt
from local_mcp_memory.application.ports import Candidate, CandidateQuery
from local_mcp_memory.domain.note import NoteFilter
from tests.integration import store_worker
from tests.integration.store_worker import NS, PROJECT, expected_note, expected_vector

WORKER = str(Path(__file__).parents[1] / "store_worker.py")
CYCLES = 24


def run_worker(*args: object) -> subprocess.Popen:
    return store_worker.run_worker(WORKER, *args)


def assert_holds(data: Path, tag: str, indexes: list[int]) -> None:
    store_worker.assert_holds(FaissNoteStore(data), tag, indexes)


def keyword_candidates(store: FaissNoteStore, text: str) -> list[Candidate]:
    return list(store.candidates(CandidateQuery(NoteFilter(PROJECT), 10, text=text)).keyword)


def journal_of(data: Path) -> Path:
    (journal,) = data.glob("journal-*.jsonl")
    return journal


def test_acknowledged_writes_survive_kill_9_at_random_instants(tmp_path: Path) -> None:
    data = tmp_path / "data"
    rng = random.Random(20240115)
    acknowledged: list[int] = []
    start = 0
    for _cycle in range(CYCLES):
        worker = run_worker("write", data, "crash", start, 1_000_000, rng.choice([5, 40, 100_000]))
        first = worker.stdout.readline()
        time.sleep(rng.uniform(0.0, 0.3))
        worker.send_signal(signal.SIGKILL)
        output = first + worker.stdout.read()
        worker.wait()
        lines = output.split(b"\n")[:-1]  # a line cut by the kill was not acknowledged
        written = [int(line) for line in lines]
        assert written, "the worker acknowledged nothing before being killed"
        acknowledged += written
        start = written[-1] + 1
        assert_holds(data, "crash", acknowledged)


def test_a_batch_killed_at_random_instants_is_all_there_or_not_at_all(tmp_path: Path) -> None:
    data = tmp_path / "data"
    rng = random.Random(20261203)
    acknowledged: list[int] = []
    start, size = 0, 300
    for _cycle in range(8):
        worker = run_worker("batches", data, "all-or-none", start, size, rng.choice([5, 100_000]))
        first = worker.stdout.readline()
        time.sleep(rng.uniform(0.0, 0.2))
        worker.send_signal(signal.SIGKILL)
        output = first + worker.stdout.read()
        worker.wait()
        written = [int(line) for line in output.split(b"\n")[:-1]]
        assert written, "the worker acknowledged nothing before being killed"
        acknowledged += [i for batch in written for i in range(batch, batch + size)]
        unacknowledged = range(written[-1] + size, written[-1] + 2 * size)
        store = FaissNoteStore(data)
        try:
            present = [store.get(expected_note("all-or-none", i).id) is not None for i in unacknowledged]
        finally:
            store.close()
        assert all(present) or not any(present), f"{sum(present)} of a batch of {size}"
        if all(present):
            acknowledged += list(unacknowledged)
        start = acknowledged[-1] + 1
        assert_holds(data, "all-or-none", acknowledged)


def test_a_journal_cut_mid_line_is_read_up_to_the_cut_and_then_repaired(tmp_path: Path) -> None:
    data = tmp_path / "data"
    store = FaissNoteStore(data)
    for index in range(3):
        store.put(expected_note("torn", index), NS, expected_vector("torn", index))
    store.close()
    journal = journal_of(data)
    whole = journal.read_bytes()
    journal.write_bytes(whole[: whole.rstrip(b"\n").rfind(b"\n") + 1 + 40])  # last record cut after 40 bytes
    assert_holds(data, "torn", [0, 1])
    store = FaissNoteStore(data)
    assert store.get(expected_note("torn", 2).id) is None
    store.put(expected_note("torn", 3), NS, expected_vector("torn", 3))
    store.close()
    assert_holds(data, "torn", [0, 1, 3])
    lines = journal.read_bytes().split(b"\n")
    assert lines[-1] == b"" and all(decode_line(line) is not None for line in lines[:-1])


def test_a_journal_cut_at_a_line_under_a_running_store_is_read_again_not_followed_past_its_end(tmp_path: Path) -> None:
    """Lines taken back (a writer whose sync failed truncates what it wrote) or cut from
    outside: a process that had read them reads the store again rather than keep notes the
    disk no longer holds and read the next writes from a wrong offset."""
    data = tmp_path / "data"
    running = FaissNoteStore(data)
    for index in range(3):
        running.put(expected_note("cut", index), NS, expected_vector("cut", index))
    assert running.get(expected_note("cut", 2).id) is not None
    journal = journal_of(data)
    whole = journal.read_bytes()
    journal.write_bytes(whole[: whole.rstrip(b"\n").rfind(b"\n") + 1])  # the last line gone, at its boundary
    assert running.get(expected_note("cut", 2).id) is None
    writer = FaissNoteStore(data)
    writer.put(expected_note("cut", 3), NS, expected_vector("cut", 3))
    writer.close()
    assert running.get(expected_note("cut", 3).id).note == expected_note("cut", 3)
    assert [n.note.id for n in running.list_recent(NoteFilter(PROJECT), 10)] == [
        expected_note("cut", i).id for i in (3, 1, 0)
    ]
    running.put(expected_note("cut", 4), NS, expected_vector("cut", 4))
    running.close()
    assert_holds(data, "cut", [0, 1, 3, 4])


def batch_of(tag: str, indexes: range) -> list:
    return [(expected_note(tag, i), expected_vector(tag, i)) for i in indexes]


def test_a_batch_is_one_line_and_a_cut_anywhere_in_it_leaves_none_of_it(tmp_path: Path) -> None:
    data = tmp_path / "data"
    store = FaissNoteStore(data)
    store.put(expected_note("batch", 0), NS, expected_vector("batch", 0))
    before = journal_of(data).stat().st_size
    store.put_many(batch_of("batch", range(1, 41)), NS)
    store.close()
    journal = journal_of(data)
    whole = journal.read_bytes()
    assert whole[before:].count(b"\n") == 1, "the 40 notes of one write share one line"
    assert_holds(data, "batch", list(range(41)))
    for cut in (before + 1, before + 200, (before + len(whole)) // 2, len(whole) - 2):
        journal.write_bytes(whole[:cut])  # a writer killed, or the power cut, mid-write
        assert_holds(data, "batch", [0])
        store = FaissNoteStore(data)
        try:
            assert all(store.get(expected_note("batch", i).id) is None for i in range(1, 41)), cut
            store.put(expected_note("batch", 41), NS, expected_vector("batch", 41))  # the writer cuts the torn line
        finally:
            store.close()
        assert_holds(data, "batch", [0, 41])
        lines = journal.read_bytes().split(b"\n")
        assert lines[-1] == b"" and all(decode_line(line) is not None for line in lines[:-1])
    journal.write_bytes(whole[:-1])  # the whole batch, its newline lost: completed, every note kept
    store = FaissNoteStore(data)
    store.put(expected_note("batch", 42), NS, expected_vector("batch", 42))
    store.close()
    assert_holds(data, "batch", [*range(41), 42])


def test_a_damaged_batch_line_fails_each_of_its_notes_and_nothing_else(tmp_path: Path) -> None:
    data = tmp_path / "data"
    store = FaissNoteStore(data)
    store.put_many(batch_of("dmg", range(0, 3)), NS)
    store.put_many(batch_of("dmg", range(3, 6)), NS)
    store.put(expected_note("dmg", 6), NS, expected_vector("dmg", 6))
    store.close()
    journal = journal_of(data)
    lines = journal.read_bytes().split(b"\n")
    flip_byte(journal, sum(len(line) + 1 for line in lines[:2]) + len(lines[2]) - 10)  # inside the second batch's vectors
    store = FaissNoteStore(data)
    try:
        for index in (3, 4, 5):
            with pytest.raises(StoreCorrupt):
                store.get(expected_note("dmg", index).id)
    finally:
        store.close()
    assert_holds(data, "dmg", [0, 1, 2, 6])


def test_a_complete_last_line_failing_its_checksum_is_damage_kept_and_never_truncated(tmp_path: Path) -> None:
    data = tmp_path / "data"
    store = FaissNoteStore(data)
    store.put(expected_note("bad", 0), NS, expected_vector("bad", 0))
    store.put(expected_note("bad", 1), NS, expected_vector("bad", 1))
    store.close()
    journal = journal_of(data)
    damaged = journal.read_bytes()
    flip_byte(journal, len(damaged) - 10)  # inside the last record, its newline kept
    store = FaissNoteStore(data)
    try:
        store.put(expected_note("bad", 2), NS, expected_vector("bad", 2))
        with pytest.raises(StoreCorrupt):
            store.get(expected_note("bad", 1).id)
    finally:
        store.close()
    assert journal.read_bytes().startswith(damaged[: len(damaged) - 10])
    assert_holds(data, "bad", [0, 2])


def test_leftovers_of_a_crashed_compaction_are_ignored_then_removed(tmp_path: Path) -> None:
    data = tmp_path / "data"
    store = FaissNoteStore(data)
    store.put(expected_note("left", 0), NS, expected_vector("left", 0))
    store.close()
    (data / "snapshot-00000001.tmp-4242").mkdir()
    (data / "snapshot-00000001.tmp-4242" / "sidecar.json").write_bytes(b'{"format":1,"gener')
    (data / "snapshot-00000001").mkdir()  # renamed, but the manifest never named it
    (data / "journal-00000001.jsonl").write_bytes(b"half a hea")
    (data / "MANIFEST.json.tmp-4242").write_bytes(b'{"format":1,"generation":7')
    assert_holds(data, "left", [0])
    store = FaissNoteStore(data)
    store.put(expected_note("left", 1), NS, expected_vector("left", 1))
    store.compact()
    store.close()
    assert sorted(p.name for p in data.iterdir()) == [  # above every generation present
        "LOCK",
        "MANIFEST.json",
        "journal-00000002.jsonl",
        "snapshot-00000002",
    ]
    assert_holds(data, "left", [0, 1])


@pytest.mark.parametrize("compact_after", [100_000, 30])
def test_two_processes_writing_one_project_each_see_all_notes(tmp_path: Path, compact_after: int) -> None:
    data = tmp_path / "data"
    FaissNoteStore(data).close()
    stop = tmp_path / "stop"
    compactor = run_worker("compact", data, stop)
    writers = [run_worker("share", data, tag, 200, compact_after, other) for tag, other in (("a", "b"), ("b", "a"))]
    try:
        results = [w.communicate(timeout=100)[0].strip() for w in writers]
    finally:
        stop.touch()
        compactions = int(compactor.communicate(timeout=30)[0] or 0)
    assert results == [b"ok", b"ok"]
    assert compactions > 0
    assert_holds(data, "a", list(range(200)))
    assert_holds(data, "b", list(range(200)))


@pytest.mark.parametrize("compact_after", [100_000, 7])
def test_processes_adding_the_same_texts_at_once_store_each_once(tmp_path: Path, compact_after: int) -> None:
    data = tmp_path / "data"
    FaissNoteStore(data).close()
    start = time.time() + 3  # every worker open and waiting by then
    workers = [run_worker("add", data, tag, 40, compact_after, start) for tag in ("a", "b", "c")]
    answers = [w.communicate(timeout=120)[0].split() for w in workers]
    assert len(answers[0]) == 40 and answers[0] == answers[1] == answers[2]  # each text held by one note, for all
    store = FaissNoteStore(data)
    try:
        stored = {s.note.id.value: s.note for s in store.iter_notes()}
        assert sorted(stored) == sorted(held.decode() for held in answers[0])
        assert sorted(" ".join(n.text.split()) for n in stored.values()) == sorted(f"raced text {i}" for i in range(40))
    finally:
        store.close()


def test_a_reader_sees_a_write_of_another_process_on_its_next_read(tmp_path: Path) -> None:
    data = tmp_path / "data"
    reader = FaissNoteStore(data)
    assert reader.list_recent(NoteFilter(PROJECT), 10) == []
    worker = run_worker("write", data, "seen", 0, 3, 2)  # compacts between the writes
    assert worker.communicate(timeout=60)[0].split() == [b"0", b"1", b"2"]
    assert len(reader.list_recent(NoteFilter(PROJECT), 10)) == 3
    assert reader.get(expected_note("seen", 2).id).note == expected_note("seen", 2)
    reader.close()


def compacted_store(data: Path, tag: str, count: int) -> Path:
    """A store of ``count`` notes, all in its snapshot; the snapshot's directory."""
    store = FaissNoteStore(data)
    for index in range(count):
        store.put(expected_note(tag, index), NS, expected_vector(tag, index))
    store.compact()
    store.close()
    (snapshot,) = data.glob("snapshot-*")
    return snapshot


def flip_byte(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0x40
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("name", ["notes.npy", "tags.npy", "sidecar.json"])
def test_a_damaged_file_that_places_every_note_is_refused_on_open(tmp_path: Path, name: str) -> None:
    snapshot = compacted_store(tmp_path / "data", "flip", 5)
    path = snapshot / name
    flip_byte(path, path.stat().st_size - 3)
    with pytest.raises(StoreCorrupt) as raised:
        FaissNoteStore(tmp_path / "data")
    assert raised.value.path.startswith(str(snapshot))


@pytest.mark.parametrize("name", ["space-0000.npy", "space-0000.owners.npy"])
def test_damaged_vectors_fail_their_namespace_search_and_nothing_else(tmp_path: Path, name: str) -> None:
    snapshot = compacted_store(tmp_path / "data", "flip", 5)
    path = snapshot / name
    flip_byte(path, path.stat().st_size - 3)
    store = FaissNoteStore(tmp_path / "data")
    try:
        with pytest.raises(StoreCorrupt) as raised:
            store.candidates(CandidateQuery(NoteFilter(PROJECT), 3, NS, expected_vector("flip", 0)))
        assert raised.value.path == str(path)
        assert store.get(expected_note("flip", 3).id).note == expected_note("flip", 3)
        assert len(store.list_recent(NoteFilter(PROJECT), 10)) == 5
        assert len(keyword_candidates(store, "durability")) == 5
    finally:
        store.close()


def test_a_damaged_note_in_a_snapshot_is_refused_when_read(tmp_path: Path) -> None:
    snapshot = compacted_store(tmp_path / "data", "body", 5)
    flip_byte(snapshot / "notes.bin", 10)  # inside the first note
    store = FaissNoteStore(tmp_path / "data")
    try:
        assert store.get(expected_note("body", 4).id).note == expected_note("body", 4)
        with pytest.raises(StoreCorrupt):
            store.get(expected_note("body", 0).id)
    finally:
        store.close()


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs /proc/self/maps")
def test_a_compaction_releases_the_files_of_the_snapshot_before_it(tmp_path: Path) -> None:
    data = tmp_path / "data"
    compacted_store(data, "old", 3).name
    store, other = FaissNoteStore(data), FaissNoteStore(data)
    try:
        store.put(expected_note("old", 3), NS, expected_vector("old", 3))
        store.compact()
        assert len(other.list_recent(NoteFilter(PROJECT), 10)) == 4  # follows to the new generation
        assert keyword_candidates(store, "durability")
        store.put(expected_note("old", 4), NS, expected_vector("old", 4))
        store.compact()
        assert len(other.list_recent(NoteFilter(PROJECT), 10)) == 5
        assert len(keyword_candidates(store, "durability")) == 5
        mapped = Path("/proc/self/maps").read_text()
        assert str(data) in mapped and "(deleted)" not in "".join(
            line for line in mapped.splitlines() if str(data) in line
        )
    finally:
        store.close()
        other.close()
