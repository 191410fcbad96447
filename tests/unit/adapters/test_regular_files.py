"""Files a user names, read only when regular (adapters/regular_files.py): a FIFO is refused
rather than waited on, a device never read, a file read whole only up to its bound."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from local_mcp_memory.adapters.regular_files import open_regular, read_regular


def test_a_regular_file_reads_whole_within_its_bound(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_bytes(b"x" * 1024)
    assert read_regular(path, 1024) == b"x" * 1024
    with pytest.raises(OSError, match="larger than 1023 bytes"):
        read_regular(path, 1023)
    with open_regular(path) as stream:
        assert stream.read() == b"x" * 1024


def test_a_fifo_a_device_and_a_folder_are_refused_at_once(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")  # opened as a file is, it would wait for a writer forever
    open_before = len(os.listdir("/proc/self/fd"))
    for path in (tmp_path / "fifo", Path("/dev/zero"), tmp_path):
        with pytest.raises(OSError, match="not a regular file"):
            read_regular(path, 2**20)
    with pytest.raises(FileNotFoundError):
        read_regular(tmp_path / "absent", 10)
    assert len(os.listdir("/proc/self/fd")) == open_before  # each refused file closed again
