"""PostgresNoteStore's curation (SPEC §11) where PostgreSQL itself is the point: a database
of schema version 1 migrated in place with its data, dedup on write raced by separate
server processes, the purge the store runs by itself, purges racing writers, and expiry
on the HNSW path (the store contract covers the rest on every store)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

import attrs
import numpy as np
import psycopg
import pytest

from local_mcp_memory.adapters.postgres_store import PostgresNoteStore, codec, curation
from local_mcp_memory.adapters.postgres_store.queries import EXACT_SCAN_MAX
from local_mcp_memory.adapters.postgres_store.schema import LATEST, MIGRATIONS
from local_mcp_memory.application.ports import CandidateQuery
from local_mcp_memory.domain.link import Link, LinkKey, Relation
from local_mcp_memory.domain.note import Note, NoteFilter
from tests.contracts.test_note_store_contract import ELSEWHERE, NS, PROJECT, T0, make_note, unit
from tests.integration.postgres_store.postgres_steps import open_at_once
from tests.postgres_server import postgres, postgres_url  # noqa: F401

WORKER = str(Path(__file__).with_name("postgres_worker.py"))


def now() -> datetime:
    return datetime.now(timezone.utc)


def semantic_ids(store: PostgresNoteStore, where: NoteFilter, vector, depth: int) -> list[str]:
    return [c.id for c in store.candidates(CandidateQuery(where, depth, NS, vector)).semantic]


# -- migration from schema version 1 ------------------------------------------------------

V1_NOTE = """INSERT INTO notes (id, project, grp, created, written, home, tags, length, doc)
             VALUES (%(id)s, %(project)s, %(grp)s, %(created)s, nextval('write_order'), %(space)s, %(tags)s, %(length)s, %(doc)s)"""


def write_v1(conn: psycopg.Connection, note: Note, vector: np.ndarray, space: int) -> None:
    """A note as a version 1 server wrote it (its statements, frozen here)."""
    terms = codec.note_terms(note)
    counts = Counter(terms)
    p = {
        "id": note.id.value, "project": note.project_id.value, "grp": note.group_id.value,
        "created": note.created_at, "tags": codec.escaped_tags(note.tags), "length": len(terms),
        "doc": codec.note_doc(note), "space": space, "terms": list(counts), "counts": list(counts.values()),
        "row": "[" + ",".join(repr(float(x)) for x in vector) + "]",
    }
    conn.execute(V1_NOTE, p)
    conn.execute(
        """INSERT INTO keyword_totals (project, notes, terms) VALUES (%(project)s, 1, %(length)s)
           ON CONFLICT (project) DO UPDATE SET notes = keyword_totals.notes + 1, terms = keyword_totals.terms + EXCLUDED.terms""",
        p,
    )
    conn.execute(
        """INSERT INTO postings (project, term, note, tf, length, grp, created, tags)
           SELECT %(project)s, t, %(id)s, c, %(length)s, %(grp)s, %(created)s, %(tags)s
           FROM unnest(%(terms)s::text[], %(counts)s::int[]) AS u(t, c)""",
        p,
    )
    conn.execute(
        """INSERT INTO vectors (note, space, project, grp, created, written, tags, embedding)
           SELECT id, %(space)s, project, grp, created, written, tags, %(row)s::vector FROM notes WHERE id = %(id)s""",
        p,
    )


def v1_database(url: str, notes: list[Note]) -> None:
    """A database exactly as version 1 of the schema left it, holding ``notes``."""
    version, sql = MIGRATIONS[0]
    assert version == 1
    with psycopg.connect(url, autocommit=True) as conn, conn.transaction():
        conn.execute("CREATE TABLE mcp_memory_schema (version integer PRIMARY KEY, applied timestamptz NOT NULL DEFAULT now())")
        conn.execute(sql)
        conn.execute("INSERT INTO mcp_memory_schema (version) VALUES (1)")
        space = conn.execute("INSERT INTO namespaces (name, dim) VALUES (%s, %s) RETURNING id", (str(NS), NS.dim)).fetchone()[0]
        for i, note in enumerate(notes):
            write_v1(conn, note, unit(i), space)


def old_notes() -> list[Note]:
    notes = [make_note(f"kept note {i} about the deploy", minutes=i, tags=("old",)) for i in range(40)]
    notes.append(make_note("Use  PostgreSQL\tfor the team store ", minutes=50))
    notes.append(make_note("a note with a NUL \x00 and 東京", minutes=51, project=ELSEWHERE))
    return notes


def test_a_version_1_database_is_migrated_in_place_with_its_data_intact(postgres_url: str) -> None:
    notes = old_notes()
    v1_database(postgres_url, notes)
    store = PostgresNoteStore(postgres_url)
    try:
        with psycopg.connect(postgres_url) as conn:
            assert conn.execute("SELECT version FROM mcp_memory_schema ORDER BY version").fetchall() == [
                (v,) for v in range(1, LATEST + 1)
            ]
            assert conn.execute("SELECT count(*) FROM notes WHERE dedup IS NULL OR expires IS NOT NULL").fetchone()[0] == 0
        assert [s.note for s in store.iter_notes()] == notes
        assert all(s.namespace == NS for s in store.iter_notes())
        for i, note in enumerate(notes[:5]):
            assert semantic_ids(store, NoteFilter(note.project_id, now=now()), unit(i), 1) == [note.id.value]
        found = store.candidates(CandidateQuery(NoteFilter(PROJECT, now=now()), 100, text="deploy"))
        assert len(found.keyword) == 40
        # dedup sees the migrated notes: their keys were computed by the migration
        copy = make_note(" Use PostgreSQL for\nthe team store")
        assert store.add([(copy, unit(99))], NS, now()) == [notes[40].id]
        assert store.get(copy.id) is None
        # and the new tables work on them
        assert store.link(Link(LinkKey(notes[0].id, notes[1].id, Relation("relates_to")), T0))
        assert store.delete(notes[1].id)
        assert store.links(notes[0].id) == []
    finally:
        store.close()
    reopened = PostgresNoteStore(postgres_url)  # opening again migrates nothing
    assert len(list(reopened.iter_notes())) == len(notes) - 1
    reopened.close()


def test_servers_opening_a_version_1_database_at_once_migrate_it_once(postgres_url: str) -> None:
    notes = old_notes()
    v1_database(postgres_url, notes)
    opened, failed = open_at_once(postgres_url, 4)
    try:
        assert failed == []
        assert [s.note for s in opened[0].iter_notes()] == notes
        with psycopg.connect(postgres_url) as conn:
            assert conn.execute("SELECT version FROM mcp_memory_schema ORDER BY version").fetchall() == [
                (v,) for v in range(1, LATEST + 1)
            ]
    finally:
        for store in opened:
            store.close()


def test_a_version_1_server_cannot_write_into_the_migrated_database(postgres_url: str) -> None:
    v1_database(postgres_url, old_notes()[:2])
    PostgresNoteStore(postgres_url).close()
    late = make_note("written by a server that was not upgraded")
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        space = conn.execute("SELECT id FROM namespaces").fetchone()[0]
        with pytest.raises(psycopg.errors.NotNullViolation):
            write_v1(conn, late, unit(5), space)  # refused: dedup could not see it
        assert conn.execute("SELECT count(*) FROM notes WHERE id = %s", (late.id.value,)).fetchone()[0] == 0


def test_the_migration_of_a_large_database_fills_every_note_in_batches(postgres_url: str) -> None:
    notes = [make_note(f"bulk {i}\u00a0text  with  spaces", minutes=i) for i in range(4_500)]  # more than two batches
    v1_database(postgres_url, notes)
    store = PostgresNoteStore(postgres_url)
    try:
        with psycopg.connect(postgres_url) as conn:
            rows = dict(conn.execute("SELECT id, dedup FROM notes").fetchall())
        assert len(rows) == len(notes)
        assert all(bytes(rows[n.id.value]) == codec.dedup_hash(n) for n in notes)
        again = make_note("bulk 4499 text with spaces")  # NBSP is whitespace to dedup
        assert store.add([(again, unit(1))], NS, now()) == [notes[4499].id]
    finally:
        store.close()


def test_a_migration_killed_midway_leaves_version_1_intact_and_runs_again(postgres_url: str) -> None:
    notes = [make_note(f"bulk {i}", minutes=i) for i in range(4_500)]
    v1_database(postgres_url, notes)
    opener = "import sys; from local_mcp_memory.adapters.postgres_store import PostgresNoteStore as S; S(sys.argv[1]).close()"
    for delay in (0.5, 1.0, 1.5):
        process = subprocess.Popen([sys.executable, "-c", opener, postgres_url])
        time.sleep(delay)
        process.kill()
        process.wait()
        with psycopg.connect(postgres_url) as conn:  # all of version 2 or none of it
            versions = [v for (v,) in conn.execute("SELECT version FROM mcp_memory_schema ORDER BY version")]
            columns = {c for (c,) in conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = 'notes'")}
        assert versions in ([1], list(range(1, LATEST + 1)))
        assert ("dedup" in columns) == (versions != [1])
    store = PostgresNoteStore(postgres_url)
    try:
        assert [s.note for s in store.iter_notes()] == notes
        assert store.add([(make_note("bulk 17"), unit(1))], NS, now()) == [notes[17].id]
    finally:
        store.close()


# -- dedup raced by servers -------------------------------------------------------------------


def test_servers_adding_one_text_at_the_same_instant_store_it_once(postgres_url: str) -> None:
    PostgresNoteStore(postgres_url).close()  # the schema, before they start
    for attempt in range(3):
        text = f"raced between servers, attempt {attempt}"
        at = time.time() + 3.0
        workers = [
            subprocess.Popen([sys.executable, WORKER, "add", postgres_url, text, str(at)], stdout=subprocess.PIPE)
            for _ in range(4)
        ]
        answers = [w.communicate(timeout=120)[0].decode().strip() for w in workers]
        assert all(w.returncode == 0 for w in workers)
        assert len(set(answers)) == 1, answers
        store = PostgresNoteStore(postgres_url)
        stored = [s.note for s in store.iter_notes() if s.note.text == text]
        store.close()
        assert [n.id.value for n in stored] == answers[:1]


def test_adds_of_different_texts_in_one_project_do_not_lose_each_other(postgres_url: str) -> None:
    store = PostgresNoteStore(postgres_url)
    errors: list[BaseException] = []

    def add(worker: int) -> None:
        try:
            for i in range(25):
                note = make_note(f"text {i % 10}" if worker % 2 else f"worker {worker} text {i}")
                store.add([(note, unit(i))], NS, now())
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=add, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    texts = Counter(s.note.text for s in store.iter_notes())
    store.close()
    assert errors == []
    assert texts == Counter({**{f"text {i}": 1 for i in range(10)}, **{f"worker {w} text {i}": 1 for w in (0, 2) for i in range(25)}})


# -- the purge the store runs by itself ---------------------------------------------------


def keyword_totals_hold(url: str) -> None:
    """The BM25 counters equal what ``notes`` holds, per project."""
    with psycopg.connect(url) as conn:
        totals = set(conn.execute("SELECT project, notes, terms FROM keyword_totals WHERE notes > 0").fetchall())
        actual = set(conn.execute("SELECT project, count(*), sum(length) FROM notes GROUP BY project").fetchall())
    assert totals == actual


def test_the_store_purges_expired_notes_after_a_write_once_the_interval_has_passed(postgres_url: str) -> None:
    store = PostgresNoteStore(postgres_url, purge_every=1.0)
    try:
        gone = attrs.evolve(make_note("a temporary scaffold"), expires_at=now() - timedelta(seconds=1))
        elsewhere = attrs.evolve(make_note("a temporary scaffold elsewhere", project=ELSEWHERE), expires_at=now() - timedelta(seconds=1))
        later = attrs.evolve(make_note("expires tomorrow"), expires_at=now() + timedelta(days=1))
        kept = make_note("never expires")
        store.put_many([(gone, unit(0)), (elsewhere, unit(1)), (later, unit(2)), (kept, unit(3))], NS)
        assert store.link(Link(LinkKey(kept.id, gone.id, Relation("relates_to")), T0))
        store.put(make_note("a write before the interval"), NS, unit(4))
        assert store.get(gone.id) is not None  # not yet: at most once per interval
        time.sleep(1.2)
        assert store.get(gone.id) is not None  # reads never purge
        store.put(make_note("a write after the interval"), NS, unit(5))
        assert store.get(gone.id) is None and store.get(elsewhere.id) is None  # every project
        assert store.get(later.id) is not None and store.get(kept.id) is not None
        assert store.links(kept.id) == []
        keyword_totals_hold(postgres_url)
        for project in (PROJECT, ELSEWHERE):  # their postings went with them
            assert store.candidates(CandidateQuery(NoteFilter(project), 10, text="scaffold")).keyword == []
    finally:
        store.close()


def test_purges_racing_writers_and_each_other_neither_fail_nor_lose_a_note(postgres_url: str) -> None:
    stores = [PostgresNoteStore(postgres_url, purge_every=0.0) for _ in range(2)]
    live = [make_note(f"live {i}", minutes=i) for i in range(40)]
    stores[0].put_many([(n, unit(i)) for i, n in enumerate(live)], NS)
    stop = time.monotonic() + 4.0
    errors: list[BaseException] = []
    purged = Counter()

    def expiring_writer(k: int) -> None:
        try:
            i = 0
            while time.monotonic() < stop:
                batch = [
                    (attrs.evolve(make_note(f"brief {k} {i} {j}", project=(PROJECT, ELSEWHERE)[j % 2]),
                                  expires_at=now() - timedelta(microseconds=1)), unit(j))
                    for j in range(5)
                ]
                stores[k].put_many(batch, NS)
                stores[k].link(Link(LinkKey(live[i % 40].id, batch[0][0].id, Relation("relates_to")), T0))
                stores[k].rehome(NS, {batch[1][0].id: unit(7), live[i % 40].id: unit(i % 40)})
                i += 1
        except BaseException as exc:  # reported below
            errors.append(exc)

    def purger(k: int) -> None:
        try:
            with psycopg.connect(postgres_url, autocommit=True) as conn:  # as the store's pool: a transaction per project
                while time.monotonic() < stop:
                    purged[k] += curation.purge(conn, now())
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=f, args=(k,)) for f in (expiring_writer, purger) for k in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert errors == []
        assert sum(purged.values()) > 0
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            curation.purge(conn, now())
        assert sorted(s.note.text for s in stores[0].iter_notes()) == sorted(n.text for n in live)
        keyword_totals_hold(postgres_url)
        with psycopg.connect(postgres_url) as conn:
            assert conn.execute("SELECT count(*) FROM links").fetchone()[0] == 0
            assert conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == len(live)
    finally:
        for store in stores:
            store.close()


# -- expiry on the HNSW path ----------------------------------------------------------------


def test_expired_notes_do_not_shorten_an_answer_from_the_hnsw_index(postgres_url: str) -> None:
    store = PostgresNoteStore(postgres_url)
    try:
        target = unit(12345)
        rng = np.random.default_rng(3)
        count = EXACT_SCAN_MAX + 200  # over the exact-scan limit: the HNSW index answers
        vectors = rng.standard_normal((count, NS.dim)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        nearest = set(np.argsort(-(vectors @ target))[:30].tolist())
        moment = now()
        notes = [
            attrs.evolve(make_note(f"n{i}", minutes=i % 1000),
                         expires_at=moment - timedelta(seconds=1) if i in nearest else None)
            for i in range(count)
        ]
        for start in range(0, count, 1000):
            store.put_many([(notes[i], vectors[i]) for i in range(start, min(start + 1000, count))], NS)
        found = semantic_ids(store, NoteFilter(PROJECT, now=moment), target, 10)
        exact = [notes[i].id.value for i in np.argsort(-(vectors @ target)) if i not in nearest][:10]
        assert len(found) == 10 and not {notes[i].id.value for i in nearest} & set(found)
        assert len(set(found) & set(exact)) >= 8  # approximate, but never an expired note
        assert set(semantic_ids(store, NoteFilter(PROJECT), target, 30)) & {notes[i].id.value for i in nearest}
    finally:
        store.close()


def test_large_batches_racing_single_adds_store_each_text_once(postgres_url: str) -> None:
    store = PostgresNoteStore(postgres_url, pool_size=10)
    texts = [f"shared text {i}" for i in range(4_500)]  # batch k: texts 500k..500k+999, each half shared
    answers: dict[str, set[str]] = {t: set() for t in texts}
    errors: list[BaseException] = []
    barrier = threading.Barrier(10)

    def batch(seed: int) -> None:
        order = 500 * seed + np.random.default_rng(seed).permutation(1_000)  # more keys than KEY_LOCKS_MAX
        notes = [make_note(texts[i]) for i in order]
        barrier.wait()
        try:
            for note, held in zip(notes, store.add([(n, unit(k)) for k, n in enumerate(notes)], NS, now())):
                answers[note.text].add(held.value)
        except BaseException as exc:  # reported below
            errors.append(exc)

    def singles(seed: int) -> None:
        barrier.wait()
        try:
            for i in np.random.default_rng(seed).permutation(len(texts))[:100]:
                (held,) = store.add([(make_note(texts[i]), unit(int(i)))], NS, now())
                answers[texts[i]].add(held.value)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=batch, args=(s,)) for s in range(8)]
    threads += [threading.Thread(target=singles, args=(s,)) for s in (100, 101)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stored = Counter(s.note.text for s in store.iter_notes())
    store.close()
    assert errors == []
    assert stored == Counter(texts)  # each once
    assert all(len(ids) == 1 for ids in answers.values())  # everyone was answered the one holder


def test_an_add_holds_a_bounded_number_of_advisory_locks(postgres_url: str) -> None:
    from local_mcp_memory.adapters.postgres_store.curation import KEY_LOCKS_MAX, lock_dedup_keys

    PostgresNoteStore(postgres_url).close()

    def locks_held(count: int) -> int:
        keys = [(PROJECT.value, "g", codec.dedup_hash(make_note(f"text {i}"))) for i in range(count)]
        with psycopg.connect(postgres_url, autocommit=True) as conn, conn.transaction():
            lock_dedup_keys(conn, keys)
            return conn.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()"
            ).fetchone()[0]

    assert locks_held(1) == 2  # the project's (shared) and the key's
    assert locks_held(KEY_LOCKS_MAX) == KEY_LOCKS_MAX + 1
    assert locks_held(1_000) == 1  # the project's, exclusive


def test_expiry_at_the_ends_of_the_calendar_reads_back_and_filters(postgres_url: str) -> None:
    store = PostgresNoteStore(postgres_url)
    try:
        first = datetime(1, 1, 1, tzinfo=timezone.utc)
        last = datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=timezone.utc)
        ancient = attrs.evolve(make_note("expired at the start of time"), created_at=first, expires_at=first + timedelta(microseconds=1))
        lasting = attrs.evolve(make_note("expires at the end of time"), expires_at=last)
        store.add([(ancient, unit(0)), (lasting, unit(1))], NS, first)
        assert store.get(ancient.id).note == ancient and store.get(lasting.id).note == lasting
        live = NoteFilter(PROJECT, now=last - timedelta(microseconds=1))
        assert [s.note.id for s in store.list_recent(live, 10)] == [lasting.id]
        assert semantic_ids(store, live, unit(0), 10) == [lasting.id.value]
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            assert curation.purge(conn, last) == 2
    finally:
        store.close()


def test_a_migrated_database_keeps_importance_and_supersession_of_its_old_notes(postgres_url: str) -> None:
    """Version 5: old notes read with the default importance; the column follows every write,
    and a supersedes link hides an old note."""
    notes = old_notes()
    v1_database(postgres_url, notes)
    store = PostgresNoteStore(postgres_url)
    try:
        assert {s.note.importance for s in store.iter_notes()} == {0.5}
        newer = attrs.evolve(make_note("the deploy moved to tuesdays", minutes=60), importance=0.9)
        store.put(newer, NS, unit(99))
        store.link(Link(LinkKey(newer.id, notes[0].id, Relation("supersedes")), T0))
        with psycopg.connect(postgres_url) as conn:
            stored = dict(conn.execute("SELECT id, importance FROM notes WHERE id = ANY(%s)", ([newer.id.value, notes[0].id.value],)).fetchall())
        assert stored == {newer.id.value: pytest.approx(0.9), notes[0].id.value: 0.5}
        recent = store.list_recent(NoteFilter(PROJECT, now=now()), 100)
        assert notes[0].id.value not in [s.note.id.value for s in recent] and recent[0].note == newer
    finally:
        store.close()
