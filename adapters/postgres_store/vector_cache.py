"""The vectors of whole projects held in this process, so that a hybrid search of a project
computes its cosines with numpy instead of having PostgreSQL read and score every vector
of the project on every search.

Per project and namespace (``space``), the vectors in the order of the spread's sample (a
fixed hash of the note id, then the id: ``queries.spread_part``), with the note ids and
createdAt (``project_vectors``): all of them when the project holds at most
``queries.EXACT_SCAN_MAX`` (the exact scan and the spread are then answered here), else the
first ``PREFIX`` (the spread only; the HNSW walk stays in the database) until a graph of the
whole project, built on a thread of its own the first time (``vector_graph``), takes over
the semantic candidates too. 5,000 vectors of 384 floats: 7.7 MB.

Kept current by the change feed the keyword index follows (``keywords``): every write that
changes a note of a project, its vectors included (``writes.TOUCHED`` for ``rehome`` and
``drop_namespace``), bumps the project's counter. A search uses the copy only when it was
read at or after the feed position the keyword index just caught up with (``seen``);
otherwise a whole project's copy, or a graph, takes the feed's rows since (the changed notes
with their current vectors), and a prefix is read again, each in one snapshot with the counter. The
search that ranks newer-first reads its cosines from the copy too (``rows``). The filter of a
whole project (expired and superseded notes: ``hidden``) is applied at each search, from
the ids the keyword step asked in its round trip, so expiry needs no write to show.

Cosines as pgvector computes them (float32 sums, the quotient in double, clamped to
[-1, 1]): the same candidates, scores equal to about 1e-7. A project holding a vector of
zero length (whose cosine pgvector gives as NaN) is not held: its searches stay in SQL.

At most ``max_vectors`` vectors over all projects (least recently searched out first; a
graph's vectors count twice).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np
import psycopg

from local_mcp_memory.adapters import long_lived
from local_mcp_memory.adapters.postgres_store.project_vectors import ProjectVectors, sent_matrix
from local_mcp_memory.adapters.postgres_store.queries import EXACT_SCAN_MAX
from local_mcp_memory.adapters.postgres_store.vector_graph import RETRY_AFTER, Connect, GraphBuild, ProjectGraph

__all__ = ["COUNT_MAX", "MAX_VECTORS", "PREFIX", "ProjectVectors", "VectorCache"]

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

CHANGES_SQL = f"""SELECT c.note, {_COLUMNS}, NULL::bigint FROM keyword_changes c
    LEFT JOIN vectors v ON v.note = c.note AND v.space = %(space)s AND v.project = c.project
    WHERE c.project = %(project)s AND c.seq > %(seen)s
    UNION ALL SELECT NULL, NULL, NULL, NULL, CASE WHEN trimmed > %(seen)s THEN NULL ELSE seq END FROM keyword_totals
    WHERE project = %(project)s"""
"""The project's notes changed since ``seen``, each with its vector here (null: none, or the
note is gone), and a row without a note giving the feed's position, null when the feed was
trimmed past ``seen`` (``keywords``): one statement, one snapshot."""

COUNT_SQL = f"""SELECT count(*) FROM (SELECT 1 FROM vectors v WHERE v.space = %(space)s AND v.project = %(project)s
    LIMIT {COUNT_MAX}) x"""

Held = ProjectVectors | ProjectGraph


class VectorCache:
    """The ``ProjectVectors`` and ``ProjectGraph`` of this store object. Thread-safe: a lock
    per project and namespace around its load (sixteen searches of a project changed
    meanwhile read it once), one around the list held. ``connect``: a connection of its own
    for each graph build (None: no graphs, large projects walk PostgreSQL's HNSW index)."""

    def __init__(self, max_vectors: int = MAX_VECTORS, connect: Connect | None = None) -> None:
        self._held: OrderedDict[tuple[str, int], Held] = OrderedDict()  # least recently searched first
        self._loading: dict[tuple[str, int], threading.Lock] = {}
        self._max = max_vectors
        self._lock = threading.Lock()
        self._connect = connect
        self._builds: dict[tuple[str, int], GraphBuild] = {}
        self._refused: dict[tuple[str, int], float] = {}  # builds that failed or did not fit: when
        self._closed = False

    def get(self, conn: psycopg.Connection, project: str, space: int, seen: int, notes: int | None) -> Held | None:
        """``project``'s vectors in ``space`` as of feed position ``seen`` or later, read
        again when older; ``notes``: how many notes the project holds (None: unknown). None
        when it cannot be held (a zero vector, or no room). A project held in part starts
        the build of its graph; a graph that has changed enough, its next one."""
        if self._max <= 0:
            return None
        key = (project, space)
        with self._lock:
            held = self._held.get(key)
            if held is not None:
                self._held.move_to_end(key)
            loading = self._loading.setdefault(key, threading.Lock())
        if held is None or held.seen < seen:
            with loading:
                with self._lock:
                    held = self._held.get(key)
                if held is None or held.seen < seen:
                    held = _caught_up(conn, project, space, held, notes)
                    if not self._hold(key, held):
                        return None
        self._build_if_due(key, held)
        return held if held.usable else None

    def current(self, conn: psycopg.Connection, project: str, space: int, hidden: tuple[str, dict] | None) -> tuple[Held, frozenset[str]] | None:
        """For a search without a keyword step (which would say how far the feed has come):
        ``project``'s whole copy or graph in ``space`` brought up to the feed's current
        position, with the ids ``hidden`` (a query) names; None when the project is not held
        whole (a first search loads it; a large project's graph is built, or built again
        once stale, as ``get`` does)."""
        if self._max <= 0:
            return None
        key = (project, space)
        with self._lock:
            held = self._held.get(key)
        if held is None:
            self.get(conn, project, space, 0, None)
        with self._lock:
            held = self._held.get(key)
            loading = self._loading.setdefault(key, threading.Lock())
        if held is None or not held.complete:
            if held is not None:
                self._build_if_due(key, held)
            return None
        found, left_out = _changes(conn, project, space, held.seen, hidden)  # outside the lock: one round trip
        with loading:
            with self._lock:
                latest = self._held.get(key, held)
            if found is not None and latest.complete and latest.seen >= found[1]:
                caught_up = latest  # another search went as far meanwhile
            else:  # the rows since an older position, applied again to a newer copy, give the same
                caught_up = _applied(conn, project, space, latest, found, None) if latest.complete else latest
            if caught_up is not latest and not self._hold(key, caught_up):
                return None
        self._build_if_due(key, caught_up)
        return (caught_up, left_out) if caught_up.complete and caught_up.usable else None

    def whole(self, project: str, space: int) -> Held | None:
        """``project``'s whole copy or graph in ``space`` as held now, without reading the
        feed (None: not held whole): the cosines of a search's neighbours come from the copy
        its candidates were found in."""
        with self._lock:
            held = self._held.get((project, space))
        return held if held is not None and held.complete and held.usable else None

    def vectors_of(self, space: int, ids: Sequence[str], seen: Callable[[str], int | None]) -> np.ndarray | None:
        """The vectors of ``ids`` (rows in that order) from the copy of the project holding
        them all, when that copy is at least as new as the keyword index of the project has
        read the feed (``seen``: by project, None when not held); else None. The copies are
        tried most recently searched first: the notes asked about are those of a search just
        made, and a failed lookup in each of a few hundred copies cost half a millisecond, each
        copy's table cold in the processor's caches."""
        with self._lock:
            entries = list(reversed(self._held.items()))
        for (project, held_space), held in entries:
            if held_space != space:
                continue
            found = held.vectors_of(ids)
            if found is not None:
                position = seen(project)
                return found if position is not None and held.seen >= position else None
        return None

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the graph builds running; whether they ended within ``timeout`` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            builds = list(self._builds.values())
        return all(build.wait(None if deadline is None else max(0.0, deadline - time.monotonic())) for build in builds)

    def close(self) -> None:
        """Stop the graph builds running and wait for their threads."""
        with self._lock:
            self._closed = True
            builds = list(self._builds.values())
        for build in builds:
            build.stop()

    def room(self) -> int:
        """Vectors that may still be held without letting any held out."""
        with self._lock:
            return self._max - sum(len(held) for held in self._held.values())

    def warm(self, project: str, space: int) -> GraphBuild | None:
        """Start the build of ``project``'s graph in ``space`` before any search asks (a
        server warming up); the build to wait for, None when a graph is held already, one is
        being built, or none may be (no graphs, closed, refused lately)."""
        key = (project, space)
        with self._lock:
            if isinstance(self._held.get(key), ProjectGraph):
                return None
        return self._build(key)

    def _build_if_due(self, key: tuple[str, int], held: Held) -> None:
        """Start the build of ``key``'s graph when ``held`` is only part of the project (it
        has grown past an exact scan), or a graph that has changed enough; a graph whose
        tail has grown long is extended with it instead."""
        if not held.complete or (isinstance(held, ProjectGraph) and held.stale()):
            self._build(key)
        elif isinstance(held, ProjectGraph) and held.long_tail():
            self._build(key, held)

    def _build(self, key: tuple[str, int], source: ProjectGraph | None = None) -> GraphBuild | None:
        """Start a build of ``key``'s graph (``source``: the extension of that one) unless
        one runs, one failed lately, or closed; the build started, if any."""
        if self._connect is None:
            return None
        with self._lock:
            refused = self._refused.get(key)
            if self._closed or key in self._builds or (refused is not None and time.monotonic() - refused < RETRY_AFTER):
                return None

            def install(graph: ProjectGraph) -> bool:
                return self._install(key, graph)

            def done(built: bool) -> None:
                with self._lock:
                    self._builds.pop(key, None)
                    if not built:
                        self._refused[key] = time.monotonic()

            build = self._builds[key] = GraphBuild(self._connect, key, install, done, source)
            return build

    def _install(self, key: tuple[str, int], graph: ProjectGraph) -> bool:
        """Hold ``graph`` for ``key`` (the next search brings it up to the feed), when it fits."""
        with self._lock:
            loading = self._loading.setdefault(key, threading.Lock())
        with loading:
            held = self._hold(key, graph)
        if held:
            long_lived.built(len(graph))
        return held

    def _hold(self, key: tuple[str, int], held: Held) -> bool:
        """Hold ``held`` for ``key``, the others out as far as needed; False when it does not fit."""
        if len(held) > self._max:
            return False
        with self._lock:
            self._held[key] = held
            self._held.move_to_end(key)
            self._evict(keep=key)
        return True

    def _evict(self, keep: tuple[str, int]) -> None:
        total = sum(len(held) for held in self._held.values())
        for key in list(self._held):
            if total <= self._max:
                return
            if key != keep:
                total -= len(self._held.pop(key))
                self._loading.pop(key, None)


def _changes(
    conn: psycopg.Connection, project: str, space: int, seen: int, hidden: tuple[str, dict] | None = None,
) -> tuple[tuple[list[tuple], int] | None, frozenset[str]]:
    """The feed's rows of ``project`` since ``seen`` and its position (None when the feed was
    trimmed past ``seen``), and the ids ``hidden`` (a query) names, in one round trip."""
    with conn.pipeline():
        changes = conn.execute(CHANGES_SQL, {"space": space, "project": project, "seen": seen})
        named = None if hidden is None else conn.execute(*hidden)
    rows = changes.fetchall()
    left_out = frozenset() if named is None else frozenset(key for (key,) in named.fetchall())
    positions = [row[4] for row in rows if row[0] is None]
    if any(position is None for position in positions):
        return None, left_out
    return ([row for row in rows if row[0] is not None], int(positions[0]) if positions else seen), left_out


def _caught_up(conn: psycopg.Connection, project: str, space: int, held: Held | None, notes: int | None) -> Held:
    """``held`` brought up to the feed's current position: a whole project's copy or a graph
    by the changes since (a few rows after a write), else (a prefix, the feed trimmed past
    it, or a project grown past or shrunk under ``EXACT_SCAN_MAX``) read again."""
    if held is None or not held.complete:
        return _load(conn, project, space, notes)
    return _applied(conn, project, space, held, _changes(conn, project, space, held.seen)[0], notes)


def _applied(
    conn: psycopg.Connection, project: str, space: int, held: Held, found: tuple[list[tuple], int] | None, notes: int | None,
) -> Held:
    """A whole copy or graph with the feed's rows ``found`` applied (``_changes``; None: the
    feed was trimmed past it), or read again."""
    if found is None:
        return _load(conn, project, space, notes)
    rows, position = found
    if not rows and position == held.seen:
        return held
    changed = held.changed(rows, position)
    if isinstance(changed, ProjectGraph):
        return changed if changed.count > EXACT_SCAN_MAX else _load(conn, project, space, notes)
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
        [row[0] for row in rows], np.fromiter((row[1] for row in rows), np.int64, len(rows)), sent_matrix(row[2] for row in rows),
        complete=complete, seen=0 if found is None else int(found[0]), count=int(count),
        hashes=np.fromiter((row[3] for row in rows), np.int64, len(rows)),
    )
