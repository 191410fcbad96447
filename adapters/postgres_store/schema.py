"""The schema, created and migrated by the store itself: versioned migrations, applied in
order, each once, inside one transaction under an advisory lock, so that several servers
starting at once on an empty database create it once and none sees half of it.

``mcp_memory_schema`` records each applied version. A database whose schema is newer than
this code is refused (``StoreError``): an older server must not write into a format it does
not know. Adding a migration: append ``(version, step)`` to ``MIGRATIONS``, ``step`` being SQL or a
function of the connection (for what SQL cannot compute); never edit one that has shipped.
Every step is written to be idempotent (``IF NOT EXISTS``, recomputed columns), though the
lock and the version table already make it run once.

Tables (version 1):

* ``namespaces``: every namespace that holds or held vectors, numbered; each has a partial
  HNSW index on ``vectors`` (``vectors_hnsw_<id>``), created with it.
* ``notes``: one row per note. ``doc`` is the note's fields as JSON text (``codec``);
  ``project``, ``grp``, ``created``, ``tags`` are copies to filter on; ``written`` is the
  write order (from the sequence ``write_order``; a put moves a note last); ``home`` the
  namespace of the vector it is searched by; ``length`` its number of terms (BM25).
* ``vectors``: one row per (note, namespace), with copies of the note's filter columns, so a
  filtered nearest-neighbour scan needs no join.
* ``postings``: the keyword index: (project, term, note) with the term's count in the note,
  the note's length and copies of its filter columns, all in the primary key's index, so
  scoring a term is an index-only scan; ``keyword_totals`` counts notes and terms per project.
* ``globals``: the global settings, their value as JSON text.

Version 2 (curation, SPEC §11), migrated in place from version 1:

* ``notes.expires``: the note's expiresAt (null: never), a copy of ``doc``'s ``expires``;
  partial index ``notes_by_expiry`` on it where not null (the expired notes a search leaves
  out, the purge). Reads leave out ``expires <= now``; the purge deletes them.
* ``notes.dedup``: SHA-256 of the note's dedup text (``Note.dedup_key``: NFC, whitespace
  collapsed, ends trimmed), computed in Python at every write and for existing notes by the
  migration itself; ``notes_by_dedup`` on ``(project, grp, dedup)``. Not unique: import and
  ``put_many`` store exact duplicates, and an expired note does not count; ``add`` decides
  under a transaction-scoped advisory lock per key instead. ``NOT NULL``, so a server of an
  older version, which does not fill it, has every write refused after the upgrade instead
  of writing notes dedup cannot see.
* ``links``: ``(from_id, to_id, relation)`` primary key, ``created`` (the link's instant),
  ``written`` (write order, from ``write_order``); both ids reference ``notes`` with
  ``ON DELETE CASCADE``, so deleting or purging a note removes its links; ``links_by_to``
  finds the links into a note.
* The sync origin lives in ``doc`` (``origin``), which ``iter_notes`` returns as stored.

Version 3 (the keyword analysis recorded):

* ``mcp_memory_meta``: ``(key, value)`` text pairs; ``analysis`` names the text analysis
  (``text_analysis.ANALYSIS``) every note's stored terms were derived with. Version 3 is
  also what keeps servers of the hand-written stemmer (version 2) from opening, and so from
  writing terms of the old analysis, once the terms are re-derived.

Version 4 (searches that stay fast at scale; indexes only, no data changes):

* ``vectors_by_sample`` on ``(space, project, hashtextextended(note, 0), note)`` with the
  filter columns included: the spread's sample is the first ``sample`` matching vectors in
  the order of a fixed hash of the note id (the hash PostgreSQL keeps stable for hash
  partitioning), read from the index alone, where version 3 numbered every vector in scope
  by write order to pick evenly spaced ones (53 ms at 100k notes in one project, now 2 ms).
* ``vectors_by_time`` on ``(space, project, created)``: a search with since/until counts and
  scans only the window (1,000 notes of 100k: 30 ms before, 1.3 ms).
* ``vectors_by_tag``, GIN on ``tags``: a search for a rare tag reads only its vectors (1 % of
  100k notes: 55 ms before, 1.4 ms).

Version 5 (knowledge that changes, SPEC §13):

* ``notes.importance``: the note's importance (0..1, default 0.5), a copy of ``doc``'s
  ``importance``; every note written before has the default. ``doc`` may now carry
  ``importance`` and ``span`` (the expiry's original span), which servers of version 4
  would refuse to read: the version keeps them from opening.
* ``links_superseding``: a partial index on ``links (from_id, to_id)`` where the relation
  is ``supersedes``: the links that hide a superseded note from default reads.

Version 6 (the keyword change feed, ``keywords``):

* ``keyword_totals.seq``: a counter per project, bumped by every write that adds, changes
  or removes one of its notes, under the project's row lock (so in commit order).
* ``keyword_changes``: ``(project, note)`` with the ``seq`` of the note's latest change, a
  row kept for a removed note too; ``keyword_changes_by_seq`` on ``(project, seq)``: what a
  server's in-process keyword index has not seen yet is one range of it.

Version 7 (writes at scale; the keyword index's rows narrowed):

* ``note_terms``: one row per note, ``(note, terms, tfs)``: its distinct terms and each one's
  count, ``ON DELETE CASCADE`` from ``notes``; what the in-process keyword index loads
  (``keywords``). It replaces ``postings``, a row per (project, term, note) whose primary
  key carried the copies of the filter columns that only the SQL BM25 of earlier versions
  read: writing a note's postings was about 480 µs of the 800 µs a bulk write spent on a
  note, one row now costs a few. The migration fills it from ``postings`` (grouped by
  note, nothing re-derived) and drops ``postings``, with ``notes``, ``postings`` and
  ``keyword_totals`` locked ``EXCLUSIVE`` (``_lock_keyword_tables``): a server of version 6
  still running waits, then has its writes and keyword searches refused (the table it
  writes is gone), so no note of it is left without terms; servers opening at once wait on
  ``LOCK_KEY`` and the first migrates.
* ``keyword_totals.trimmed``, ``trim_checked``, ``trim_next``: the feed's rows of notes that
  are gone are trimmed (``writes.trim_changes``, with the purge); ``trimmed`` is the newest
  ``seq`` of a row trimmed. A server whose index has read the feed only up to a ``seq``
  below ``trimmed`` may have missed a removal, and loads the project again instead of
  catching up.

Version 8 (the HNSW graphs cheaper to build): every namespace's index ``vectors_hnsw_<id>``
is built ``WITH (m = 8, ef_construction = 32)`` (``HNSW_OPTIONS``; pgvector's defaults, 16 and
64, before) and searched with a longer candidate list (``queries.HNSW_EF_SEARCH``) for the same
recall. The migration changes nothing itself (``_hnsw_options``); ``repair_hnsw``, run by every
store after ``migrate``, finds the index built with other options, and a server's store
rebuilds it with ``build_hnsw`` on a thread of its own, beside the old one, which serves
searches until the swap (a short-lived command's store leaves it to a server).

Version 9 (every vector change in the feed): re-embedding (``rehome``) and dropping a
namespace write the keyword change feed too (``writes.TOUCHED``), because servers now hold
projects' vectors (``vector_cache``) and refresh them from it. No data changes
(``_vectors_in_feed``); the version keeps servers of version 8, which change vectors without
telling the others, from opening.

Re-indexing (``reindex_terms``): ``migrate`` compares the recorded analysis with the current
one on every open, under the same lock and in the same transaction as the migrations; when
they differ (or none is recorded: every database written before version 3), each note's
terms are derived again from its ``doc`` in batches of ``REINDEX_BATCH`` (``note_terms``
rewritten, ``notes.length`` updated), ``keyword_totals`` is recounted from ``notes``, and
the analysis is recorded, all in one transaction: a process killed midway leaves the old
index whole (searches meanwhile read it, as they read it during the re-index), and the next
open does the re-index again from the start; servers opening at once wait on the lock, and
the first re-indexes for all. A later change of ``ANALYSIS`` needs only the new name (the
re-index follows by itself) plus a new schema version, so that servers of the older
analysis are refused instead of re-indexing back to it when they open.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable

import psycopg
import structlog

from local_mcp_memory.adapters.postgres_store import codec
from local_mcp_memory.adapters.text_analysis import ANALYSIS
from local_mcp_memory.application.errors import StoreError
from local_mcp_memory.domain.note import Note

log = structlog.get_logger()

LOCK_KEY = 0x6D63_706D_656D  # pg_advisory_xact_lock key shared by every mcp-memory server

BACKFILL_BATCH = 2_000
REINDEX_BATCH = 2_000

HNSW_M = 8
HNSW_EF_CONSTRUCTION = 32
HNSW_OPTIONS = (f"m={HNSW_M}", f"ef_construction={HNSW_EF_CONSTRUCTION}")
"""The HNSW graphs' build options (schema version 8; pgvector's defaults, 16 and 64, before),
as ``pg_class.reloptions`` lists them. Measured at 100k notes in one project
(``bench.hnsw_settings``): the build costs about a third of the CPU, and with
``queries.HNSW_EF_SEARCH`` raised to match, a search finds as many of the exact nearest
notes as before for about as many buffers."""


def _curation_columns(conn: psycopg.Connection) -> None:
    """Version 2: expiry, dedup key and links; ``dedup`` and ``expires`` of every existing
    note computed from its ``doc`` (SQL cannot compute Python's NFC and whitespace rules)."""
    conn.execute("ALTER TABLE notes ADD COLUMN IF NOT EXISTS expires timestamptz")
    conn.execute("ALTER TABLE notes ADD COLUMN IF NOT EXISTS dedup bytea")
    with conn.cursor(name="curation_backfill") as cursor:
        cursor.itersize = BACKFILL_BATCH
        cursor.execute("SELECT id, doc FROM notes WHERE dedup IS NULL")
        with conn.cursor() as update:
            while rows := cursor.fetchmany(BACKFILL_BATCH):
                ids, keys, expiries = [], [], []
                for key, doc in rows:
                    note = codec.note_of(doc)
                    ids.append(key)
                    keys.append(codec.dedup_hash(note))
                    expiries.append(note.expires_at)
                update.execute(
                    """UPDATE notes n SET dedup = u.dedup, expires = u.expires
                       FROM unnest(%s::text[], %s::bytea[], %s::timestamptz[]) AS u(id, dedup, expires)
                       WHERE n.id = u.id""",
                    (ids, keys, expiries),
                )
    conn.execute(
        """
        ALTER TABLE notes ALTER COLUMN dedup SET NOT NULL;
        CREATE INDEX IF NOT EXISTS notes_by_dedup ON notes (project, grp, dedup);
        CREATE INDEX IF NOT EXISTS notes_by_expiry ON notes (expires) WHERE expires IS NOT NULL;
        CREATE TABLE IF NOT EXISTS links (
            from_id text NOT NULL REFERENCES notes (id) ON DELETE CASCADE,
            to_id text NOT NULL REFERENCES notes (id) ON DELETE CASCADE,
            relation text NOT NULL,
            created timestamptz NOT NULL,
            written bigint NOT NULL,
            PRIMARY KEY (from_id, to_id, relation)
        );
        CREATE INDEX IF NOT EXISTS links_by_to ON links (to_id);
        """
    )


def _note_terms(conn: psycopg.Connection) -> None:
    """Version 7: ``note_terms`` filled from ``postings``, which is dropped; the trim horizon
    of the change feed (module docstring)."""
    conn.execute(
        """
        CREATE TABLE IF NOT EXISTS note_terms (
            note text PRIMARY KEY REFERENCES notes (id) ON DELETE CASCADE,
            terms text[] NOT NULL,
            tfs integer[] NOT NULL
        );
        ALTER TABLE keyword_totals ADD COLUMN IF NOT EXISTS trimmed bigint NOT NULL DEFAULT 0;
        ALTER TABLE keyword_totals ADD COLUMN IF NOT EXISTS trim_checked bigint NOT NULL DEFAULT 0;
        ALTER TABLE keyword_totals ADD COLUMN IF NOT EXISTS trim_next bigint NOT NULL DEFAULT 0;
        """
    )
    if conn.execute("SELECT to_regclass('postings') IS NOT NULL").fetchone()[0]:
        _lock_keyword_tables(conn, "postings")
        moved = conn.execute(
            """INSERT INTO note_terms (note, terms, tfs)
               SELECT note, array_agg(term ORDER BY term), array_agg(tf ORDER BY term) FROM postings GROUP BY note
               ON CONFLICT (note) DO NOTHING"""
        ).rowcount
        conn.execute(
            """INSERT INTO note_terms (note, terms, tfs) SELECT id, '{}', '{}' FROM notes
               ON CONFLICT (note) DO NOTHING"""
        )
        conn.execute("DROP TABLE postings")
        if moved:
            log.info("postgres_store.note_terms_migrated", notes=moved)


def _hnsw_options(conn: psycopg.Connection) -> None:
    """Version 8: the HNSW graphs built with ``HNSW_OPTIONS``. Nothing is rebuilt inside the
    migration's transaction (it would block every write for the whole build): each server
    runs ``repair_hnsw`` after ``migrate`` commits, and the first to take the build lock
    rebuilds each namespace's index concurrently beside the old one, on a thread, while the
    old one serves searches until the new one replaces it; the version keeps servers of version 7, which would build
    the old graph again at their next import, from opening."""
    stale = conn.execute(
        """SELECT count(*) FROM pg_class c JOIN namespaces ns ON c.relname = 'vectors_hnsw_' || ns.id
           WHERE NOT coalesce(c.reloptions @> %s::text[], false)""",
        (list(HNSW_OPTIONS),),
    ).fetchone()[0]
    if stale:
        log.info("postgres_store.hnsw_rebuild_due", indexes=stale, options=",".join(HNSW_OPTIONS))


def _vectors_in_feed(conn: psycopg.Connection) -> None:
    """Version 9: nothing to change; the version alone refuses servers of version 8, whose
    re-embedding would leave other servers' copies of the vectors stale."""


MIGRATIONS: tuple[tuple[int, str | Callable[[psycopg.Connection], None]], ...] = (
    (
        1,
        """
        CREATE SEQUENCE write_order;
        CREATE TABLE namespaces (
            id serial PRIMARY KEY,
            name text NOT NULL UNIQUE,
            dim integer NOT NULL CHECK (dim > 0)
        );
        CREATE TABLE notes (
            id text PRIMARY KEY,
            project text NOT NULL,
            grp text NOT NULL,
            created timestamptz NOT NULL,
            written bigint NOT NULL,
            home integer NOT NULL REFERENCES namespaces (id),
            tags text[] NOT NULL,
            length integer NOT NULL,
            doc text NOT NULL
        );
        CREATE INDEX notes_by_group ON notes (project, grp, created, written);
        CREATE INDEX notes_by_time ON notes (project, created, written);
        CREATE UNIQUE INDEX notes_by_write ON notes (written);
        CREATE INDEX notes_by_tag ON notes USING gin (tags);
        CREATE TABLE vectors (
            note text NOT NULL REFERENCES notes (id) ON DELETE CASCADE,
            space integer NOT NULL REFERENCES namespaces (id),
            project text NOT NULL,
            grp text NOT NULL,
            created timestamptz NOT NULL,
            written bigint NOT NULL,
            tags text[] NOT NULL,
            embedding vector NOT NULL,
            PRIMARY KEY (note, space)
        );
        CREATE INDEX vectors_by_scope ON vectors (space, project, grp, written) INCLUDE (note);
        CREATE INDEX vectors_by_write ON vectors (space, project, written) INCLUDE (note);
        CREATE TABLE postings (
            project text NOT NULL,
            term text NOT NULL,
            note text NOT NULL REFERENCES notes (id) ON DELETE CASCADE,
            tf integer NOT NULL,
            length integer NOT NULL,
            grp text NOT NULL,
            created timestamptz NOT NULL,
            tags text[] NOT NULL,
            PRIMARY KEY (project, term, note) INCLUDE (tf, length, grp, created, tags)
        );
        CREATE INDEX postings_by_note ON postings (note);
        CREATE TABLE keyword_totals (
            project text PRIMARY KEY,
            notes bigint NOT NULL,
            terms bigint NOT NULL
        );
        CREATE TABLE globals (
            project text NOT NULL,
            key text NOT NULL,
            value text NOT NULL,
            updated text NOT NULL,
            written bigint NOT NULL,
            PRIMARY KEY (project, key)
        );
        """,
    ),
    (2, _curation_columns),
    (3, "CREATE TABLE IF NOT EXISTS mcp_memory_meta (key text PRIMARY KEY, value text NOT NULL)"),
    (
        4,
        """
        CREATE INDEX IF NOT EXISTS vectors_by_sample
            ON vectors (space, project, hashtextextended(note, 0), note) INCLUDE (grp, created, tags);
        CREATE INDEX IF NOT EXISTS vectors_by_time ON vectors (space, project, created) INCLUDE (note, grp, tags);
        CREATE INDEX IF NOT EXISTS vectors_by_tag ON vectors USING gin (tags);
        """,
    ),
    (
        5,
        """
        ALTER TABLE notes ADD COLUMN IF NOT EXISTS importance real NOT NULL DEFAULT 0.5;
        CREATE INDEX IF NOT EXISTS links_superseding ON links (from_id, to_id) WHERE relation = 'supersedes';
        """,
    ),
    (
        6,
        """
        ALTER TABLE keyword_totals ADD COLUMN IF NOT EXISTS seq bigint NOT NULL DEFAULT 0;
        CREATE TABLE IF NOT EXISTS keyword_changes (
            project text NOT NULL,
            note text NOT NULL,
            seq bigint NOT NULL,
            PRIMARY KEY (project, note)
        );
        CREATE INDEX IF NOT EXISTS keyword_changes_by_seq ON keyword_changes (project, seq);
        """,
    ),
    (7, _note_terms),
    (8, _hnsw_options),
    (9, _vectors_in_feed),
)
LATEST = MIGRATIONS[-1][0]


def migrate(conn: psycopg.Connection, place: str) -> int:
    """Bring the schema to ``LATEST``; the version found before. ``conn`` is in autocommit."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS mcp_memory_schema (version integer PRIMARY KEY, applied timestamptz NOT NULL DEFAULT now())"
        )
        found = conn.execute("SELECT coalesce(max(version), 0) FROM mcp_memory_schema").fetchone()[0]
        if found > LATEST:
            raise StoreError(
                f"the {place} has mcp-memory schema version {found}; this version of mcp-memory "
                f"knows up to {LATEST}: upgrade mcp-memory"
            )
        for version, step in MIGRATIONS:
            if version > found:
                if callable(step):
                    step(conn)
                else:
                    conn.execute(step)
                conn.execute("INSERT INTO mcp_memory_schema (version) VALUES (%s)", (version,))
        row = conn.execute("SELECT value FROM mcp_memory_meta WHERE key = 'analysis'").fetchone()
        if row is None or row[0] != ANALYSIS:
            reindex_terms(conn)
            conn.execute(
                """INSERT INTO mcp_memory_meta (key, value) VALUES ('analysis', %s)
                   ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value""",
                (ANALYSIS,),
            )
    return found


def _lock_keyword_tables(conn: psycopg.Connection, terms: str = "note_terms") -> None:
    """``notes``, ``terms`` (the table of the terms) and ``keyword_totals`` locked ``EXCLUSIVE`` until the caller's
    transaction ends: writes of servers already running wait until the re-index commits
    (reads go on), so every note is re-derived and the counters recounted from one
    unchanging set of notes. All three at once or none (``NOWAIT`` in a savepoint, retried):
    writers and the purge take these tables in different orders, and a re-index holding one
    while waiting for another could deadlock with them."""
    pause = 0.01
    while True:
        try:
            with conn.transaction():
                conn.execute(f"LOCK TABLE keyword_totals, notes, {terms} IN EXCLUSIVE MODE NOWAIT")
            return
        except psycopg.errors.LockNotAvailable:
            time.sleep(pause)
            pause = min(pause * 2, 0.2)


def reindex_terms(conn: psycopg.Connection, analysis: Callable[[Note], list[str]] = codec.note_terms) -> int:
    """Derive every note's keyword terms again with the current analysis (``analysis``; another
    one only to build, in tests, a database as an older server left it): ``note_terms`` and
    ``notes.length`` rewritten, ``keyword_totals`` recounted; how many notes. Inside the
    caller's transaction (``migrate``'s, under the lock); idempotent."""
    _lock_keyword_tables(conn)
    conn.execute("DELETE FROM note_terms")
    done = 0
    with conn.cursor(name="reindex_terms") as cursor:
        cursor.itersize = REINDEX_BATCH
        cursor.execute("SELECT id, doc FROM notes")
        with conn.cursor() as update:
            while rows := cursor.fetchmany(REINDEX_BATCH):
                ids, lengths, terms, counts = [], [], [], []
                for key, doc in rows:
                    found = Counter(analysis(codec.note_of(doc)))
                    ids.append(key)
                    lengths.append(sum(found.values()))
                    terms.append(codec.array_literal(found.keys()))
                    counts.append(codec.array_literal(map(str, found.values())))
                update.execute(
                    """UPDATE notes n SET length = u.length
                       FROM unnest(%s::text[], %s::int[]) AS u(id, length)
                       WHERE n.id = u.id AND n.length <> u.length""",
                    (ids, lengths),
                )
                update.execute(
                    """INSERT INTO note_terms (note, terms, tfs)
                       SELECT id, terms::text[], tfs::int[] FROM unnest(%s::text[], %s::text[], %s::text[]) AS u(id, terms, tfs)""",
                    (ids, terms, counts),
                )
                done += len(rows)
    conn.execute(
        """INSERT INTO keyword_totals (project, notes, terms)
           SELECT project, count(*), coalesce(sum(length), 0) FROM notes GROUP BY project
           ON CONFLICT (project) DO UPDATE SET notes = EXCLUDED.notes, terms = EXCLUDED.terms"""
    )
    conn.execute(
        """UPDATE keyword_totals k SET notes = 0, terms = 0
           WHERE NOT EXISTS (SELECT 1 FROM notes n WHERE n.project = k.project) AND (k.notes, k.terms) <> (0, 0)"""
    )
    if _has_change_feed(conn):  # every note changed: the servers' keyword indexes read them again
        conn.execute("UPDATE keyword_totals SET seq = seq + 1")
        conn.execute(
            """INSERT INTO keyword_changes (project, note, seq)
               SELECT n.project, n.id, k.seq FROM notes n JOIN keyword_totals k ON k.project = n.project
               ON CONFLICT (project, note) DO UPDATE SET seq = EXCLUDED.seq"""
        )
    if done:
        log.info("postgres_store.reindexed", notes=done, analysis=ANALYSIS)
    return done


def _has_change_feed(conn: psycopg.Connection) -> bool:
    return conn.execute("SELECT to_regclass('keyword_changes') IS NOT NULL").fetchone()[0]


BUILD_MEMORY = "2GB"
"""``maintenance_work_mem`` of the session building an HNSW index: pgvector builds the graph
in memory while it fits (100k vectors of 384 dimensions: about 0.3 GB), much faster than it
inserts into a graph on disk."""

BUILD_WORKERS = 1
"""``max_parallel_maintenance_workers`` of the build: pgvector builds one graph with the
leader and this many workers (as many as the server's ``max_parallel_workers`` allows): two
processes, for a server of two cores. Measured at 100k notes (``bench.hnsw_settings``, load
average 2.9): two workers took a quarter less wall time than none, for a sixth more CPU; an
import of 100k notes built its graph in 13.7 s with one worker or with two (load 2.1–2.4,
the same 224–225 µs of CPU per vector): a third process on two cores gains nothing."""


def build_hnsw(conn: psycopg.Connection, space: int, dim: int, *, wait: bool = True) -> None:
    """Build the HNSW index of ``space`` if it is missing, invalid (a concurrent build that
    failed) or built with other options than ``HNSW_OPTIONS`` (by a server of schema version
    7 or older), without blocking writes (``CONCURRENTLY``). One server builds it at a time:
    under a session advisory lock taken by retrying ``pg_try_advisory_lock`` (a session
    blocked inside ``pg_advisory_lock`` would hold a snapshot that the concurrent build waits
    for), the index checked again once held. The new graph is built beside the index it
    replaces (``vectors_hnsw_<id>_next``), which keeps serving searches meanwhile, then the
    old one is dropped and the new one renamed: a build killed at any point leaves either
    the old index or a complete ``_next`` that the next build takes (an incomplete one it
    drops and builds again). ``wait=False``: nothing is done while another server holds the
    lock (it is building). ``conn`` is in autocommit."""
    name = f"vectors_hnsw_{int(space)}"
    building = f"{name}_next"
    if wait:
        _hold_build_lock(conn)
    elif not conn.execute("SELECT pg_try_advisory_lock(%s)", (BUILD_LOCK_KEY,)).fetchone()[0]:
        return
    try:
        if _current(conn, name):
            return
        if not _current(conn, building):
            conn.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {building}")
            conn.execute(f"SET maintenance_work_mem = '{BUILD_MEMORY}'")
            conn.execute(f"SET max_parallel_maintenance_workers = {BUILD_WORKERS}")
            try:
                conn.execute(hnsw_index_sql(space, dim, building).replace("CREATE INDEX", "CREATE INDEX CONCURRENTLY", 1))
            finally:
                conn.execute("RESET maintenance_work_mem")
                conn.execute("RESET max_parallel_maintenance_workers")
        conn.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")
        conn.execute(f"ALTER INDEX {building} RENAME TO {name}")
        log.info("postgres_store.hnsw_built", space=space, options=",".join(HNSW_OPTIONS))
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (BUILD_LOCK_KEY,))


def _current(conn: psycopg.Connection, name: str) -> bool:
    """Whether the index ``name`` exists, is valid and was built with ``HNSW_OPTIONS``."""
    found = conn.execute(
        """SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
           WHERE c.relname = %s AND i.indisvalid AND c.reloptions @> %s::text[]""",
        (name, list(HNSW_OPTIONS)),
    ).fetchone()
    return found is not None


BUILD_LOCK_KEY = LOCK_KEY + 1
"""The session advisory lock of an HNSW build (``build_hnsw``)."""


def _hold_build_lock(conn: psycopg.Connection) -> None:
    pause = 0.05
    while not conn.execute("SELECT pg_try_advisory_lock(%s)", (BUILD_LOCK_KEY,)).fetchone()[0]:
        time.sleep(pause)
        pause = min(pause * 2, 1.0)


def repair_hnsw(conn: psycopg.Connection, max_dim: int) -> list[tuple[int, int]]:
    """Build the HNSW index of every namespace that has no valid one (an import that died
    between dropping and building it again), and return ``(space, dim)`` of each namespace
    whose index was built with other options than ``HNSW_OPTIONS`` (a database of schema
    version 7 or older) and still serves searches: its rebuild waits for a server to do it
    beside the serving graph (``PostgresNoteStore``'s ``rebuild_graphs``), so opening never
    waits for a build but a missing index's."""
    stale = []
    for space, dim, serving in conn.execute(
        """SELECT ns.id, ns.dim, EXISTS (
                   SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
                   WHERE c.relname = 'vectors_hnsw_' || ns.id AND i.indisvalid)
           FROM namespaces ns WHERE ns.dim <= %s AND NOT EXISTS (
               SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
               WHERE c.relname = 'vectors_hnsw_' || ns.id AND i.indisvalid AND c.reloptions @> %s::text[])""",
        (max_dim, list(HNSW_OPTIONS)),
    ).fetchall():
        if serving:
            stale.append((space, dim))
        else:
            build_hnsw(conn, space, dim)
    return stale


def hnsw_index_sql(space: int, dim: int, name: str | None = None) -> str:
    """The partial HNSW index of one namespace (pgvector indexes need a fixed dimension),
    named ``vectors_hnsw_<space>`` unless ``name``."""
    return (
        f"CREATE INDEX IF NOT EXISTS {name or f'vectors_hnsw_{int(space)}'} ON vectors "
        f"USING hnsw ((embedding::vector({int(dim)})) vector_cosine_ops) "
        f"WITH (m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION}) WHERE space = {int(space)}"
    )
