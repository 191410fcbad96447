"""The statements of a put: one note or a batch of thousands, the same six set-based
statements (``put_rows``), reading the batch as arrays of its values (one round trip in a
pipeline) or, for a large batch, from a temporary table filled by ``COPY``; 1,000 notes
with their vectors in about 0.3 s of the database's time when no HNSW index is kept up to
date meanwhile (``bench.pg_writes``).

In one transaction, after the caller has locked the rows of the stored notes and their
projects' ``keyword_totals`` rows (``lock_rows``): the counters of the notes' previous
projects are decreased, the notes written (``ON CONFLICT (id) DO UPDATE``; each takes the
next ``write_order`` in batch order), the counters of their projects increased with one
bump of the change counter per project (the feed of ``keywords``), each note's row of terms
(``note_terms``) and its vector in ``space`` replaced, and the copies of the filter columns
in the notes' other vectors brought up to date.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np
import psycopg

from local_mcp_memory.adapters.postgres_store import codec
from local_mcp_memory.adapters.postgres_store.keywords import CHANGED
from local_mcp_memory.domain.note import Note


class Entry(NamedTuple):
    """One note to write: its fields, stored document, and vector in ``space`` (None: the
    note keeps the one it has there)."""

    note: Note
    doc: str
    row: np.ndarray | None


def lock_rows(conn: psycopg.Connection, notes: Sequence[Note]) -> None:
    """Lock what a write of ``notes`` will lock, in one order every write follows: the rows
    of the notes already stored (by id), then the keyword counters of their projects (by
    name, the missing ones created). A write that locked a note's row and then its project's
    counters entry after entry could wait in a cycle with another batch or with a
    ``delete``/``update`` (two batches spanning two projects in opposite orders deadlocked)."""
    _lock(conn, {n.id.value for n in notes}, {note.project_id.value for note in notes})


def _lock(conn: psycopg.Connection, ids: set[str], projects: set[str]) -> psycopg.Cursor:
    """``lock_rows``; the cursor of the stored notes locked (one row each), which is read
    only outside a pipeline."""
    stored = conn.execute("SELECT 1 FROM notes WHERE id = ANY(%s) ORDER BY id FOR UPDATE", (sorted(ids),))
    _lock_counters(conn, projects)
    return stored


def _lock_counters(conn: psycopg.Connection, projects: set[str]) -> None:
    conn.execute(
        """INSERT INTO keyword_totals (project, notes, terms) SELECT p, 0, 0 FROM unnest(%s::text[]) AS p ORDER BY p
           ON CONFLICT (project) DO UPDATE SET notes = keyword_totals.notes""",
        (sorted(projects),),
    )


def lock_stored(conn: psycopg.Connection, ids: Sequence[str]) -> list[str]:
    """Lock, in the order of ``lock_rows``, the stored notes among ``ids`` and their projects'
    keyword counters, for a write that changes the notes' vectors only (``TOUCHED`` follows);
    the ids found."""
    found = conn.execute("SELECT id, project FROM notes WHERE id = ANY(%s) ORDER BY id FOR UPDATE", (sorted(ids),)).fetchall()
    if found:
        _lock_counters(conn, {project for _id, project in found})
    return [key for key, _project in found]


TOUCHED = f"""WITH touched AS (SELECT id, project FROM notes WHERE id = ANY(%(ids)s)),
        counted AS (UPDATE keyword_totals k SET seq = k.seq + 1 WHERE k.project IN (SELECT project FROM touched)
                    RETURNING k.project, k.seq)
    {CHANGED.format(rows="SELECT t.project, t.id, c.seq FROM touched t JOIN counted c ON c.project = t.project")}"""
"""Record in the change feed that the notes ``ids`` changed though no put wrote them (their
vectors in a namespace: ``rehome``, ``drop_namespace``), one bump of each project's counter,
after ``lock_stored``: every server's in-process copies of the project (keyword index,
``vector_cache``) then read them again."""


COPY_MIN = 200
"""A batch of at least this many notes travels by ``COPY`` into a temporary table the
statements read (``STAGED``); a smaller one as one array per column (``UNNESTED``), which a
pipeline sends with the statements in one round trip. psycopg dumps an array parameter
element by element in Python, a ``COPY`` row in its C extension."""


def put_notes(conn: psycopg.Connection, entries: Sequence[Entry], space: int) -> None:
    """``put_rows`` of ``prepare(entries)``."""
    put_rows(conn, prepare(entries), space)


def prepare(entries: Sequence[Entry]) -> list[tuple]:
    """What ``put_rows`` writes of ``entries``: a row per note (the columns of ``_TYPES``),
    an id given twice written once, as its last entry. Python's part of a put, which a bulk
    write computes for the next batch while the database writes this one."""
    last = {entry.note.id.value: i for i, entry in enumerate(entries)}
    return _rows([entry for i, entry in enumerate(entries) if last[entry.note.id.value] == i])


def put_rows(conn: psycopg.Connection, rows: list[tuple], space: int) -> None:
    """Lock (``lock_rows``) and write (module docstring) the notes of ``rows``
    (``prepare``), in the caller's transaction: in one round trip (a pipeline) for a batch
    of fewer than ``COPY_MIN``, else through ``stage`` (``COPY`` cannot run in a pipeline)."""
    if len(rows) < COPY_MIN:
        with conn.pipeline():
            _lock(conn, {row[0] for row in rows}, {row[1] for row in rows})
            p = {name: list(values) for name, values in zip(_TYPES, zip(*rows))}
            for statement in UNNESTED:
                conn.execute(statement, {**p, "space": space})
        return
    stored = _lock(conn, {row[0] for row in rows}, {row[1] for row in rows}).fetchall()
    stage(conn, rows)
    for statement in STAGED if stored else STAGED_NEW:
        conn.execute(statement, {"space": space})


def stage(conn: psycopg.Connection, rows: list[tuple]) -> None:
    """``rows`` (``_rows``) into the temporary table ``batch_notes`` that ``STAGED`` reads,
    by binary ``COPY``; emptied when the transaction ends."""
    conn.execute(_STAGING)
    with conn.cursor().copy(f"COPY batch_notes ({', '.join(_TYPES)}, ord) FROM STDIN (FORMAT BINARY)") as copy:
        copy.set_types([*_TYPES.values(), "int4"])
        for ord, row in enumerate(rows, start=1):
            copy.write_row((*row, ord))
    conn.execute("ANALYZE batch_notes")  # else planned as a table of unknown size: notes scanned whole


_TYPES = {"id": "text", "project": "text", "grp": "text", "created": "timestamptz", "tags": "text", "length": "int4",
          "doc": "text", "expires": "timestamptz", "importance": "float4", "dedup": "bytea", "terms": "text",
          "tfs": "text", "embedding": "vector"}
"""The columns of a batch, in order; ``tags``, ``terms`` and ``tfs`` are array literals
(``codec.array_literal``), ``embedding`` is null for a note that keeps its vector."""


def _rows(entries: Sequence[Entry]) -> list[tuple]:
    """One tuple per note, the columns of ``_TYPES``."""
    rows = []
    for note, doc, row in entries:
        terms = Counter(codec.note_terms(note))
        rows.append((
            note.id.value, note.project_id.value, note.group_id.value, note.created_at,
            codec.array_literal(codec.escaped_tags(note.tags)), terms.total(), doc, note.expires_at, note.importance,
            codec.dedup_hash(note), codec.array_literal(terms), "{" + ",".join(map(str, terms.values())) + "}", row,
        ))
    return rows


_STAGING = f"""CREATE TEMP TABLE IF NOT EXISTS batch_notes
    ({", ".join(f"{name} {kind}" for name, kind in _TYPES.items())},
     ord integer) ON COMMIT DELETE ROWS"""


def _statements(u: Callable[..., str]) -> tuple[str, ...]:
    """The statements of a put, reading the batch from ``u(columns…)``: a relation named
    ``u`` holding at least those columns and ``ord``, the note's place in the batch."""
    leave_old = f"""WITH old AS (SELECT n.id, n.project, n.length, u.project AS new_project FROM notes n
                                JOIN {u("id", "project")} ON u.id = n.id),
            gone AS (SELECT project, count(*) AS n, sum(length) AS terms, bool_or(project <> new_project) AS moved
                     FROM old GROUP BY project),
            counted AS (UPDATE keyword_totals k SET notes = k.notes - g.n, terms = k.terms - g.terms, seq = k.seq + g.moved::int
                        FROM gone g WHERE k.project = g.project RETURNING k.project, k.seq)
        {CHANGED.format(rows="SELECT o.project, o.id, c.seq FROM old o JOIN counted c ON c.project = o.project WHERE o.project <> o.new_project")}"""
    notes = f"""INSERT INTO notes (id, project, grp, created, written, home, tags, length, doc, expires, dedup, importance)
        SELECT id, project, grp, created, nextval('write_order'), %(space)s, tags::text[], length, doc, expires, dedup, importance
        FROM (SELECT * FROM {u(*_TYPES)} ORDER BY ord) u
        ON CONFLICT (id) DO UPDATE SET project = EXCLUDED.project, grp = EXCLUDED.grp, created = EXCLUDED.created,
            written = EXCLUDED.written, home = EXCLUDED.home, tags = EXCLUDED.tags, length = EXCLUDED.length,
            doc = EXCLUDED.doc, expires = EXCLUDED.expires, dedup = EXCLUDED.dedup, importance = EXCLUDED.importance"""
    count_new = f"""WITH new AS (SELECT project, count(*) AS n, sum(length) AS terms FROM {u("project", "length")} GROUP BY project),
            counted AS (INSERT INTO keyword_totals AS k (project, notes, terms, seq) SELECT project, n, terms, 1 FROM new
                        ON CONFLICT (project) DO UPDATE SET notes = k.notes + EXCLUDED.notes, terms = k.terms + EXCLUDED.terms,
                                                            seq = k.seq + 1
                        RETURNING k.project, k.seq)
        {CHANGED.format(rows=f"SELECT u.project, u.id, c.seq FROM {u('project', 'id')} JOIN counted c ON c.project = u.project")}"""
    terms = f"""INSERT INTO note_terms (note, terms, tfs) SELECT id, terms::text[], tfs::int[] FROM {u("id", "terms", "tfs")}
        ON CONFLICT (note) DO UPDATE SET terms = EXCLUDED.terms, tfs = EXCLUDED.tfs"""
    vectors = f"""INSERT INTO vectors (note, space, project, grp, created, written, tags, embedding)
        SELECT n.id, %(space)s, n.project, n.grp, n.created, n.written, n.tags, u.embedding
        FROM {u("id", "embedding")} JOIN notes n ON n.id = u.id WHERE u.embedding IS NOT NULL
        ON CONFLICT (note, space) DO UPDATE SET embedding = EXCLUDED.embedding"""
    other_vectors = f"""UPDATE vectors v SET project = n.project, grp = n.grp, created = n.created, written = n.written, tags = n.tags
        FROM notes n JOIN {u("id")} ON u.id = n.id WHERE v.note = n.id
          AND (v.project, v.grp, v.created, v.written, v.tags) IS DISTINCT FROM (n.project, n.grp, n.created, n.written, n.tags)"""
    # the counters of the notes' previous rows decreased (a note moved to another project is
    # a change in the project it left), the notes, the counters of their projects, their
    # terms, their vectors in ``space``; a note's other vectors follow its fields
    return leave_old, notes, count_new, terms, vectors, other_vectors


def _unnest(*columns: str) -> str:
    arrays = ", ".join(f"%({c})b::{_TYPES[c]}[]" for c in columns)
    return f"unnest({arrays}) WITH ORDINALITY AS u({', '.join(columns)}, ord)"


UNNESTED = _statements(_unnest)
STAGED = _statements(lambda *columns: "batch_notes u")
STAGED_NEW = STAGED[1:-1]
"""``STAGED`` for a batch of notes none of which was stored when their rows were locked
(an import into an empty store): no counters to decrease, no other vectors to bring up to
date (about a sixth of the database's CPU of such a batch: ``bench.pg_writes``)."""


def trim_changes(conn: psycopg.Connection) -> int:
    """Delete the change feed's rows of notes that are gone (``keyword_changes`` keeps a row
    per removed note, so that servers see the removal); how many. Per project, in a
    transaction of its own holding the project's ``keyword_totals`` row (``SKIP LOCKED``: a
    project being written is trimmed next time), a window of the feed is checked once:
    ``(trim_checked, trim_next]``, ``trim_next`` being the project's ``seq`` at the
    previous trim, so a removal stays in the feed for at least one trim interval, which
    servers searching the project meanwhile catch up with. ``trimmed`` becomes the newest
    ``seq`` trimmed; a server that has read less loads the project again (``keywords``).
    A note removed later has its row moved past the window (its ``seq`` is renewed), so
    each row is checked about once. ``conn`` is in autocommit."""
    total = 0
    projects = conn.execute("SELECT project FROM keyword_totals WHERE seq > trim_checked").fetchall()
    for (project,) in projects:
        with conn.transaction():
            found = conn.execute(
                "SELECT trim_checked, trim_next, seq FROM keyword_totals WHERE project = %s FOR UPDATE SKIP LOCKED",
                (project,),
            ).fetchone()
            if found is None:
                continue
            checked, horizon, seq = found
            trimmed = conn.execute(
                """WITH gone AS (DELETE FROM keyword_changes c WHERE c.project = %(project)s
                                   AND c.seq > %(checked)s AND c.seq <= %(horizon)s
                                   AND NOT EXISTS (SELECT 1 FROM notes n WHERE n.id = c.note AND n.project = c.project)
                                 RETURNING c.seq)
                   UPDATE keyword_totals SET trimmed = greatest(trimmed, (SELECT max(seq) FROM gone)),
                                             trim_checked = greatest(trim_checked, %(horizon)s), trim_next = %(seq)s
                   WHERE project = %(project)s RETURNING (SELECT count(*) FROM gone)""",
                {"project": project, "checked": checked, "horizon": horizon, "seq": seq},
            ).fetchone()[0]
            total += int(trimmed)
    return total
