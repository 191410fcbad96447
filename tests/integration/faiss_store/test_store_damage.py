"""Damage on disk is detected and never served, fails only what it touches, and never
makes the store overwrite what it did not write."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import structlog

from tests.fakes.hashing_embedder_factory import HashingEmbedderFactory
from local_mcp_memory.adapters.faiss_store import FaissNoteStore
from local_mcp_memory.application.errors import StoreCorrupt
from local_mcp_memory.application.ports import CandidateQuery, StoredNote
from local_mcp_memory.domain.note import NoteFilter
from local_mcp_memory.entrypoints.composition.compose import LazyServices, compose
from local_mcp_memory.entrypoints.composition.settings import ServerOptions
from local_mcp_memory.entrypoints.mcp.protocol import McpOptions
from local_mcp_memory.entrypoints.server import build_dispatcher
from tests.integration.small_store import NS, PROJECTS, Written, build as build_small_store, note, vector
from tests.integration.faiss_store.test_faiss_store_durability import flip_byte

FORMAT2 = Path(__file__).parents[2] / "data" / "format2_store"


@pytest.fixture
def small(tmp_path: Path) -> tuple[Path, Written]:
    data = tmp_path / "data"
    return data, build_small_store(data)


def hits(store: FaissNoteStore, where: NoteFilter, *, query=None, text: str | None = None) -> list[tuple[StoredNote, float]]:
    """The candidates of a semantic (``query``) or keyword (``text``) question, with their notes."""
    found = store.candidates(CandidateQuery(where, 100, None if query is None else NS, query, text))
    return [(found.notes[c.id], c.score) for c in (*found.semantic, *found.keyword)]


def tree(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def snapshot_of(data: Path) -> Path:
    (snapshot,) = data.glob("snapshot-*")
    return snapshot


def test_a_directory_of_generations_without_its_manifest_is_refused_and_left_untouched(small) -> None:
    data, _written = small
    (data / "MANIFEST.json").unlink()
    before = tree(data)
    with pytest.raises(StoreCorrupt) as raised:
        FaissNoteStore(data)
    assert raised.value.path == str(data / "MANIFEST.json")
    assert "salvage" in str(raised.value) and "generations 1..1" in str(raised.value)
    after = tree(data)
    assert after.pop("LOCK") == b"" and after == before  # no manifest or journal written over them


def test_a_compaction_names_its_generation_above_every_one_present_and_removes_only_older_ones(small) -> None:
    data, written = small
    foreign = data / "journal-00000007.jsonl"
    foreign.write_bytes(b"a journal the live generation does not name\n")
    (data / "notes.txt").write_bytes(b"the user's own file")
    store = FaissNoteStore(data)
    try:
        store.compact()
    finally:
        store.close()
    assert json.loads((data / "MANIFEST.json").read_bytes().split(b'"rec":', 1)[1][:-2])["generation"] == 8
    assert sorted(p.name for p in data.iterdir()) == ["LOCK", "MANIFEST.json", "journal-00000008.jsonl", "notes.txt", "snapshot-00000008"]
    reopened = FaissNoteStore(data)
    try:
        assert {s.note.id: s.note for s in reopened.iter_notes()} == written.notes
    finally:
        reopened.close()


@pytest.mark.parametrize("name", ["MANIFEST.json", "sidecar.json"])
def test_a_damaged_manifest_or_sidecar_is_refused_naming_the_file(small, name: str) -> None:
    data, _written = small
    path = data / name if name == "MANIFEST.json" else snapshot_of(data) / name
    flip_byte(path, path.stat().st_size // 2)
    with pytest.raises(StoreCorrupt) as raised:
        FaissNoteStore(data)
    assert raised.value.path == str(path)


@pytest.mark.parametrize("what", ["journal", "snapshot"])
def test_a_journal_or_snapshot_gone_for_good_is_refused_naming_it_not_as_a_compaction_to_retry(small, what: str) -> None:
    from local_mcp_memory.application.errors import StoreError

    data, _written = small
    missing = data / json.loads((data / "MANIFEST.json").read_text())["rec"][what]
    shutil.rmtree(missing) if missing.is_dir() else missing.unlink()
    with pytest.raises(StoreError) as raised:
        FaissNoteStore(data)
    assert raised.value.path == str(missing)
    assert "is missing" in str(raised.value) and "salvage" in str(raised.value) and "retry" not in str(raised.value)


def test_damage_is_answered_32006_naming_the_file_not_32603(small, tmp_path: Path) -> None:
    data, written = small
    sidecar = snapshot_of(data) / "sidecar.json"
    flip_byte(sidecar, 40)
    services = LazyServices(
        lambda: compose(ServerOptions.resolve({}, tmp_path / "config.json", data), embedders=HashingEmbedderFactory())
    )
    dispatcher = build_dispatcher(services, McpOptions(project=str(tmp_path)))
    note_id = next(iter(written.notes)).value
    request = {"jsonrpc": "2.0", "id": 1, "method": "memory.get", "params": {"id": note_id}}
    reply = json.loads(dispatcher.handle(json.dumps(request).encode()))
    assert reply["error"]["code"] == -32006 and reply["error"]["data"]["path"] == str(sidecar)


def test_a_damaged_note_body_fails_only_that_note_and_the_keyword_index_is_whole(small) -> None:
    data, written = small
    damaged = note(0)  # row 0 of the snapshot: the first bytes of notes.bin
    flip_byte(snapshot_of(data) / "notes.bin", 20)
    store = FaissNoteStore(data)
    try:
        with pytest.raises(StoreCorrupt) as raised:
            store.get(damaged.id)
        assert raised.value.path.endswith("notes.bin")
        project = damaged.project_id
        others = {i for i, n in written.notes.items() if n.project_id == project and i != damaged.id}
        assert {s.note.id for s in store.list_recent(NoteFilter(project, include_superseded=True), 100)} == others
        assert {s.note.id for s, _ in hits(store, NoteFilter(project, include_superseded=True), text="caching")} <= others
        assert {s.note.id for s, _ in hits(store, NoteFilter(project, include_superseded=True), text="note")} == others
        assert {s.note.id for s, _ in hits(store, NoteFilter(project, include_superseded=True), query=vector(0))} == others
        for note_id in others:
            assert store.get(note_id).note == written.notes[note_id]
    finally:
        store.close()


def journal_lines(data: Path) -> tuple[Path, list[bytes]]:
    (journal,) = data.glob("journal-*.jsonl")
    return journal, journal.read_bytes().split(b"\n")


def test_a_damaged_record_mid_journal_is_skipped_reported_and_kept(small) -> None:
    data, written = small
    journal, lines = journal_lines(data)
    at = len(b"\n".join(lines[:2])) + 1 + len(lines[2]) - 5  # inside the record of note 7
    flip_byte(journal, at)
    damaged = journal.read_bytes()
    with structlog.testing.capture_logs() as logs:
        store = FaissNoteStore(data)
    try:
        assert [e["offset"] for e in logs if e["event"] == "store.journal.damaged_record"] == [at - len(lines[2]) + 5]
        with pytest.raises(StoreCorrupt):
            store.get(note(7).id)
        for note_id in set(written.notes) - {note(7).id}:
            assert store.get(note_id).note == written.notes[note_id]
        store.put(note(20), NS, vector(20))  # a writer keeps the damaged line
        with pytest.raises(StoreCorrupt):
            store.iter_notes()  # an export must not quietly miss a note
    finally:
        store.close()
    assert journal.read_bytes().startswith(damaged)


def test_a_damaged_newline_merging_two_records_loses_neither(small) -> None:
    data, written = small
    journal, lines = journal_lines(data)
    flip_byte(journal, len(lines[0]) + 1 + len(lines[1]))  # the newline after the first record
    store = FaissNoteStore(data)
    try:
        assert {s.note.id: s.note for s in store.iter_notes()} == written.notes
    finally:
        store.close()


def test_a_complete_record_whose_last_newline_is_damaged_is_completed_not_cut(small) -> None:
    data, written = small
    journal, _lines = journal_lines(data)
    flip_byte(journal, journal.stat().st_size - 1)
    store = FaissNoteStore(data)
    try:
        store.put(note(30), NS, vector(30))
    finally:
        store.close()
    reopened = FaissNoteStore(data)
    try:
        assert {s.note.id: s.note for s in reopened.iter_notes()} == {**written.notes, note(30).id: note(30)}
        assert reopened.get_global(PROJECTS[0], list(written.globals)[-1][1]) == list(written.globals.values())[-1]
    finally:
        reopened.close()


def test_a_format_2_store_reads_back_every_note_and_is_upgraded_by_its_first_writer(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(FORMAT2, data)
    store = FaissNoteStore(data)
    try:
        notes = {s.note.id.value: s.note.text for s in store.iter_notes()}
        globals_ = {(g.project_id.value, g.key.value): g.value for g in store.iter_globals()}
    finally:
        store.close()
    assert notes == {
        "00000000-0000-4000-8000-000000000001": "first decision",
        "00000000-0000-4000-8000-000000000002": "a convention, updated",
        "00000000-0000-4000-8000-000000000004": "after the snapshot",
    }
    assert globals_ == {
        ("/home/me/app", "global.project.conventions"): "small PRs",
        ("other", "global.memory.groupDefaults"): {"featurePrefix": "feature-"},
    }
    assert (data / "MANIFEST.json").read_bytes().startswith(b'{"crc":"')
    assert (snapshot_of(data) / "globals.jsonl").exists()
