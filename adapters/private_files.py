"""Files and directories only their owner may read, and an exclusive lock between processes.

The config file may hold an API key and the data directory holds the user's notes, so
both live in directories of mode 0700 and are written with mode 0600, whatever the umask
(files by ``adapters.durable_files``).
"""

from __future__ import annotations

import fcntl
import errno
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def make_private_dir(path: Path) -> None:
    """Create ``path`` and each missing parent with mode 0700. Directories that exist
    already keep their mode: the server never changes a directory it did not create."""
    missing = []
    for directory in (path, *path.parents):
        if directory.is_dir():
            break
        missing.append(directory)
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=0o700)
        except FileExistsError:
            if not directory.is_dir():  # a file, a device or a FIFO where a folder belongs
                raise NotADirectoryError(errno.ENOTDIR, f"{directory} is not a directory", str(directory)) from None
            continue  # another process made it first
        os.chmod(directory, 0o700)  # mkdir's mode is cut by the umask: set it exactly


def keep_private(path: Path) -> None:
    """Make an existing file readable by its owner only (mode 0600); a missing one is fine."""
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        return
    if mode & 0o077:
        os.chmod(path, 0o600)


@contextmanager
def exclusive_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (created 0600 if missing) for the block.

    Each call opens the file anew, so the lock also excludes other threads of this
    process, not only other processes. A process that dies releases it.
    """
    make_private_dir(path.parent)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the last descriptor releases the lock
