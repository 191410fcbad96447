"""The SQL of curation (SPEC §11) on PostgreSQL: the dedup decision's locks and lookup, the
purge of expired notes, and links. Each function runs on a connection the store took from
its pool; the store wraps failures (``connection.failures``) and holds the transactions
whose steps are several functions (``add``).

Tables and indexes: ``schema`` (version 2).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime, timezone

import psycopg

from local_mcp_memory.adapters.postgres_store import codec
from local_mcp_memory.adapters.postgres_store.keywords import CHANGED
from local_mcp_memory.adapters.postgres_store.queries import not_superseded_sql
from local_mcp_memory.application.errors import SupersessionCycle

from local_mcp_memory.domain.identifiers import CanonicalProjectId, NoteId
from local_mcp_memory.domain.link import SUPERSEDES, Link, LinkKey, Relation

DedupKey = tuple[str, str, bytes]
"""A dedup key as stored: project, group, ``notes.dedup`` (``codec.dedup_hash``)."""

KEY_LOCKS_MAX = 64
"""An ``add`` with more distinct dedup keys locks their projects instead: advisory locks
take slots of the server's shared lock table (``max_locks_per_transaction`` per
connection), which a batch of 1,000 keys per transaction could exhaust."""


def lock_dedup_keys(conn: psycopg.Connection, keys: Sequence[DedupKey]) -> None:
    """Make the dedup decision on ``keys`` exclusive until the transaction ends. Up to
    ``KEY_LOCKS_MAX`` keys: each project's lock shared, then each key's lock; more: each
    project's lock exclusive, which waits for every add of the project and holds off the
    next. Locks are taken in one order (projects, then keys, each sorted), so two adds never
    wait for each other in a cycle."""
    projects = sorted({_lock_number(b"project", project) for project, _grp, _dedup in keys})
    if len(keys) > KEY_LOCKS_MAX:
        conn.execute("SELECT count(pg_advisory_xact_lock(k)) FROM unnest(%s::bigint[]) AS k", (projects,))
        return
    conn.execute("SELECT count(pg_advisory_xact_lock_shared(k)) FROM unnest(%s::bigint[]) AS k", (projects,))
    locks = sorted({_lock_number(b"key", project, grp, dedup) for project, grp, dedup in keys})
    conn.execute("SELECT count(pg_advisory_xact_lock(k)) FROM unnest(%s::bigint[]) AS k", (locks,))


def holders(conn: psycopg.Connection, keys: Sequence[DedupKey], now: datetime) -> dict[DedupKey, str]:
    """The id of the note holding each key that one holds: the first written of the notes
    with that key not expired at ``now``, not superseded then (``queries.not_superseded_sql``)
    and not owned by a markdown sync (no ``origin`` in its document; the sync may delete it)
    (``notes_by_dedup``). The origin is read by the
    codec, not by PostgreSQL's JSON operators, which refuse a document holding ``\\u0000``
    (a NUL is valid note text)."""
    rows = conn.execute(
        f"""SELECT n.project, n.grp, n.dedup, n.id, n.doc
           FROM unnest(%(projects)s::text[], %(groups)s::text[], %(hashes)s::bytea[]) AS k(project, grp, dedup)
           JOIN notes n ON n.project = k.project AND n.grp = k.grp AND n.dedup = k.dedup
           WHERE (n.expires IS NULL OR n.expires > %(now)s) AND {not_superseded_sql("n", at_now=True)}
           ORDER BY n.project, n.grp, n.dedup, n.written""",
        {"projects": [k[0] for k in keys], "groups": [k[1] for k in keys], "hashes": [k[2] for k in keys], "now": now},
    ).fetchall()
    found: dict[DedupKey, str] = {}
    for project, grp, dedup, key, doc in rows:
        if (project, grp, bytes(dedup)) not in found and codec.note_of(doc).origin is None:
            found[project, grp, bytes(dedup)] = key
    return found


def purge(conn: psycopg.Connection, now: datetime | None) -> int:
    """Delete the notes expired at ``now`` (None: the database's ``now()``) with their
    vectors, terms and links (cascades); how many. One transaction per project: the
    project's keyword counters locked first, then the expired notes no other writer holds
    (``SKIP LOCKED``: the purge never waits for a note row, so it cannot deadlock with a
    write holding one; a skipped note waits for the next purge). ``conn`` is in autocommit,
    as the store's pool connections are, so each project's transaction commits on its own."""
    total = 0
    projects = conn.execute(
        "SELECT DISTINCT project FROM notes WHERE expires <= coalesce(%s::timestamptz, now())", (now,)
    ).fetchall()
    for (project,) in projects:
        with conn.transaction():
            conn.execute("SELECT 1 FROM keyword_totals WHERE project = %s FOR UPDATE", (project,))
            found = conn.execute(
                f"""WITH gone AS (
                       DELETE FROM notes WHERE id IN (
                           SELECT id FROM notes WHERE project = %(project)s
                             AND expires <= coalesce(%(now)s::timestamptz, now()) FOR UPDATE SKIP LOCKED)
                       RETURNING id, length),
                   counted AS (UPDATE keyword_totals k SET notes = k.notes - g.n, terms = k.terms - g.terms, seq = k.seq + 1
                               FROM (SELECT count(*) AS n, coalesce(sum(length), 0) AS terms FROM gone) g
                               WHERE k.project = %(project)s AND g.n > 0 RETURNING k.seq),
                   changed AS ({CHANGED.format(rows="SELECT %(project)s, gone.id, counted.seq FROM gone CROSS JOIN counted")})
                   SELECT count(*) FROM gone""",
                {"project": project, "now": now},
            ).fetchone()
            total += int(found[0])
    return total


def add_link(conn: psycopg.Connection, link: Link) -> bool:
    """Store ``link`` unless its key is stored; whether both notes exist. One statement
    (``_insert_link``): the notes locked ``FOR KEY SHARE`` (a concurrent delete waits, or has committed and the
    note is not found), the row inserted only when both were found. A ``supersedes`` link
    is written in a transaction holding ``SUPERSEDES_LOCK``, after the test that it closes
    no cycle (``closes_cycle``): every ``supersedes`` link of the database is written under
    that lock, so the test sees each one committed before."""
    key = link.key
    if key.relation != SUPERSEDES:
        return _insert_link(conn, link)
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (SUPERSEDES_LOCK,))
        if closes_cycle(conn, key.from_id.value, key.to_id.value):
            raise SupersessionCycle(key.from_id.value, key.to_id.value)
        return _insert_link(conn, link)


def closes_cycle(conn: psycopg.Connection, source: str, target: str) -> bool:
    """Whether ``target`` is ``source`` or supersedes it already, directly or down a chain
    of ``supersedes`` links (walked from ``target`` along ``links``' primary key, each note once)."""
    return bool(
        conn.execute(
            """WITH RECURSIVE chain (id) AS (
                   SELECT %(target)s::text
                   UNION
                   SELECT l.to_id FROM links l JOIN chain c ON l.from_id = c.id WHERE l.relation = 'supersedes'
               )
               SELECT EXISTS (SELECT 1 FROM chain WHERE id = %(source)s)""",
            {"source": source, "target": target},
        ).fetchone()[0]
    )


def _insert_link(conn: psycopg.Connection, link: Link) -> bool:
    key = link.key
    ids = sorted({key.from_id.value, key.to_id.value})
    found = conn.execute(
        """WITH present AS MATERIALIZED (SELECT id FROM notes WHERE id = ANY(%(ids)s) ORDER BY id FOR KEY SHARE),
                added AS (INSERT INTO links (from_id, to_id, relation, created, written)
                          SELECT %(from)s, %(to)s, %(relation)s, %(created)s, nextval('write_order')
                          WHERE (SELECT count(*) FROM present) = %(n)s
                          ON CONFLICT (from_id, to_id, relation) DO NOTHING)
           SELECT count(*) FROM present""",
        {
            "ids": ids,
            "n": len(ids),
            "from": key.from_id.value,
            "to": key.to_id.value,
            "relation": key.relation.value,
            "created": link.created_at,
        },
    ).fetchone()
    return found[0] == len(ids)


def remove_link(conn: psycopg.Connection, key: LinkKey) -> bool:
    cursor = conn.execute(
        "DELETE FROM links WHERE from_id = %s AND to_id = %s AND relation = %s",
        (key.from_id.value, key.to_id.value, key.relation.value),
    )
    return cursor.rowcount > 0


def links_of(conn: psycopg.Connection, note_id: NoteId) -> list[Link]:
    """Every link from or to the note, newest ``created`` first, ties last written first."""
    rows = conn.execute(
        """SELECT from_id, to_id, relation, created FROM links WHERE from_id = %(id)s OR to_id = %(id)s
           ORDER BY created DESC, written DESC""",
        {"id": note_id.value},
    ).fetchall()
    return [_link(*row) for row in rows]


def all_links(conn: psycopg.Connection, project_id: CanonicalProjectId | None) -> list[Link]:
    """Every link (of one project: its ``from`` note's), oldest ``created`` first, ties in
    write order."""
    condition = "TRUE" if project_id is None else "n.project = %(project)s"
    params = {} if project_id is None else {"project": project_id.value}
    rows = conn.execute(
        f"""SELECT l.from_id, l.to_id, l.relation, l.created FROM links l JOIN notes n ON n.id = l.from_id
            WHERE {condition} ORDER BY l.created, l.written""",
        params,
    ).fetchall()
    return [_link(*row) for row in rows]


def _link(from_id: str, to_id: str, relation: str, created: datetime) -> Link:
    return Link(LinkKey(NoteId(from_id), NoteId(to_id), Relation(relation)), created.astimezone(timezone.utc))


def _lock_number(kind: bytes, *parts: str | bytes) -> int:
    """A signed 64-bit advisory lock number for ``kind`` (``project``, ``key``, ``supersedes``) and ``parts``."""
    digest = hashlib.sha256(b"mcp-memory dedup " + kind)
    for part in parts:
        digest.update(b"\0" + (part if isinstance(part, bytes) else part.encode("utf-8", "surrogatepass")))
    return int.from_bytes(digest.digest()[:8], "big", signed=True)


SUPERSEDES_LOCK = _lock_number(b"supersedes")
"""The advisory lock every ``supersedes`` link is written under: a cycle closed by two links
written at once could be seen by neither's test. Such links are few and written one at a time."""
