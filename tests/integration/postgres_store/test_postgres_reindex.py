"""PostgreSQL keeps each note's keyword terms, derived at write time: when the text analysis
changes (``text_analysis.ANALYSIS``), opening the store derives them again. Databases whose
terms were written by another analysis are built by writing through the real store, then
deriving every note's terms again with ``schema.reindex_terms`` given a plain lower-casing word
split (no stemming, no stopwords), and taking the schema back to what that server left
(version 2, no recorded analysis) or recording that analysis's name. Each re-index on open is
seen in the database itself: a trigger records every statement that empties ``note_terms``."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time

import psycopg
import pytest

from local_mcp_memory.adapters.postgres_store import PostgresNoteStore, codec, schema
from local_mcp_memory.adapters.postgres_store.schema import LATEST
from local_mcp_memory.adapters.text_analysis import ANALYSIS
from local_mcp_memory.application.ports import CandidateQuery
from local_mcp_memory.domain.note import Note, NoteFilter
from tests.contracts.test_note_store_contract import ELSEWHERE, NS, PROJECT, make_note, unit
from tests.integration.postgres_store.postgres_steps import open_at_once
from tests.postgres_server import EmbeddedPostgres, postgres, postgres_url  # noqa: F401

OLD_ANALYSIS = "plain-words-0"


def old_terms(note: Note) -> list[str]:
    """The other analysis: words lower-cased, nothing stemmed or dropped."""
    text = " ".join((note.title or "", note.text, *note.tags.values))
    return [codec.term(w) for w in re.findall(r"\w+", text.lower())]


def write_with_old_analysis(url: str, notes: list[Note], *, as_version_2: bool = True, deleted: int = 0) -> None:
    """``notes`` written (vector ``unit(i)``) as a server whose analysis is ``old_terms`` left
    them; the last ``deleted`` of them deleted again. ``as_version_2``: the schema taken back
    to version 2, which recorded no analysis; else version 3 recording ``OLD_ANALYSIS``."""
    write_fresh(url, notes, deleted=deleted)
    with psycopg.connect(url, autocommit=True) as conn, conn.transaction():
        schema.reindex_terms(conn, old_terms)
        if as_version_2:
            conn.execute("DROP TABLE mcp_memory_meta")
            conn.execute("DELETE FROM mcp_memory_schema WHERE version > 2")
        else:
            conn.execute("UPDATE mcp_memory_meta SET value = %s WHERE key = 'analysis'", (OLD_ANALYSIS,))


def record_reindexes(url: str) -> None:
    """From now on the database records each statement that empties ``note_terms`` (a
    re-index's first step), with how many rows of terms it removed."""
    with psycopg.connect(url, autocommit=True) as conn, conn.transaction():
        conn.execute("CREATE TABLE reindex_runs (at serial PRIMARY KEY, removed bigint NOT NULL)")
        conn.execute(
            """CREATE FUNCTION record_reindex() RETURNS trigger LANGUAGE plpgsql AS $$
               BEGIN INSERT INTO reindex_runs (removed) SELECT count(*) FROM gone; RETURN NULL; END $$"""
        )
        conn.execute(
            """CREATE TRIGGER reindex_runs AFTER DELETE ON note_terms REFERENCING OLD TABLE AS gone
               FOR EACH STATEMENT EXECUTE FUNCTION record_reindex()"""
        )


def reindex_runs(url: str) -> list[int]:
    """The rows of terms each recorded re-index removed, in order."""
    with psycopg.connect(url) as conn:
        return [removed for (removed,) in conn.execute("SELECT removed FROM reindex_runs ORDER BY at")]


def terms_rows(url: str) -> int:
    with psycopg.connect(url) as conn:
        return conn.execute("SELECT count(*) FROM note_terms").fetchone()[0]


def write_fresh(url: str, notes: list[Note], *, deleted: int = 0) -> None:
    store = PostgresNoteStore(url)
    try:
        store.put_many([(n, unit(i)) for i, n in enumerate(notes)], NS)
        for note in notes[len(notes) - deleted :]:
            assert store.delete(note.id)
    finally:
        store.close()


def mixed_notes() -> list[Note]:
    notes = [
        make_note("Painting the fences took agencies three weeks", minutes=1, tags=("chores",)),
        make_note("The painters painted; the paint dried", minutes=2, title="Paints"),
        make_note("hiking in the Alps, hikes planned", minutes=3, tags=("travel", "hiking")),
        make_note("Deployment notes: deploying deploys nightly", minutes=4),
        make_note("東京都の会議 with adoption of the plan", minutes=5),
        make_note("a NUL \x00 between running and runs", minutes=6, project=ELSEWHERE),
        make_note("x" * 300 + " longwords " + "y" * 200, minutes=7),
        make_note("Running jobs are running", minutes=8, project=ELSEWHERE, group="g2"),
    ]
    notes += [make_note(f"filler note {i} about walls and meetings", minutes=10 + i) for i in range(30)]
    notes.append(make_note("deleted before the upgrade: painting", minutes=99, project=ELSEWHERE))
    return notes


QUERIES = ("painted", "paints painting", "hikes", "deployed", "agency", "run", "walls meeting", "東京", "plan adopted", "x" * 300)


def keyword_scores(store: PostgresNoteStore) -> dict[tuple[str, str], list[tuple[str, float]]]:
    out = {}
    for project in (PROJECT, ELSEWHERE):
        for text in QUERIES:
            found = store.candidates(CandidateQuery(NoteFilter(project), 50, text=text)).keyword
            out[(project.value, text)] = [(c.id, c.score) for c in found]
    return out


def index_rows(url: str) -> tuple[list[tuple], list[tuple], list[tuple]]:
    with psycopg.connect(url) as conn:
        terms = conn.execute("SELECT * FROM note_terms ORDER BY note").fetchall()
        lengths = conn.execute("SELECT id, length FROM notes ORDER BY id").fetchall()
        totals = conn.execute("SELECT project, notes, terms FROM keyword_totals WHERE notes > 0 ORDER BY project").fetchall()
    return terms, lengths, totals


def recorded(url: str) -> tuple[list[int], str | None]:
    with psycopg.connect(url) as conn:
        versions = [v for (v,) in conn.execute("SELECT version FROM mcp_memory_schema ORDER BY version")]
        has_meta = conn.execute("SELECT to_regclass('mcp_memory_meta') IS NOT NULL").fetchone()[0]
        row = conn.execute("SELECT value FROM mcp_memory_meta WHERE key = 'analysis'").fetchone() if has_meta else None
    return versions, None if row is None else row[0]


def test_a_database_of_another_analysis_is_reindexed_on_open_and_finds_inflected_forms(postgres_url: str) -> None:
    notes = mixed_notes()
    write_with_old_analysis(postgres_url, notes, deleted=1)
    assert recorded(postgres_url) == ([1, 2], None)
    with psycopg.connect(postgres_url) as conn:  # the old terms: no stems
        terms = {t for (t,) in conn.execute("SELECT DISTINCT unnest(terms) FROM note_terms")}
    assert {"painting", "painted", "hikes", "the"} <= terms and "hike" not in terms
    store = PostgresNoteStore(postgres_url)
    try:
        assert recorded(postgres_url) == (list(range(1, LATEST + 1)), ANALYSIS)
        painted = store.candidates(CandidateQuery(NoteFilter(PROJECT), 10, text="painted")).keyword
        assert {c.id for c in painted} == {notes[0].id.value, notes[1].id.value}
        hikes = store.candidates(CandidateQuery(NoteFilter(PROJECT), 10, text="hiked")).keyword
        assert [c.id for c in hikes] == [notes[2].id.value]
        runs = store.candidates(CandidateQuery(NoteFilter(ELSEWHERE), 10, text="ran run")).keyword
        assert {c.id for c in runs} == {notes[5].id.value, notes[7].id.value}
        assert store.candidates(CandidateQuery(NoteFilter(PROJECT), 10, text="the")).keyword == []  # a stopword now
        assert [s.note for s in store.iter_notes()] == notes[:-1]  # the notes themselves untouched
    finally:
        store.close()


def test_scores_after_reindexing_equal_those_of_a_database_written_fresh(postgres: EmbeddedPostgres, postgres_url: str) -> None:  # noqa: F811
    notes = mixed_notes()
    write_with_old_analysis(postgres_url, notes, deleted=1)
    fresh = postgres.new_database()
    try:
        fresh_url = postgres.url(fresh)
        write_fresh(fresh_url, notes, deleted=1)
        reindexed = PostgresNoteStore(postgres_url)
        written = PostgresNoteStore(fresh_url)
        try:
            scores = keyword_scores(reindexed)
            assert sum(len(found) for found in scores.values()) > 20
            expected = keyword_scores(written)
            assert scores.keys() == expected.keys()
            for key, found in scores.items():
                assert [i for i, _ in found] == [i for i, _ in expected[key]], key
                assert [s for _, s in found] == pytest.approx([s for _, s in expected[key]], abs=1e-12), key
        finally:
            reindexed.close()
            written.close()
        assert index_rows(postgres_url) == index_rows(fresh_url)
    finally:
        postgres.drop_database(fresh)


def test_a_recorded_analysis_that_differs_is_reindexed_and_the_same_one_is_not(postgres_url: str) -> None:
    notes = mixed_notes()
    write_with_old_analysis(postgres_url, notes, as_version_2=False)
    assert recorded(postgres_url) == (list(range(1, LATEST + 1)), OLD_ANALYSIS)
    old_rows = terms_rows(postgres_url)
    record_reindexes(postgres_url)
    PostgresNoteStore(postgres_url).close()
    assert reindex_runs(postgres_url) == [old_rows]
    assert recorded(postgres_url)[1] == ANALYSIS
    before = index_rows(postgres_url)
    PostgresNoteStore(postgres_url).close()  # the analysis recorded is the current one
    assert reindex_runs(postgres_url) == [old_rows]
    assert index_rows(postgres_url) == before


def test_servers_opening_a_database_of_another_analysis_at_once_reindex_it_once(postgres_url: str) -> None:
    notes = mixed_notes()
    write_with_old_analysis(postgres_url, notes)
    old_rows = terms_rows(postgres_url)
    record_reindexes(postgres_url)
    opened, failed = open_at_once(postgres_url, 5)
    try:
        assert failed == []
        assert reindex_runs(postgres_url) == [old_rows]
        assert recorded(postgres_url) == (list(range(1, LATEST + 1)), ANALYSIS)
        for store in opened:
            found = store.candidates(CandidateQuery(NoteFilter(PROJECT), 10, text="painted")).keyword
            assert {c.id for c in found} == {notes[0].id.value, notes[1].id.value}
    finally:
        for store in opened:
            store.close()


def reindexing_backend(conn: psycopg.Connection) -> tuple[int, str, bool] | None:
    """The backend holding the re-index's table lock on ``note_terms`` (held until its
    transaction ends): its pid, its current (or last) statement, whether its transaction is
    open."""
    return conn.execute(
        """SELECT a.pid, a.query, a.xact_start IS NOT NULL FROM pg_locks l
           JOIN pg_class c ON c.oid = l.relation JOIN pg_stat_activity a ON a.pid = l.pid
           WHERE c.relname = 'note_terms' AND l.mode = 'ExclusiveLock' AND l.granted"""
    ).fetchone()


def frozen_midway(process: subprocess.Popen, url: str, statement: str) -> int:
    """Stop ``process`` (SIGSTOP) at a moment its re-index's transaction is open and its
    backend runs (or last ran) a statement starting with ``statement``; the backend's pid.
    Seen running it, the process is stopped and looked at again: what is then seen cannot
    move on to the commit, however slowly this test runs."""
    deadline = time.monotonic() + 300

    def running(conn: psycopg.Connection) -> int | None:
        conn.execute("SELECT pg_stat_clear_snapshot()")  # pg_stat_activity afresh
        found = reindexing_backend(conn)
        return found[0] if found is not None and found[2] and found[1].lstrip().startswith(statement) else None

    with psycopg.connect(url, autocommit=True) as conn:
        while True:
            if running(conn) is not None:
                os.kill(process.pid, signal.SIGSTOP)
                backend = running(conn)
                if backend is not None:
                    return backend
                os.kill(process.pid, signal.SIGCONT)
            assert process.poll() is None and recorded(url)[1] is None, "the re-index finished before it was caught midway"
            assert time.monotonic() < deadline, f"no re-index running {statement or 'a statement'} within 300 s"


def backend_gone(url: str, pid: int) -> None:
    """Until the backend of a killed client has ended (rolled back, its locks released)."""
    with psycopg.connect(url, autocommit=True) as conn:
        while conn.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone()[0]:
            conn.execute("SELECT pg_sleep(0.01)")


def test_a_reindex_killed_midway_leaves_the_old_index_whole_and_the_next_open_finishes_it(postgres_url: str) -> None:
    count = 10_000
    notes = [make_note(f"note {i} painting walls", minutes=i) for i in range(count)]
    write_with_old_analysis(postgres_url, notes)
    opener = "import sys; from local_mcp_memory.adapters.postgres_store import PostgresNoteStore as S; S(sys.argv[1]).close()"

    def state() -> tuple[int, int, int, str | None]:
        with psycopg.connect(postgres_url) as conn:
            old = conn.execute("SELECT count(*) FROM note_terms, unnest(terms) t WHERE t IN ('painting', 'walls')").fetchone()[0]
            new = conn.execute("SELECT count(*) FROM note_terms, unnest(terms) t WHERE t IN ('paint', 'wall')").fetchone()[0]
            total = conn.execute("SELECT terms FROM keyword_totals WHERE project = %s", (PROJECT.value,)).fetchone()[0]
        return old, new, total, recorded(postgres_url)[1]

    # killed right after taking its locks, while rewriting a batch of notes, while writing terms
    for statement in ("", "UPDATE notes n SET length", "INSERT INTO note_terms"):
        process = subprocess.Popen([sys.executable, "-c", opener, postgres_url])
        try:
            backend = frozen_midway(process, postgres_url, statement)
        finally:
            process.kill()  # stopped or not
            process.wait()
        backend_gone(postgres_url, backend)
        # the transaction is gone with its process: the old index whole (4 terms a note)
        assert state() == (2 * count, 0, 4 * count, None)
    started = time.perf_counter()
    store = PostgresNoteStore(postgres_url)
    elapsed = time.perf_counter() - started
    try:
        assert state() == (0, 2 * count, 4 * count, ANALYSIS)
        found = store.candidates(CandidateQuery(NoteFilter(PROJECT), 5, text="painted wall")).keyword
        assert len(found) == 5 and all(c.score == found[0].score for c in found)
        print(f"opened (re-indexing {count} notes) in {elapsed:.2f} s")
    finally:
        store.close()


def test_a_reindex_waits_for_a_running_writer_without_deadlocking_it(postgres_url: str) -> None:
    notes = mixed_notes()
    write_with_old_analysis(postgres_url, notes)
    opened: list[PostgresNoteStore] = []
    failed: list[BaseException] = []
    with psycopg.connect(postgres_url) as writer:  # a server already running, mid-write
        writer.execute("SELECT 1 FROM notes WHERE id = %s FOR UPDATE", (notes[0].id.value,))

        def open_one() -> None:
            try:
                opened.append(PostgresNoteStore(postgres_url, timeout=20))
            except BaseException as exc:  # reported below
                failed.append(exc)

        thread = threading.Thread(target=open_one)
        thread.start()
        time.sleep(1.5)  # the opener is trying for the tables: it must not hold one of them
        assert opened == [] and failed == []
        # the writer goes on to the counters, as a put does after locking its note
        writer.execute("UPDATE keyword_totals SET notes = notes WHERE project = %s", (PROJECT.value,))
        writer.commit()
    thread.join(30)
    try:
        assert failed == [] and len(opened) == 1
        assert recorded(postgres_url)[1] == ANALYSIS
        found = opened[0].candidates(CandidateQuery(NoteFilter(PROJECT), 10, text="painted")).keyword
        assert {c.id for c in found} == {notes[0].id.value, notes[1].id.value}
    finally:
        for store in opened:
            store.close()
