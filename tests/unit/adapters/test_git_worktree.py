"""The project of a working directory (adapters/git_worktree.py): the main worktree of its git
repository, read from git's files (checked against real ``git worktree add``), else itself."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from local_mcp_memory.adapters.git_worktree import project_root


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def repository(path: Path) -> Path:
    path.mkdir(parents=True)
    git("init", "-q", "-b", "main", cwd=path)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "start", cwd=path)
    return path.resolve()


def test_a_directory_inside_a_repository_belongs_to_its_top(tmp_path: Path) -> None:
    main = repository(tmp_path / "app")
    (main / "src" / "deep").mkdir(parents=True)
    assert project_root(str(main / "src" / "deep")) == str(main)


def test_every_linked_worktree_belongs_to_the_main_worktree(tmp_path: Path) -> None:
    main = repository(tmp_path / "app")
    git("worktree", "add", "-q", str(tmp_path / "wt-1"), "-b", "one", cwd=main)
    git("worktree", "add", "-q", str(tmp_path / "elsewhere" / "wt-2"), "-b", "two", cwd=main)
    (tmp_path / "wt-1" / "pkg").mkdir()
    assert project_root(str(tmp_path / "wt-1")) == str(main)
    assert project_root(str(tmp_path / "wt-1" / "pkg")) == str(main)
    assert project_root(str(tmp_path / "elsewhere" / "wt-2")) == str(main)


def test_a_worktree_of_a_bare_repository_belongs_to_the_bare_repository(tmp_path: Path) -> None:
    main = repository(tmp_path / "app")
    git("clone", "-q", "--bare", str(main), str(tmp_path / "app.git"), cwd=tmp_path)
    git("worktree", "add", "-q", str(tmp_path / "wt"), "main", cwd=tmp_path / "app.git")
    assert project_root(str(tmp_path / "wt")) == str((tmp_path / "app.git").resolve())


def test_a_submodule_is_its_own_project(tmp_path: Path) -> None:
    lib = repository(tmp_path / "lib")
    main = repository(tmp_path / "app")
    git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "vendor/lib", cwd=main)
    assert project_root(str(main / "vendor" / "lib")) == str(main / "vendor" / "lib")


def test_outside_any_repository_the_directory_is_the_project(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    assert project_root(str(tmp_path / "plain")) == str((tmp_path / "plain").resolve())


def test_a_symlinked_directory_resolves_to_the_real_main_worktree(tmp_path: Path) -> None:
    main = repository(tmp_path / "app")
    os.symlink(main, tmp_path / "link")
    assert project_root(str(tmp_path / "link")) == str(main)


def test_a_damaged_git_file_falls_back_to_the_directory(tmp_path: Path) -> None:
    for name, content in [("garbage", b"\xff\x00 not git"), ("dangling", b"gitdir: /nowhere/at/all\n"), ("huge", b"gitdir: " + b"x" * 10_000)]:
        folder = tmp_path / name
        folder.mkdir()
        (folder / ".git").write_bytes(content)
        assert project_root(str(folder)) == str(folder.resolve())


def test_a_commondir_that_is_a_fifo_is_not_waited_on(tmp_path: Path) -> None:
    # a hostile checkout's .git file may point at a git dir whose commondir is a FIFO: opened as
    # a file is, it held the hook (and the service's thread) until something wrote to it
    git_dir = tmp_path / "elsewhere"
    git_dir.mkdir()
    os.mkfifo(git_dir / "commondir")
    folder = tmp_path / "checkout"
    folder.mkdir()
    (folder / ".git").write_text(f"gitdir: {git_dir}\n")
    assert project_root(str(folder)) == str(folder.resolve())  # no commondir read: the git dir's own worktree
