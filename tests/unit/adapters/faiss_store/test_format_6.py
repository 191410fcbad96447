"""Format 6: the records of one write share one journal line (``Batch``); a format 5 store
is upgraded by its first writer, and one that cannot be keeps one line per record."""

from __future__ import annotations

from pathlib import Path

import pytest

from local_mcp_memory.adapters.faiss_store import FaissNoteStore
from local_mcp_memory.adapters.faiss_store.format.framing import decode_line
from local_mcp_memory.adapters.faiss_store.format.records import FORMAT, Batch, Put, decode_sidecar
from local_mcp_memory.adapters.faiss_store.persistence.generations import Generations
from tests.unit.adapters.faiss_store.stores import NS, as_format_5, journal_of, note, snapshot_of, vector


def records_in(data: Path) -> list[type]:
    """The type of each record line of the journal (the header left out)."""
    lines = journal_of(data).read_bytes().split(b"\n")[1:-1]
    return [type(decode_line(line)) for line in lines]


def full_disk(self: Generations) -> None:
    """A compaction, and so an upgrade, that cannot be written."""
    raise OSError(28, "No space left on device")


def assert_reopened_holds(data: Path, count: int) -> None:
    reopened = FaissNoteStore(data)
    try:
        assert [reopened.get(note(i).id).note for i in range(count)] == [note(i) for i in range(count)]
    finally:
        reopened.close()


def compacted_format_5(data: Path) -> None:
    store = FaissNoteStore(data)
    store.put_many([(note(0), vector(0)), (note(1), vector(1))], NS)
    store.compact()
    store.close()
    as_format_5(data)


def test_a_format_5_store_is_upgraded_by_its_first_writer_whose_batches_are_one_line(tmp_path: Path) -> None:
    data = tmp_path / "data"
    compacted_format_5(data)
    store = FaissNoteStore(data)
    try:
        assert decode_sidecar((snapshot_of(data) / "sidecar.json").read_bytes(), "sidecar.json").format == FORMAT == 6
        store.put_many([(note(i), vector(i)) for i in (2, 3, 4)], NS)
        store.put(note(5), NS, vector(5))
        assert records_in(data) == [Batch, Put]
    finally:
        store.close()
    assert_reopened_holds(data, 6)


def test_a_format_5_store_that_cannot_be_upgraded_keeps_one_line_per_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "data"
    compacted_format_5(data)
    monkeypatch.setattr(Generations, "compact", full_disk)
    store = FaissNoteStore(data)
    try:
        store.put_many([(note(i), vector(i)) for i in (2, 3, 4)], NS)
        assert records_in(data) == [Put, Put, Put]  # what a format 5 reader reads
    finally:
        store.close()
    monkeypatch.undo()
    assert_reopened_holds(data, 5)


def test_a_writer_left_at_format_5_follows_another_writers_upgrade_and_batches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "data"
    compacted_format_5(data)
    with monkeypatch.context() as patched:
        patched.setattr(Generations, "compact", full_disk)
        behind = FaissNoteStore(data)  # its upgrade failed: it stays at format 5
    upgrader = FaissNoteStore(data)
    try:
        behind.put_many([(note(i), vector(i)) for i in (2, 3, 4)], NS)  # follows on into the format 6 generation
        assert records_in(data) == [Batch]
        assert [upgrader.get(note(i).id).note for i in (2, 3, 4)] == [note(i) for i in (2, 3, 4)]
    finally:
        behind.close()
        upgrader.close()
