"""Importing an export: idempotent, reusing vectors of the current namespace, resumable."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import attrs
import pytest

from local_mcp_memory.application.export_notes import ExportNotes, export_notes
from local_mcp_memory.application.import_notes import WRITE_BATCH, ImportNotes, import_notes
from local_mcp_memory.application.services import Services
from local_mcp_memory.application.upsert_global import UpsertGlobal, upsert_global
from local_mcp_memory.application.errors import InvalidRequest
from local_mcp_memory.application.links import GetRelated, LinkNotes, link_notes, related
from local_mcp_memory.domain.identifiers import GlobalKey, NoteId
from local_mcp_memory.domain.link import Link, LinkKey, Relation
from tests.fakes.manual_clock import ManualClock
from tests.unit.steps import LOCAL, add, homes, switch_to_ollama


def export_of(services: Services, vectors: bool = True) -> ImportNotes:
    export = export_notes(ExportNotes(with_vectors=vectors), services)
    return ImportNotes(list(export.notes), export.globals, links=export.links)


def test_importing_an_export_twice_writes_nothing_the_second_time(services: Services, fresh: Services) -> None:
    for i in range(3):
        add(services, f"note {i}")
    command = export_of(services)
    first = import_notes(command, fresh)
    second = import_notes(command, fresh)
    assert (first.written, first.embedded, first.unchanged) == (3, 0, 0)
    assert (second.written, second.unchanged) == (0, 3)
    assert len(list(fresh.store.iter_notes())) == 3


def test_an_import_reuses_vectors_of_the_current_namespace_and_embeds_the_others(
    services: Services, fresh: Services
) -> None:
    add(services, "embedded locally")
    switch_to_ollama(services)
    add(services, "embedded by ollama")
    done = import_notes(export_of(services), fresh)
    assert (done.namespace, done.written, done.embedded) == (LOCAL, 2, 1)
    assert set(homes(fresh).values()) == {str(LOCAL)}


def test_an_import_without_vectors_embeds_every_note(services: Services, fresh: Services) -> None:
    add(services, "a")
    add(services, "b")
    assert import_notes(export_of(services, vectors=False), fresh).embedded == 2


def test_an_interrupted_import_finishes_when_run_again(services: Services, fresh: Services) -> None:
    for i in range(WRITE_BATCH + 3):
        add(services, f"note {i}")
    command = export_of(services)

    def interrupt_after_first_batch(done: int, total: int) -> None:
        if done:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        import_notes(ImportNotes(command.notes, command.globals, batch_size=2), fresh, interrupt_after_first_batch)
    assert len(list(fresh.store.iter_notes())) == WRITE_BATCH  # written a store batch at a time
    done = import_notes(command, fresh)
    assert (done.written, done.unchanged) == (3, WRITE_BATCH)
    assert [s.note for s in fresh.store.iter_notes()] == [s.note for s in services.store.iter_notes()]


def test_notes_with_and_without_a_vector_are_written_in_the_files_order(
    services: Services, fresh: Services
) -> None:
    for i in range(7):
        add(services, f"note {i}")
    command = export_of(services)
    notes = [n if i % 2 else attrs.evolve(n, vector=None) for i, n in enumerate(command.notes)]
    done = import_notes(ImportNotes(notes, command.globals, batch_size=2), fresh)
    assert (done.written, done.embedded) == (7, 4)
    assert [s.note for s in fresh.store.iter_notes()] == [n.note for n in notes]


def test_global_settings_are_imported_once(services: Services, fresh: Services) -> None:
    upsert_global(UpsertGlobal("proj", GlobalKey("global.project.conventions"), {"tabs": False}), services)
    command = export_of(services)
    assert import_notes(command, fresh).globals_written == 1
    assert import_notes(command, fresh).globals_unchanged == 1
    assert list(fresh.store.iter_globals()) == list(services.store.iter_globals())


def test_links_and_expiry_travel_and_expired_notes_stay_behind(services: Services, fresh: Services, clock: ManualClock) -> None:
    old, new = add(services, "old rule"), add(services, "new rule", expires_at=clock.now() + timedelta(days=9))
    brief = add(services, "brief", expires_at=clock.now() + timedelta(hours=1))
    link_notes(LinkNotes(LinkKey(new, old, Relation("supersedes"))), services)
    link_notes(LinkNotes(LinkKey(brief, old, Relation("relates_to"))), services)
    clock.advance(hours=2)
    command = export_of(services)
    assert {n.note.id for n in command.notes} == {old, new} and len(command.links) == 1
    done = import_notes(command, fresh)
    assert (done.links_written, done.links_unchanged) == (1, 0)
    assert import_notes(command, fresh).links_unchanged == 1
    assert [(r.relation.value, r.direction) for r in related(GetRelated(new), fresh)] == [("supersedes", "out")]
    assert fresh.store.get(new).note.expires_at == clock.now() + timedelta(days=9) - timedelta(hours=2)


def test_a_link_to_a_note_in_neither_the_file_nor_the_store_refuses_the_import(services: Services, fresh: Services) -> None:
    a = add(services, "a")
    dangling = Link(LinkKey(a, NoteId.new(), Relation("relates_to")), datetime(2024, 1, 1, tzinfo=timezone.utc))
    command = attrs.evolve(export_of(services), links=[dangling])
    with pytest.raises(InvalidRequest) as refused:
        import_notes(command, fresh)
    assert refused.value.field == "links[0]"
    assert list(fresh.store.iter_notes()) == []


def test_an_import_skips_notes_expired_by_now_with_their_links(services: Services, fresh: Services, clock: ManualClock) -> None:
    soon = clock.now() + timedelta(hours=1)
    kept, brief = add(services, "kept for good"), add(services, "gone within the hour", expires_at=soon)
    link_notes(LinkNotes(LinkKey(kept, brief, Relation("relates_to"))), services)
    command = export_of(services)
    clock.advance(hours=2)
    done = import_notes(command, fresh)
    assert (done.written, done.expired, done.expired_links, done.links_written) == (1, 1, 1, 0)
    assert [s.note.id for s in fresh.store.iter_notes()] == [kept]
    assert related(GetRelated(kept), fresh) == []
