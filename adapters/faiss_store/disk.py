"""File primitives with the durability the store promises: fsync'd, atomic, locked."""

from __future__ import annotations

import fcntl
import os
import shutil
from pathlib import Path
from typing import BinaryIO

TMP_MARK = ".tmp-"


def fsync_dir(directory: Path) -> None:
    """Make a directory's entries (created, renamed, removed files) durable."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_durably(path: Path, data: bytes) -> None:
    """Write a new file and fsync it (its directory entry is the caller's business)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def create_file(path: Path, buffering: int = -1) -> BinaryIO:
    """A new file, private to its owner (mode 0600) like every file of the store, open
    for writing; the caller writes, fsyncs and closes it."""
    return os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb", buffering)


def replace_atomically(path: Path, data: bytes) -> None:
    """Replace ``path`` so that readers see the old or the new content, never a mix,
    and the new content survives a crash once this returns."""
    tmp = path.with_name(f"{path.name}{TMP_MARK}{os.getpid()}")
    try:
        write_durably(tmp, data)
        os.replace(tmp, path)
    except BaseException:
        remove_path(tmp)
        raise
    fsync_dir(path.parent)


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
