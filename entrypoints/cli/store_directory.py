"""The local store's directory, checked before a command opens the store: a path that is
there but is no directory is reported by name, where the store would say "File exists"."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def local_store_problem(options: Any) -> str | None:
    """Why the local store's directory of ``options`` (a ``ServerOptions``) cannot be one, or
    None: the directory ``--store``, ``MCP_MEMORY_STORE`` or the config file's ``store.url``
    names, else the data directory; None for a database, or a config file that cannot be read
    (``compose`` reports that)."""
    from local_mcp_memory.entrypoints.composition.settings import is_database_store, store_setting_at_start

    location = store_setting_at_start(options)
    if is_database_store(location):
        return None
    if location:
        return directory_problem(Path(os.path.expanduser(location)).absolute(), "the store directory")
    return directory_problem(options.data_dir, "the data directory")


def directory_problem(directory: Path, name: str) -> str | None:
    """Why ``directory`` (called ``name`` in the message) is no directory and cannot be made
    one, or None: it, or the nearest of its parents that exists, is something else."""
    there = next((path for path in (directory, *directory.parents) if os.path.lexists(path)), None)
    if there is None or there.is_dir():
        return None
    what = "a file, not a directory" if there.is_file() else "not a directory"
    if there == directory:
        return f"{name} {directory} is {what}"
    return f"{name} {directory} cannot be made: {there} is {what}"
