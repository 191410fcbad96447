"""Files that survive a crash whole: written with mode 0600, fsync'd, replaced atomically.

The one writer of every file the server must not lose half of: the config file, the
store's manifest, and the files of a snapshot (its sidecar among them). A new file is
written and fsync'd; a file that readers may be reading is replaced through a temporary
file beside it, renamed over it, and the directory fsync'd so that the rename itself is
durable.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import BinaryIO

TMP_MARK = ".tmp-"
"""Marks a temporary file or directory: ``<name>.tmp-<pid>``."""


def fsync_dir(directory: Path) -> None:
    """Make a directory's entries (created, renamed, removed files) durable."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def create_file(path: Path, buffering: int = -1) -> BinaryIO:
    """A new file, private to its owner (mode 0600 whatever the umask, or an older file
    left there), open for writing; the caller writes, fsyncs and closes it."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "wb", buffering)


def write_durably(path: Path, data: bytes) -> None:
    """Write a new file (mode 0600) and fsync it; its directory entry is the caller's
    business (``fsync_dir`` once the directory holds every file)."""
    with create_file(path, buffering=0) as file:
        view = memoryview(data)
        while view:
            view = view[file.write(view) :]
        os.fsync(file.fileno())


def replace_durably(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` (mode 0600) so that readers see the old or the new
    content, never a mix, and the new content survives a crash once this returns: the
    temporary file ``<name>.tmp-<pid>`` is written and fsync'd, renamed over ``path``,
    and the directory fsync'd. On failure the temporary file is removed."""
    tmp = path.with_name(f"{path.name}{TMP_MARK}{os.getpid()}")
    try:
        write_durably(tmp, data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)
