"""The vectors of whole projects held in this process, so that a hybrid search of a project
computes its cosines with numpy instead of having PostgreSQL read and score every vector
of the project on every search.

Per project and namespace (``space``), the vectors in the order of the spread's sample (a
fixed hash of the note id, then the id: ``queries.spread_part``), with the note ids and
createdAt: all of them when the project holds at most ``queries.EXACT_SCAN_MAX`` (the
exact scan and the spread are then answered here), else the first ``PREFIX`` (the spread
only; the HNSW walk stays in the database). 5,000 vectors of 384 floats: 7.7 MB.

Kept current by the change feed the keyword index follows (``keywords``): every write that
changes a note of a project, its vectors included (``writes.TOUCHED`` for ``rehome`` and
``drop_namespace``), bumps the project's counter. A search uses the copy only when it was
read at or after the feed position the keyword index just caught up with (``seen``);
otherwise a whole project's copy takes the feed's rows since (the changed notes with their
current vectors), and a prefix is read again, each in one snapshot with the counter. The
search that ranks newer-first reads its cosines from the copy too (``rows``). The filter of a
whole project (expired and superseded notes: ``hidden``) is applied at each search, from
the ids the keyword step asked in its round trip, so expiry needs no write to show.

Cosines as pgvector computes them (float32 sums, the quotient in double, clamped to
[-1, 1]): the same candidates, scores equal to about 1e-7. A project holding a vector of
zero length (whose cosine pgvector gives as NaN) is not held: its searches stay in SQL.

At most ``max_vectors`` vectors over all projects (least recently searched out first).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta, timezone

import numpy as np
import psycopg

from local_mcp_memory.adapters.postgres_store.queries import EXACT_SCAN_MAX
from local_mcp_memory.application.ports import NO_SPREAD, Candidate, Spread

MAX_VECTORS = 1_000_000
"""Vectors held over all projects: 1.5 GB of float32 at 384 dimensions."""

COUNT_MAX = 2 * EXACT_SCAN_MAX + 1
"""How far the vectors of a project not held whole are counted, once per load: far enough
past ``EXACT_SCAN_MAX`` that its hidden notes seldom bring the count back under it."""

PREFIX = 4_096
"""Vectors held of a project larger than ``EXACT_SCAN_MAX``: the spread's sample (1,024) and
room for the hidden notes among them."""

_COLUMNS = "(extract(epoch FROM v.created) * 1000000)::bigint, vector_send(v.embedding), hashtextextended(v.note, 0)"

LOAD_SQL = f"""SELECT v.note, {_COLUMNS} FROM vectors v
    WHERE v.space = %(space)s AND v.project = %(project)s
    ORDER BY hashtextextended(v.note, 0), v.note LIMIT %(limit)s"""

CHANGES_SQL = f"""SELECT c.note, {_COLUMNS} FROM keyword_changes c
    LEFT JOIN vectors v ON v.note = c.note AND v.space = %(space)s AND v.project = c.project
    WHERE c.project = %(project)s AND c.seq > %(seen)s
    UNION ALL SELECT NULL, NULL, NULL, NULL FROM keyword_totals WHERE project = %(project)s AND trimmed > %(seen)s"""
"""The project's notes changed since ``seen``, each with its vector here (null: none, or the
note is gone); a row of nulls when the feed was trimmed past ``seen`` (``keywords``)."""

COUNT_SQL = f"""SELECT count(*) FROM (SELECT 1 FROM vectors v WHERE v.space = %(space)s AND v.project = %(project)s
    LIMIT {COUNT_MAX}) x"""

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


class ProjectVectors:
    """One project's vectors in one namespace, as of feed position ``seen``; ``complete``:
    every one of them (else the first ``PREFIX`` in sample order, and ``count`` says how many
    there are, up to ``COUNT_MAX``). Read-only once built."""

    def __init__(
        self, ids: list[str], created: np.ndarray, matrix: np.ndarray, *, complete: bool, seen: int, count: int | None = None,
        hashes: np.ndarray | None = None,
    ) -> None:
        self.ids = ids
        self.hashes = np.zeros(len(ids), dtype=np.int64) if hashes is None else hashes  # the sample order's key
        self.count = len(ids) if count is None else count  # vectors of the project, up to COUNT_MAX
        self.created = created  # microseconds since the epoch
        self.matrix = matrix
        self.squares = np.einsum("ij,ij->i", matrix, matrix).astype(np.float64)  # pgvector sums in float32 too
        self.usable = bool(np.all(self.squares > 0.0))  # a zero vector: pgvector's cosine is NaN, searched in SQL
        self.complete = complete
        self.seen = seen
        self._rows: dict[str, int] | None = None

    def __len__(self) -> int:
        return len(self.ids)

    def changed(self, rows: list[tuple], seen: int) -> ProjectVectors:
        """A whole project's copy with the feed's ``rows`` since its position applied (each
        note changed: its row dropped, its current vector, if any, put in its place in sample
        order), as of ``seen``."""
        assert self.complete
        gone = {key for key, *_rest in rows}
        kept = [i for i, key in enumerate(self.ids) if key not in gone]
        new = [row for row in rows if row[2] is not None]
        ids = [self.ids[i] for i in kept] + [key for key, *_rest in new]
        hashes = np.concatenate([self.hashes[kept], np.array([row[3] for row in new], dtype=np.int64)])
        created = np.concatenate([self.created[kept], np.array([row[1] for row in new], dtype=np.int64)])
        parts = [m for m in (self.matrix[kept], _matrix(row[2] for row in new)) if len(m)]
        matrix = np.concatenate(parts) if parts else np.zeros((0, 0), dtype=np.float32)
        order = np.lexsort((np.array(ids, dtype=str), hashes)) if ids else np.zeros(0, dtype=np.int64)
        return ProjectVectors([ids[i] for i in order], created[order], matrix[order], complete=True, seen=seen,
                              hashes=hashes[order])

    def large(self, hidden: frozenset[str]) -> bool:
        """Whether the scope holds more than ``EXACT_SCAN_MAX`` vectors once ``hidden`` (ids
        of the project's notes, each with at most one vector here) is left out: the HNSW
        walk then runs without the statement counting the scope first."""
        return self.count - len(hidden) > EXACT_SCAN_MAX

    def nearest(self, q: np.ndarray, depth: int, hidden: frozenset[str]) -> list[Candidate]:
        """The ``depth`` best by cosine, then newer, then smaller id (the exact scan's order)."""
        assert self.complete
        cosines = _cosines(self.matrix, self.squares, q)
        if hidden:
            cosines[~self._visible(hidden)] = -np.inf
        k = min(depth, int(np.count_nonzero(cosines > -np.inf)))
        if k <= 0:
            return []
        bar = np.partition(cosines, cosines.size - k)[cosines.size - k]
        near = np.flatnonzero(cosines >= bar)  # ties at the bar all compared below
        best = sorted(near, key=lambda i: (-cosines[i], -self.created[i], self.ids[i]))[:k]
        return [Candidate(self.ids[i], _instant(self.created[i]), float(cosines[i])) for i in best]

    def spread(self, q: np.ndarray, sample: int, hidden: frozenset[str]) -> Spread | None:
        """Mean and population deviation of the cosines of the first ``sample`` visible
        vectors in sample order; None when the rows held do not reach that far."""
        if hidden:
            rows = np.flatnonzero(self._visible(hidden))[:sample]
            matrix, squares = self.matrix[rows], self.squares[rows]
        else:
            matrix, squares = self.matrix[:sample], self.squares[:sample]
        if len(squares) < sample and not self.complete:
            return None
        if len(squares) == 0:
            return NO_SPREAD
        cosines = _cosines(matrix, squares, q)
        return Spread(len(squares), float(cosines.mean()), float(cosines.std()))

    def _visible(self, hidden: frozenset[str]) -> np.ndarray:
        """Per row held, whether ``hidden`` leaves it in."""
        rows = self._row_of()
        out = np.ones(len(self.ids), dtype=bool)
        out[[rows[key] for key in hidden if key in rows]] = False
        return out

    def rows_of(self, ids: Sequence[str]) -> list[int] | None:
        """The rows of ``ids``, when every one is held."""
        rows = self._row_of()
        try:
            return [rows[key] for key in ids]
        except KeyError:
            return None

    def _row_of(self) -> dict[str, int]:
        if self._rows is None:
            self._rows = {key: i for i, key in enumerate(self.ids)}
        return self._rows


def _cosines(matrix: np.ndarray, squares: np.ndarray, q: np.ndarray) -> np.ndarray:
    """pgvector's ``1 - (a <=> q)``: float32 dot products, the quotient in double, clamped."""
    q32 = np.asarray(q, dtype=np.float32)
    # not ``matrix @ q32``: OpenBLAS spreads a product of this size over threads, which cost
    # 6 ms of CPU on two busy cores where one thread takes 0.25-0.5 ms
    dots = np.einsum("ij,j->i", matrix, q32).astype(np.float64)
    similarity = np.clip(dots / np.sqrt(squares * float(np.dot(q32, q32))), -1.0, 1.0)
    return 1.0 - (1.0 - similarity)


def _instant(microseconds: int) -> datetime:
    return _EPOCH + timedelta(microseconds=int(microseconds))


class VectorCache:
    """The ``ProjectVectors`` of this store object. Thread-safe: a lock per project and
    namespace around its load (sixteen searches of a project changed meanwhile read it
    once), one around the list held."""

    def __init__(self, max_vectors: int = MAX_VECTORS) -> None:
        self._held: OrderedDict[tuple[str, int], ProjectVectors] = OrderedDict()  # least recently searched first
        self._loading: dict[tuple[str, int], threading.Lock] = {}
        self._max = max_vectors
        self._lock = threading.Lock()

    def get(self, conn: psycopg.Connection, project: str, space: int, seen: int, notes: int | None) -> ProjectVectors | None:
        """``project``'s vectors in ``space`` as of feed position ``seen`` or later, read
        again when older; ``notes``: how many notes the project holds (None: unknown). None
        when it cannot be held (a zero vector, or no room)."""
        if self._max <= 0:
            return None
        key = (project, space)
        with self._lock:
            held = self._held.get(key)
            if held is not None:
                self._held.move_to_end(key)
            loading = self._loading.setdefault(key, threading.Lock())
        if held is not None and held.seen >= seen:
            return held if held.usable else None
        with loading:
            with self._lock:
                held = self._held.get(key)
            if held is None or held.seen < seen:
                held = _caught_up(conn, project, space, held, notes)
                if len(held) > self._max:
                    return None
                with self._lock:
                    self._held[key] = held
                    self._held.move_to_end(key)
                    self._evict(keep=key)
        return held if held.usable else None

    def rows(self, space: int, ids: Sequence[str], seen: Callable[[str], int | None]) -> np.ndarray | None:
        """The vectors of ``ids`` (rows in that order) from the copy of the project holding
        them all, when that copy is at least as new as the keyword index of the project has
        read the feed (``seen``: by project, None when not held); else None."""
        with self._lock:
            entries = [(project, held) for (project, held_space), held in self._held.items() if held_space == space]
        for project, held in entries:
            found = held.rows_of(ids)
            if found is not None:
                position = seen(project)
                return held.matrix[found] if position is not None and held.seen >= position else None
        return None

    def _evict(self, keep: tuple[str, int]) -> None:
        total = sum(len(held) for held in self._held.values())
        for key in list(self._held):
            if total <= self._max:
                return
            if key != keep:
                total -= len(self._held.pop(key))
                self._loading.pop(key, None)


def _caught_up(conn: psycopg.Connection, project: str, space: int, held: ProjectVectors | None, notes: int | None) -> ProjectVectors:
    """``held`` brought up to the feed's current position: a whole project's copy by the
    changes since (a few rows after a write), else (a prefix, the feed trimmed past it, or
    grown past ``EXACT_SCAN_MAX``) read again."""
    if held is None or not held.complete:
        return _load(conn, project, space, notes)
    with conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        found = conn.execute("SELECT seq FROM keyword_totals WHERE project = %s", (project,)).fetchone()
        rows = conn.execute(CHANGES_SQL, {"space": space, "project": project, "seen": held.seen}).fetchall()
    if any(row[0] is None for row in rows):
        return _load(conn, project, space, notes)
    changed = held.changed(rows, held.seen if found is None else int(found[0]))
    return changed if len(changed) <= EXACT_SCAN_MAX else _load(conn, project, space, notes)


def _load(conn: psycopg.Connection, project: str, space: int, notes: int | None) -> ProjectVectors:
    """The project's vectors in sample order with the feed position of the same snapshot."""
    limit = EXACT_SCAN_MAX + 1 if notes is None or notes <= EXACT_SCAN_MAX else PREFIX
    with conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        found = conn.execute("SELECT seq FROM keyword_totals WHERE project = %s", (project,)).fetchone()
        rows = conn.execute(LOAD_SQL, {"space": space, "project": project, "limit": limit}).fetchall()
        count = len(rows) if len(rows) < limit else conn.execute(COUNT_SQL, {"space": space, "project": project}).fetchone()[0]
    complete = len(rows) < limit
    if not complete and limit > PREFIX:
        rows = rows[:PREFIX]
    return ProjectVectors(
        [row[0] for row in rows], np.fromiter((row[1] for row in rows), np.int64, len(rows)), _matrix(row[2] for row in rows),
        complete=complete, seen=0 if found is None else int(found[0]), count=int(count),
        hashes=np.fromiter((row[3] for row in rows), np.int64, len(rows)),
    )


def _matrix(sent: Iterable[bytes]) -> np.ndarray:
    """Vectors in pgvector's binary form (two int16, then big-endian float32s) as rows."""
    blobs = [bytes(blob) for blob in sent]
    if not blobs:
        return np.zeros((0, 0), dtype=np.float32)
    width = len(blobs[0])
    raw = np.frombuffer(b"".join(blobs), dtype=np.uint8).reshape(len(blobs), width)
    return np.ascontiguousarray(raw[:, 4:]).view(">f4").astype(np.float32)
