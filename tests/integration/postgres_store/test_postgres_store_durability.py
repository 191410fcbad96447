"""PostgresNoteStore keeps every acknowledged write through kill -9 of the writing server,
and servers writing one project of one database at once lose nothing (the FAISS store's
durability tests, ``store_worker``'s notes, against PostgreSQL)."""

from __future__ import annotations

import random
import signal
import subprocess
import time
from pathlib import Path

from local_mcp_memory.adapters.postgres_store import PostgresNoteStore
from local_mcp_memory.application.ports import CandidateQuery
from local_mcp_memory.domain.note import NoteFilter
from tests.integration import store_worker
from tests.integration.store_worker import PROJECT, expected_note
from tests.postgres_server import EmbeddedPostgres, postgres, postgres_url  # noqa: F401

WORKER = str(Path(__file__).with_name("postgres_worker.py"))
CYCLES = 12


def run_worker(*args: object) -> subprocess.Popen:
    return store_worker.run_worker(WORKER, *args)


def assert_holds(url: str, tag: str, indexes: list[int]) -> None:
    store_worker.assert_holds(PostgresNoteStore(url), tag, indexes)


def test_acknowledged_writes_survive_kill_9_of_the_writer_at_random_instants(postgres_url: str) -> None:
    rng = random.Random(20240115)
    acknowledged: list[int] = []
    start = 0
    for _cycle in range(CYCLES):
        worker = run_worker("write", postgres_url, "crash", start, 1_000_000)
        first = worker.stdout.readline()
        time.sleep(rng.uniform(0.0, 0.3))
        worker.send_signal(signal.SIGKILL)
        output = first + worker.stdout.read()
        worker.wait()
        written = [int(line) for line in output.split(b"\n")[:-1]]  # a line cut by the kill was not acknowledged
        assert written, "the worker acknowledged nothing before being killed"
        acknowledged += written
        start = written[-1] + 1
    assert_holds(postgres_url, "crash", acknowledged)


def test_acknowledged_writes_survive_a_crash_of_the_database_mid_write(postgres: EmbeddedPostgres, postgres_url: str) -> None:
    worker = run_worker("write", postgres_url, "dbcrash", 0, 1_000_000)
    first = worker.stdout.readline()
    time.sleep(0.5)
    postgres.stop("immediate")  # every backend killed, no checkpoint: recovery from the WAL
    try:
        output = first + worker.communicate(timeout=60)[0]
    finally:
        postgres.start()
    written = [int(line) for line in output.split(b"\n")[:-1]]
    assert len(written) > 1
    assert_holds(postgres_url, "dbcrash", written)


def test_two_servers_writing_one_project_each_see_all_notes(postgres_url: str) -> None:
    PostgresNoteStore(postgres_url).close()  # the schema, before both start
    writers = [run_worker("share", postgres_url, tag, 200, other) for tag, other in (("a", "b"), ("b", "a"))]
    results = [w.communicate(timeout=120)[0].strip() for w in writers]
    assert results == [b"ok", b"ok"]
    assert_holds(postgres_url, "a", list(range(200)))
    assert_holds(postgres_url, "b", list(range(200)))
    store = PostgresNoteStore(postgres_url)
    found = store.candidates(CandidateQuery(NoteFilter(PROJECT), 500, text="durability"))
    assert len(found.keyword) == 400  # the keyword counters saw every write of both
    store.close()


def test_a_reader_sees_a_write_of_another_server_on_its_next_read(postgres_url: str) -> None:
    reader = PostgresNoteStore(postgres_url)
    assert reader.list_recent(NoteFilter(PROJECT), 10) == []
    worker = run_worker("write", postgres_url, "seen", 0, 3)
    assert worker.communicate(timeout=60)[0].split() == [b"0", b"1", b"2"]
    assert len(reader.list_recent(NoteFilter(PROJECT), 10)) == 3
    assert reader.get(expected_note("seen", 2).id).note == expected_note("seen", 2)
    reader.close()
