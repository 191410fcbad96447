"""One damaged byte anywhere in the data directory: no read returns data that was not
written, and salvage keeps every record but the damaged one.

A small store (``small_store``) is copied once per case and one byte flipped, at 600
positions drawn with a fixed seed, every file getting an equal share (a small file all its
bytes, the rest going to the larger ones). Then every read path runs: get and the links
of every note, list_recent and the three searches in both projects, get_global of every
key, export (iter_notes, iter_globals, iter_links). Each answer must be what was written
or ``StoreCorrupt``; lists may leave out only notes that ``get`` reports damaged. Salvage
runs on the same copy and must keep every note, setting and link that the damaged byte
did not belong to, each exactly as written."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from local_mcp_memory.adapters.faiss_store import FaissNoteStore
from local_mcp_memory.adapters.faiss_store.recovery.salvage import as_export, salvage
from local_mcp_memory.application.errors import StoreCorrupt
from local_mcp_memory.application.ports import CandidateQuery, StoredNote
from local_mcp_memory.domain.note import NoteFilter
from tests.integration.small_store import NS, PROJECTS, Written, build as build_small_store, vector

CASES = 600
SEED = 20240501


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Written]:
    data = tmp_path_factory.mktemp("sweep") / "data"
    return data, build_small_store(data)


REFUSED_WHOLE = {"MANIFEST.json", "sidecar.json", "notes.npy", "tags.npy"}
"""The only files whose damage may refuse the whole store: they place every note (and
hold its expiresAt and dedup hash)."""


def positions(data: Path) -> list[tuple[str, int]]:
    """An equal share of the cases per file, smallest files first, each drawn at random
    (all of a file's bytes when it has fewer than its share)."""
    rng = random.Random(SEED)
    files = sorted((p for p in data.rglob("*") if p.is_file()), key=lambda p: p.stat().st_size)
    drawn: list[tuple[str, int]] = []
    for number, path in enumerate(files):
        share = (CASES - len(drawn)) // (len(files) - number)
        size = path.stat().st_size
        drawn += [(str(path.relative_to(data)), at) for at in sorted(rng.sample(range(size), min(share, size)))]
    return drawn


def answer(read):
    try:
        return read()
    except StoreCorrupt:
        return StoreCorrupt


def hits(store: FaissNoteStore, where: NoteFilter, *, query=None, text: str | None = None) -> list[tuple[StoredNote, float]]:
    """The candidates of a semantic (``query``) or keyword (``text``) question, with their notes."""
    found = store.candidates(CandidateQuery(where, 100, None if query is None else NS, query, text))
    return [(found.notes[c.id], c.score) for c in (*found.semantic, *found.keyword)]


def check_reads(store: FaissNoteStore, written: Written) -> set:
    """Every read path; the ids that ``get`` reports damaged."""
    damaged = set()
    for note_id, note in written.notes.items():
        got = answer(lambda: store.get(note_id))
        if got is StoreCorrupt:
            damaged.add(note_id)
        else:
            assert got is not None and got.note == note and got.namespace == NS
        links = answer(lambda: store.links(note_id))
        assert links is StoreCorrupt or links == written.links_of(note_id)
    for project in PROJECTS:
        mine = {i for i, n in written.notes.items() if n.project_id == project}
        everyone = sorted(mine, key=lambda i: written.notes[i].created_at, reverse=True)
        listed = answer(lambda: store.list_recent(NoteFilter(project, include_superseded=True), 100))
        if listed is not StoreCorrupt:
            assert [s.note.id for s in listed] == [i for i in everyone if i not in damaged]
            assert all(s.note == written.notes[s.note.id] for s in listed)
        for query in (vector(3), vector(101)):
            semantic = answer(lambda: hits(store, NoteFilter(project, include_superseded=True), query=query))
            if semantic is not StoreCorrupt:
                assert {s.note.id for s, _ in semantic} == mine - damaged
                for stored, score in semantic:
                    assert stored.note == written.notes[stored.note.id]
                    assert score == pytest.approx(float(written.vectors[stored.note.id] @ query), abs=1e-5)
        found = answer(lambda: hits(store, NoteFilter(project, include_superseded=True), text="caching note"))
        if found is not StoreCorrupt:
            assert {s.note.id for s, _ in found} <= mine - damaged
            assert all(s.note == written.notes[s.note.id] for s, _ in found)
    for (project, key), entry in written.globals.items():
        got = answer(lambda: store.get_global(project, key))
        assert got is StoreCorrupt or got == entry
    exported = answer(lambda: list(store.iter_notes()))
    if exported is not StoreCorrupt:
        assert {s.note.id: s.note for s in exported} == written.notes
    settings = answer(lambda: store.iter_globals())
    assert settings is StoreCorrupt or {(g.project_id, g.key): g for g in settings} == written.globals
    links = answer(lambda: list(store.iter_links()))
    assert links is StoreCorrupt or links == written.all_links()
    for project in PROJECTS:
        links = answer(lambda: list(store.iter_links(project)))
        assert links is StoreCorrupt or links == [k for k in written.all_links() if written.notes[k.key.from_id].project_id == project]
    return damaged


def check_salvage(data: Path, written: Written) -> None:
    export, unusable = as_export(salvage(data))
    notes = {e.note.id: e for e in export.notes}
    assert unusable == 0
    for exported in notes.values():
        assert exported.note == written.notes[exported.note.id]
        if exported.vector is not None:
            assert exported.namespace == NS and list(exported.vector) == pytest.approx(list(written.vectors[exported.note.id]))
    assert len(notes) >= len(written.notes) - 1
    settings = {(g.project_id, g.key): g for g in export.globals}
    assert all(written.globals[key] == entry for key, entry in settings.items())
    between = [link for link in written.all_links() if {link.key.from_id, link.key.to_id} <= set(notes)]
    assert [link for link in between if link in export.links] == export.links  # as written, oldest first
    lost = len(written.notes) - len(notes) + len(written.globals) - len(settings) + len(between) - len(export.links)
    assert lost <= 1


def test_no_single_damaged_byte_makes_a_read_return_data_that_was_not_written(pristine, tmp_path: Path) -> None:
    source, written = pristine
    refused = set()
    for number, (name, at) in enumerate(positions(source)):
        data = tmp_path / f"case-{number}"
        shutil.copytree(source, data)
        path = data / name
        raw = bytearray(path.read_bytes())
        raw[at] ^= 1 << (number % 8)
        path.write_bytes(bytes(raw))
        try:
            store = FaissNoteStore(data)
        except StoreCorrupt:
            refused.add(path.name)
        else:
            try:
                check_reads(store, written)
            finally:
                store.close()
        shutil.rmtree(data / "LOCK", ignore_errors=True)
        check_salvage(data, written)
        shutil.rmtree(data)
    assert refused <= REFUSED_WHOLE  # damage anywhere else is served around
