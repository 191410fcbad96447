"""The append-only journal of one generation: one checksummed JSON record per line.

Writers append under the store's file lock, one ``write`` per batch of records followed
by ``fdatasync``; a write is acknowledged only after both. From format 6 the records of
one write share one line (``Batch``), so a write killed half-way leaves none of them.
Readers consume only complete (newline-terminated) lines and remember the byte offset
after the last one, so a record being written by another process is simply not seen yet.

A complete line failing its checksum is damage, wherever it is: it is skipped, logged
once (``store.journal.damaged_record``, path and byte offset) and reported to the state as
``Damaged`` with what it was about, so the records after it still apply. A damaged byte
that merged two lines loses neither: the reader splits a bad line where a record starts
(``{"crc":"``) and tries each part, and a part's last byte (the lost newline). Only an
incomplete last line (no ``\\n``) is a *torn tail*, a writer killed mid-record: never
applied, and cut by the next writer holding the lock, unless it is a whole valid record
that lost only its newline, which the writer completes instead.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path

import msgspec
import structlog

from local_mcp_memory.adapters.durable_files import fsync_dir
from local_mcp_memory.adapters.faiss_store.format.framing import PREFIX, About, Damaged, decode_line, encode_line, read_line
from local_mcp_memory.adapters.faiss_store.format.records import FORMAT, READS, Batch, Header, JournalEntry, Record
from local_mcp_memory.adapters.regular_files import NotRegularFile, regular_fd
from local_mcp_memory.application.errors import StoreCorrupt

log = structlog.get_logger()


class JournalCut(Exception):
    """The journal is shorter than what this process has read of it: a writer whose sync
    failed took back lines another process had read already, or the file was cut or
    replaced from outside. What this process applied from it no longer stands."""

    def __init__(self, path: Path, size: int, read: int) -> None:
        super().__init__(f"{path} is {size} bytes, shorter than the {read} read from it")
        self.path, self.size, self.read = path, size, read


class Journal:
    """An open journal file. ``offset`` is the byte just after the last record applied;
    ``records`` counts the records (header excluded) up to it."""

    def __init__(self, path: Path, fd: int, generation: int, offset: int) -> None:
        self.path = path
        self.generation = generation
        self.offset = offset
        self.records = 0
        self.damaged: list[Damaged] = []
        self._fd = fd

    @classmethod
    def create(cls, path: Path, generation: int) -> Journal:
        """A new journal holding only its header, durable with its directory entry."""
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o600)
        line = encode_line(Header(format=FORMAT, generation=generation))
        os.write(fd, line)
        os.fsync(fd)
        fsync_dir(path.parent)
        return cls(path, fd, generation, len(line))

    @classmethod
    def open(cls, path: Path, generation: int, *, writable: bool = True) -> Journal:
        """Open an existing journal and check its header. ``FileNotFoundError`` passes
        through (a newer compaction removed it); a header of another generation or format,
        or none at all, is ``StoreCorrupt``. ``writable=False`` (``verify``, ``salvage``)
        opens it read-only."""
        try:  # a FIFO in its place is told, not waited on
            fd = regular_fd(path, os.O_RDWR | os.O_APPEND if writable else os.O_RDONLY)
        except NotRegularFile:
            raise StoreCorrupt(f"{path} is not a regular file; run `mcp-memory verify`", str(path)) from None
        journal = cls(path, fd, generation, 0)
        try:
            journal.offset = journal._records_start(os.pread(fd, 4096, 0).split(b"\n", 1))
        except BaseException:
            os.close(fd)
            raise
        return journal

    def _records_start(self, first: list[bytes]) -> int:
        """Where the records start: after the header, or at 0 when the header is damaged
        (then it is read as a line like the others, reported, and costs no record)."""
        if len(first) < 2:
            raise StoreCorrupt(f"{self.path} has no header line; restore it or run `mcp-memory salvage`", str(self.path))
        header = decode_line(first[0])
        if header is None:
            return 0
        if not isinstance(header, Header) or header.format not in READS or header.generation != self.generation:
            raise StoreCorrupt(f"{self.path} does not start with a header of generation {self.generation}", str(self.path))
        return len(first[0]) + 1

    def size(self) -> int:
        return os.fstat(self._fd).st_size

    def unlinked(self) -> bool:
        """Whether a compaction removed this file: the manifest has surely moved on."""
        return os.fstat(self._fd).st_nlink == 0

    def read_new(self) -> list[Record | Damaged]:
        """The records of the complete lines written since ``offset``, which moves past
        them, with a ``Damaged`` in place of each line that fails its checksum;
        ``JournalCut`` when the file is now shorter than ``offset``."""
        size = self.size()
        if size < self.offset:
            raise JournalCut(self.path, size, self.offset)
        if size == self.offset:
            return []
        data = os.pread(self._fd, size - self.offset, self.offset)
        found = list(self._logged(lines_of(data, str(self.path), self.offset)))
        self.offset += data.rfind(b"\n") + 1
        self.records += sum(1 for item in found if not isinstance(item, Damaged))
        return found

    def _logged(self, items: Iterator[Record | Damaged]) -> Iterator[Record | Damaged]:
        for item in items:
            if isinstance(item, Damaged):
                self.damaged.append(item)
                log.warning("store.journal.damaged_record", path=item.path, offset=item.offset, about=_described(item.about))
            yield item

    def repair_tail(self) -> None:
        """Deal with bytes after the last complete line. Call with the lock held, after
        ``read_new``: no other process is writing, so they are a dead writer's torn record
        (cut), or a whole record whose newline was lost or damaged (completed, then read)."""
        size = self.size()
        if size <= self.offset:
            return
        tail = os.pread(self._fd, size - self.offset, self.offset)
        if decode_line(tail) is not None:
            os.write(self._fd, b"\n")
        elif decode_line(tail[:-1]) is not None:
            os.ftruncate(self._fd, size - 1)
            os.write(self._fd, b"\n")
        else:
            log.warning("store.journal.torn_tail_truncated", path=str(self.path), bytes=size - self.offset)
            os.ftruncate(self._fd, self.offset)
        os.fsync(self._fd)

    def append(self, lines: Sequence[bytes], records: int | None = None) -> None:
        """Write records' lines (``framing.checked_line``, ``batch_line``) in one write and
        make them durable with one sync; ``records`` they hold (default: one a line). Call
        with the lock held, caught up. A crash before the sync may leave some of the lines,
        never a partial one (a torn line is not applied): a batch line is all or none."""
        line = b"".join(lines)
        view = memoryview(line)
        try:
            while view:
                view = view[os.write(self._fd, view) :]
            os.fdatasync(self._fd)
        except OSError:
            _truncate_quietly(self._fd, self.offset)
            raise
        self.offset += len(line)
        self.records += len(lines) if records is None else records

    def close(self) -> None:
        os.close(self._fd)


def lines_of(data: bytes, path: str, offset: int = 0) -> Iterator[Record | Damaged]:
    """The records of ``data``'s complete lines (bytes after the last ``\\n`` are left
    out), a ``Damaged`` for each that fails its checksum; headers are skipped."""
    at = 0
    for line in data[: data.rfind(b"\n") + 1].split(b"\n")[:-1]:
        yield from entries(line, offset + at, path)
        at += len(line) + 1


def entries(line: bytes, offset: int, path: str) -> Iterator[Record | Damaged]:
    """The record of one line (headers skipped), or, when it fails its checksum, of each
    part of it that starts like a record (a damaged newline merged them), each part tried
    also without its last byte (that newline); a ``Damaged`` for each part that fails."""
    entry = decode_line(line)
    if entry is not None:
        yield from _records(entry)
        return
    starts = sorted({0, *_occurrences(line, PREFIX)})
    for number, start in enumerate(starts):
        part = line[start : starts[number + 1] if number + 1 < len(starts) else len(line)]
        entry = decode_line(part) if len(starts) > 1 else None
        if entry is None and number + 1 < len(starts):
            entry = decode_line(part[:-1])
        if entry is None:
            yield Damaged(path, offset + start, read_line(part)[1])
        else:
            yield from _records(entry)


def _records(entry: JournalEntry) -> tuple[Record, ...]:
    """The records of one decoded line: none for a header, a batch's in order."""
    if isinstance(entry, Header):
        return ()
    if isinstance(entry, Batch):
        return entry.records
    return (entry,)


def _occurrences(data: bytes, marker: bytes) -> Iterator[int]:
    at = data.find(marker)
    while at >= 0:
        yield at
        at = data.find(marker, at + 1)


def _described(about: About | None) -> object:
    return None if about is None else msgspec.to_builtins(about)


def _truncate_quietly(fd: int, offset: int) -> None:
    """Best effort after a failed append: never leave our own partial line behind."""
    try:
        os.ftruncate(fd, offset)
    except OSError:
        pass
