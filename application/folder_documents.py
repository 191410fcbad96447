"""What a folder of markdown files holds, as ``ports.MarkdownFolder`` reports it to a sync.

A file (``FolderFile``) is named by its path relative to the folder, POSIX separators. Read,
it becomes a ``Document``: the SHA-256 of its bytes and the parts it splits into, each the
text of one note. A part is addressed by the file's path, or by the path, ``#`` and a
fragment (a section's slug). Fragments hold no ``.``, ``/`` or ``#``, and every synced
file's name has a suffix (``.md``), so ``file_of`` finds the file of any part's address.
"""

from __future__ import annotations

import re
from typing import ClassVar

import attrs

_FRAGMENT = re.compile(r"[^./#\s]+")


def _fragment(instance: object, attribute: attrs.Attribute, value: str | None) -> None:
    if value is not None and not _FRAGMENT.fullmatch(value):
        raise ValueError(f"a fragment holds no '.', '/', '#' or space (got {value!r})")


@attrs.frozen
class FolderFile:
    """A markdown file found in the folder. ``stamp`` changes whenever the file's bytes may
    have (size, modification and change times, inode): equal stamps, equal bytes."""

    path: str
    stamp: tuple[int, ...]


@attrs.frozen
class Skipped:
    """A file the sync leaves alone, and why (for the report). A path ending in ``/`` is a
    whole folder (``./`` the root) left alone: the notes of its files are kept."""

    path: str
    reason: str


@attrs.frozen
class Part:
    """One note's worth of a file: ``fragment`` None for the whole file (or the text before
    its first section), else the section's slug."""

    fragment: str | None = attrs.field(validator=_fragment)
    title: str | None
    text: str
    tags: tuple[str, ...] = ()


@attrs.frozen
class Document:
    """A file as read: ``digest`` the SHA-256 of its bytes (64 hex digits), ``parts`` in the
    file's order, none for a file without text."""

    path: str
    digest: str
    parts: tuple[Part, ...]

    SPLIT_OVER: ClassVar[int] = 4_000
    """A text of more characters than this becomes one note per ``## `` section."""

    def address(self, part: Part) -> str:
        return self.path if part.fragment is None else f"{self.path}#{part.fragment}"


def under(path: str, folder: str) -> bool:
    """Whether the file ``path`` lies in the skipped ``folder`` (``docs/``; ``./`` the root)."""
    return folder == "./" or path.startswith(folder)


def file_of(address: str) -> str:
    """The file path of a part's address (``notes/a.md#setup`` -> ``notes/a.md``)."""
    head, hash_, tail = address.rpartition("#")
    return head if hash_ and _FRAGMENT.fullmatch(tail) else address
