"""Importing an export: idempotent, reusing vectors of the current namespace, resumable."""

from __future__ import annotations

import pytest

from mcp_memory.application.export_notes import ExportNotes, export_notes
from mcp_memory.application.import_notes import ImportNotes, import_notes
from mcp_memory.application.services import Services
from mcp_memory.application.upsert_global import UpsertGlobal, upsert_global
from mcp_memory.domain.identifiers import GlobalKey
from tests.unit.steps import LOCAL, add, homes, switch_to_ollama


def export_of(services: Services, vectors: bool = True) -> ImportNotes:
    export = export_notes(ExportNotes(with_vectors=vectors), services)
    return ImportNotes(list(export.notes), export.globals)


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
    for i in range(5):
        add(services, f"note {i}")
    command = export_of(services)

    def interrupt_after_first_batch(done: int, total: int) -> None:
        if done:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        import_notes(ImportNotes(command.notes, command.globals, batch_size=2), fresh, interrupt_after_first_batch)
    assert len(list(fresh.store.iter_notes())) == 2
    done = import_notes(command, fresh)
    assert (done.written, done.unchanged) == (3, 2)
    assert [s.note for s in fresh.store.iter_notes()] == [s.note for s in services.store.iter_notes()]


def test_global_settings_are_imported_once(services: Services, fresh: Services) -> None:
    upsert_global(UpsertGlobal("proj", GlobalKey("global.project.conventions"), {"tabs": False}), services)
    command = export_of(services)
    assert import_notes(command, fresh).globals_written == 1
    assert import_notes(command, fresh).globals_unchanged == 1
    assert list(fresh.store.iter_globals()) == list(services.store.iter_globals())
