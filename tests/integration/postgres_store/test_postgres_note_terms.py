"""Schema version 7 on PostgreSQL: each note's terms in one row of ``note_terms`` (version 6
kept a row per term in ``postings``), the keyword change feed trimmed of the notes that are
gone, and a bulk import killed midway.

A version 6 database is built by writing through the real store, then taking the schema back
to what a version 6 server left: ``postings`` as versions 1 to 6 created it, filled from
the notes' terms, ``note_terms`` and the trim columns dropped, version 7 unrecorded."""

from __future__ import annotations

import base64
import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg

from local_mcp_memory.adapters.postgres_store import PostgresNoteStore
from local_mcp_memory.adapters.postgres_store.schema import LATEST, MIGRATIONS
from local_mcp_memory.application.ports import CandidateQuery
from local_mcp_memory.domain.identifiers import Namespace
from local_mcp_memory.domain.note import NoteFilter
from tests.contracts.test_note_store_contract import ELSEWHERE, NS, PROJECT, make_note, unit
from tests.integration.postgres_store.test_postgres_reindex import QUERIES, keyword_scores, mixed_notes, write_fresh
from tests.integration.serve import MCP_MEMORY, server_env
from tests.postgres_server import postgres, postgres_url  # noqa: F401  (fixtures)

ROOT = Path(__file__).resolve().parents[3]

V6_POSTINGS = re.search(r"CREATE TABLE postings .*?CREATE INDEX postings_by_note ON postings \(note\);", MIGRATIONS[0][1], re.S)[0]
"""``postings`` as version 1 created it (and versions up to 6 kept it): from the shipped migration."""


def as_version_6(url: str) -> int:
    """The database taken back to schema version 6 (module docstring); how many postings."""
    with psycopg.connect(url, autocommit=True) as conn, conn.transaction():
        conn.execute(V6_POSTINGS)
        conn.execute(
            """INSERT INTO postings (project, term, note, tf, length, grp, created, tags)
               SELECT n.project, u.term, n.id, u.tf, n.length, n.grp, n.created, n.tags
               FROM notes n JOIN note_terms t ON t.note = n.id, unnest(t.terms, t.tfs) AS u(term, tf)"""
        )
        conn.execute("DROP TABLE note_terms")
        conn.execute("ALTER TABLE keyword_totals DROP COLUMN trimmed, DROP COLUMN trim_checked, DROP COLUMN trim_next")
        conn.execute("DELETE FROM mcp_memory_schema WHERE version >= 7")
        return conn.execute("SELECT count(*) FROM postings").fetchone()[0]


def terms_of(url: str) -> dict[str, dict[str, int]]:
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT note, terms, tfs FROM note_terms").fetchall()
    return {note: dict(zip(terms, tfs)) for note, terms, tfs in rows}


OPEN_AND_SEARCH = """
import json, sys, time
from local_mcp_memory.adapters.postgres_store import PostgresNoteStore
from local_mcp_memory.application.ports import CandidateQuery
from local_mcp_memory.domain.identifiers import Namespace
from local_mcp_memory.domain.note import NoteFilter
from tests.contracts.test_note_store_contract import ELSEWHERE, PROJECT
from tests.integration.postgres_store.test_postgres_reindex import QUERIES
time.sleep(max(0.0, float(sys.argv[2]) - time.time()))
store = PostgresNoteStore(sys.argv[1], timeout=60)
found = {f"{p.value} {q}": [[c.id, c.score] for c in store.candidates(CandidateQuery(NoteFilter(p), 50, text=q)).keyword]
         for p in (PROJECT, ELSEWHERE) for q in QUERIES}
print(json.dumps(found))
store.close()
"""


def test_a_version_6_database_opened_by_two_servers_at_once_is_migrated_once_with_the_same_answers(postgres_url: str) -> None:  # noqa: F811
    notes = mixed_notes()
    notes.insert(-1, make_note("the of and", minutes=120))  # stopwords only: a row with no terms
    write_fresh(postgres_url, notes, deleted=1)
    before_terms = terms_of(postgres_url)
    store = PostgresNoteStore(postgres_url)
    try:
        before = {f"{p} {q}": [[i, s] for i, s in found] for (p, q), found in keyword_scores(store).items()}
    finally:
        store.close()
    assert sum(len(v) for v in before.values()) > 20
    assert as_version_6(postgres_url) > len(notes)
    at = time.time() + 3.0  # both processes past their imports, then opening in the same instant
    processes = [
        subprocess.Popen([sys.executable, "-c", OPEN_AND_SEARCH, postgres_url, str(at)], cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    outputs = [p.communicate(timeout=120) for p in processes]
    for process, (out, err) in zip(processes, outputs):
        assert process.returncode == 0, err.decode()[-2000:]
        assert json.loads(out.splitlines()[-1]) == before  # the same answers, scores included, from either server
    assert sum(b"note_terms_migrated" in out + err for out, err in outputs) == 1  # migrated once
    with psycopg.connect(postgres_url) as conn:
        versions = [v for (v,) in conn.execute("SELECT version FROM mcp_memory_schema ORDER BY version")]
        assert versions == list(range(1, LATEST + 1)) and 7 in versions
        assert conn.execute("SELECT to_regclass('postings')").fetchone()[0] is None
        assert conn.execute("SELECT count(*) FROM note_terms").fetchone()[0] == len(notes) - 1
    assert terms_of(postgres_url) == before_terms
    assert before_terms[notes[-2].id.value] == {}


def test_servers_behind_the_trimmed_feed_load_the_project_again_and_miss_no_removal(postgres_url: str) -> None:  # noqa: F811
    writer = PostgresNoteStore(postgres_url, purge_every=0.0)  # every write trims the feed
    behind = PostgresNoteStore(postgres_url)
    current = PostgresNoteStore(postgres_url)
    try:
        notes = [make_note(f"scaffold number {i}", minutes=i) for i in range(20)]
        writer.put_many([(n, unit(i)) for i, n in enumerate(notes)], NS)
        other = make_note("scaffold elsewhere", minutes=30, project=ELSEWHERE)
        writer.put(other, NS, unit(30))

        def found(store: PostgresNoteStore) -> set[str]:
            return {c.id for c in store.candidates(CandidateQuery(NoteFilter(PROJECT), 50, text="scaffold")).keyword}

        assert found(behind) == found(current) == {n.id.value for n in notes}  # both have read the feed so far
        for note in notes[:5]:
            assert writer.delete(note.id)
        assert found(current) == {n.id.value for n in notes[5:]}  # the trim already passed it too: loaded again
        added = make_note("scaffold added later", minutes=40)
        writer.put(added, NS, unit(40))
        writer.put(make_note("another write", minutes=41), NS, unit(41))
        with psycopg.connect(postgres_url) as conn:
            left = conn.execute(
                "SELECT count(*) FROM keyword_changes WHERE note = ANY(%s)", ([n.id.value for n in notes[:5]],)
            ).fetchone()[0]
            kept = conn.execute("SELECT count(*) FROM keyword_changes WHERE project = %s", (PROJECT.value,)).fetchone()[0]
            trimmed = conn.execute("SELECT trimmed FROM keyword_totals WHERE project = %s", (PROJECT.value,)).fetchone()[0]
        assert left == 0 and kept == 17  # the removals trimmed; the live notes' rows kept
        assert trimmed > 1  # past what ``behind`` has read (the first batch)
        expected = {n.id.value for n in notes[5:]} | {added.id.value}
        assert found(behind) == expected  # loaded again: no removed note comes back
        assert found(current) == expected
        assert {c.id for c in behind.candidates(CandidateQuery(NoteFilter(ELSEWHERE), 5, text="scaffold")).keyword} == {
            other.id.value
        }
        assert writer.delete(added.id)
        writer.put(make_note("one more write", minutes=42), NS, unit(42))
        assert found(behind) == found(current) == {n.id.value for n in notes[5:]}
    finally:
        for store in (writer, behind, current):
            store.close()


MODEL = Namespace("local", "all-MiniLM-L6-v2", 384)  # the default embedder's: the file's vectors are kept


def export_file(path: Path, count: int) -> None:
    header = {"format": "mcp-memory-export", "version": 1, "exportedAt": "2026-06-01T00:00:00Z",
              "namespace": str(MODEL), "vectors": True, "notes": count, "globals": 0, "links": 0}
    with path.open("w") as out:
        out.write(json.dumps(header) + "\n")
        for i in range(count):
            note = make_note(f"imported note {i} about {'walls' if i % 2 else 'doors'}", minutes=i)
            vector = base64.b64encode(unit(i, MODEL.dim).astype("<f4").tobytes()).decode()
            out.write(json.dumps({"type": "note", "id": note.id.value, "projectId": note.project_id.value,
                                  "groupId": note.group_id.value, "text": note.text,
                                  "createdAt": "2026-01-01T00:00:00Z", "namespace": str(MODEL), "vector": vector}) + "\n")


def consistent(url: str) -> int:
    """The store's tables agree with each other; how many notes."""
    with psycopg.connect(url) as conn:
        notes = conn.execute("SELECT count(*) FROM notes").fetchone()[0]
        assert conn.execute("SELECT count(*) FROM note_terms").fetchone()[0] == notes
        assert conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == notes
        assert conn.execute(
            """SELECT count(*) FROM notes n JOIN note_terms t ON t.note = n.id
               WHERE n.length <> (SELECT coalesce(sum(x), 0) FROM unnest(t.tfs) x)"""
        ).fetchone()[0] == 0
        assert conn.execute(
            """SELECT count(*) FROM keyword_totals k WHERE (k.notes, k.terms) <>
               (SELECT count(*), coalesce(sum(length), 0) FROM notes n WHERE n.project = k.project)"""
        ).fetchone()[0] == 0
        assert conn.execute(
            """SELECT count(*) FROM notes n WHERE NOT EXISTS (
                   SELECT 1 FROM keyword_changes c JOIN keyword_totals k ON k.project = c.project
                   WHERE c.note = n.id AND c.seq <= k.seq)"""
        ).fetchone()[0] == 0
    return notes


def test_an_import_killed_midway_leaves_a_consistent_store_and_running_it_again_finishes_it(
    postgres_url: str, tmp_path: Path  # noqa: F811
) -> None:
    count = 12_000  # above BULK_MIN: the import drops the HNSW index and builds it at the end
    path = tmp_path / "export.jsonl"
    export_file(path, count)
    env = server_env(tmp_path, MCP_MEMORY_STORE=postgres_url)
    PostgresNoteStore(postgres_url).close()  # the schema, so that the notes can be counted
    process = subprocess.Popen([MCP_MEMORY, "import", str(path)], env=env, cwd=tmp_path,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with psycopg.connect(postgres_url) as conn:
                if conn.execute("SELECT count(*) FROM notes").fetchone()[0] >= 2_000:
                    break
            time.sleep(0.05)
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait()
    assert process.returncode == -signal.SIGKILL
    written = consistent(postgres_url)
    assert 2_000 <= written < count and written % 1024 == 0  # whole batches only
    store = PostgresNoteStore(postgres_url)  # opening builds the index the killed import dropped
    try:
        found = store.candidates(CandidateQuery(NoteFilter(PROJECT), 5, MODEL, unit(3, MODEL.dim), text="walls"))
        assert found.semantic and found.keyword
    finally:
        store.close()
    done = subprocess.run([MCP_MEMORY, "import", str(path)], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    assert f"{count - written} written" in done.stderr and f"{written} already there" in done.stderr
    assert consistent(postgres_url) == count
