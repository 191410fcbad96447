"""``InMemoryMarkdownFolder``: ``MarkdownFolder`` over documents held in a dict, for tests.

A test writes documents part by part (the parsing rules are the real adapter's, tested on
real folders); the digest is the SHA-256 of the parts' texts, the stamp a counter bumped by
every write. ``unreadable`` files are listed but read as ``Skipped``; ``excluded`` ones are
listed as ``Skipped``; ``vanishing`` ones are listed but gone when read, as a file deleted
during a sync. ``reads`` counts the reads of each path.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterator

from local_mcp_memory.application.folder_documents import Document, FolderFile, Part, Skipped


class InMemoryMarkdownFolder:
    def __init__(self, root: str = "/notes") -> None:
        self._root = root
        self._documents: dict[str, tuple[int, Document]] = {}
        self._unreadable: dict[str, str] = {}
        self._excluded: dict[str, str] = {}
        self._vanishing: set[str] = set()
        self._writes = 0
        self.reads: Counter[str] = Counter()

    @property
    def root(self) -> str:
        return self._root

    def write(self, path: str, *parts: Part | str) -> None:
        """A file of ``parts`` (a string is a whole-file part titled by nothing)."""
        whole = tuple(Part(None, None, p) if isinstance(p, str) else p for p in parts)
        digest = hashlib.sha256("\x00".join(f"{p.fragment}|{p.title}|{p.text}|{p.tags}" for p in whole).encode()).hexdigest()
        self._writes += 1
        self._documents[path] = (self._writes, Document(path, digest, whole))
        self._unreadable.pop(path, None)

    def remove(self, path: str) -> None:
        del self._documents[path]

    def make_unreadable(self, path: str, reason: str) -> None:
        self._unreadable[path] = reason

    def exclude(self, path: str, reason: str) -> None:
        self._excluded[path] = reason

    def vanish_when_read(self, path: str) -> None:
        self._vanishing.add(path)

    def files(self) -> Iterator[FolderFile | Skipped]:
        listed: list[FolderFile | Skipped] = [FolderFile(p, (w,)) for p, (w, _) in self._documents.items()]
        listed += [Skipped(p, reason) for p, reason in self._excluded.items()]
        return iter(sorted(listed, key=lambda entry: entry.path))

    def read(self, path: str) -> Document | Skipped | None:
        self.reads[path] += 1
        if path in self._vanishing or path not in self._documents:
            return None
        if path in self._unreadable:
            return Skipped(path, self._unreadable[path])
        return self._documents[path][1]
