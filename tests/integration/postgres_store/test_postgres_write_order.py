"""PostgreSQL writes of several notes never wait for each other in a cycle: batches that span
two projects, run at once by two servers in opposite orders, all succeed (they deadlocked and
answered -32006), and so do batches racing deletes of the notes they rewrite."""

from __future__ import annotations

import threading
from collections.abc import Callable

from local_mcp_memory.adapters.postgres_store import PostgresNoteStore
from local_mcp_memory.domain.identifiers import CanonicalProjectId, GroupId, NoteId
from local_mcp_memory.domain.note import Note
from tests.integration.store_worker import NS, T0, expected_vector
from tests.postgres_server import postgres, postgres_url  # noqa: F401  (fixtures)

ONE, TWO = CanonicalProjectId("project-one"), CanonicalProjectId("project-two")


def note(project: CanonicalProjectId, text: str) -> Note:
    return Note(NoteId.new(), project, GroupId("g"), text, T0)


def at_once(*work: Callable[[], None]) -> list[BaseException]:
    failed: list[BaseException] = []
    barrier = threading.Barrier(len(work))

    def run(step: Callable[[], None]) -> None:
        barrier.wait()
        try:
            step()
        except BaseException as exc:  # reported to the test
            failed.append(exc)

    threads = [threading.Thread(target=run, args=(step,)) for step in work]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return failed


def test_batches_spanning_two_projects_in_opposite_orders_never_deadlock(postgres_url: str) -> None:
    a, b = PostgresNoteStore(postgres_url), PostgresNoteStore(postgres_url)
    try:
        def batches(store: PostgresNoteStore, first: CanonicalProjectId, second: CanonicalProjectId, tag: str) -> Callable[[], None]:
            def run() -> None:
                for i in range(40):
                    notes = [note(first, f"{tag} {i} first"), note(second, f"{tag} {i} second")]
                    store.add([(n, expected_vector(tag, i)) for n in notes], NS, T0)
            return run

        failed = at_once(batches(a, ONE, TWO, "a"), batches(b, TWO, ONE, "b"))
        assert failed == []
        assert sum(1 for _ in a.iter_notes()) == 160
    finally:
        a.close()
        b.close()


def test_rewriting_batches_racing_deletes_never_deadlock(postgres_url: str) -> None:
    a, b = PostgresNoteStore(postgres_url), PostgresNoteStore(postgres_url)
    try:
        notes = [note(ONE if i % 2 else TWO, f"note {i}") for i in range(60)]
        a.put_many([(n, expected_vector("r", i)) for i, n in enumerate(notes)], NS)

        def rewrite() -> None:
            for start in range(0, len(notes), 6):
                chunk = notes[start : start + 6][::-1]
                a.put_many([(n, expected_vector("w", start)) for n in chunk], NS)

        def delete() -> None:
            for n in notes:
                b.delete(n.id)

        assert at_once(rewrite, delete) == []
    finally:
        a.close()
        b.close()
