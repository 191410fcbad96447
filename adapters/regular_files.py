"""Files a user or a client names, read only when they are regular files: a FIFO would hold
its reader until something writes to it, and a device such as ``/dev/zero`` never ends. A
file read whole is read up to a bound, so a huge one costs that bound of memory at most.
The standard library only: commands use it before they load the application."""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO

CONFIG_MAX_BYTES = 2**20
"""The largest config file read (``json_config``, and the store setting commands read first):
a config holds a few settings."""


class NotRegularFile(OSError):
    """A path that names a FIFO, a device, a folder or a socket where a file was expected."""


def regular_fd(path: str | os.PathLike[str], flags: int = os.O_RDONLY) -> int:
    """A descriptor of ``path`` opened with ``flags``, when it is a regular file (opened
    without blocking, so that a FIFO is refused rather than waited on, then blocking again);
    ``NotRegularFile`` otherwise, its ``strerror`` "not a regular file"."""
    fd = os.open(path, flags | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegularFile(errno.EINVAL, "not a regular file", os.fspath(path))
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """``path`` opened for reading in binary, when it is a regular file (``regular_fd``)."""
    return os.fdopen(regular_fd(path), "rb")


def read_regular(path: str | os.PathLike[str], limit: int | None = None) -> bytes:
    """The bytes of the regular file ``path``; ``OSError`` when it is none (``open_regular``)
    or holds more than ``limit`` bytes ("larger than …")."""
    with open_regular(path) as stream:
        data = stream.read() if limit is None else stream.read(limit + 1)
    if limit is not None and len(data) > limit:
        raise OSError(errno.EFBIG, f"larger than {_size(limit)}", os.fspath(path))
    return data


def _size(count: int) -> str:
    return f"{count // 2**20} MiB" if count >= 2**20 and count % 2**20 == 0 else f"{count} bytes"
