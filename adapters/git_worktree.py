"""The project a working directory belongs to when no projectId is given (SPEC §12): the
main worktree of the git repository holding it, so that every worktree of one repository
shares one memory; else the directory itself.

Read from the files git leaves, without running git (a hook has no time for a process):

- a ``.git`` *directory* in the directory or a parent: that parent is the main worktree;
- a ``.git`` *file* (``gitdir: <path>``): a linked worktree (or a submodule). Its git dir
  holds ``commondir`` (relative to the git dir, or absolute) naming the repository's common
  dir; the main worktree is the common dir's parent when the common dir is called ``.git``.
  A bare repository's common dir has no worktree of its own: the common dir stands for the
  project. A git dir without ``commondir`` (a submodule) is its own repository: the
  directory holding the ``.git`` file is the project.

Anything unreadable or malformed falls back to the directory that was asked about.
Returned paths are absolute with symlinks resolved, like a canonical path projectId.
"""

from __future__ import annotations

import os

from local_mcp_memory.adapters.regular_files import read_regular

MAX_POINTER_BYTES = 4096
"""A ``.git`` file or ``commondir`` longer than this is not git's and is ignored."""


def project_root(directory: str) -> str:
    """The main worktree of the repository holding ``directory``, else ``directory``
    (resolved)."""
    start = os.path.realpath(os.path.abspath(os.path.expanduser(directory)))
    current = start
    while True:
        marker = os.path.join(current, ".git")
        if os.path.isdir(marker):
            return current
        if os.path.isfile(marker):
            return _from_pointer(marker, current) or start
        parent = os.path.dirname(current)
        if parent == current:
            return start
        current = parent


def _from_pointer(marker: str, worktree: str) -> str | None:
    line = _read_small(marker)
    if line is None or not line.startswith("gitdir:"):
        return None
    git_dir = line[len("gitdir:") :].strip()
    git_dir = os.path.realpath(os.path.join(worktree, git_dir))
    common = _read_small(os.path.join(git_dir, "commondir"))
    if common is None:
        return worktree if os.path.isdir(git_dir) else None  # a submodule: its own repository
    common_dir = os.path.realpath(os.path.join(git_dir, common.strip()))
    if not os.path.isdir(common_dir):
        return None
    if os.path.basename(common_dir) == ".git":
        return os.path.dirname(common_dir)
    return common_dir  # a bare repository


def _read_small(path: str) -> str | None:
    try:  # a regular file only: a FIFO named commondir would hold every hook of the folder
        data = read_regular(path, MAX_POINTER_BYTES)
    except OSError:
        return None
    try:
        return data.decode("utf-8").strip()
    except UnicodeDecodeError:
        return None
