"""A markdown folder changed under a sync by someone hostile: a folder swapped for a
symlink in the middle of a run is never read through, and a ``.gitignore`` too large to
apply quickly leaves its folder out, reported, instead of costing minutes and gigabytes."""

from __future__ import annotations

from pathlib import Path

from local_mcp_memory.adapters.markdown_folder import GITIGNORE_MAX_BYTES, GITIGNORE_MAX_PATTERNS, OsMarkdownFolder
from local_mcp_memory.application.folder_documents import Document, Skipped
from local_mcp_memory.application.services import Services
from local_mcp_memory.application.sync_folder import SyncFolder, sync_folder
from tests.unit.adapters.test_markdown_folder import listed, skipped, write

SECRET = "the outside secret"


def swap_for_symlink(folder: Path, target: Path) -> None:
    for child in folder.iterdir():
        child.unlink()
    folder.rmdir()
    folder.symlink_to(target)


def rooted(tmp_path: Path) -> tuple[Path, Path]:
    root, outside = tmp_path / "root", tmp_path / "outside"
    for name in ("a.md", "b.md"):
        write(outside, name, f"# {name}\n{SECRET}")
        write(root, f"docs/{name}", f"# {name}\nfine")
    return root, outside


def test_a_folder_swapped_after_one_of_its_files_was_read_is_not_read_through(tmp_path: Path) -> None:
    root, outside = rooted(tmp_path)
    folder = OsMarkdownFolder(root)
    assert [e.path for e in folder.files()] == ["docs/a.md", "docs/b.md"]
    first = folder.read("docs/a.md")
    assert isinstance(first, Document) and "fine" in first.parts[0].text
    swap_for_symlink(root / "docs", outside)
    assert folder.read("docs/b.md") == Skipped("docs/b.md", "symlink leads outside the folder")


def test_a_folder_swapped_in_the_middle_of_a_sync_run_gives_no_note_from_outside(tmp_path: Path, services: Services) -> None:
    root, outside = rooted(tmp_path)
    swapped = []

    def swap_once_listed(done: int, total: int) -> None:  # called once the folder is listed, before any file is read
        if not swapped:
            swap_for_symlink(root / "docs", outside)
            swapped.append(done)

    synced = sync_folder(SyncFolder(project_id="proj", batch_size=1), OsMarkdownFolder(root), services, swap_once_listed)
    assert swapped == [0]
    assert {s.path: s.reason for s in synced.skipped} == {p: "symlink leads outside the folder" for p in ("docs/a.md", "docs/b.md")}
    assert all(SECRET not in stored.note.text for stored in services.store.iter_notes())


def test_a_gitignore_over_the_size_limit_leaves_its_folder_out_and_says_why(tmp_path: Path) -> None:
    write(tmp_path, "kept.md", "x")
    write(tmp_path, "big/.gitignore", "# padding\n" * (GITIGNORE_MAX_BYTES // 10 + 1))
    write(tmp_path, "big/hidden.md", "x")
    assert listed(tmp_path) == ["kept.md"]
    assert skipped(tmp_path) == {"big/": f"its .gitignore is larger than {GITIGNORE_MAX_BYTES // 1024} KB, so the folder is left out"}


def test_a_21_mb_gitignore_at_the_root_is_refused_without_being_read_whole(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "build-*/\n" * (21 * 1024 * 1024 // 9))
    write(tmp_path, "a.md", "x")
    assert listed(tmp_path) == [] and list(skipped(tmp_path)) == ["./"]


def test_a_gitignore_with_too_many_patterns_leaves_its_folder_out_and_one_at_the_limit_applies(tmp_path: Path) -> None:
    write(tmp_path, "many/.gitignore", "".join(f"p{i}/\n" for i in range(GITIGNORE_MAX_PATTERNS + 1)))
    write(tmp_path, "many/a.md", "x")
    write(tmp_path, "fits/.gitignore", "# comments do not count\n" + "".join(f"p{i}/\n" for i in range(GITIGNORE_MAX_PATTERNS - 1)) + "secret.md\n")
    write(tmp_path, "fits/secret.md", "x")
    write(tmp_path, "fits/kept.md", "x")
    assert listed(tmp_path) == ["fits/kept.md"]
    assert skipped(tmp_path) == {"many/": f"its .gitignore holds {GITIGNORE_MAX_PATTERNS + 1:,} patterns, more than {GITIGNORE_MAX_PATTERNS:,}, so the folder is left out"}
