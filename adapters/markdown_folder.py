"""``OsMarkdownFolder``: ``MarkdownFolder`` on a directory of the local filesystem.

Which files are synced: names ending in ``.md`` or ``.markdown`` (any case) under the root,
except

* hidden files and folders (names starting with ``.``) and folders named ``node_modules``;
* what the ``.gitignore`` files under the root exclude, each read with git's rules (through
  ``pathspec``) relative to its own folder, a deeper file's patterns winning; ``.gitignore``
  files above the root, ``.git/info/exclude`` and git's global excludes are not read; a
  ``.gitignore`` over ``GITIGNORE_MAX_BYTES`` or ``GITIGNORE_MAX_PATTERNS`` (or one that
  cannot be read) leaves its folder out, reported: what it excludes is not known;
* symlinks: one whose target lies outside the root is skipped and reported; a symlinked
  file inside the root is synced under the link's path; a symlinked folder inside the root
  is not followed (its files are synced where they are);
* files that are not regular files (a FIFO, a device) and files over ``MAX_BYTES``,
  skipped and reported; a name that is not valid UTF-8, skipped and reported.

Folders are walked, and files opened, through directory descriptors with ``O_NOFOLLOW``
(each folder opened from its parent's descriptor), never by path: a folder swapped for a
symlink in the middle of a sync, before it is listed or between the listing and a read, is
not followed; ``read`` follows only a symlink whose target it resolved inside the root,
and opens that target the same way. Reads never block on a FIFO; the digest is the
SHA-256 of the bytes read, the parsing is ``markdown_parts``.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pathspec

from local_mcp_memory.adapters.markdown_parts import parse
from local_mcp_memory.application.folder_documents import Document, FolderFile, Skipped

SUFFIXES = (".md", ".markdown")
MAX_BYTES = 20 * 1024 * 1024
GITIGNORE_MAX_BYTES = 256 * 1024
GITIGNORE_MAX_PATTERNS = 2_000
"""A ``.gitignore`` is compiled whole (``pathspec``), at a cost that grows with its
patterns (on a busy 2-core machine: 1,000 patterns 0.5 s, 60,000 patterns in 1 MB 42 s),
and every path is matched against all of them; these bounds keep a sync quick."""
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_A_SYMLINK = (errno.ELOOP, errno.ENOTDIR)  # what O_NOFOLLOW on a symlink raises (ENOTDIR: with O_DIRECTORY)
_Spec = tuple[str, pathspec.GitIgnoreSpec]  # the folder a .gitignore sits in (POSIX, "" the root), its patterns


class OsMarkdownFolder:
    def __init__(self, root: str | os.PathLike[str]) -> None:
        resolved = Path(root).expanduser().resolve()
        if not resolved.is_dir():
            raise NotADirectoryError(20, "not a directory", str(root))
        self._root = str(resolved)
        self._prefix = self._root.rstrip("/") + "/"

    @property
    def root(self) -> str:
        return self._root

    def files(self) -> Iterator[FolderFile | Skipped]:
        found: list[FolderFile | Skipped] = []
        try:
            fd = os.open(self._root, _FOLDER)
        except OSError as exc:
            return iter([Skipped("./", f"folder cannot be read: {exc.strerror or exc}")])
        try:
            self._walk("", fd, (), found)
        finally:
            os.close(fd)
        return iter(sorted(found, key=lambda entry: entry.path))

    def read(self, path: str) -> Document | Skipped | None:
        full = self._inside(path)
        if full is None:
            return Skipped(path, "not a path inside the folder")
        fd = self._open_file(path, full)
        if not isinstance(fd, int):
            return fd
        with os.fdopen(fd, "rb") as stream:
            info = os.fstat(stream.fileno())
            if not stat.S_ISREG(info.st_mode):
                return Skipped(path, "not a regular file")
            if info.st_size > MAX_BYTES:
                return Skipped(path, f"larger than {MAX_BYTES // (1024 * 1024)} MB")
            try:
                data = stream.read(MAX_BYTES + 1)
            except OSError as exc:
                return Skipped(path, f"cannot be read: {exc.strerror or exc}")
        if len(data) > MAX_BYTES:
            return Skipped(path, f"larger than {MAX_BYTES // (1024 * 1024)} MB")
        return parse(path, data, hashlib.sha256(data).hexdigest())

    def _open_file(self, path: str, full: str) -> int | Skipped | None:
        """``full`` opened; through a symlink on the way only when its target lies inside
        the root, the target then opened following no link (None: gone)."""
        target, resolved = full, False
        while True:
            try:
                return self._open_beneath(target)
            except FileNotFoundError:
                return None
            except OSError as exc:
                if exc.errno not in _A_SYMLINK or resolved:
                    reason = "changed into a symlink while it was read" if exc.errno in _A_SYMLINK else exc.strerror or str(exc)
                    return Skipped(path, f"cannot be read: {reason}")
            target, resolved = os.path.realpath(full), True
            if not self._contains(target) or target == self._root:
                return Skipped(path, "symlink leads outside the folder")

    def _open_beneath(self, full: str) -> int:
        """``full`` (strictly inside the root) opened for reading, each folder on the way
        opened from the one before with ``O_NOFOLLOW`` and the file too: a folder swapped
        for a symlink at any moment raises ``ELOOP``/``ENOTDIR`` instead of being followed.
        Never blocks on a FIFO."""
        names = full[len(self._prefix) :].split("/")
        fd = os.open(self._root, _FOLDER)
        try:
            for name in names[:-1]:
                inner = os.open(name, _FOLDER | os.O_NOFOLLOW, dir_fd=fd)
                os.close(fd)
                fd = inner
            return os.open(names[-1], os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | _CLOEXEC, dir_fd=fd)
        finally:
            os.close(fd)

    def _inside(self, path: str) -> str | None:
        """The absolute path of ``path`` when it names something strictly inside the root."""
        full = os.path.normpath(os.path.join(self._root, path))
        return full if full.startswith(self._prefix) else None

    def _contains(self, absolute: str) -> bool:
        return absolute == self._root or absolute.startswith(self._prefix)

    def _walk(self, folder: str, fd: int, specs: tuple[_Spec, ...], found: list[FolderFile | Skipped]) -> None:
        """The folder open as ``fd``: its entries are listed, and its sub-folders opened,
        through the descriptor, never by path, so none is followed if it became a symlink
        since it was listed (nor is a folder too deep for a path left out)."""
        try:
            entries = sorted(os.scandir(fd), key=lambda e: e.name)
        except OSError as exc:
            found.append(Skipped(folder or "./", f"folder cannot be read: {exc.strerror or exc}"))
            return
        ignore = _gitignore(folder, fd, found)
        if ignore is None:  # what it excludes is unknown: nothing of the folder is synced
            return
        specs = specs + ignore
        for entry in entries:
            name = entry.name
            if name.startswith(".") or name == "node_modules":
                continue
            path = f"{folder}{name}"
            if not _utf8(path):
                shown = path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
                if _is_dir(entry):
                    found.append(Skipped(shown + "/", "name is not valid UTF-8"))
                elif _markdown(name):
                    found.append(Skipped(shown, "name is not valid UTF-8"))
                continue
            is_dir = _is_dir(entry)
            if _ignored(specs, path + "/" if is_dir else path):
                continue
            if entry.is_symlink():
                self._symlink(entry, path, is_dir, found)
            elif is_dir:
                self._descend(path + "/", fd, name, specs, found)
            elif _markdown(name):
                found.append(self._file(entry, path))

    def _descend(self, folder: str, parent: int, name: str, specs: tuple[_Spec, ...], found: list[FolderFile | Skipped]) -> None:
        try:
            fd = os.open(name, _FOLDER | os.O_NOFOLLOW, dir_fd=parent)
        except OSError as exc:
            reason = "it became a symlink during the sync (not followed)" if exc.errno in _A_SYMLINK else exc.strerror or str(exc)
            found.append(Skipped(folder, f"folder cannot be read: {reason}"))
            return
        try:
            self._walk(folder, fd, specs, found)
        finally:
            os.close(fd)

    def _symlink(self, entry: os.DirEntry[str], path: str, is_dir: bool, found: list[FolderFile | Skipped]) -> None:
        if not (is_dir or _markdown(entry.name)):
            return
        target = os.path.realpath(os.path.join(self._root, path))
        if not self._contains(target):
            found.append(Skipped(path, "symlink leads outside the folder"))
        elif not os.path.exists(target):
            found.append(Skipped(path, "broken symlink"))
        elif not is_dir:
            found.append(self._file(entry, path))

    def _file(self, entry: os.DirEntry[str], path: str) -> FolderFile | Skipped:
        try:
            info = entry.stat()  # follows a symlink: the target's stamp
        except OSError as exc:
            return Skipped(path, f"cannot be read: {exc.strerror or exc}")
        if not stat.S_ISREG(info.st_mode):
            return Skipped(path, "not a regular file")
        return FolderFile(path, (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev))


def _gitignore(folder: str, fd: int, found: list[FolderFile | Skipped]) -> tuple[_Spec, ...] | None:
    """The patterns of the folder's ``.gitignore`` (none without one, or for a symlink, which
    git does not follow either); None, reported, when it cannot be read or is larger than
    ``GITIGNORE_MAX_BYTES`` or ``GITIGNORE_MAX_PATTERNS``: what it excludes is then unknown,
    so the folder is left out rather than synced with files it may exclude."""
    where = folder or "./"
    try:
        handle = os.open(".gitignore", os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | _CLOEXEC, dir_fd=fd)
    except FileNotFoundError:
        return ()
    except OSError as exc:
        if exc.errno in _A_SYMLINK:
            return ()
        found.append(Skipped(where, f"its .gitignore cannot be read, so the folder is left out: {exc.strerror or exc}"))
        return None
    try:
        with os.fdopen(handle, "rb") as stream:
            if not stat.S_ISREG(os.fstat(stream.fileno()).st_mode):
                return ()
            data = stream.read(GITIGNORE_MAX_BYTES + 1)
    except OSError as exc:
        found.append(Skipped(where, f"its .gitignore cannot be read, so the folder is left out: {exc.strerror or exc}"))
        return None
    if len(data) > GITIGNORE_MAX_BYTES:
        found.append(Skipped(where, f"its .gitignore is larger than {GITIGNORE_MAX_BYTES // 1024} KB, so the folder is left out"))
        return None
    lines = data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    patterns = sum(1 for line in lines if line.strip() and not line.startswith("#"))
    if patterns > GITIGNORE_MAX_PATTERNS:
        rule = f"its .gitignore holds {patterns:,} patterns, more than {GITIGNORE_MAX_PATTERNS:,}, so the folder is left out"
        found.append(Skipped(where, rule))
        return None
    try:
        spec = pathspec.GitIgnoreSpec.from_lines(lines)
    except ValueError:  # a malformed pattern (a lone "!", a trailing "\"): git never matches it, nor do we
        spec = pathspec.GitIgnoreSpec.from_lines([line for line in lines if _valid_pattern(line)])
    return ((folder, spec),)


def _valid_pattern(line: str) -> bool:
    try:
        pathspec.GitIgnoreSpec.from_lines([line])
    except ValueError:
        return False
    return True


def _ignored(specs: tuple[_Spec, ...], path: str) -> bool:
    """Whether the deepest ``.gitignore`` with a pattern for ``path`` excludes it."""
    for base, spec in reversed(specs):
        result = spec.check_file(path[len(base) :])
        if result.include is not None:
            return result.include
    return False


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()  # follows a symlink
    except OSError:
        return False


def _markdown(name: str) -> bool:
    return name.lower().endswith(SUFFIXES)


def _utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class FolderWatch:
    """Changes to an ``OsMarkdownFolder``'s files, through ``watchfiles`` (inotify on Linux,
    FSEvents on macOS): a change is seen within tens of milliseconds, and waiting costs
    next to no CPU however large the folder (a re-walk every second would cost about 0.13 s
    of CPU per 10,000 files, an eighth of a core for ever)."""

    def __init__(self, folder: OsMarkdownFolder, quiet_ms: int = 1000, longest_ms: int = 10_000) -> None:
        self._folder = folder
        self._quiet_ms = quiet_ms
        self._longest_ms = longest_ms

    def changes(self, stop: threading.Event) -> Iterator[set[str]]:
        """An empty set once the watch is in place (changes made before it are the caller's
        to catch up on), then the paths (relative to the root) of each burst of changes,
        yielded once ``quiet_ms`` pass without a new one (or ``longest_ms`` after the burst
        began). Changes to existing files that are not markdown and to hidden paths other
        than ``.gitignore`` files are left out. Ends when ``stop`` is set."""
        import watchfiles

        root, first = self._folder.root, True
        for batch in watchfiles.watch(
            root,
            watch_filter=None,
            debounce=self._longest_ms,
            step=self._quiet_ms,
            stop_event=stop,
            rust_timeout=self._quiet_ms,
            yield_on_timeout=True,
            raise_interrupt=False,
        ):
            paths = {os.path.relpath(path, root) for _change, path in batch}
            relevant = {p for p in paths if _worth_a_sync(root, p)}
            if relevant or first:
                first = False
                yield relevant


def _worth_a_sync(root: str, path: str) -> bool:
    parts = path.split(os.sep)
    if parts[0] == ".." or any(p == "node_modules" or (p.startswith(".") and p != ".gitignore") for p in parts):
        return False
    name = parts[-1]
    return _markdown(name) or name == ".gitignore" or not os.path.isfile(os.path.join(root, path))
