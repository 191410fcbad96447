"""``mcp-memory verify`` and ``mcp-memory salvage`` as a user runs them: real processes,
real files; they never write into the data directory."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tests.fakes.hashing_embedder_factory import HashingEmbedderFactory
from local_mcp_memory.adapters.faiss_store import FaissNoteStore
from local_mcp_memory.application.import_notes import ImportNotes, import_notes
from local_mcp_memory.entrypoints.composition.compose import compose
from local_mcp_memory.entrypoints.composition.settings import ServerOptions
from local_mcp_memory.adapters.export_file import read_export
from tests.integration.serve import MCP_MEMORY, server_env
from tests.integration.small_store import Written, build as build_small_store
from tests.integration.faiss_store.test_faiss_store_durability import flip_byte
from tests.integration.faiss_store.test_store_damage import FORMAT2, snapshot_of, tree


def run(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([MCP_MEMORY, *args], capture_output=True, text=True, env=server_env(home), timeout=120)


def small(home: Path) -> tuple[Path, Written]:
    data = home / "data"
    return data, build_small_store(data)


def test_verify_says_ok_and_writes_nothing_not_even_lock(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(FORMAT2, data)
    before = tree(data)
    done = run(tmp_path, "verify", "--data-dir", str(data))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("ok: generation 1 (format 2): 3 notes, 2 global settings")
    assert tree(data) == before and not (data / "LOCK").exists()


def test_verify_reports_each_damaged_file_and_what_it_affects(tmp_path: Path) -> None:
    data, _written = small(tmp_path)
    snapshot = snapshot_of(data)
    flip_byte(snapshot / "notes.bin", 20)
    (journal,) = data.glob("journal-*.jsonl")
    flip_byte(journal, journal.stat().st_size - 10)
    (data / "snapshot-00000009.tmp-77").mkdir()
    before = tree(data)
    done = run(tmp_path, "verify", "--data-dir", str(data))
    assert done.returncode == 1
    assert f"{snapshot / 'notes.bin'}: damaged (1 found)" in done.stdout
    assert f"{journal}: damaged (1 found)" in done.stdout and "a damaged record about global global.memory.embedder.model" in done.stdout
    assert "snapshot-00000009.tmp-77" in done.stdout and "not damage" in done.stdout
    assert tree(data) == before


def test_verify_fails_a_journal_without_its_header_as_the_server_refuses_it(tmp_path: Path) -> None:
    data, _written = small(tmp_path)
    (journal,) = data.glob("journal-*.jsonl")
    journal.write_bytes(b"")
    done = run(tmp_path, "verify", "--data-dir", str(data))
    assert done.returncode == 1, done.stdout
    assert f"{journal} has no header line" in done.stdout


def salvaged_into_a_new_store(home: Path, data: Path) -> tuple[subprocess.CompletedProcess[str], FaissNoteStore]:
    out = home / "rescued.jsonl"
    done = run(home, "salvage", str(out), "--data-dir", str(data))
    assert done.returncode == 0, done.stderr
    with out.open("rb") as stream:
        export = read_export(stream)
    services = compose(
        ServerOptions.resolve({}, home / "config.json", home / "new"),
        embedders=HashingEmbedderFactory(),
    )
    import_notes(ImportNotes(export.notes, export.globals, links=export.links), services)
    return done, services.store


def test_salvage_without_a_manifest_restores_every_note_and_setting_through_import(tmp_path: Path) -> None:
    data, written = small(tmp_path)
    (data / "MANIFEST.json").unlink()
    before = tree(data)
    done, store = salvaged_into_a_new_store(tmp_path, data)
    try:
        assert f"salvaged {len(written.notes)} notes, {len(written.globals)} global settings and {len(written.links)} links" in done.stderr
        assert {s.note.id: s.note for s in store.iter_notes()} == written.notes
        assert {link.key: link for link in store.iter_links()} == written.links
        assert {(g.project_id, g.key): g for g in store.iter_globals()} == written.globals
    finally:
        store.close()
    assert tree(data) == before


def test_salvage_with_a_damaged_sidecar_keeps_every_note_and_import_embeds_them(tmp_path: Path) -> None:
    data, written = small(tmp_path)
    flip_byte(snapshot_of(data) / "sidecar.json", 30)
    done, store = salvaged_into_a_new_store(tmp_path, data)
    try:
        assert "skipped 0 records" in done.stderr
        notes = list(store.iter_notes())
        assert {s.note.id: s.note for s in notes} == written.notes
        assert all(store.vector(s.note.id, s.namespace) is not None for s in notes)
    finally:
        store.close()


def test_salvage_refuses_to_write_into_the_data_directory(tmp_path: Path) -> None:
    data, _written = small(tmp_path)
    before = tree(data)
    done = run(tmp_path, "salvage", str(data / "out.jsonl"), "--data-dir", str(data))
    assert done.returncode == 1 and "inside the data directory" in done.stderr
    assert tree(data) == before


def test_a_data_directory_that_is_a_file_is_reported_as_one_and_a_salvage_into_a_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    checked = run(tmp_path, "verify", "--data-dir", str(tmp_path / "file"))
    assert (checked.returncode, checked.stdout) == (1, f"{tmp_path / 'file'}: a file, not a directory\n")
    salvaged = run(tmp_path, "salvage", str(tmp_path / "out.jsonl"), "--data-dir", str(tmp_path / "file"))
    assert (salvaged.returncode, salvaged.stderr) == (1, f"mcp-memory salvage: {tmp_path / 'file'}: a file, not a directory\n")
    data, _ = small(tmp_path)
    (tmp_path / "out").mkdir()
    into_a_folder = run(tmp_path, "salvage", str(tmp_path / "out"), "--data-dir", str(data))
    assert (into_a_folder.returncode, into_a_folder.stderr) == (1, f"mcp-memory salvage: {tmp_path / 'out'} is a directory; name a file\n")
    assert list((tmp_path / "out").iterdir()) == []


def test_a_store_file_that_is_a_fifo_is_reported_by_name_and_waited_on_by_no_command(tmp_path: Path) -> None:
    # each of the store's files in turn replaced by a FIFO: opened as files are, every command
    # that read it waited for a writer for good; now each tells which file is not a regular one
    data, _written = small(tmp_path)
    snapshot = snapshot_of(data)
    names = ["MANIFEST.json", *[p.name for p in data.glob("journal-*.jsonl")]]
    names += [f"{snapshot.name}/{p.name}" for p in sorted(snapshot.iterdir())]
    for name in names:
        damaged = tmp_path / "damaged"
        shutil.rmtree(damaged, ignore_errors=True)
        shutil.copytree(data, damaged)
        (damaged / name).unlink()
        os.mkfifo(damaged / name)
        for command in ("verify", "stats"):
            done = subprocess.run([MCP_MEMORY, command, "--data-dir", str(damaged)], capture_output=True, text=True,
                                  env=server_env(tmp_path), timeout=60)
            # verify fails; stats fails, or serves what is intact with the damage logged (a namespace's vectors)
            assert done.returncode == 1 or command == "stats", (name, command, done.stdout, done.stderr)
            assert f"{damaged / name} is not a regular file" in done.stdout + done.stderr or (
                f"{damaged / name}: cannot be read: not a regular file" in done.stdout), (name, command, done.stdout, done.stderr)
        salvaged = run(tmp_path, "salvage", "--data-dir", str(damaged), str(tmp_path / f"out-{name.replace('/', '-')}.jsonl"))
        assert salvaged.returncode in (0, 1), (name, salvaged.stderr)  # it ends, whatever it could save
