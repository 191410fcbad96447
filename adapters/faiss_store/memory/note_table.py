"""The notes of the store in memory: one row per written version of a note, numpy columns.

Rows are append-only: a put appends a row for its note (so row order is write order) and
marks the note's previous row dead; a delete marks the row dead. A row never changes
otherwise, so whatever is derived from it (a decoded ``Note``) may be cached for good. Dead
rows stay until the next snapshot, which writes the live rows only, renumbered.

Columns (``columns.Column``): project, group and home-namespace codes (``columns.Names``),
createdAt and expiresAt in µs (``records.NEVER``: none), the dedup key's hash
(``records.dedup_hash``, computed when first needed), alive; tags in CSR form (``tag_end`` per row; ``tag_code`` and
``tag_row`` per tag); ``expiring``, the rows that have an expiresAt (most notes never
expire, so what depends on expiry looks at these only). Every filter is a numpy
expression over them (``mask``, ``expired``). The only per-note Python objects are the id
strings (``ids``: row -> id; ``row_of``: id -> live row).

A snapshot of format 2 or 3 has neither expiresAt nor hash columns: expiresAt is read
from the bodies that mention one (``derive_expiry``, when it is loaded), the hashes when
first needed (``dedup_values``).

Fields: rows loaded from a snapshot are decoded from its ``notes.bin`` when first needed
(``NoteBodies``), each note's CRC-32 checked on every decode; rows appended since hold
their ``NoteFields``. Decoded ``Note`` objects are cached per row, at most ``CACHE``, and
so are the createdAt datetimes searches read (``instants``), at most ``INSTANTS``.

Neighbours (``neighbours``): every row in the order of (group, createdAt, write order) is
derived from the columns when first needed after an append (two stable sorts, a radix sort
for the group codes), so a question finds the neighbours of all its candidates in one pass
over the rows its filter selects; a write stays O(1).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone

import numpy as np

from local_mcp_memory.adapters.faiss_store.format.records import (
    NEVER,
    NoteFields,
    decode_fields,
    encode,
    expiry_micros,
    fields_dedup_hash,
    note_of,
)
from local_mcp_memory.adapters.faiss_store.memory.columns import Column, Names
from local_mcp_memory.application.errors import StoreCorrupt
from local_mcp_memory.domain.errors import DomainError
from local_mcp_memory.domain.note import Note


class NoteBodies:
    """The bytes of a snapshot's notes (``notes.bin``, usually memory-mapped): row ``i``
    spans ``ends[i-1]:ends[i]`` and its CRC-32 is ``crcs[i]``."""

    def __init__(self, data, ends: np.ndarray, crcs: np.ndarray, path: str) -> None:
        self._raw = data  # bytes or mmap: both ``find``
        self._data = memoryview(data)
        self._ends = ends
        self._crcs = crcs
        self.path = path

    def raw(self, row: int) -> tuple[memoryview, int]:
        start = int(self._ends[row - 1]) if row else 0
        return self._data[start : int(self._ends[row])], int(self._crcs[row])

    def fields(self, row: int) -> NoteFields:
        raw, crc = self.raw(row)
        if zlib.crc32(raw) != crc:
            raise StoreCorrupt(f"{self.path}: note {row} fails its checksum; run `mcp-memory verify`", self.path)
        return decode_fields(raw, self.path)

    def mention(self, marker: bytes) -> bool:
        """Whether ``marker`` occurs anywhere in the bytes (one pass, no decoding)."""
        return self._raw.find(marker) >= 0

    def damaged_rows(self, crc: int | None) -> list[int]:
        """The rows whose bytes fail their CRC-32. One pass over the whole file when its
        CRC (``crc``) is known and holds; row by row only when it does not."""
        if crc is not None and zlib.crc32(self._data) == crc:
            return []
        return [row for row in range(self._ends.shape[0]) if zlib.crc32(self.raw(row)[0]) != int(self._crcs[row])]


class NoteTable:
    CACHE = 4096
    INSTANTS = 8192

    def __init__(
        self,
        names: Names | None = None,
        ids: Sequence[str] = (),
        rows: np.ndarray | None = None,
        tags: np.ndarray | None = None,
        bodies: NoteBodies | None = None,
    ) -> None:
        """An empty table, or the rows of a snapshot: ``rows`` of dtype ``records.NOTE_ROW``
        or ``NOTE_ROW_V3`` (codes into ``names``), ``tags`` the tag codes they point into,
        ``bodies`` their fields."""
        self.names = names if names is not None else Names()
        self.ids = list(ids)
        self.row_of = dict(zip(self.ids, range(len(self.ids))))
        n = len(self.ids)
        columns = () if rows is None else rows.dtype.names
        get = (lambda field: rows[field] if field in columns else None)
        self.project = Column("<i4", get("project"))
        self.group = Column("<i4", get("group"))
        self.home = Column("<i4", get("home"))
        self.created = Column("<i8", get("created"))
        expires = get("expires")
        self.expires = Column("<i8", np.full(n, NEVER, dtype=np.int64) if expires is None else expires, fill=NEVER)
        self.expiring = Column("<i8", np.flatnonzero(self.expires.values != NEVER))
        dedup = get("dedup")
        self.dedup = Column("<u8", np.zeros(n, dtype=np.uint64) if dedup is None else dedup)
        self._hashed = 0 if dedup is None else n  # rows below hold their dedup hash (``dedup_values``)
        self.alive = Column("?", np.ones(n, dtype=bool))
        self.tag_end = Column("<i8", get("tags_end"))
        self.tag_code = Column("<i4", tags)
        counts = np.diff(self.tag_end.values, prepend=0)
        self.tag_row = Column("<i4", np.repeat(np.arange(n, dtype=np.int32), counts))
        self._bodies = bodies
        self._loaded = n  # rows below come from ``bodies``
        self._fields: dict[int, NoteFields] = {}
        self._notes: dict[int, Note] = {}
        self._instants: dict[int, datetime] = {}  # ``instants``: row -> createdAt, at most INSTANTS
        self._line: tuple[np.ndarray, np.ndarray] | None = None  # ``line``, for as many rows as it covers

    def __len__(self) -> int:
        return len(self.row_of)

    # -- writing ----------------------------------------------------------------------

    def append(self, fields: NoteFields, home: str, created: int, expires: int) -> int:
        """A new live row for ``fields`` (createdAt ``created`` and expiresAt ``expires`` in
        µs); the caller has killed the note's previous row. Its dedup hash is computed when
        first needed (``dedup_values``): replaying a journal costs no hashing."""
        row = len(self.ids)
        code = self.names.code
        self.ids.append(fields.id)
        self.row_of[fields.id] = row
        self.project.append(code(fields.project))
        self.group.append(code(fields.group))
        self.home.append(code(home))
        self.created.append(created)
        self.expires.append(expires)
        if expires != NEVER:
            self.expiring.append(row)
        self.dedup.append(0)
        self.alive.append(True)
        for tag in fields.tags:
            self.tag_code.append(code(tag))
            self.tag_row.append(row)
        self.tag_end.append(self.tag_code.size)
        self._fields[row] = fields
        return row

    def kill(self, row: int) -> None:
        self.alive[row] = False
        del self.row_of[self.ids[row]]
        self._fields.pop(row, None)
        self._notes.pop(row, None)

    # -- reading ----------------------------------------------------------------------

    def fields(self, row: int) -> NoteFields:
        fields = self._fields.get(row)
        if fields is None:
            assert self._bodies is not None and row < self._loaded
            fields = self._bodies.fields(row)
        return fields

    def captured(self, row: int) -> NoteFields | None:
        """The fields of a row appended since the snapshot (None for a snapshot's row)."""
        return self._fields.get(row)

    def note(self, row: int, fields: NoteFields | None = None) -> Note:
        """The note of a row; ``fields``, if given, are its fields as captured earlier
        (a row appended since the snapshot keeps them only while it is live)."""
        note = self._notes.get(row)
        if note is None:
            if len(self._notes) >= self.CACHE:
                del self._notes[next(iter(self._notes))]
            fields = fields or self.fields(row)
            try:
                note = note_of(fields)
            except (DomainError, ValueError) as exc:
                raise StoreCorrupt(f"note {fields.id} as stored breaks a rule ({exc})", self._path()) from exc
            self._notes[row] = note
        return note

    def _path(self) -> str | None:
        return None if self._bodies is None else self._bodies.path

    def body(self, row: int) -> tuple[bytes | memoryview, int]:
        """The encoded fields of a row and their CRC-32, as ``notes.bin`` stores them."""
        if row < self._loaded:
            assert self._bodies is not None
            return self._bodies.raw(row)
        data = encode(self._fields[row])
        return data, zlib.crc32(data)

    def derive_expiry(self) -> None:
        """A format 2 or 3 snapshot's expiresAt, from the live notes' bodies, when any of
        them mentions one (a format 3 store written by a version that set expiresAt)."""
        if self._bodies is None or not self._bodies.mention(b'"expires":'):
            return
        for row in self.live_rows().tolist():
            expires = expiry_micros(self.fields(row))
            if expires != NEVER:
                self.expires[row] = expires
        self.expiring = Column("<i8", np.flatnonzero(self.expires.values != NEVER))

    def dedup_values(self) -> np.ndarray:
        """The dedup hash of every live row (a dead row's is meaningless), computing those
        of the rows written since the last call (and, once, a format 2 or 3 snapshot's)."""
        if self._hashed < len(self.ids):
            alive = self.alive.values
            for row in range(self._hashed, len(self.ids)):
                if alive[row]:
                    self.dedup[row] = fields_dedup_hash(self.fields(row))
            self._hashed = len(self.ids)
        return self.dedup.values

    def expiring_rows(self) -> np.ndarray:
        """The live rows with an expiresAt, in row order."""
        rows = self.expiring.values
        return rows[self.alive.values[rows]]

    def expired(self, now: int) -> np.ndarray:
        """The live rows expired at ``now`` (µs): ``now >= expiresAt``, in row order."""
        rows = self.expiring_rows()
        return rows[self.expires.values[rows] <= now]

    def home_name(self, row: int) -> str:
        return self.names.names[self.home[row]]

    def instants(self, rows: Sequence[int]) -> list[datetime]:
        """The createdAt of each of ``rows``. A row's never changes, and a session's searches
        meet the same rows again and again: each is converted once and kept (at most
        ``INSTANTS``, then all are dropped), the others read from the column in one step."""
        kept = self._instants
        missing = [row for row in rows if row not in kept]
        if missing:
            if len(kept) + len(missing) > self.INSTANTS:
                kept.clear()
                missing = list(rows)
            created = self.created.values[np.asarray(missing, dtype=np.int64)].tolist()
            for row, micros in zip(missing, created):
                kept[row] = _EPOCH + timedelta(microseconds=micros)
        return [kept[row] for row in rows]

    def order(self, row: int) -> tuple[int, str]:
        """Tie order: newer createdAt first, then id."""
        return -int(self.created[row]), self.ids[row]

    def live_rows(self, project: str | None = None) -> np.ndarray:
        """Live rows (of one project) in write order."""
        mask = self.alive.values
        if project is not None:
            code = self.names.find(project)
            if code is None:
                return np.empty(0, dtype=np.int64)
            mask = mask & (self.project.values == code)
        return np.flatnonzero(mask)

    def mask(
        self, project: str, group: str | None, since: int | None, until: int | None, tags: Sequence[str]
    ) -> np.ndarray | None:
        """Which rows are live and match (createdAt in µs, ``since`` included, ``until``
        excluded; every one of ``tags``); None when no row can."""
        find = self.names.find
        project_code = find(project)
        group_code = None if group is None else find(group)
        tag_codes = [find(tag) for tag in tags]
        if project_code is None or (group is not None and group_code is None) or None in tag_codes:
            return None
        mask = self.alive.values & (self.project.values == project_code)
        if group_code is not None:
            mask &= self.group.values == group_code
        if since is not None:
            mask &= self.created.values >= since
        if until is not None:
            mask &= self.created.values < until
        for tag in tag_codes:
            has = np.zeros(mask.shape[0], dtype=bool)
            has[self.tag_row.values[self.tag_code.values == tag]] = True
            mask &= has
        return mask

    def neighbours(self, rows: Sequence[int], mask: np.ndarray) -> dict[int, list[int]]:
        """For each of ``rows`` (each selected by ``mask``), the rows of its group selected by
        ``mask`` just before and just after it in the order of createdAt, ties by write order
        (at most two, the earlier first)."""
        line, place = self.line()
        inside = np.flatnonzero(mask[line])  # places in ``line`` of the selected rows
        asked = np.asarray(rows, dtype=np.int64)
        at = np.searchsorted(inside, place[asked])
        group = self.group.values
        near = []
        for step in (-1, 1):
            j = np.clip(at + step, 0, inside.shape[0] - 1)
            other = line[inside[j]]
            held = (at + step >= 0) & (at + step < inside.shape[0]) & (group[other] == group[asked])
            near.append(np.where(held, other, -1).tolist())
        return {row: [r for r in pair if r >= 0] for row, *pair in zip(rows, *near)}

    def line(self) -> tuple[np.ndarray, np.ndarray]:
        """Every row in the order of (group, createdAt, write order), and the place of each
        row in that line."""
        if self._line is None or self._line[0].shape[0] != len(self.ids):
            by_time = np.argsort(self.created.values, kind="stable")  # ties: write order
            groups = self.group.values[by_time]
            if len(self.names) <= np.iinfo(np.uint16).max:
                groups = groups.astype(np.uint16)  # sorted by radix, in linear time
            line = by_time[np.argsort(groups, kind="stable")]
            place = np.empty_like(line)
            place[line] = np.arange(line.shape[0])
            self._line = (line, place)
        return self._line


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
