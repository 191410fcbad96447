"""``PostgresNoteStore``: the store ports (``NoteStore``) on PostgreSQL with pgvector, shared
by every server of a team.

Schema and migrations: ``schema``; the SQL of the read side: ``queries``; of dedup, purge
and links: ``curation``; encoding: ``codec``; pool and errors: ``connection``.

Guarantees, as ``FaissNoteStore`` gives them:

* Every write is one transaction, committed when the method returns (durable as the
  database's own settings make it). ``put_many`` and ``rehome`` are all or none.
* Every read is one statement on a pool connection in autocommit: it sees every write
  committed before it began, by this server or any other.
* Several servers share one database: writes of one project serialize on that project's
  row of ``keyword_totals`` (the BM25 counters), writes of different projects do not wait
  for each other. A new namespace is registered (with its HNSW index) in a transaction of
  its own, under an advisory lock.
* Values read back exactly as written (``codec``), NUL characters included.
* Dedup on write (``add``): the entries' keys are locked with transaction-scoped advisory
  locks (``curation.lock_dedup_keys``: one per project, group and dedup hash, or for a batch of many
  keys one per project), then the stored holders are looked up and the new notes written in
  the same transaction: two servers adding one text at once store it once, and adds of
  different texts do not wait for each other's lock (they still serialize on the project's
  keyword counters while they write, as every write of a project does).
* Expiry: reads with ``NoteFilter.now`` leave out ``expires <= now`` (``queries``); ``get``
  answers an expired note (the use case decides). The store deletes them by itself: after a write that succeeded, at most once every
  ``purge_every`` seconds per server (default ``PURGE_EVERY``, 5 minutes; the first one
  ``purge_every`` after opening, so a short command never purges), it deletes the
  notes with ``expires <= now()`` (the database's clock, one for every server), one
  transaction per project, without waiting for rows another writer holds (``SKIP LOCKED``:
  the next purge takes them). A failing purge is logged, never the write's failure.
* Lock order: every write locks a stored note's row before its project's keyword counters;
  a write of several notes locks all their rows (by id), then all their projects' counters
  (by name) first (``writes.lock_rows``), so no two writes wait for each other in a cycle.
  ``update`` locks the note's row, then reads and changes it: a note deleted meanwhile is
  not found, never written back. A transaction PostgreSQL still cancels for a deadlock or a
  serialization conflict is run again (``RETRIES``).
* Links: a table with foreign keys to ``notes`` (``ON DELETE CASCADE``): ``link`` locks both
  notes (``FOR KEY SHARE``) while it writes, so a note deleted meanwhile is caught.

Failure modes: ``StoreError`` naming host, port and database (never the password) when the
database cannot be reached, refuses the login or drops the connection; the pool reconnects
by itself when the database is back. ``StoreError`` for a vector of the wrong length, and
for a role that may not create the ``vector`` extension in a database that lacks it.
``InvalidValue`` for a value that would not read back, before anything is written.
"""

from __future__ import annotations

import contextlib
import random
import threading
import time
from datetime import datetime, timezone
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np
import psycopg
import structlog

from local_mcp_memory.adapters.cosines import cosine_rows, cosine_table
from local_mcp_memory.adapters.keyword_index import rank
from local_mcp_memory.adapters.postgres_store import codec, curation
from local_mcp_memory.adapters.postgres_store.connection import connect, failures, open_pool
from local_mcp_memory.adapters.postgres_store.keywords import CHANGED, MAX_NOTES, Found, PostgresKeywords
from local_mcp_memory.adapters.postgres_store.writes import TOUCHED, Entry, lock_stored, prepare, put_notes, put_rows, trim_changes
from local_mcp_memory.adapters.postgres_store.queries import candidates_sql, filter_sql, hidden_sql, hides, narrowed, neighbours_sql
from local_mcp_memory.adapters.postgres_store.rebuild import GraphRebuild
from local_mcp_memory.adapters.postgres_store.schema import LOCK_KEY, build_hnsw, hnsw_index_sql, migrate, repair_hnsw
from local_mcp_memory.adapters.postgres_store.url import StoreUrl
from local_mcp_memory.adapters.postgres_store.vector_cache import MAX_VECTORS, VectorCache
from local_mcp_memory.adapters.postgres_store.warm_up import WarmUp
from local_mcp_memory.adapters.read_ahead import read_ahead
from local_mcp_memory.adapters.text_analysis import tokens
from local_mcp_memory.application.errors import StoreError
from local_mcp_memory.application.ports import NO_SPREAD, Candidate, CandidateQuery, Candidates, Neighbour, Spread, StoredNote, Vector
from local_mcp_memory.domain.errors import InvalidValue
from local_mcp_memory.domain.identifiers import CanonicalProjectId, GlobalKey, Namespace, NoteId
from local_mcp_memory.domain.link import Link, LinkKey
from local_mcp_memory.domain.note import GlobalEntry, Note, NoteFilter
from local_mcp_memory.domain.time import format_instant

log = structlog.get_logger()
T = TypeVar("T")

RETRIES = 3
"""Times a write transaction runs at most when PostgreSQL cancels it for a deadlock or a
serialization conflict (SQLSTATE 40P01, 40001)."""

BULK_MIN = 10_000
"""Imports of fewer notes keep the HNSW index up to date as they write (see ``bulk``)."""

HNSW_MAX_DIM = 2000
"""pgvector indexes ``vector`` columns of at most 2,000 dimensions; larger namespaces are
always scanned exactly."""

TABLES = (
    "namespaces", "notes", "vectors", "note_terms", "keyword_totals", "globals", "links", "keyword_changes", "mcp_memory_schema",
    "mcp_memory_meta",
)

PURGE_EVERY = 300.0
"""Seconds between two purges of expired notes by one server (piggy-backed on a write)."""

ANALYZE_MIN_NOTES = 1_000
ANALYZE_GROWTH = 0.1
"""A server that has written more than ``ANALYZE_MIN_NOTES`` notes, and more than a tenth
of the notes the database held at its last ``ANALYZE``, runs ``ANALYZE`` on the tables
searches read, after the write that crossed the line (autovacuum's rule, without waiting
up to a minute for its next round). Searches planned on a table loaded since its last
statistics picked plans for a much smaller table: right after a bulk import of 10,000
notes into a fresh database, semantic search took 5.7 ms in the store instead of 2.4 ms,
hybrid 25.5 instead of 15.5 ms."""


class PostgresNoteStore:
    """Notes in the PostgreSQL database at ``url`` (schema created or migrated on open).
    Thread-safe: each call takes a connection from the pool. ``rebuild_graphs``: a server's
    store, which rebuilds a serving HNSW graph of older options on a thread (``rebuild``);
    a short-lived command's store leaves that to a server. ``vector_graphs``: a server's store
    too, which holds a large project's vectors with a graph of its own after its first search
    (``vector_graph``) instead of walking PostgreSQL's HNSW index. ``warm_up``: a server's
    store too, which loads the keyword indexes of its large projects and builds their graphs
    on a thread as soon as it opens, before any search asks (``warm_up``)."""

    def __init__(
        self, url: str, *, pool_size: int = 8, timeout: float = 5.0, purge_every: float = PURGE_EVERY,
        keyword_notes: int = MAX_NOTES, cached_vectors: int = MAX_VECTORS, rebuild_graphs: bool = False,
        vector_graphs: bool = False, warm_up: bool = False,
    ) -> None:
        try:
            self._url = StoreUrl.parse(url)
        except ValueError as exc:
            raise StoreError(f"the store URL is not valid: {exc}") from None
        self._spaces: dict[str, tuple[int, int]] = {}
        self._purge_every = purge_every
        self._purge_due = time.monotonic() + purge_every  # a short-lived process never purges
        self._purging = threading.Lock()
        self._analyzing = threading.Lock()
        self._unanalyzed = 0  # notes this server wrote since the statistics were taken
        self._bulk = 0  # bulk blocks open: statistics wait for their end
        self._keywords = PostgresKeywords(keyword_notes)
        self._vectors = VectorCache(cached_vectors, (lambda: connect(self._url, timeout)) if vector_graphs else None)
        with failures(self._url, "open the note store"):
            with connect(self._url, timeout) as conn:
                _create_extension(conn, self._url)
                migrate(conn, self._url.place)
                stale = repair_hnsw(conn, HNSW_MAX_DIM)
                self._analyzed = _notes_estimate(conn)
            self._pool = open_pool(self._url, max_size=pool_size, timeout=timeout)
        self._rebuild = GraphRebuild(self._url, timeout, stale) if stale and rebuild_graphs else None
        self._warm_up = WarmUp(lambda: connect(self._url, timeout), self._keywords, self._vectors) if warm_up else None

    @property
    def url(self) -> StoreUrl:
        return self._url

    def graphs_rebuilt(self, timeout: float | None = None) -> bool:
        """Wait for this store's rebuild of stale HNSW graphs, if it runs one; whether it is
        over within ``timeout`` seconds."""
        return self._rebuild is None or self._rebuild.wait(timeout)

    def vector_graphs_built(self, timeout: float | None = None) -> bool:
        """Wait for this store's builds of projects' vector graphs; whether they ended within
        ``timeout`` seconds."""
        return self._vectors.wait(timeout)

    def warmed_up(self, timeout: float | None = None) -> bool:
        """Wait for this store's warm-up, if it runs one (the graph builds it started
        included); whether it is over within ``timeout`` seconds."""
        return self._warm_up is None or self._warm_up.wait(timeout)

    def close(self) -> None:
        if self._warm_up is not None:
            self._warm_up.stop()
        self._vectors.close()
        if self._rebuild is not None:
            self._rebuild.stop()
        self._pool.close()

    # -- writing ----------------------------------------------------------------------

    def put(self, note: Note, namespace: Namespace, vector: Vector | None) -> None:
        row = None if vector is None else _row(vector, namespace.dim)
        doc = codec.note_doc(note)
        with failures(self._url, "write to the note store"):
            space = self._space(namespace)
            with self._pool.connection() as conn, conn.transaction():
                if row is None:
                    found = conn.execute(  # the note's row first, as every write locks it
                        """SELECT 1 FROM notes n JOIN vectors v ON v.note = n.id
                           WHERE n.id = %s AND v.space = %s FOR UPDATE OF n""",
                        (note.id.value, space),
                    ).fetchone()
                    if found is None:
                        raise StoreError(f"note {note.id.value} has no vector in namespace {namespace}; pass one")
                put_notes(conn, [Entry(note, doc, row)], space)
        self._after_write()

    def update(
        self, note_id: NoteId, change: Callable[[Note], Note], namespace: Namespace | None = None, vector: Vector | None = None
    ) -> Note | None:
        """See ``NoteWriter.update``: one transaction that locks the note's row first (as
        ``delete`` does: a delete meanwhile either waits or has committed, and the note is
        then not found), decodes it, and writes ``change`` of it."""
        row = None
        if vector is not None:
            assert namespace is not None, "a vector comes with its namespace"
            row = _row(vector, namespace.dim)

        def write(conn: psycopg.Connection) -> Note | None:
            found = conn.execute("SELECT doc, home FROM notes WHERE id = %s FOR UPDATE", (note_id.value,)).fetchone()
            if found is None:
                return None
            note = change(codec.note_of(found[0]))
            doc = codec.note_doc(note)
            put_notes(conn, [Entry(note, doc, row)], found[1] if row is None else space)
            return note

        with failures(self._url, "write to the note store"):
            space = None if namespace is None else self._space(namespace)
            note = self._transaction(write)
        if note is not None:
            self._after_write()
        return note

    def put_many(self, notes: Sequence[tuple[Note, Vector]], namespace: Namespace) -> None:
        rows, docs = _rows_and_docs(notes, namespace)
        if not notes:
            return

        def write(conn: psycopg.Connection) -> None:
            put_notes(conn, [Entry(note, doc, row) for (note, _vector), doc, row in zip(notes, docs, rows)], space)

        with failures(self._url, "write to the note store"):
            space = self._space(namespace)
            self._transaction(write)
        self._after_write(len(notes))

    def put_batches(self, batches: Iterable[tuple[Sequence[tuple[Note, Vector]], Namespace]]) -> Iterator[int]:
        """See ``NoteWriter.put_batches``: while a batch is written (``COPY``, the statements
        of ``writes``, the commit: the database's time), a thread of its own takes the next
        one from ``batches`` and encodes its rows (``writes.prepare``: the process's time),
        at most one batch ahead (``read_ahead``), so both cores work instead of taking turns."""
        with read_ahead(_prepared(batches)) as prepared:
            for rows, namespace, count in prepared:
                if count:
                    with failures(self._url, "write to the note store"):
                        space = self._space(namespace)
                        self._transaction(lambda conn: put_rows(conn, rows, space))  # run at once, with this batch
                    self._after_write(count)
                yield count

    def _transaction(self, body: Callable[[psycopg.Connection], T]) -> T:
        """``body`` in one transaction on a pool connection, run again (at most
        ``RETRIES`` times in all) when PostgreSQL cancels it to break a deadlock or a
        serialization conflict: the lock order of every write (``writes.lock_rows``) leaves no
        cycle among this store's writers, so this only guards against what else may share
        the database."""
        for attempt in range(1, RETRIES + 1):
            try:
                with self._pool.connection() as conn, conn.transaction():
                    return body(conn)
            except (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure) as exc:
                if attempt == RETRIES:
                    raise
                log.info("store.transaction_retried", attempt=attempt, sqlstate=exc.sqlstate)
                time.sleep(random.uniform(0.0, 0.05 * attempt))
        raise AssertionError("unreachable")

    def add(self, notes: Sequence[tuple[Note, Vector]], namespace: Namespace, now: datetime) -> list[NoteId]:
        rows, docs = _rows_and_docs(notes, namespace)
        if not notes:
            return []
        keys = [(note.project_id.value, note.group_id.value, codec.dedup_hash(note)) for note, _vector in notes]
        first: dict[tuple[str, str, bytes], int] = {}
        for i, key in enumerate(keys):
            first.setdefault(key, i)

        def write(conn: psycopg.Connection) -> tuple[dict[tuple[str, str, bytes], str], list[int]]:
            curation.lock_dedup_keys(conn, list(first))
            held = curation.holders(conn, list(first), now)
            new = [i for i in first.values() if keys[i] not in held]
            if new:
                put_notes(conn, [Entry(notes[i][0], docs[i], rows[i]) for i in new], space)
            return held, new

        with failures(self._url, "write to the note store"):
            space = self._space(namespace)
            held, new = self._transaction(write)
        if new:
            self._after_write(len(new))
        return [NoteId(held[key]) if key in held else notes[first[key]][0].id for key in keys]

    def rehome(self, namespace: Namespace, vectors: Mapping[NoteId, Vector]) -> None:
        rows = {note_id.value: _row(v, namespace.dim) for note_id, v in vectors.items()}
        if not rows:
            return

        def write(conn: psycopg.Connection) -> None:
            # the notes first, then their projects' counters, as every other write locks them
            stored = lock_stored(conn, list(rows))
            with conn.pipeline():
                for key in stored:
                    conn.execute(
                        """INSERT INTO vectors (note, space, project, grp, created, written, tags, embedding)
                           SELECT id, %(space)s, project, grp, created, written, tags, %(row)s FROM notes WHERE id = %(id)s
                           ON CONFLICT (note, space) DO UPDATE SET embedding = EXCLUDED.embedding""",
                        {"space": space, "row": rows[key], "id": key},
                    )
                conn.execute("UPDATE notes SET home = %s WHERE id = ANY(%s)", (space, stored))
                conn.execute(TOUCHED, {"ids": stored})  # other servers' copies of these vectors

        with failures(self._url, "write to the note store"):
            space = self._space(namespace)
            self._transaction(write)

    @contextlib.contextmanager
    def bulk(self, namespace: Namespace, count: int) -> Iterator[None]:
        """See ``NoteWriter.bulk``: an import of at least ``BULK_MIN`` notes, and at least as
        many as ``namespace`` holds, drops the namespace's HNSW index first and builds it
        again at the end (``schema.build_hnsw``): inserting each vector into the graph cost
        most of an import's time (pgvector builds a graph of many vectors at once several
        times faster). Searches meanwhile scan the namespace exactly; a server that dies
        inside the block leaves the index missing, and the next store to open builds it.
        Statistics (``ANALYZE``) are taken once, at the end, not after every tenth more notes."""
        if count < BULK_MIN or namespace.dim > HNSW_MAX_DIM:
            yield
            return
        self._bulk += 1  # and ``ANALYZE`` once at the end, not after every tenth more notes
        try:
            with self._index_put_off(namespace, count):
                yield
        finally:
            self._bulk -= 1
        self._after_write(0)

    @contextlib.contextmanager
    def _index_put_off(self, namespace: Namespace, count: int) -> Iterator[None]:
        with failures(self._url, "write to the note store"):
            space = self._space(namespace)
            with self._pool.connection() as conn:
                held = conn.execute("SELECT count(*) FROM vectors WHERE space = %s", (space,)).fetchone()[0]
                if count < held:
                    space = None
                else:
                    conn.execute(f"DROP INDEX CONCURRENTLY IF EXISTS vectors_hnsw_{int(space)}")
        try:
            yield
        finally:
            if space is not None:
                with failures(self._url, "index the note store"), self._pool.connection() as conn:
                    build_hnsw(conn, space, namespace.dim)

    def delete(self, note_id: NoteId) -> bool:
        with failures(self._url, "write to the note store"), self._pool.connection() as conn:
            found = conn.execute(
                f"""WITH gone AS (DELETE FROM notes WHERE id = %(id)s RETURNING project, length),
                         counted AS (UPDATE keyword_totals k SET notes = k.notes - 1, terms = k.terms - gone.length,
                                                                 seq = k.seq + 1
                                     FROM gone WHERE k.project = gone.project RETURNING k.project, k.seq),
                         changed AS ({CHANGED.format(rows="SELECT project, %(id)s, seq FROM counted")})
                    SELECT count(*) FROM gone""",
                {"id": note_id.value},
            ).fetchone()
        self._after_write()
        return bool(found[0])

    def prolong(self, note_ids: Sequence[NoteId], now: datetime) -> int:
        """See ``NoteWriter.prolong``: the notes locked (``FOR UPDATE``, in id order as every
        writer) and read in one transaction, so a note deleted meanwhile is not found and one
        changed meanwhile is prolonged as changed. Only ``doc`` and ``expires`` are written:
        the write order, which ``list_recent`` ties on, stays."""
        ids = sorted({note_id.value for note_id in note_ids})
        if not ids:
            return 0
        with failures(self._url, "write to the note store"):
            with self._pool.connection() as conn, conn.transaction():
                rows = conn.execute(
                    "SELECT doc FROM notes WHERE id = ANY(%s) AND expires > %s ORDER BY id FOR UPDATE", (ids, now)
                ).fetchall()
                later = [n for n in (codec.note_of(doc).prolonged(now) for (doc,) in rows) if n is not None]
                if later:
                    conn.execute(
                        """UPDATE notes n SET doc = u.doc, expires = u.expires
                           FROM unnest(%s::text[], %s::text[], %s::timestamptz[]) AS u(id, doc, expires) WHERE n.id = u.id""",
                        ([n.id.value for n in later], [codec.note_doc(n) for n in later], [n.expires_at for n in later]),
                    )
        return len(later)

    def _purge(self) -> int:
        """Delete the notes expired by the database's clock, with their vectors, terms
        and links (``curation.purge``), then trim the keyword change feed (``writes.trim_changes``)."""
        with self._pool.connection() as conn:
            removed = curation.purge(conn, None)
            trim_changes(conn)
            return removed

    def _after_write(self, notes: int = 1) -> None:
        """What a write brings due: fresh statistics after ``notes`` more notes (see
        ``ANALYZE_GROWTH``), and the periodic purge, at most once every ``purge_every``
        seconds per server. Neither runs twice at once, nor is ever the write's failure."""
        self._unanalyzed += notes
        if not self._bulk and self._unanalyzed > max(ANALYZE_MIN_NOTES, ANALYZE_GROWTH * self._analyzed):
            self._analyze()
        if time.monotonic() < self._purge_due or not self._purging.acquire(blocking=False):
            return
        try:
            if time.monotonic() < self._purge_due:
                return
            self._purge_due = time.monotonic() + self._purge_every
            with failures(self._url, "purge the note store"):
                removed = self._purge()
            if removed:
                log.info("expired notes purged", count=removed, store=self._url.place)
        except StoreError as exc:
            log.warning("purging expired notes failed; the next write tries again later", error=str(exc))
        finally:
            self._purging.release()

    def _analyze(self) -> None:
        if not self._analyzing.acquire(blocking=False):
            return
        try:
            with failures(self._url, "analyze the note store"), self._pool.connection() as conn:
                conn.execute("ANALYZE notes, vectors, note_terms")  # a role that may not: a warning, skipped
                self._analyzed, self._unanalyzed = _notes_estimate(conn), 0
        except StoreError as exc:
            log.warning("analyzing the note store failed; a later write tries again", error=str(exc))
        finally:
            self._analyzing.release()

    def drop_namespace(self, namespace: Namespace) -> int:
        def drop(conn: psycopg.Connection) -> int:
            doomed = [key for (key,) in conn.execute(
                """SELECT v.note FROM vectors v JOIN namespaces ns ON ns.id = v.space JOIN notes n ON n.id = v.note
                   WHERE ns.name = %s AND n.home <> ns.id""",
                (str(namespace),),
            ).fetchall()]
            stored = lock_stored(conn, doomed)
            cursor = conn.execute(
                """DELETE FROM vectors v USING notes n, namespaces ns
                   WHERE ns.name = %s AND v.space = ns.id AND n.id = v.note AND n.home <> ns.id AND v.note = ANY(%s)""",
                (str(namespace), stored),
            )
            conn.execute(TOUCHED, {"ids": stored})  # other servers' copies of these vectors
            return cursor.rowcount

        with failures(self._url, "write to the note store"):
            return self._transaction(drop)

    def put_global(self, entry: GlobalEntry) -> None:
        value = codec.global_value(entry)
        with failures(self._url, "write to the note store"), self._pool.connection() as conn:
            conn.execute(
                """INSERT INTO globals (project, key, value, updated, written)
                   VALUES (%s, %s, %s, %s, nextval('write_order'))
                   ON CONFLICT (project, key) DO UPDATE
                   SET value = EXCLUDED.value, updated = EXCLUDED.updated, written = EXCLUDED.written""",
                (entry.project_id.value, entry.key.value, value, format_instant(entry.updated_at)),
            )

    def link(self, link: Link) -> bool:
        with failures(self._url, "write to the note store"), self._pool.connection() as conn:
            return curation.add_link(conn, link)

    def unlink(self, key: LinkKey) -> bool:
        with failures(self._url, "write to the note store"), self._pool.connection() as conn:
            return curation.remove_link(conn, key)

    def _space(self, namespace: Namespace) -> int:
        """The number of ``namespace``, registered (with its HNSW index) on first use."""
        name = str(namespace)
        known = self._spaces.get(name)
        if known is None:
            with self._pool.connection() as conn:
                found = conn.execute("SELECT id, dim FROM namespaces WHERE name = %s", (name,)).fetchone()
                if found is None:
                    with conn.transaction():
                        conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
                        conn.execute(
                            "INSERT INTO namespaces (name, dim) VALUES (%s, %s) ON CONFLICT (name) DO NOTHING",
                            (name, namespace.dim),
                        )
                        found = conn.execute("SELECT id, dim FROM namespaces WHERE name = %s", (name,)).fetchone()
                        if namespace.dim <= HNSW_MAX_DIM:
                            conn.execute(hnsw_index_sql(found[0], namespace.dim))
            known = self._spaces[name] = (found[0], found[1])
        return known[0]

    def _known_space(self, conn: psycopg.Connection, namespace: Namespace) -> int | None:
        """The number of ``namespace`` if it was ever registered, without registering it."""
        name = str(namespace)
        if name not in self._spaces:
            found = conn.execute("SELECT id, dim FROM namespaces WHERE name = %s", (name,)).fetchone()
            if found is None:
                return None
            self._spaces[name] = (found[0], found[1])
        return self._spaces[name][0]

    # -- reading ----------------------------------------------------------------------

    def get(self, note_id: NoteId) -> StoredNote | None:
        with failures(self._url, "read the note store"), self._pool.connection() as conn:
            found = conn.execute(
                "SELECT n.doc, ns.name FROM notes n JOIN namespaces ns ON ns.id = n.home WHERE n.id = %s",
                (note_id.value,),
            ).fetchone()
        return None if found is None else codec.stored_note(*found)

    def get_many(self, note_ids: Sequence[NoteId]) -> dict[NoteId, StoredNote]:
        with failures(self._url, "read the note store"), self._pool.connection() as conn:
            rows = conn.execute(
                "SELECT n.id, n.doc, ns.name FROM notes n JOIN namespaces ns ON ns.id = n.home WHERE n.id = ANY(%s)",
                ([note_id.value for note_id in note_ids],),
            ).fetchall()
        return {NoteId(key): codec.stored_note(doc, home) for key, doc, home in rows}

    def list_recent(self, where: NoteFilter, limit: int) -> list[StoredNote]:
        params: dict[str, Any] = {"limit": limit}
        condition = filter_sql(where, "n", params)
        with failures(self._url, "read the note store"), self._pool.connection() as conn:
            rows = conn.execute(
                f"""SELECT n.doc, ns.name FROM notes n JOIN namespaces ns ON ns.id = n.home WHERE {condition}
                    ORDER BY n.created DESC, n.written DESC LIMIT %(limit)s""",
                params,
            ).fetchall()
        return [codec.stored_note(*row) for row in rows]

    def candidates(self, query: CandidateQuery) -> Candidates:
        """A pending vector is computed beside the keyword candidates, holding no connection."""

        def keyword_step() -> tuple[Found | None, int | None]:
            if query.text is None:
                return None, None
            with failures(self._url, "search the note store"), self._pool.connection() as conn:
                return self._keyword_search(conn, query)

        if query.text is None:  # nothing to do beside the vector
            query = query.resolved()
        (keyword, project_notes), query = query.beside(keyword_step)
        q = None
        if query.vector is not None:
            assert query.namespace is not None
            q = _row(query.vector, query.namespace.dim)
        params: dict[str, Any] = {"q": q, "depth": query.depth, "sample": query.spread_sample}
        with failures(self._url, "search the note store"), self._pool.connection() as conn:
            space = None if q is None else self._known_space(conn, query.namespace)
            found = [] if keyword is None else keyword.notes
            semantic, spread, large = None, None, False
            if q is not None and space is not None and not narrowed(query.where):
                held, hidden = self._held_vectors(conn, query, space, keyword, project_notes)
                if held is not None:  # the whole project's cosines here (``vector_cache``)
                    semantic = held.nearest(q, query.depth, hidden) if held.complete else None
                    spread = held.spread(q, query.spread_sample, hidden) if query.spread_sample > 0 else None
                    large = held.large(hidden)
            params["kw_ids"], params["kw_scores"] = [key for key, _ in found], [score for _, score in found]
            params["given"] = None if semantic is None else [c.id for c in semantic]
            sql = candidates_sql(
                query.where,
                space=space,
                dim=query.namespace.dim if query.namespace is not None else 0,
                semantic=q is not None and semantic is None,
                given=semantic is not None,
                keyword=bool(found),
                spread=q is not None and query.spread_sample > 0 and spread is None,
                neighbours=query.neighbours,
                params=params,
                project_notes=project_notes,
                large=large,
            )
            rows = conn.execute(sql, params).fetchall() if sql else []
        scored = None if semantic is None else (lambda ids: held.cosines_of(ids, q))
        return _answer(rows, query.neighbours, semantic, spread, scored)

    def candidates_each(self, queries: Sequence[CandidateQuery]) -> list[Candidates]:
        """See ``NoteReader.candidates_each``: the questions by vector alone of a whole project
        (an ``add_notes``'s suggestions) that share a filter and a namespace are answered from
        the project's copy held here (``vector_cache``), brought up to the feed once, and the
        notes they name read in one statement; any other as ``candidates`` answers it."""
        queries = [query.resolved() for query in queries]
        shared: dict[tuple[NoteFilter, str], list[int]] = {}
        for n, query in enumerate(queries):
            if query.vector is not None and query.text is None and not query.neighbours and not narrowed(query.where):
                shared.setdefault((query.where, str(query.namespace)), []).append(n)
        answers: dict[int, Candidates] = {}
        with failures(self._url, "search the note store"), self._pool.connection() as conn:
            for members in shared.values():
                if len(members) > 1 and (found := self._held_answers(conn, [queries[n] for n in members])) is not None:
                    answers.update(zip(members, found))
        return [answers[n] if n in answers else self.candidates(query) for n, query in enumerate(queries)]

    def _held_answers(self, conn: psycopg.Connection, queries: list[CandidateQuery]) -> list[Candidates] | None:
        """The answers to ``queries`` (one filter, one namespace, vectors alone), in order,
        from the copy of the project held whole here; None when it is not."""
        first = queries[0]
        assert first.namespace is not None
        space = self._known_space(conn, first.namespace)
        if space is None:
            return None
        held, hidden = self._held_vectors(conn, first, space, None, None)
        if held is None or not held.complete:
            return None
        found = []
        for query in queries:
            q = _row(query.vector, first.namespace.dim)
            spread = held.spread(q, query.spread_sample, hidden) if query.spread_sample > 0 else NO_SPREAD
            found.append((held.nearest(q, query.depth, hidden), spread))
        params: dict[str, Any] = {"given": sorted({c.id for semantic, _ in found for c in semantic})}
        sql = candidates_sql(first.where, space=space, dim=first.namespace.dim, semantic=False, given=True,
                             keyword=False, spread=False, neighbours=False, params=params)
        rows = conn.execute(sql, params).fetchall() if params["given"] else []
        docs = {row[1]: row for row in rows}
        return [_answer([docs[c.id] for c in semantic if c.id in docs], False, semantic, spread) for semantic, spread in found]

    def neighbours(
        self, note_ids: Sequence[str], where: NoteFilter, namespace: Namespace | None = None, vector: Vector | None = None
    ) -> Candidates:
        """See ``NoteReader.neighbours``: one statement (``neighbours_sql``); a cosine from the
        project's whole copy held here where ``candidates`` takes it from there (a whole
        project's search), else from the statement."""
        q = None if vector is None else _row(vector, namespace.dim)
        params: dict[str, Any] = {"q": q, "seeds": list(dict.fromkeys(note_ids))}
        with failures(self._url, "search the note store"), self._pool.connection() as conn:
            space = None if q is None else self._known_space(conn, namespace)
            held = None if space is None or narrowed(where) else self._vectors.whole(where.project_id.value, space)
            sql = neighbours_sql(where, space=space, dim=0 if namespace is None else namespace.dim, params=params)
            rows = conn.execute(sql, params).fetchall()
        return _answer(rows, True, scored=None if held is None else (lambda ids: held.cosines_of(ids, q)))

    def _held_vectors(
        self, conn: psycopg.Connection, query: CandidateQuery, space: int, keyword: Found | None, project_notes: int | None,
    ) -> tuple[Any, frozenset[str]]:
        """The project's vectors held here (``vector_cache``) as new as the feed the keyword
        step read, and the ids the whole project's filter hides; without a keyword step, a
        whole copy or graph brought up to the feed (prefixes serve a hybrid search's spread
        only). None, empty when the database answers."""
        project = query.where.project_id.value
        if keyword is not None:
            return self._vectors.get(conn, project, space, keyword.seen, project_notes), keyword.hidden or frozenset()
        params: dict[str, Any] = {}
        found = self._vectors.current(conn, project, space, (hidden_sql(query.where, params), params) if hides(query.where) else None)
        return (None, frozenset()) if found is None else found

    def _keyword_search(self, conn: psycopg.Connection, query: CandidateQuery) -> tuple[Found | None, int | None]:
        """The keyword candidates (``keywords``), each accepted by the question's filter, and
        how many notes the project holds (its index, just caught up); None, None without a
        keyword search."""
        if query.text is None or not tokens(query.text):
            return None, None
        where = query.where

        def accept(ids: list[str]) -> np.ndarray:
            params: dict[str, Any] = {"ids": ids}
            condition = filter_sql(where, "n", params)
            rows = conn.execute(f"SELECT n.id FROM notes n WHERE n.id = ANY(%(ids)s) AND {condition}", params).fetchall()
            passed = {key for (key,) in rows}
            return np.fromiter((key in passed for key in ids), dtype=bool, count=len(ids))

        project = where.project_id.value
        if narrowed(where):  # the database decides on group, tags and window
            found = self._keywords.search(conn, project, query.text, query.depth, accept)
        elif not hides(where):  # every note of the project
            found = self._keywords.search(conn, project, query.text, query.depth, None)
        else:  # the whole project but its expired and superseded notes: their ids, asked with the catch-up
            params: dict[str, Any] = {}
            hidden = hidden_sql(where, params)
            found = self._keywords.search(conn, project, query.text, query.depth, None, (hidden, params))
        return found, self._keywords.notes(project)

    def links(self, note_id: NoteId) -> list[Link]:
        with failures(self._url, "read the note store"), self._pool.connection() as conn:
            return curation.links_of(conn, note_id)

    def get_global(self, project_id: CanonicalProjectId, key: GlobalKey) -> GlobalEntry | None:
        with failures(self._url, "read the note store"), self._pool.connection() as conn:
            found = conn.execute(
                "SELECT project, key, value, updated FROM globals WHERE project = %s AND key = %s",
                (project_id.value, key.value),
            ).fetchone()
        return None if found is None else codec.global_entry(*found)

    # -- maintenance ------------------------------------------------------------------

    def iter_notes(self, project_id: CanonicalProjectId | None = None) -> Iterator[StoredNote]:
        """Every note in write order, as of the call: one snapshot, read in batches."""
        condition = "TRUE" if project_id is None else "n.project = %(project)s"
        params = {} if project_id is None else {"project": project_id.value}
        with failures(self._url, "read the note store"):
            conn = self._pool.getconn()
        try:
            with failures(self._url, "read the note store"):
                conn.autocommit = False
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                cursor = conn.cursor(name="iter_notes")
                cursor.itersize = 2000
                cursor.execute(
                    f"""SELECT n.doc, ns.name FROM notes n JOIN namespaces ns ON ns.id = n.home
                        WHERE {condition} ORDER BY n.written""",
                    params,
                )
            rows = iter(cursor)
            while True:
                with failures(self._url, "read the note store"):
                    row = next(rows, None)
                if row is None:
                    return
                yield codec.stored_note(*row)
        finally:
            try:
                conn.rollback()
                conn.autocommit = True
            except psycopg.Error:
                pass
            self._pool.putconn(conn)

    def vector(self, note_id: NoteId, namespace: Namespace) -> Vector | None:
        with failures(self._url, "read the note store"), self._pool.connection() as conn:
            found = conn.cursor(binary=True).execute(  # binary: see ``vectors``
                """SELECT v.embedding FROM vectors v JOIN namespaces ns ON ns.id = v.space
                   WHERE v.note = %s AND ns.name = %s""",
                (note_id.value, str(namespace)),
            ).fetchone()
        return None if found is None else found[0].to_numpy().astype(np.float32)

    def cosines(self, note_ids: Iterable[NoteId], namespace: Namespace) -> dict[str, dict[str, float]]:
        """From the vectors a hybrid search of their project holds in this process
        (``vector_cache``), as new as the project's keyword index just caught up with (the
        search that asks has caught it up); else read from the database."""
        wanted = sorted({n.value for n in note_ids})
        known = self._spaces.get(str(namespace))
        if known is not None and wanted:
            held = self._vectors.vectors_of(known[0], wanted, self._keywords.seen)
            if held is not None:
                return cosine_rows(wanted, held)
        return cosine_table(self.vectors(note_ids, namespace))

    def vectors(self, note_ids: Iterable[NoteId], namespace: Namespace) -> dict[NoteId, Vector]:
        wanted = sorted({n.value for n in note_ids})
        if not wanted:
            return {}
        with failures(self._url, "read the note store"), self._pool.connection() as conn:
            # in binary: parsing the text form of 25 vectors of 384 floats took 6.7 ms of CPU,
            # the binary one 0.45 ms (newer-first reads 25 on every hybrid search)
            rows = conn.cursor(binary=True).execute(
                """SELECT v.note, v.embedding FROM vectors v JOIN namespaces ns ON ns.id = v.space
                   WHERE v.note = ANY(%s) AND ns.name = %s""",
                (wanted, str(namespace)),
            ).fetchall()
        return {NoteId(note): embedding.to_numpy().astype(np.float32) for note, embedding in rows}

    def iter_globals(self, project_id: CanonicalProjectId | None = None) -> Iterable[GlobalEntry]:
        condition = "TRUE" if project_id is None else "project = %(project)s"
        params = {} if project_id is None else {"project": project_id.value}
        with failures(self._url, "read the note store"), self._pool.connection() as conn:
            rows = conn.execute(
                f"SELECT project, key, value, updated FROM globals WHERE {condition} ORDER BY written", params
            ).fetchall()
        return [codec.global_entry(*row) for row in rows]

    def iter_links(self, project_id: CanonicalProjectId | None = None) -> Iterable[Link]:
        with failures(self._url, "read the note store"), self._pool.connection() as conn:
            return curation.all_links(conn, project_id)

    def namespaces(self) -> dict[Namespace, int]:
        with failures(self._url, "read the note store"), self._pool.connection() as conn:
            rows = conn.execute(
                "SELECT ns.name, count(*) FROM vectors v JOIN namespaces ns ON ns.id = v.space GROUP BY ns.name"
            ).fetchall()
        return {Namespace.parse(name): count for name, count in rows}

    def disk_bytes(self) -> int:
        """Bytes of this store's tables with their indexes and TOAST, not of the whole database."""
        with failures(self._url, "read the note store"), self._pool.connection() as conn:
            found = conn.execute(
                """SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c
                   WHERE c.relkind = 'r' AND c.relname = ANY(%s) AND c.relnamespace = current_schema()::regnamespace""",
                (list(TABLES),),
            ).fetchone()
        return int(found[0])


def _create_extension(conn: psycopg.Connection, url: StoreUrl) -> None:
    """``CREATE EXTENSION IF NOT EXISTS vector``; a ``StoreError`` that says what to do when
    the role may not create it or the server does not have it."""
    try:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except psycopg.errors.InsufficientPrivilege as exc:
        raise StoreError(
            f"the pgvector extension is not created in the {url.place}, and role {url.user or '(default)'} "
            "may not create it: have a superuser run CREATE EXTENSION vector; in that database "
            "(pgvector 0.8 or later must be installed on the server)"
        ) from exc
    except psycopg.errors.FeatureNotSupported as exc:
        raise StoreError(f"the {url.place} cannot create the pgvector extension: {exc}") from exc
    except psycopg.errors.UndefinedFile as exc:
        raise StoreError(
            f"the PostgreSQL server of the {url.place} does not have pgvector: install it on the server "
            "(the package postgresql-<version>-pgvector, or the pgvector/pgvector image), then start again"
        ) from exc


def _notes_estimate(conn: psycopg.Connection) -> float:
    """The planner's count of ``notes`` rows (0 before the first statistics)."""
    return max(0.0, float(conn.execute("SELECT reltuples FROM pg_class WHERE oid = 'notes'::regclass").fetchone()[0]))


class _Docs(Mapping[str, StoredNote]):
    """The stored notes of an answer, each decoded when first read: a hybrid search reads
    the candidates it ranks, and most neighbours are never read (decoding every doc of an
    answer, about 160, took as long as the rest of the search)."""

    def __init__(self) -> None:
        self.raw: dict[str, tuple[str, str]] = {}
        self._decoded: dict[str, StoredNote] = {}

    def __getitem__(self, key: str) -> StoredNote:
        found = self._decoded.get(key)
        if found is None:
            found = self._decoded[key] = codec.searched_note(*self.raw[key])
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self.raw)

    def __len__(self) -> int:
        return len(self.raw)


def _answer(
    rows: list[tuple], with_neighbours: bool, given: list[Candidate] | None = None, measured: Spread | None = None,
    scored: Callable[[list[str]], dict[str, float]] | None = None,
) -> Candidates:
    """The rows of ``candidates_sql`` as ``Candidates``; ``given``: the semantic candidates
    and ``measured`` the spread, found in this process (``vector_cache``), the statement
    having returned the docs of the former (a note deleted since is left out) and their
    neighbours, whose cosines ``scored`` gives from the vectors held (none: no vector)."""
    semantic, keyword, spread = [], [], NO_SPREAD if measured is None else measured
    found_near: list[tuple[str, int, str, datetime, Any]] = []  # seed, position, id, created, cosine
    notes = _Docs()
    for kind, key, created, score, std, n, seed, doc, home in rows:
        if created is not None:
            created = created.astimezone(timezone.utc)
        if kind == "s":
            semantic.append(Candidate(key, created, float(score)))
        elif kind == "k":
            keyword.append(Candidate(key, created, float(score)))
        elif kind == "p":
            spread = Spread(int(n), float(score), float(std)) if n else NO_SPREAD
        elif kind == "n":
            found_near.append((seed, n, key, created, score))
        else:
            notes.raw[key] = (doc, home)
    if given is not None:
        semantic = [c for c in given if c.id in notes.raw]
    semantic.sort(key=lambda c: (-c.score, -c.created_at.timestamp(), c.id))
    keyword.sort(key=lambda c: (-rank(c.score), -c.created_at.timestamp(), c.id))
    near: dict[str, list[Neighbour]] = {}
    if with_neighbours:
        cosines = None if scored is None or not found_near else scored(sorted({row[2] for row in found_near}))
        near = {c.id: [] for c in (*semantic, *keyword)}
        for seed, _pos, key, created, score in sorted(found_near, key=lambda row: row[1]):  # before, then after
            # a note the vectors held lack (written since they were read): the statement's cosine
            cosine = cosines[key] if cosines is not None and key in cosines else None if score is None else float(score)
            near.setdefault(seed, []).append(Neighbour(key, created, cosine))
    return Candidates(semantic, keyword, spread, near, notes)


def _row(vector: Vector, dim: int) -> np.ndarray:
    row = np.asarray(vector, dtype=np.float32).reshape(-1)
    if row.shape[0] != dim:
        raise StoreError(f"a vector of namespace dimension {dim} was expected, got {row.shape[0]} floats")
    return row


def _prepared(batches: Iterable[tuple[Sequence[tuple[Note, Vector]], Namespace]]) -> Iterator[tuple[list[tuple], Namespace, int]]:
    """Each batch's rows as ``writes.put_rows`` takes them, its namespace and its size."""
    for notes, namespace in batches:
        vectors, docs = _rows_and_docs(notes, namespace)
        yield prepare([Entry(note, doc, row) for (note, _vector), doc, row in zip(notes, docs, vectors)]), namespace, len(notes)


def _rows_and_docs(notes: Sequence[tuple[Note, Vector]], namespace: Namespace) -> tuple[list, list[str]]:
    """Each entry's vector row and stored document, every length and value checked before
    anything is written (a refused value at ``[i].<field>``)."""
    rows = [_row(vector, namespace.dim) for _note, vector in notes]
    docs = []
    for i, (note, _vector) in enumerate(notes):
        try:
            docs.append(codec.note_doc(note))
        except InvalidValue as exc:
            raise exc.at(f"[{i}]") from None
    return rows, docs
