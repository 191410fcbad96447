"""The statements of a put: one note or a batch of thousands, the same six set-based
statements (``write_notes``), each taking arrays of the batch's values (one round trip in a
pipeline; a batch of 1,000 notes with their vectors in about 0.2 s where a statement per
note took 1.5 s).

In one transaction, after the caller has locked the rows of the stored notes and their
projects' ``keyword_totals`` rows (``lock_rows``): the counters of the notes' previous
projects are decreased, the notes written (``ON CONFLICT (id) DO UPDATE``; each takes the
next ``write_order`` in batch order), the counters of their projects increased with one
bump of the change counter per project (the feed of ``keywords``), each note's row of terms
(``note_terms``) and its vector in ``space`` replaced, and the copies of the filter columns in the notes' other
vectors brought up to date.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, NamedTuple

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
    conn.execute("SELECT 1 FROM notes WHERE id = ANY(%s) ORDER BY id FOR UPDATE", (sorted({n.id.value for n in notes}),))
    conn.execute(
        """INSERT INTO keyword_totals (project, notes, terms) SELECT p, 0, 0 FROM unnest(%s::text[]) AS p ORDER BY p
           ON CONFLICT (project) DO UPDATE SET notes = keyword_totals.notes""",
        (sorted({note.project_id.value for note in notes}),),
    )


def write_notes(conn: psycopg.Connection, entries: Sequence[Entry], space: int) -> None:
    """Put ``entries`` (module docstring); an id given twice is written once, as its last
    entry. In the caller's transaction, after ``lock_rows``."""
    last = {entry.note.id.value: i for i, entry in enumerate(entries)}
    entries = [entry for i, entry in enumerate(entries) if last[entry.note.id.value] == i]
    p = _columns(entries, space)
    for statement in (_LEAVE_OLD, _NOTES, _COUNT_NEW, _TERMS, _VECTORS, _OTHER_VECTORS):
        conn.execute(statement, p)


def _columns(entries: Sequence[Entry], space: int) -> dict[str, Any]:
    """The batch as one array per column; each note's tags, terms and their counts as one
    array literal (``codec.array_literal``)."""
    p: dict[str, list[Any]] = {k: [] for k in ("id", "project", "grp", "created", "tags", "length", "doc", "expires",
                                               "importance", "dedup", "terms", "tfs", "with_row", "rows")}
    for note, doc, row in entries:
        terms = Counter(codec.note_terms(note))
        for key, value in (("id", note.id.value), ("project", note.project_id.value), ("grp", note.group_id.value),
                           ("created", note.created_at), ("tags", codec.array_literal(codec.escaped_tags(note.tags))),
                           ("length", terms.total()), ("doc", doc), ("expires", note.expires_at),
                           ("importance", note.importance), ("dedup", codec.dedup_hash(note)),
                           ("terms", codec.array_literal(terms)), ("tfs", "{" + ",".join(map(str, terms.values())) + "}")):
            p[key].append(value)
        if row is not None:
            p["with_row"].append(note.id.value)
            p["rows"].append(row)
    return {**p, "space": space}


_BATCH = """unnest(%(id)b::text[], %(project)b::text[], %(grp)b::text[], %(created)b::timestamptz[], %(tags)b::text[],
    %(length)b::int[], %(doc)b::text[], %(expires)b::timestamptz[], %(importance)b::real[], %(dedup)b::bytea[])
    WITH ORDINALITY AS u(id, project, grp, created, tags, length, doc, expires, importance, dedup, ord)"""

_LEAVE_OLD = f"""WITH old AS (SELECT n.id, n.project, n.length, u.project AS new_project FROM notes n
                            JOIN unnest(%(id)b::text[], %(project)b::text[]) AS u(id, project) ON u.id = n.id),
        gone AS (SELECT project, count(*) AS n, sum(length) AS terms, bool_or(project <> new_project) AS moved
                 FROM old GROUP BY project),
        counted AS (UPDATE keyword_totals k SET notes = k.notes - g.n, terms = k.terms - g.terms, seq = k.seq + g.moved::int
                    FROM gone g WHERE k.project = g.project RETURNING k.project, k.seq)
    {CHANGED.format(rows="SELECT o.project, o.id, c.seq FROM old o JOIN counted c ON c.project = o.project WHERE o.project <> o.new_project")}"""
"""The counters of the notes' previous rows decreased; a note moved to another project is a
change in the project it left."""

_NOTES = f"""INSERT INTO notes (id, project, grp, created, written, home, tags, length, doc, expires, dedup, importance)
    SELECT id, project, grp, created, nextval('write_order'), %(space)s, tags::text[], length, doc, expires, dedup, importance
    FROM (SELECT * FROM {_BATCH} ORDER BY ord) u
    ON CONFLICT (id) DO UPDATE SET project = EXCLUDED.project, grp = EXCLUDED.grp, created = EXCLUDED.created,
        written = EXCLUDED.written, home = EXCLUDED.home, tags = EXCLUDED.tags, length = EXCLUDED.length,
        doc = EXCLUDED.doc, expires = EXCLUDED.expires, dedup = EXCLUDED.dedup, importance = EXCLUDED.importance"""

_COUNT_NEW = f"""WITH new AS (SELECT project, count(*) AS n, sum(length) AS terms
                            FROM unnest(%(project)b::text[], %(length)b::int[]) AS u(project, length) GROUP BY project),
        counted AS (INSERT INTO keyword_totals AS k (project, notes, terms, seq) SELECT project, n, terms, 1 FROM new
                    ON CONFLICT (project) DO UPDATE SET notes = k.notes + EXCLUDED.notes, terms = k.terms + EXCLUDED.terms,
                                                        seq = k.seq + 1
                    RETURNING k.project, k.seq)
    {CHANGED.format(rows="SELECT u.project, u.id, c.seq FROM unnest(%(project)b::text[], %(id)b::text[]) AS u(project, id) JOIN counted c ON c.project = u.project")}"""

_TERMS = """INSERT INTO note_terms (note, terms, tfs)
    SELECT id, terms::text[], tfs::int[] FROM unnest(%(id)b::text[], %(terms)b::text[], %(tfs)b::text[]) AS u(id, terms, tfs)
    ON CONFLICT (note) DO UPDATE SET terms = EXCLUDED.terms, tfs = EXCLUDED.tfs"""

_VECTORS = """INSERT INTO vectors (note, space, project, grp, created, written, tags, embedding)
    SELECT n.id, %(space)s, n.project, n.grp, n.created, n.written, n.tags, u.embedding
    FROM unnest(%(with_row)b::text[], %(rows)b::vector[]) AS u(id, embedding) JOIN notes n ON n.id = u.id
    ON CONFLICT (note, space) DO UPDATE SET embedding = EXCLUDED.embedding"""

_OTHER_VECTORS = """UPDATE vectors v SET project = n.project, grp = n.grp, created = n.created, written = n.written, tags = n.tags
    FROM notes n WHERE n.id = ANY(%(id)b) AND v.note = n.id
      AND (v.project, v.grp, v.created, v.written, v.tags) IS DISTINCT FROM (n.project, n.grp, n.created, n.written, n.tags)"""
"""A note's other vectors follow its fields; a row just written already has them."""


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
