"""PostgresNoteStore on a real PostgreSQL: what goes wrong and how it recovers (unreachable,
wrong password, a database restarted mid-session, roles without the right to create the
extension, a newer schema), the schema created once by servers starting together, and
values that read back exactly as written, as the FAISS store reads them."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings

from local_mcp_memory.adapters.faiss_store import FaissNoteStore
from local_mcp_memory.adapters.postgres_store import PostgresNoteStore
from local_mcp_memory.adapters.postgres_store.schema import LATEST
from local_mcp_memory.adapters.postgres_store.store import ANALYZE_MIN_NOTES
from local_mcp_memory.application.errors import StoreError, StoreUnavailable
from local_mcp_memory.application.ports import CandidateQuery
from local_mcp_memory.domain.errors import InvalidValue
from local_mcp_memory.domain.identifiers import CanonicalProjectId, GlobalKey, GroupId, NoteId
from local_mcp_memory.domain.note import GlobalEntry, Note, NoteFilter, Tags
from tests.contracts.test_note_store_contract import NS, PROJECT, make_note, unit
from tests.postgres_server import SUPERUSER, TEAM_PASSWORD, EmbeddedPostgres, _free_port, postgres, postgres_url  # noqa: F401
from tests.strategies import any_json_values


@pytest.fixture
def store(postgres_url: str) -> Iterator[PostgresNoteStore]:
    opened = PostgresNoteStore(postgres_url, timeout=3)
    yield opened
    opened.close()


def assert_names_the_place_not_the_password(error: StoreError, postgres: EmbeddedPostgres, database: str) -> None:
    message = str(error)
    assert f"{postgres.host}:{postgres.port}" in message and database in message
    assert TEAM_PASSWORD not in message


# -- reaching the database --------------------------------------------------------------


def test_an_unreachable_server_is_a_store_error_naming_host_and_database() -> None:
    port = _free_port()  # nothing listens there
    with pytest.raises(StoreUnavailable) as raised:  # waiting may mend it: a StoreError that says so
        PostgresNoteStore(f"postgresql://team:{TEAM_PASSWORD}@127.0.0.1:{port}/teamdb", timeout=2)
    assert f"127.0.0.1:{port}" in str(raised.value) and "teamdb" in str(raised.value)
    assert TEAM_PASSWORD not in str(raised.value)


def test_a_wrong_password_is_a_store_error_naming_host_and_database_not_the_password(postgres: EmbeddedPostgres) -> None:
    name = postgres.new_database()
    with pytest.raises(StoreError) as raised:
        PostgresNoteStore(postgres.url(name, password="not-the-password"), timeout=3)
    assert "password authentication failed" in str(raised.value)
    assert "not-the-password" not in str(raised.value)
    assert_names_the_place_not_the_password(raised.value, postgres, name)


def test_a_database_restarted_mid_session_fails_requests_then_serves_again_without_reopening(
    postgres: EmbeddedPostgres, postgres_url: str
) -> None:
    store = PostgresNoteStore(postgres_url, timeout=2)
    first, second = make_note("before the restart"), make_note("after the restart")
    try:
        store.put(first, NS, unit(1))
        postgres.stop()
        try:
            with pytest.raises(StoreUnavailable) as raised:
                store.get(first.id)
            assert_names_the_place_not_the_password(raised.value, postgres, postgres_url.rsplit("/", 1)[1])
            with pytest.raises(StoreUnavailable):
                store.put(second, NS, unit(2))
        finally:
            postgres.start()
        assert store.get(first.id).note == first
        store.put(second, NS, unit(2))
        assert store.get(second.id).note == second
    finally:
        store.close()


def test_connections_just_used_and_then_cut_by_a_restart_are_replaced_before_the_next_read(
    postgres: EmbeddedPostgres, postgres_url: str
) -> None:
    """A connection returned a moment ago is not checked with a round trip, unless the
    database said something on it: a restart between two requests fails neither."""
    store = PostgresNoteStore(postgres_url, timeout=5)
    notes = [make_note(f"note {i}", minutes=i) for i in range(3)]
    try:
        for i, note in enumerate(notes):
            store.put(note, NS, unit(i))
        opened = threading.Barrier(3)

        def read() -> None:  # three connections in use at once, all back in the pool after
            with store._pool.connection() as conn:
                conn.execute("SELECT 1")
                opened.wait(timeout=10)

        readers = [threading.Thread(target=read) for _ in range(3)]
        for reader in readers:
            reader.start()
        for reader in readers:
            reader.join()
        postgres.stop()
        postgres.start()
        for note in notes:  # each on a pooled connection the restart cut
            assert store.get(note.id).note == note
        with psycopg.connect(postgres.url(role=SUPERUSER), autocommit=True) as admin:  # cut by an administrator
            admin.execute(  # waits until each backend has gone
                "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE application_name = 'mcp-memory'"
            )
        assert store.get_many([n.id for n in notes]) == {n.id: store.get(n.id) for n in notes}
    finally:
        store.close()


# -- statistics ------------------------------------------------------------------------


def test_a_bulk_write_gives_the_planner_fresh_statistics_at_once(store: PostgresNoteStore, postgres_url: str) -> None:
    def planned_notes() -> float:  # what the planner believes the notes table holds (-1: never analyzed)
        with psycopg.connect(postgres_url) as conn:
            return conn.execute("SELECT reltuples FROM pg_class WHERE oid = 'notes'::regclass").fetchone()[0]

    with psycopg.connect(postgres_url, autocommit=True) as conn:  # only the store's own ANALYZE counts here
        conn.execute("ALTER TABLE notes SET (autovacuum_enabled = false)")
    store.put_many([(make_note(f"imported note {i}", minutes=i), unit(i)) for i in range(ANALYZE_MIN_NOTES)], NS)
    assert planned_notes() <= 0  # not past the line yet: autovacuum's business
    store.put(make_note("one more"), NS, unit(1))
    assert planned_notes() == ANALYZE_MIN_NOTES + 1  # analyzed by the write that crossed it


# -- roles and the extension ----------------------------------------------------------


def test_a_role_that_may_not_create_the_extension_gets_a_store_error_saying_what_to_run(postgres: EmbeddedPostgres) -> None:
    name = postgres.new_database(vector=False)
    with pytest.raises(StoreError) as raised:
        PostgresNoteStore(postgres.url(name), timeout=3)
    assert "CREATE EXTENSION vector" in str(raised.value) and "superuser" in str(raised.value)
    assert_names_the_place_not_the_password(raised.value, postgres, name)
    postgres.drop_database(name)


def test_the_same_role_works_once_a_superuser_created_the_extension(postgres: EmbeddedPostgres) -> None:
    name = postgres.new_database(vector=False)
    postgres.admin("CREATE EXTENSION vector", database=name)
    store = PostgresNoteStore(postgres.url(name), timeout=3)
    note = make_note("the team role writes")
    store.put(note, NS, unit(1))
    assert store.get(note.id).note == note
    store.close()
    postgres.drop_database(name)


def test_a_superuser_store_creates_the_extension_itself(postgres: EmbeddedPostgres) -> None:
    name = postgres.new_database(owner=SUPERUSER, vector=False)
    store = PostgresNoteStore(postgres.url(name, SUPERUSER), timeout=3)
    store.put(make_note(), NS, unit(1))
    store.close()
    assert postgres.admin("SELECT extname FROM pg_extension WHERE extname = 'vector'", name) == [("vector",)]
    postgres.drop_database(name)


# -- schema ---------------------------------------------------------------------------


def test_servers_opening_an_empty_database_at_once_create_the_schema_once(postgres_url: str) -> None:
    opened: list[PostgresNoteStore] = []
    failed: list[BaseException] = []
    start = threading.Barrier(6)

    def open_one() -> None:
        start.wait()
        try:
            opened.append(PostgresNoteStore(postgres_url, timeout=10))
        except BaseException as exc:  # reported below
            failed.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failed == []
    with psycopg.connect(postgres_url) as conn:
        versions = conn.execute("SELECT version FROM mcp_memory_schema ORDER BY version").fetchall()
        assert versions == [(v,) for v in range(1, LATEST + 1)]  # each migration applied once
    notes = [make_note(f"from server {i}") for i in range(6)]
    for store, note in zip(opened, notes):
        store.put(note, NS, unit(1))
    assert {s.note.id for s in opened[0].iter_notes()} == {n.id for n in notes}
    for store in opened:
        store.close()


def test_a_schema_newer_than_this_code_is_refused(postgres_url: str) -> None:
    PostgresNoteStore(postgres_url).close()
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("INSERT INTO mcp_memory_schema (version) VALUES (%s)", (LATEST + 1,))
    with pytest.raises(StoreError) as raised:
        PostgresNoteStore(postgres_url)
    assert f"version {LATEST + 1}" in str(raised.value) and "upgrade mcp-memory" in str(raised.value)


# -- values read back exactly ---------------------------------------------------------


def test_metadata_and_global_values_read_back_as_the_faiss_store_reads_them(store: PostgresNoteStore, tmp_path: Path) -> None:
    faiss = FaissNoteStore(tmp_path / "data")

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(any_json_values)
    def reads_back_alike(value: object) -> None:
        note = make_note("json values")
        try:
            note = Note(note.id, note.project_id, note.group_id, note.text, note.created_at, metadata={"v": value})
        except InvalidValue:
            return  # refused by the domain for both stores
        outcomes = []
        for target in (faiss, store):
            try:
                target.put(note, NS, unit(1))
                outcomes.append(target.get(note.id).note.metadata)
            except InvalidValue as exc:
                outcomes.append(("refused", exc.field))
        assert outcomes[1] == outcomes[0]
        if outcomes[0] == {"v": value}:
            entry = GlobalEntry(PROJECT, GlobalKey("global.any"), value, datetime(2024, 1, 1, tzinfo=timezone.utc))
            store.put_global(entry)
            assert store.get_global(PROJECT, GlobalKey("global.any")) == entry

    try:
        reads_back_alike()
    finally:
        faiss.close()


def test_numbers_jsonb_would_change_read_back_exactly(store: PostgresNoteStore) -> None:
    value = {"float": 1.0, "big": 2**80, "precise": 0.1 + 0.2, "tiny": 5e-324, "neg": -0.0, "deep": [[[[1.5]]]]}
    note = Note(NoteId.new(), PROJECT, GroupId("g"), "numbers", datetime(2024, 1, 1, tzinfo=timezone.utc), metadata=value)
    store.put(note, NS, unit(1))
    back = store.get(note.id).note.metadata
    assert back == value and type(back["float"]) is float and repr(back["precise"]) == repr(0.1 + 0.2)


def test_nul_characters_in_every_text_field_are_stored_and_read_back(store: PostgresNoteStore) -> None:
    nul = Note(
        NoteId.new(), PROJECT, GroupId("g"), "before\x00after kubernetes", datetime(2024, 1, 1, tzinfo=timezone.utc),
        title="ti\x00tle", tags=Tags(("x\x00", "plain")), source="src\x00", metadata={"k\x00": "v\x00"},
    )
    lookalike = make_note("a lookalike tag", tags=("x\\0",))
    store.put(nul, NS, unit(1))
    store.put(lookalike, NS, unit(2))
    assert store.get(nul.id).note == nul
    found = store.candidates(CandidateQuery(NoteFilter(PROJECT, tags=Tags(("x\x00",))), 5, NS, unit(1), "kubernetes"))
    assert [c.id for c in found.semantic] == [nul.id.value] == [c.id for c in found.keyword]
    assert [s.note.id for s in store.list_recent(NoteFilter(PROJECT, tags=Tags(("x\\0",))), 5)] == [lookalike.id]


def test_a_lone_surrogate_is_refused_at_its_field_and_nothing_is_written(store: PostgresNoteStore) -> None:
    note = make_note("fine text")
    bad = Note(note.id, note.project_id, note.group_id, note.text, note.created_at, title="bad \ud800 title")
    with pytest.raises(InvalidValue) as raised:
        store.put(bad, NS, unit(1))
    assert raised.value.field == "title"
    assert store.get(note.id) is None


def test_a_very_long_word_is_indexed_and_found(store: PostgresNoteStore) -> None:
    word = "x" * 5000
    note = make_note(f"a blob {word} in a note")
    store.put(note, NS, unit(1))
    found = store.candidates(CandidateQuery(NoteFilter(PROJECT), 5, text=word))
    assert [c.id for c in found.keyword] == [note.id.value]


def test_projects_are_isolated_in_one_database(store: PostgresNoteStore) -> None:
    ours, theirs = make_note("shared words"), make_note("shared words", project=CanonicalProjectId("other-team-app"))
    store.put(ours, NS, unit(1))
    store.put(theirs, NS, unit(1))
    found = store.candidates(CandidateQuery(NoteFilter(PROJECT), 10, NS, unit(1), "shared words", 100, True))
    assert {c.id for c in (*found.semantic, *found.keyword)} == {ours.id.value}
    assert [s.note.id for s in store.list_recent(NoteFilter(PROJECT), 10)] == [ours.id]
