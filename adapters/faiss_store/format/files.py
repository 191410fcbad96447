"""The store's file primitives beside ``adapters.durable_files`` (fsync'd, atomic writes):
removing, measuring, and the ``flock`` that serializes writers."""

from __future__ import annotations

import fcntl
import os
import shutil
from pathlib import Path


def remove_path(path: Path) -> None:
    """Remove a file or a directory tree; already gone is fine."""
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    except FileNotFoundError:
        pass


def tree_bytes(directory: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(directory):
        for name in files:
            try:
                total += os.stat(os.path.join(root, name)).st_size
            except FileNotFoundError:
                continue
    return total


class FileLock:
    """An exclusive ``flock`` on one file, shared by every process of the store.

    Re-entrant within one object (a depth count), not thread-safe by itself: the store
    serializes its threads with its own lock first. A process that dies releases it.
    """

    def __init__(self, path: Path) -> None:
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        self._depth = 0

    def __enter__(self) -> FileLock:
        if self._depth == 0:
            fcntl.flock(self._fd, fcntl.LOCK_EX)
        self._depth += 1
        return self

    def __exit__(self, *exc: object) -> None:
        self._depth -= 1
        if self._depth == 0:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        os.close(self._fd)
