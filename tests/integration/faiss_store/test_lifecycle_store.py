"""Export, import and delete against the real FAISS store on disk, in-process (hashing
embedder for speed), through the CLI's command functions."""

from __future__ import annotations

import io
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from tests.fakes.hashing_embedder_factory import HashingEmbedderFactory
from tests.fakes.manual_clock import ManualClock
from local_mcp_memory.application.add_note import AddNote, add_note
from local_mcp_memory.application.delete_note import DeleteNote, delete_note
from local_mcp_memory.application.errors import NoteNotFound
from local_mcp_memory.application.get_note import GetNote, get_note
from local_mcp_memory.application.list_recent import ListRecent, list_recent
from local_mcp_memory.application.search import SearchNotes, search
from local_mcp_memory.application.services import Services
from local_mcp_memory.application.upsert_global import UpsertGlobal, upsert_global
from local_mcp_memory.domain.identifiers import GlobalKey, GroupId
from local_mcp_memory.domain.note import Tags
from local_mcp_memory.entrypoints.composition.compose import compose
from local_mcp_memory.entrypoints.composition.settings import ServerOptions
from local_mcp_memory.adapters.export_file import read_export
from local_mcp_memory.entrypoints.cli.lifecycle import export_command, import_command

T0 = datetime(2024, 1, 15, 10, 30, tzinfo=timezone.utc)


def services_on(data_dir: Path, clock: ManualClock | None = None) -> Services:
    """A server's services on ``data_dir``, its config file beside it (as another process
    on the same files would have them)."""
    return compose(
        ServerOptions.resolve({}, data_dir.with_suffix(".json"), data_dir),
        embedders=HashingEmbedderFactory(),
        clock=clock or ManualClock(T0),
    )


def populate(services: Services, count: int) -> None:
    for i in range(count):
        add_note(
            AddNote(
                project_id=f"/work/project-{i % 3}",
                group_id=GroupId(("global", "feature-1", "task-7")[i % 3]),
                text=f"Note {i}: retry webhooks {i % 17} times, cache for {i % 5} minutes.\nSecond line ✓",
                title=None if i % 4 == 0 else f"Title {i}",
                tags=Tags(("zeta", "alpha", f"t{i % 7}")[: i % 4]),
                source=None if i % 2 else "chat",
                created_at=T0 + timedelta(seconds=i, microseconds=(i % 3) * 1234),
                metadata=None if i % 5 == 0 else {"z": i, "a": [1.5, None, True], "conversationId": f"c-{i}"},
            ),
            services,
        )
    for key, value in (("global.memory.groupDefaults", {"featurePrefix": "feature-"}), ("global.project.conventions", "UTC.")):
        upsert_global(UpsertGlobal("/work/project-0", GlobalKey(key), value, T0), services)


def export_bytes(services: Services, path: Path, vectors: bool = True) -> bytes:
    assert export_command(services, str(path), project=None, vectors=vectors, err=io.StringIO()) == 0
    return path.read_bytes()


def import_file(services: Services, path: Path) -> str:
    err = io.StringIO()
    with open(path, "rb") as stream:
        assert import_command(services, read_export(stream), batch=64, err=err) == 0
    return err.getvalue()


@pytest.mark.parametrize("vectors", [True, False])
def test_an_export_imported_into_an_empty_store_exports_byte_for_byte_the_same(tmp_path: Path, vectors: bool) -> None:
    source = services_on(tmp_path / "a")
    populate(source, 40)
    first = export_bytes(source, tmp_path / "a.jsonl", vectors)
    target = services_on(tmp_path / "b")
    import_file(target, tmp_path / "a.jsonl")
    assert export_bytes(target, tmp_path / "b.jsonl", vectors) == first


def test_importing_twice_creates_no_duplicates(tmp_path: Path) -> None:
    source = services_on(tmp_path / "a")
    populate(source, 10)
    export_bytes(source, tmp_path / "a.jsonl")
    target = services_on(tmp_path / "b")
    import_file(target, tmp_path / "a.jsonl")
    report = import_file(target, tmp_path / "a.jsonl")
    assert "0 written (0 embedded), 10 already there" in report
    assert len(list(target.store.iter_notes())) == 10
    assert len(list(target.store.iter_globals())) == 2


def test_a_delete_in_one_process_is_seen_by_another_sharing_the_store(tmp_path: Path) -> None:
    writer, reader = services_on(tmp_path / "data"), services_on(tmp_path / "data")
    kept = add_note(AddNote(project_id="p", group_id=GroupId("g"), text="keep the cache warm"), writer).id
    gone = add_note(AddNote(project_id="p", group_id=GroupId("g"), text="keep the cache cold"), writer).id
    assert get_note(GetNote(gone), reader).note.id == gone
    delete_note(DeleteNote(gone), reader)
    with pytest.raises(NoteNotFound):
        get_note(GetNote(gone), writer)
    assert [h.stored.note.id for h in search(SearchNotes(project_id="p", query="keep the cache"), writer).hits] == [kept]
    assert [s.note.id for s in list_recent(ListRecent(project_id="p"), writer).items] == [kept]
    reopened = services_on(tmp_path / "data")
    assert [s.note.id for s in reopened.store.iter_notes()] == [kept]


def test_an_independent_round_trip_of_a_few_thousand_notes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    count = 3000
    source = services_on(tmp_path / "a")
    started = time.perf_counter()
    populate(source, count)
    filled = time.perf_counter()
    first = export_bytes(source, tmp_path / "a.jsonl")
    exported = time.perf_counter()
    target = services_on(tmp_path / "b")
    import_file(target, tmp_path / "a.jsonl")
    imported = time.perf_counter()
    again = services_on(tmp_path / "b")  # a fresh process's view, from disk
    assert export_bytes(again, tmp_path / "b.jsonl") == first
    assert len(first.splitlines()) == 1 + count + 2
    with capsys.disabled():
        print(
            f"\n{count} notes: fill {filled - started:.2f}s, export {exported - filled:.2f}s "
            f"({len(first) / 1e6:.1f} MB with vectors), import {imported - exported:.2f}s "
            f"({count / (imported - exported):.0f} notes/s)"
        )
