"""What the store found damaged, and keeps out of its answers.

Damage is found when a snapshot is loaded (a note body, a vector file or its owners, a
global or link line failing its checksum) and when a journal is replayed (a complete line
failing its checksum). What a damaged part was about is known where the format keeps it apart
with a checksum of its own: a note's row in ``notes.npy``, a journal line's ``about``.
Each answer that depends on a damaged part raises ``StoreCorrupt`` naming the file; every
other answer is served as usual. A part whose subject is unknown (a journal line whose
``about`` is damaged too, or a format 2 line) taints every answer (``everything``).

A damaged link (its key known) fails the link answers about either of its notes
(``check_links``); one of unknown key (a line of ``links.jsonl`` whose ``about`` is
damaged too, or fewer lines than the sidecar lists) fails every link answer. A damaged
note keeps its links: whoever reads the note through one meets the damage.

Damage heals when a later record replaces what it was about: a put with a vector or a
delete of a note (which removes its links too), a put of a global, a link or unlink. Compaction is refused while any damage is known: a
snapshot written then would make it permanent (``mcp-memory salvage`` gets the rest out).
"""

from __future__ import annotations

from local_mcp_memory.adapters.faiss_store.format.framing import About, Damaged
from local_mcp_memory.application.errors import StoreCorrupt


class Damage:
    def __init__(self) -> None:
        self.notes: dict[str, str] = {}  # note id -> the damaged file
        self.globals: dict[tuple[str, str], str] = {}  # (project, key) -> the damaged file
        self.spaces: dict[str, str] = {}  # namespace -> the damaged file
        self.links: dict[tuple[str, str, str], str] = {}  # (source, target, relation) -> the damaged file
        self.all_globals: str | None = None  # a global of unknown key is damaged there
        self.all_links: str | None = None  # a link of unknown key is damaged there
        self.everything: str | None = None  # a record of unknown subject is damaged there
        self.reports: list[tuple[str, str]] = []  # (file, what is damaged there), for logs and verify

    def record(self, found: Damaged) -> None:
        """Note a damaged record; the caller takes what it was about out of the state."""
        where = f"byte {found.offset}"
        about = found.about
        if about is None:
            self.everything = self.everything or found.path
            self.reports.append((found.path, f"{where}: a damaged record of unknown subject"))
            return
        for note_id in about.notes:
            self.notes[note_id] = found.path
        for key in about.globals:
            self.globals[key] = found.path
        if about.namespace is not None:
            self.spaces[about.namespace] = found.path
        for key in about.links:
            self.links[key] = found.path
        subject = _subject(about)
        self.reports.append((found.path, f"{where}: a damaged record about {subject}" if subject else f"{where}: a damaged header"))

    def __bool__(self) -> bool:
        return bool(
            self.notes or self.globals or self.spaces or self.links or self.all_globals or self.all_links or self.everything
        )

    def check(self) -> None:
        """``StoreCorrupt`` if a damaged part could touch any answer."""
        if self.everything is not None:
            raise _corrupt(self.everything, "a damaged record of unknown subject")

    def check_note(self, note_id: str) -> None:
        self.check()
        path = self.notes.get(note_id)
        if path is not None:
            raise _corrupt(path, f"note {note_id} is damaged")

    def check_notes(self) -> None:
        """For answers that should hold every note (export): any damaged note fails them."""
        self.check()
        for note_id, path in self.notes.items():
            raise _corrupt(path, f"note {note_id} is damaged")

    def check_space(self, namespace: str) -> None:
        self.check()
        path = self.spaces.get(namespace)
        if path is not None:
            raise _corrupt(path, f"the vectors of namespace {namespace} are damaged")

    def check_global(self, project: str, key: str, found: bool) -> None:
        """A global found is served unless its own record is damaged; one not found is
        reported missing only when no global of unknown key is damaged."""
        self.check()
        path = self.globals.get((project, key)) or (None if found else self.all_globals)
        if path is not None:
            raise _corrupt(path, f"global setting {key} may be damaged")

    def check_globals(self) -> None:
        self.check()
        for path in (self.all_globals, *self.globals.values()):
            if path is not None:
                raise _corrupt(path, "a global setting is damaged")

    def check_links(self, note_id: str) -> None:
        """For the links of one note: a damaged link that may touch it fails them."""
        self.check()
        if self.all_links is not None:
            raise _corrupt(self.all_links, "a link is damaged")
        for key, path in self.links.items():
            if note_id in key[:2]:
                raise _corrupt(path, f"link {key[0]} -{key[2]}-> {key[1]} is damaged")

    def check_all_links(self) -> None:
        """For answers that should hold every link (export): any damaged link fails them."""
        self.check()
        for path in (self.all_links, *self.links.values()):
            if path is not None:
                raise _corrupt(path, "a link is damaged")

    def heal_links(self, note_id: str) -> None:
        """The note was deleted, and every link from or to it with it."""
        if self.links:
            for key in [key for key in self.links if note_id in key[:2]]:
                del self.links[key]

    def summary(self) -> str:
        parts = [f"{len(self.notes)} notes"] if self.notes else []
        parts += [f"{len(self.globals)} global settings"] if self.globals else []
        parts += [f"the vectors of {', '.join(sorted(self.spaces))}"] if self.spaces else []
        parts += [f"{len(self.links)} links"] if self.links else []
        parts += ["global settings of unknown key"] if self.all_globals else []
        parts += ["links of unknown key"] if self.all_links else []
        parts += ["records of unknown subject"] if self.everything else []
        return ", ".join(parts)


def _subject(about: About) -> str:
    parts = [f"note {i}" for i in about.notes[:3]] + [f"global {key}" for _project, key in about.globals]
    parts += [f"{len(about.notes) - 3} more notes"] if len(about.notes) > 3 else []
    parts += [f"link {source} -{relation}-> {target}" for source, target, relation in about.links]
    return ", ".join(parts + ([f"namespace {about.namespace}"] if about.namespace else []))


def _corrupt(path: str, what: str) -> StoreCorrupt:
    return StoreCorrupt(f"{path}: {what}; run `mcp-memory verify`, and `mcp-memory salvage` to get the rest out", path)
