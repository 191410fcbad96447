"""The append-only journal of one generation: one checksummed JSON record per line.

Writers append under the store's file lock, one ``write`` per record followed by
``fdatasync``; a write is acknowledged only after both. Readers consume only complete,
valid lines and remember the byte offset after the last one, so a record being written
by another process is simply not seen yet.

A *torn tail* (bytes after the last valid line: a writer killed mid-record, or a damaged
last line) is never applied; the next writer, holding the lock, truncates it before
appending. A damaged line followed by valid ones is not a crash artifact: ``StoreCorrupt``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import structlog

from adapters.faiss_store.disk import fsync_dir
from adapters.faiss_store.records import FORMAT, Header, Record, decode_line, encode_line
from application.errors import StoreCorrupt

log = structlog.get_logger()


class Journal:
    """An open journal file. ``offset`` is the byte just after the last record applied;
    ``records`` counts the records (header excluded) up to it."""

    def __init__(self, path: Path, fd: int, generation: int, offset: int) -> None:
        self.path = path
        self.generation = generation
        self.offset = offset
        self.records = 0
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
    def open(cls, path: Path, generation: int) -> Journal:
        """Open an existing journal and check its header. ``FileNotFoundError`` passes
        through (a newer compaction removed it); a bad header is ``StoreCorrupt``."""
        fd = os.open(path, os.O_RDWR | os.O_APPEND)
        first = os.pread(fd, 4096, 0).split(b"\n", 1)
        header = decode_line(first[0]) if len(first) == 2 else None
        if not isinstance(header, Header) or header.format != FORMAT or header.generation != generation:
            os.close(fd)
            raise StoreCorrupt(
                f"{path} does not start with a format-{FORMAT} header of generation {generation}",
                str(path),
            )
        return cls(path, fd, generation, len(first[0]) + 1)

    def size(self) -> int:
        return os.fstat(self._fd).st_size

    def unlinked(self) -> bool:
        """Whether a compaction removed this file: the manifest has surely moved on."""
        return os.fstat(self._fd).st_nlink == 0

    def read_new(self) -> list[Record]:
        """The valid records written since ``offset``, which moves past them."""
        size = self.size()
        if size <= self.offset:
            return []
        data = os.pread(self._fd, size - self.offset, self.offset)
        lines = data.split(b"\n")
        lines.pop()  # an incomplete last line, or b"" after the final newline
        records: list[Record] = []
        consumed = 0
        for number, line in enumerate(lines):
            entry = decode_line(line)
            if entry is None or isinstance(entry, Header):
                self._check_tail(lines[number + 1 :], self.offset + consumed)
                break
            records.append(entry)
            consumed += len(line) + 1
        self.offset += consumed
        self.records += len(records)
        return records

    def _check_tail(self, rest: list[bytes], at: int) -> None:
        if any(decode_line(line) is not None for line in rest):
            raise StoreCorrupt(
                f"{self.path} holds a damaged record at byte {at} followed by valid ones; "
                "restore the data directory from a backup",
                str(self.path),
            )

    def cut_torn_tail(self) -> None:
        """Truncate bytes after the last valid record. Call with the lock held, after
        ``read_new``: no other process is writing, so such bytes are a dead writer's."""
        size = self.size()
        if size > self.offset:
            log.warning("store.journal.torn_tail_truncated", path=str(self.path), bytes=size - self.offset)
            os.ftruncate(self._fd, self.offset)
            os.fsync(self._fd)

    def append(self, records: Sequence[Record]) -> None:
        """Write records in one write and make them durable with one sync. Call with the
        lock held, caught up. A crash before the sync may leave some of them, never a
        partial one (a torn line is not applied)."""
        line = b"".join(encode_line(record) for record in records)
        view = memoryview(line)
        try:
            while view:
                view = view[os.write(self._fd, view) :]
            os.fdatasync(self._fd)
        except OSError:
            _truncate_quietly(self._fd, self.offset)
            raise
        self.offset += len(line)
        self.records += len(records)

    def close(self) -> None:
        os.close(self._fd)


def _truncate_quietly(fd: int, offset: int) -> None:
    """Best effort after a failed append: never leave our own partial line behind."""
    try:
        os.ftruncate(fd, offset)
    except OSError:
        pass
