"""The ``MarkdownFolder`` contract, run against the real folder and its fake."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from local_mcp_memory.adapters.markdown_folder import OsMarkdownFolder
from local_mcp_memory.application.folder_documents import Document, FolderFile, Part
from local_mcp_memory.application.ports import MarkdownFolder
from tests.fakes.memory_folder import InMemoryMarkdownFolder


class Harness:
    """A folder under test, and how a test changes its files."""

    def __init__(self, folder: MarkdownFolder, write: Callable[[str, str], None], remove: Callable[[str], None]) -> None:
        self.folder, self.write, self.remove = folder, write, remove


def real(tmp_path: Path) -> Harness:
    def write(path: str, text: str) -> None:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)

    return Harness(OsMarkdownFolder(tmp_path), write, lambda path: (tmp_path / path).unlink())


def fake(tmp_path: Path) -> Harness:
    folder = InMemoryMarkdownFolder(str(tmp_path))
    return Harness(folder, lambda path, text: folder.write(path, text), folder.remove)


@pytest.fixture(params=[real, fake], ids=["OsMarkdownFolder", "InMemoryMarkdownFolder"])
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> Harness:
    return request.param(tmp_path)


def files(harness: Harness) -> list[FolderFile]:
    return [f for f in harness.folder.files() if isinstance(f, FolderFile)]


def test_files_are_listed_once_each_sorted_by_path(harness: Harness) -> None:
    for path in ("b.md", "a/c.md", "a.md"):
        harness.write(path, "text")
    assert [f.path for f in files(harness)] == ["a.md", "a/c.md", "b.md"]


def test_a_read_gives_the_files_parts_and_a_sha256_digest(harness: Harness) -> None:
    harness.write("a.md", "plain text")
    document = harness.folder.read("a.md")
    assert isinstance(document, Document) and document.path == "a.md"
    assert re.fullmatch(r"[0-9a-f]{64}", document.digest)
    assert document.parts == (Part(None, None, "plain text"),)


def test_a_change_of_content_changes_the_stamp_and_the_digest(harness: Harness) -> None:
    harness.write("a.md", "one")
    (before,), first = files(harness), harness.folder.read("a.md")
    harness.write("a.md", "two, and longer")
    (after,), second = files(harness), harness.folder.read("a.md")
    assert after.stamp != before.stamp
    assert isinstance(first, Document) and isinstance(second, Document) and first.digest != second.digest


def test_a_removed_file_is_no_longer_listed_and_reads_as_gone(harness: Harness) -> None:
    harness.write("a.md", "one")
    harness.remove("a.md")
    assert files(harness) == []
    assert harness.folder.read("a.md") is None


def test_the_root_is_an_absolute_path(harness: Harness) -> None:
    assert harness.folder.root.startswith("/")
