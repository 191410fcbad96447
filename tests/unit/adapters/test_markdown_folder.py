"""``OsMarkdownFolder`` on real folders: which files a sync reads, and what it makes of them."""

from __future__ import annotations

import hashlib
import os
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from local_mcp_memory.adapters.markdown_folder import MAX_BYTES, FolderWatch, OsMarkdownFolder
from local_mcp_memory.adapters.markdown_parts import parse
from local_mcp_memory.application.folder_documents import Document, FolderFile, Part, Skipped, file_of
from local_mcp_memory.domain.note import Note


def write(root: Path, path: str, text: str | bytes) -> Path:
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        target.write_bytes(text)
    else:
        target.write_text(text, encoding="utf-8")
    return target


def listed(root: Path) -> list[str]:
    return [e.path for e in OsMarkdownFolder(root).files() if isinstance(e, FolderFile)]


def skipped(root: Path) -> dict[str, str]:
    return {e.path: e.reason for e in OsMarkdownFolder(root).files() if isinstance(e, Skipped)}


def read(root: Path, path: str) -> Document:
    document = OsMarkdownFolder(root).read(path)
    assert isinstance(document, Document), document
    return document


def parts(root: Path, path: str, text: str) -> tuple[Part, ...]:
    write(root, path, text)
    return read(root, path).parts


# ---------------------------------------------------------------- which files


def test_markdown_files_are_listed_sorted_by_path_in_any_case_of_suffix(tmp_path: Path) -> None:
    for path in ("b.md", "a/z.markdown", "a/y.MD", "notes.txt", "readme", "c.md.bak"):
        write(tmp_path, path, "x")
    assert listed(tmp_path) == ["a/y.MD", "a/z.markdown", "b.md"]


def test_hidden_files_and_folders_and_node_modules_are_left_out(tmp_path: Path) -> None:
    for path in (".hidden/a.md", ".draft.md", "node_modules/pkg/readme.md", "src/node_modules/x.md", "kept.md"):
        write(tmp_path, path, "x")
    assert listed(tmp_path) == ["kept.md"]
    assert skipped(tmp_path) == {}


def test_gitignore_patterns_are_applied_with_gits_rules(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "build/\n*.draft.md\n/top-only.md\n")
    for path in ("build/a.md", "docs/build/b.md", "x.draft.md", "top-only.md", "docs/top-only.md", "kept.md"):
        write(tmp_path, path, "x")
    assert listed(tmp_path) == ["docs/top-only.md", "kept.md"]


def test_a_nested_gitignore_applies_to_its_folder_and_may_re_include(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "*.secret.md\nlogs/\n")
    write(tmp_path, "docs/.gitignore", "!keep.secret.md\nlocal.md\n")
    for path in ("a.secret.md", "docs/keep.secret.md", "docs/other.secret.md", "docs/local.md", "local.md", "docs/logs/x.md"):
        write(tmp_path, path, "x")
    assert listed(tmp_path) == ["docs/keep.secret.md", "local.md"]


def test_a_file_inside_an_ignored_folder_cannot_be_re_included(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "private/\n!private/keep.md\n")
    write(tmp_path, "private/keep.md", "x")
    assert listed(tmp_path) == []


def test_a_symlink_leading_outside_the_folder_is_skipped_and_reported(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    write(outside, "secret.md", "secret")
    write(root, "kept.md", "x")
    (root / "leak.md").symlink_to(outside / "secret.md")
    (root / "leakdir").symlink_to(outside)
    assert listed(root) == ["kept.md"]
    assert skipped(root) == {"leak.md": "symlink leads outside the folder", "leakdir": "symlink leads outside the folder"}
    assert OsMarkdownFolder(root).read("leak.md") == Skipped("leak.md", "symlink leads outside the folder")
    assert OsMarkdownFolder(root).read("../outside/secret.md") == Skipped("../outside/secret.md", "not a path inside the folder")


def test_a_symlinked_file_inside_is_synced_under_its_own_path_and_a_symlinked_folder_is_not_followed(tmp_path: Path) -> None:
    write(tmp_path, "docs/a.md", "# A")
    (tmp_path / "alias.md").symlink_to(tmp_path / "docs" / "a.md")
    (tmp_path / "loop").symlink_to(tmp_path)
    (tmp_path / "broken.md").symlink_to(tmp_path / "nowhere.md")
    assert listed(tmp_path) == ["alias.md", "docs/a.md"]
    assert skipped(tmp_path) == {"broken.md": "broken symlink"}
    assert read(tmp_path, "alias.md").parts == read(tmp_path, "docs/a.md").parts


def test_a_folder_swapped_for_a_symlink_after_the_listing_is_not_read_through(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    write(outside, "a.md", "secret")
    write(root, "docs/a.md", "fine")
    folder = OsMarkdownFolder(root)
    assert [e.path for e in folder.files()] == ["docs/a.md"]
    (root / "docs" / "a.md").unlink()
    (root / "docs").rmdir()
    (root / "docs").symlink_to(outside)
    assert folder.read("docs/a.md") == Skipped("docs/a.md", "symlink leads outside the folder")


def test_a_fifo_is_reported_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.md")
    assert skipped(tmp_path) == {"pipe.md": "not a regular file"}
    assert OsMarkdownFolder(tmp_path).read("pipe.md") == Skipped("pipe.md", "not a regular file")


def test_a_name_that_is_not_utf8_is_reported_with_its_bytes_escaped(tmp_path: Path) -> None:
    with open(os.path.join(os.fsencode(tmp_path), b"caf\xe9.md"), "wb") as stream:
        stream.write(b"x")
    assert skipped(tmp_path) == {"caf\\xe9.md": "name is not valid UTF-8"}
    assert listed(tmp_path) == []


def test_names_with_spaces_unicode_and_newlines_are_listed_and_read(tmp_path: Path) -> None:
    names = ["with space.md", "naïve 日本.md", "line\nbreak.md", "a#b.md"]
    for name in names:
        write(tmp_path, name, f"# {name!r}")
    assert listed(tmp_path) == sorted(names)
    for name in names:
        assert read(tmp_path, name).parts[0].text == f"# {name!r}"
        assert file_of(name) == name


def test_a_file_over_the_size_limit_is_skipped(tmp_path: Path) -> None:
    write(tmp_path, "huge.md", b"x" * (MAX_BYTES + 1))
    assert OsMarkdownFolder(tmp_path).read("huge.md") == Skipped("huge.md", f"larger than {MAX_BYTES // 2**20} MB")


def test_a_file_deleted_after_the_listing_reads_as_gone(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "x").unlink()
    assert OsMarkdownFolder(tmp_path).read("a.md") is None


def test_the_stamp_changes_with_the_content(tmp_path: Path) -> None:
    target = write(tmp_path, "a.md", "one")
    before = next(OsMarkdownFolder(tmp_path).files())
    target.write_text("two, longer")
    assert next(OsMarkdownFolder(tmp_path).files()).stamp != before.stamp


def test_the_root_is_the_resolved_folder_and_must_be_one(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert OsMarkdownFolder(tmp_path / "link").root == str((tmp_path / "real").resolve())
    write(tmp_path, "file.md", "x")
    with pytest.raises(NotADirectoryError):
        OsMarkdownFolder(tmp_path / "file.md")
    with pytest.raises(NotADirectoryError):
        OsMarkdownFolder(tmp_path / "missing")


# ---------------------------------------------------------------- what a file becomes


def test_the_digest_is_the_sha256_of_the_files_bytes(tmp_path: Path) -> None:
    data = "---\ntags: [a]\n---\n# Title\r\nbody\r\n".encode()
    write(tmp_path, "a.md", data)
    assert read(tmp_path, "a.md").digest == hashlib.sha256(data).hexdigest()


def test_a_short_file_is_one_note_titled_by_its_first_heading(tmp_path: Path) -> None:
    assert parts(tmp_path, "a.md", "\nintro\n\n## Second\n# First? no, second heading\n") == (
        Part(None, "Second", "intro\n\n## Second\n# First? no, second heading"),
    )


def test_a_file_without_text_has_no_part(tmp_path: Path) -> None:
    assert parts(tmp_path, "empty.md", "") == ()
    assert parts(tmp_path, "blank.md", " \n\n\t\n") == ()
    assert parts(tmp_path, "front.md", "---\ntags: [a]\n---\n\n") == ()


@pytest.mark.parametrize(
    ("front", "tags"),
    [
        ("tags: [a, b, a]", ("a", "b")),
        ("tags:\n  - one\n  - two words\n  -\n", ("one", "two words")),
        ("tags: solo", ("solo",)),
        ("tags: 2024", ("2024",)),
        ("tags: [2024-01-15, 3.5]", ("2024-01-15", "3.5")),
        ("tags:", ()),
        ("title: no tags", ()),
        ("", ()),
    ],
)
def test_front_matter_tags_are_a_list_or_one_value(tmp_path: Path, front: str, tags: tuple[str, ...]) -> None:
    (part,) = parts(tmp_path, "a.md", f"---\n{front}\n---\n# T\nbody\n")
    assert part.tags == tags
    assert part.text == "# T\nbody"


@pytest.mark.parametrize(
    ("front", "reason"),
    [
        ("tags: [a", "front matter is not valid YAML: did not find expected ',' or ']' (line 3)"),
        ("tags: {a: 1}", "front matter tags must be a list of strings or one string"),
        ("tags: [[a]]", "front matter tags must be a list of strings or one string"),
        ("tags: yes", "front matter tags must be a list of strings or one string"),
        ("- just\n- a list", "front matter must be a YAML mapping (key: value lines)"),
        ("date: 2024-13-45", "front matter is not valid YAML: month must be in 1..12"),
        ("a: &x [*x]\n" + "[" * 100_000, "front matter is not valid YAML"),
    ],
)
def test_bad_front_matter_skips_the_file_with_the_reason(tmp_path: Path, front: str, reason: str) -> None:
    write(tmp_path, "a.md", f"---\n{front}\n---\nbody\n")
    result = OsMarkdownFolder(tmp_path).read("a.md")
    assert isinstance(result, Skipped) and result.reason.startswith(reason), result


def test_the_front_matter_title_is_the_fallback_of_a_file_without_heading(tmp_path: Path) -> None:
    assert parts(tmp_path, "a.md", "---\ntitle: From front matter\n---\nno heading\n")[0].title == "From front matter"
    assert parts(tmp_path, "b.md", "---\ntitle: Loses\n---\n# Heading wins\n")[0].title == "Heading wins"


def test_a_lone_rule_line_at_the_top_is_text_not_front_matter(tmp_path: Path) -> None:
    assert parts(tmp_path, "a.md", "---\nno closing line\n")[0].text == "---\nno closing line"


def test_windows_line_ends_and_a_bom_are_read_as_plain_lines(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "\ufeff---\r\ntags: [w]\r\n---\r\n# Title\r\nbody\r\n".encode())
    assert read(tmp_path, "a.md").parts == (Part(None, "Title", "# Title\nbody", ("w",)),)


def test_content_that_is_not_utf8_is_skipped_with_where(tmp_path: Path) -> None:
    write(tmp_path, "latin1.md", "# Café\n".encode("latin-1"))
    assert OsMarkdownFolder(tmp_path).read("latin1.md") == Skipped("latin1.md", "not valid UTF-8 (byte 0xe9 at offset 5)")


def test_content_with_nul_characters_is_skipped(tmp_path: Path) -> None:
    write(tmp_path, "bin.md", b"abc\x00def")
    assert OsMarkdownFolder(tmp_path).read("bin.md") == Skipped("bin.md", "holds NUL characters: not a text file")


def long_file(*sections: str, intro: str = "# Guide\n\nintro text\n") -> str:
    filler = "x" * 4_000
    return intro + "".join(f"\n## {heading}\n\n{filler}\n" for heading in sections)


def test_a_long_file_is_one_note_per_level_two_section_plus_its_intro(tmp_path: Path) -> None:
    found = parts(tmp_path, "guide.md", long_file("Install", "Use it"))
    assert [(p.fragment, p.title) for p in found] == [(None, "Guide"), ("install", "Install"), ("use-it", "Use it")]
    assert found[0].text == "# Guide\n\nintro text"
    assert found[1].text.startswith("## Install\n\nxxx")
    assert all(len(p.text) <= Note.TEXT_MAX for p in found)


def test_a_long_file_without_intro_text_has_no_intro_note(tmp_path: Path) -> None:
    found = parts(tmp_path, "g.md", long_file("Only", intro=""))
    assert [p.fragment for p in found] == ["only"]


def test_a_file_of_exactly_the_limit_is_not_split(tmp_path: Path) -> None:
    text = "## A\n" + "y" * (4_000 - 5)
    assert len(parts(tmp_path, "a.md", text)) == 1


def test_section_slugs_follow_github_and_are_unique_within_the_file(tmp_path: Path) -> None:
    found = parts(tmp_path, "g.md", long_file("Setup", "Setup", "Setup 1", "Café & Crème!", "v1.2: what's new?", "!!!", "Ünïcode 日本語", "  Trailing ##"))
    assert [p.fragment for p in found[1:]] == ["setup", "setup-1", "setup-1-1", "café--crème", "v12-whats-new", "section", "ünïcode-日本語", "trailing"]
    assert [p.title for p in found[1:3]] == ["Setup", "Setup"]
    assert found[-1].title == "Trailing"


def test_a_heading_inside_a_fenced_code_block_does_not_split(tmp_path: Path) -> None:
    fence = "```bash\n## not a section\n```\n~~~~\n## nor this\n~~~\n## still inside\n~~~~\n"
    found = parts(tmp_path, "g.md", long_file("Real") + fence)
    assert [p.fragment for p in found] == [None, "real"]
    assert found[1].text.endswith("## still inside\n~~~~")


def test_only_level_two_headings_split(tmp_path: Path) -> None:
    text = long_file("Two") + "\n### Three\n\n#### Four\n\n##NoSpace\n"
    assert [p.fragment for p in parts(tmp_path, "g.md", text)] == [None, "two"]


def test_a_section_longer_than_a_note_is_cut_into_parts_at_paragraphs(tmp_path: Path) -> None:
    paragraph = "word " * 2_000  # 10,000 characters
    text = "## Huge\n\n" + "\n\n".join([paragraph] * 25)
    found = parts(tmp_path, "huge.md", text)
    assert [p.fragment for p in found][:3] == ["huge", "huge-part-2", "huge-part-3"]
    assert all(0 < len(p.text) <= Note.TEXT_MAX for p in found)
    assert all(p.title == "Huge" for p in found)
    assert sum(p.text.count("word") for p in found) == 25 * 2_000


def test_a_5_mb_file_with_no_line_breaks_is_cut_anywhere(tmp_path: Path) -> None:
    found = parts(tmp_path, "wall.md", "z" * 5_000_000)
    assert len(found) == 50 and all(len(p.text) == Note.TEXT_MAX for p in found)
    assert [p.fragment for p in found[:3]] == [None, "part-2", "part-3"]


def test_every_fragment_is_one_that_file_of_maps_back(tmp_path: Path) -> None:
    found = parts(tmp_path, "dir.v2/a#b.md", long_file("x.y/z#w", "Part 2") + "z" * 200_000)
    document = read(tmp_path, "dir.v2/a#b.md")
    assert {file_of(document.address(p)) for p in found} == {"dir.v2/a#b.md"}
    assert len({document.address(p) for p in found}) == len(found)


# ---------------------------------------------------------------- watching


def test_a_watch_reports_a_markdown_change_and_ignores_others(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "one")
    write(tmp_path, "notes.txt", "x")
    stop, seen = threading.Event(), []

    def follow() -> None:
        for paths in FolderWatch(OsMarkdownFolder(tmp_path), quiet_ms=200).changes(stop):
            seen.append(paths)

    thread = threading.Thread(target=follow)
    thread.start()
    deadline = time.monotonic() + 10
    while not seen and time.monotonic() < deadline:  # the first (empty) report: the watch is in place
        time.sleep(0.05)
    (tmp_path / "notes.txt").write_text("y")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "b.md").write_text("z")
    (tmp_path / "a.md").write_text("two")
    while len(seen) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    stop.set()
    thread.join(timeout=10)
    assert not thread.is_alive()
    assert seen[:2] == [set(), {"a.md"}]


@given(headings=st.lists(st.text(min_size=0, max_size=40).filter(lambda h: not {"\n", "\r", "\x00"} & set(h)), min_size=1, max_size=6))
@settings(max_examples=200, deadline=None)
def test_any_headings_give_unique_fragments_that_map_back_to_the_file(headings: list[str]) -> None:
    body = "intro\n" + "".join(f"\n## {h}\n\n{'y' * 800}\n" for h in headings)
    document = parse("dir/notes.md", body.encode(), "0" * 64)
    assert isinstance(document, Document)
    addresses = [document.address(p) for p in document.parts]
    assert len(set(addresses)) == len(addresses)
    assert {file_of(a) for a in addresses} == {"dir/notes.md"}


def test_only_newlines_break_lines_not_form_feeds_or_unicode_separators(tmp_path: Path) -> None:
    found = parts(tmp_path, "g.md", long_file("Odd\u2028name\x0cwith breaks"))
    assert [p.title for p in found] == ["Guide", "Odd\u2028name\x0cwith breaks"]


def test_a_malformed_gitignore_pattern_is_dropped_as_git_drops_it_and_the_others_still_apply(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "!\nprivate/\ntrailing\\\n*.secret.md\r\n")
    for path in ("private/a.md", "x.secret.md", "kept.md"):
        write(tmp_path, path, "x")
    assert listed(tmp_path) == ["kept.md"]
    assert skipped(tmp_path) == {}


def test_a_folder_deeper_than_a_path_can_name_is_walked_and_read_through_descriptors(tmp_path: Path) -> None:
    name, depth = "n" * 250, 18  # 18 * 251 characters: past PATH_MAX
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir(name, dir_fd=fd)
            inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
        with os.fdopen(os.open("deep.md", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd), "w") as deep:
            deep.write("# Deep\nFound at the bottom.")
    finally:
        os.close(fd)
    write(tmp_path, "kept.md", "x")
    deep_path = "/".join([name] * depth + ["deep.md"])
    assert listed(tmp_path) == ["kept.md", deep_path] and skipped(tmp_path) == {}
    assert read(tmp_path, deep_path).parts[0].title == "Deep"


def test_a_folder_name_that_is_not_utf8_is_reported_as_a_folder(tmp_path: Path) -> None:
    os.mkdir(os.path.join(os.fsencode(tmp_path), b"dir\xff"))
    assert skipped(tmp_path) == {"dir\\xff/": "name is not valid UTF-8"}
