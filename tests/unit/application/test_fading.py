"""The read log of fading: reads of notes with an expiry are written in one batch, after the
answer, and a failed batch is reported and dropped, never raised into a read."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

from local_mcp_memory.application.errors import StoreError
from local_mcp_memory.application.fading import ReadLog
from local_mcp_memory.domain.identifiers import CanonicalProjectId, GroupId, NoteId
from local_mcp_memory.domain.note import Note

T0 = datetime(2024, 1, 15, tzinfo=timezone.utc)


def note(expires: bool = True) -> Note:
    made = Note(NoteId.new(), CanonicalProjectId("p"), GroupId("g"), "text", T0)
    return made.with_expiry(T0 + timedelta(days=1)) if expires else made


def test_only_notes_with_an_expiry_are_written_each_once_per_batch() -> None:
    batches: list[list[NoteId]] = []
    log = ReadLog(lambda ids: batches.append(list(ids)) or len(ids))
    a, b, plain = note(), note(), note(expires=False)
    log.saw([a, plain, b, a])
    assert log.flush() == 2 and batches == [[a.id, b.id]]
    assert log.flush() == 0 and len(batches) == 1


def test_a_background_thread_writes_a_burst_of_reads_in_one_batch() -> None:
    written = threading.Event()
    batches: list[list[NoteId]] = []

    def prolong(ids):
        batches.append(list(ids))
        written.set()
        return len(ids)

    log = ReadLog(prolong, delay=0.05)
    notes = [note() for _ in range(5)]
    for n in notes:
        log.saw([n])
    assert written.wait(5)
    log.close()
    assert batches == [[n.id for n in notes]]


def test_a_failed_batch_is_reported_and_dropped() -> None:
    failures: list[tuple[str, int]] = []

    def prolong(ids):
        raise StoreError("the disk is full")

    log = ReadLog(prolong, delay=0.01, on_error=lambda error, count: failures.append((str(error), count)))
    log.saw([note(), note()])
    log.close()
    assert failures and failures[0] == ("the disk is full", 2)
    assert log.flush() == 0


def test_close_writes_what_is_pending() -> None:
    batches: list[list[NoteId]] = []
    log = ReadLog(lambda ids: batches.append(list(ids)) or len(ids), delay=60)
    pending = note()
    log.saw([pending])
    log.close()
    assert batches == [[pending.id]]
