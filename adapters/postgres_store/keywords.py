"""Keyword search of the PostgreSQL store: the local store's BM25 (``adapters.keyword_index``,
one implementation, so both stores give the same answers), held in this process per project
and kept exact by a change feed in the database.

The feed: every write that adds, changes or removes a note of a project bumps the
project's counter (``keyword_totals.seq``) and records ``(project, note, seq)`` in
``keyword_changes`` (one row per note, the latest change), in the write's own transaction.
Every write of a project holds the project's ``keyword_totals`` row until it commits, so
within a project the counter's order is the commit order: a reader that has seen every
change up to ``seq`` has seen all that committed before it, and ``seq > seen`` is exactly
what it has not seen yet.

A project's index is built on its first keyword search, from ``note_terms`` and ``notes`` in
one snapshot together with the counter of that snapshot (``load``: 100k notes in about a
second); before every search, the changes since are applied (``catch_up``: one indexed
query, usually no rows; a server that has fallen behind the trimmed part of the feed loads
the project again). Several server processes on one database each keep their own
index and each stays exact. Projects are kept least recently searched first out: at most
``max_notes`` notes over all projects held (``PostgresKeywords``), the one searched always;
searches of different projects do not wait for each other.

What a search may return is decided by the database, so the index holds every note of a
project and filters never go stale: for the whole project, the ids of its expired and
superseded notes (``hidden``), asked in the catch-up's round trip (a pipeline: one round trip
for both), which the search leaves out; for a group, tags or a time window, the filter of
the question on the notes the index proposes (``accept``), in batches.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import psycopg

from local_mcp_memory.adapters.keyword_index import KeywordIndex
from local_mcp_memory.adapters.postgres_store import codec

MAX_NOTES = 1_000_000
"""Notes held in the keyword indexes of one process, over all projects: about 1-1.5 KB each
(a server holding a project of 100k notes with the local model loaded: 400 MiB)."""

_CREATED_US = "(extract(epoch FROM n.created) * 1000000)::bigint"

LOAD_SQL = f"""SELECT n.id, {_CREATED_US}, t.terms, t.tfs
    FROM notes n LEFT JOIN note_terms t ON t.note = n.id WHERE n.project = %(project)s"""
"""Every note of a project with its createdAt (microseconds) and its terms' counts."""

CHANGES_SQL = f"""SELECT c.seq, c.note, n.id IS NOT NULL, {_CREATED_US}, t.terms, t.tfs
    FROM keyword_changes c LEFT JOIN notes n ON n.id = c.note AND n.project = c.project
    LEFT JOIN note_terms t ON t.note = n.id
    WHERE c.project = %(project)s AND c.seq > %(seen)s
    UNION ALL SELECT NULL, NULL, NULL, NULL, NULL, NULL FROM keyword_totals
    WHERE project = %(project)s AND trimmed > %(seen)s"""
"""The project's notes changed since ``seen``: present (with createdAt and terms) or gone;
and a row of nulls when the feed has been trimmed past ``seen`` (``writes.trim_changes``):
removals the reader has not seen may be gone from it, so it loads the project again."""

CHANGED = """INSERT INTO keyword_changes (project, note, seq) {rows}
    ON CONFLICT (project, note) DO UPDATE SET seq = EXCLUDED.seq"""
"""Record changes in the feed: ``rows`` selects ``(project, note id, seq)``, the seq taken
from the project's ``keyword_totals`` row that the same statement updated (and so locked)."""

Accept = Callable[[list[str]], np.ndarray]
Query = tuple[str, dict[str, Any]]


class Found(NamedTuple):
    """A keyword search's answer: the notes found with their scores, the ids ``hidden``
    named (None when not asked), and how far into the project's feed the index had read."""

    notes: list[tuple[str, float]]
    hidden: frozenset[str] | None
    seen: int


def _not_in(left_out: frozenset[str]) -> Accept:
    def accept(ids: list[str]) -> np.ndarray:
        return np.fromiter((key not in left_out for key in ids), dtype=bool, count=len(ids))

    return accept


def _counts(terms: list[str] | None, tfs: list[int] | None) -> dict[str, int]:
    return {} if terms is None else dict(zip(terms, tfs))


class _Held:
    """One project's index and how far into the feed it has read (None: not built yet)."""

    def __init__(self) -> None:
        self.index = KeywordIndex(None, term=codec.term)
        self.seen: int | None = None
        self.lock = threading.Lock()


class PostgresKeywords:
    """The keyword indexes of one store object. Thread-safe: a lock per project around its
    build, catch-up and search (searches of different projects run side by side), and one
    around the list of projects held."""

    def __init__(self, max_notes: int = MAX_NOTES) -> None:
        self._held: OrderedDict[str, _Held] = OrderedDict()  # least recently searched first
        self._max_notes = max_notes
        self._lock = threading.Lock()

    def search(
        self, conn: psycopg.Connection, project: str, query: str, depth: int, accept: Accept | None,
        hidden: Query | None = None,
    ) -> Found:
        """The ``depth`` best notes of ``project`` for ``query`` that ``accept`` lets through
        and that ``hidden`` (a query of note ids, run in the catch-up's round trip) does not
        name, as ``KeywordIndex.search`` orders them, with every change committed before the call."""
        with self._lock:
            held = self._held.setdefault(project, _Held())
            self._held.move_to_end(project)
        with held.lock:
            before = held.index.size(project) or 0  # 0 before its first load
            if held.seen is None:
                self._load(conn, project, held)
                left_out = None if hidden is None else conn.execute(*hidden).fetchall()
            else:
                left_out = self._catch_up(conn, project, held, hidden)
            grew = (held.index.size(project) or 0) > before
            hidden_ids = None if left_out is None else frozenset(key for (key,) in left_out)
            if hidden_ids is not None:
                accept = _not_in(hidden_ids)
            found = held.index.search(project, query, depth, accept)
            assert held.seen is not None
            seen = held.seen
        if grew:  # only a load or notes taken in add to what is held: else no need to count every project
            self._evict(keep=project)
        return Found(found, hidden_ids, seen)

    def warm(self, conn: psycopg.Connection, project: str) -> None:
        """Build ``project``'s index before any search asks (a server warming up), unless held."""
        with self._lock:
            held = self._held.setdefault(project, _Held())
        with held.lock:
            if held.seen is None:
                self._load(conn, project, held)
        self._evict(keep=project)

    def room(self) -> int:
        """Notes that may still be held without letting any project's index go."""
        with self._lock:
            return self._max_notes - sum(held.index.size(project) or 0 for project, held in self._held.items())

    def seen(self, project: str) -> int | None:
        """How far into ``project``'s feed its index has read; None when not held."""
        with self._lock:
            held = self._held.get(project)
        return None if held is None else held.seen

    def notes(self, project: str) -> int | None:
        """How many notes ``project`` holds as of its last search here; None when not held."""
        with self._lock:
            held = self._held.get(project)
        return None if held is None or held.seen is None else held.index.size(project)

    def _load(self, conn: psycopg.Connection, project: str, held: _Held) -> None:
        with conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            found = conn.execute("SELECT seq FROM keyword_totals WHERE project = %s", (project,)).fetchone()
            cursor = conn.cursor(name="keyword_load")
            cursor.itersize = 5000
            cursor.execute(LOAD_SQL, {"project": project})
            held.index.build(project, ((key, created, _counts(terms, tfs)) for key, created, terms, tfs in cursor))
            cursor.close()
        held.seen = 0 if found is None else int(found[0])

    def _catch_up(self, conn: psycopg.Connection, project: str, held: _Held, hidden: Query | None) -> list[tuple] | None:
        """Apply the changes since ``held.seen``; the rows of ``hidden``, asked in the same
        round trip (a pipeline), or None."""
        assert held.seen is not None
        with conn.pipeline():
            changes = conn.execute(CHANGES_SQL, {"project": project, "seen": held.seen})
            left_out = None if hidden is None else conn.execute(*hidden)
        rows = changes.fetchall()
        if any(row[0] is None for row in rows):  # behind the feed's trim: load the project again
            self._load(conn, project, held)
        else:
            self._apply(project, held, rows)
        return None if left_out is None else left_out.fetchall()

    def _apply(self, project: str, held: _Held, rows: list[tuple]) -> None:
        assert held.seen is not None
        for seq, key, present, created, terms, tfs in sorted(rows, key=lambda row: row[0]):
            if present:
                held.index.add_counts(project, key, created, _counts(terms, tfs))
            else:
                held.index.remove(project, key)
            held.seen = max(held.seen, int(seq))

    def _evict(self, keep: str) -> None:
        """Drop the least recently searched projects while more than ``max_notes`` notes are
        held (a search still using a dropped one finishes with it; the next builds it again)."""
        with self._lock:
            sizes = {project: held.index.size(project) or 0 for project, held in self._held.items()}
            total = sum(sizes.values())
            for project in list(self._held):
                if total <= self._max_notes:
                    return
                if project != keep:
                    total -= sizes[project]
                    del self._held[project]
