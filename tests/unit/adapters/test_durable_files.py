"""The one durable writer: owner-only files, replaced whole, nothing left behind."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from local_mcp_memory.adapters.durable_files import replace_durably, write_durably


@pytest.fixture
def open_umask() -> Iterator[None]:
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_file_is_owner_only_whatever_the_umask(tmp_path: Path, open_umask: None) -> None:
    write_durably(tmp_path / "a", b"x" * 100_000)
    assert (tmp_path / "a").read_bytes() == b"x" * 100_000
    assert mode(tmp_path / "a") == 0o600


def test_a_replaced_file_holds_the_new_content_only_its_owner_may_read(tmp_path: Path, open_umask: None) -> None:
    path = tmp_path / "config.json"
    path.write_bytes(b"old content, longer than the new one")
    path.chmod(0o644)
    replace_durably(path, b"new")
    assert path.read_bytes() == b"new"
    assert mode(path) == 0o600
    assert os.listdir(tmp_path) == ["config.json"]


def test_a_replacement_that_fails_leaves_the_old_file_and_no_temporary_one(tmp_path: Path) -> None:
    path = tmp_path / "MANIFEST.json"
    path.mkdir()
    (path / "inside").write_bytes(b"kept")
    with pytest.raises(OSError):
        replace_durably(path, b"new")
    assert sorted(os.listdir(tmp_path)) == ["MANIFEST.json"]
    assert (path / "inside").read_bytes() == b"kept"
