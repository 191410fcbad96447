"""The links of the store in memory: ``PutLink`` records by key, and each note's keys.

A link is held by its key (source, target, relation) with its createdAt in µs and the
number of the write that made it, which orders ties (``of``: newest first, ties last
written first; ``ordered``: oldest first, ties first written first). Links are few beside
notes, so they are plain Python objects; ``records`` gives them in write order, the order
a snapshot's ``links.jsonl`` keeps. Linking a key already held changes nothing: the first
link stays. Whether a link's notes exist is the writer's business (``FaissNoteStore.link``),
and removing a note's links the caller's (``remove_note``, on a delete).
"""

from __future__ import annotations

from local_mcp_memory.adapters.faiss_store.format.records import PutLink, micros

SUPERSEDES = "supersedes"

LinkKey = tuple[str, str, str]
"""(source, target, relation) of a link."""


class LinkTable:
    def __init__(self) -> None:
        self._links: dict[LinkKey, tuple[PutLink, int, int]] = {}  # key -> (record, createdAt µs, write number)
        self._of: dict[str, dict[LinkKey, None]] = {}  # note id -> keys of the links from or to it
        self._superseding: dict[str, dict[str, None]] = {}  # target -> sources of its ``supersedes`` links
        self._writes = 0

    def __len__(self) -> int:
        return len(self._links)

    def __contains__(self, key: LinkKey) -> bool:
        return key in self._links

    def add(self, record: PutLink) -> None:
        """Hold ``record`` unless its key is held. ``ValueError`` (nothing changed) if its
        instant cannot be read."""
        created = micros(record.created)
        key = record.key
        if key in self._links:
            return
        self._writes += 1
        self._links[key] = (record, created, self._writes)
        for note_id in key[:2]:
            self._of.setdefault(note_id, {})[key] = None
        if record.relation == SUPERSEDES:
            self._superseding.setdefault(record.target, {})[record.source] = None

    def remove(self, key: LinkKey) -> None:
        if self._links.pop(key, None) is not None:
            if key[2] == SUPERSEDES:
                sources = self._superseding[key[1]]
                del sources[key[0]]
                if not sources:
                    del self._superseding[key[1]]
            for note_id in key[:2]:
                keys = self._of.get(note_id)
                if keys is not None:
                    keys.pop(key, None)
                    if not keys:
                        del self._of[note_id]

    def remove_note(self, note_id: str) -> None:
        """Every link from or to the note."""
        for key in list(self._of.get(note_id, ())):
            self.remove(key)

    def superseding(self) -> dict[str, dict[str, None]]:
        """Each note that a ``supersedes`` link points to, with the links' sources (do not change)."""
        return self._superseding

    def closes_cycle(self, source: str, target: str) -> bool:
        """Whether ``target`` is ``source`` or supersedes it already, directly or down a
        chain of ``supersedes`` links: what a ``supersedes`` link from ``source`` to
        ``target`` would close into a cycle. Walks the notes superseding ``source``, each once."""
        seen, frontier = {source}, [source]
        while frontier:
            current = frontier.pop()
            if current == target:
                return True
            for newer in self._superseding.get(current, ()):
                if newer not in seen:
                    seen.add(newer)
                    frontier.append(newer)
        return False

    def of(self, note_id: str) -> list[PutLink]:
        """The links from or to a note, newest createdAt first (ties: last written first)."""
        items = [self._links[key] for key in self._of.get(note_id, ())]
        items.sort(key=lambda item: (item[1], item[2]), reverse=True)
        return [record for record, _created, _number in items]

    def ordered(self) -> list[PutLink]:
        """Every link, oldest createdAt first (ties: first written first)."""
        items = sorted(self._links.values(), key=lambda item: (item[1], item[2]))
        return [record for record, _created, _number in items]

    def records(self) -> list[PutLink]:
        """Every link in write order."""
        return [record for record, _created, _number in self._links.values()]
