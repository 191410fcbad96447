"""A small store written the way a user's grows, and what it must read back: notes over
two projects with tags and metadata, two of them expiring (far in the future), global
settings, links (one removed, one going with its deleted note), an update and a delete, a
compaction (so there is a snapshot), then more journal writes after it."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import attrs
import numpy as np

from local_mcp_memory.adapters.faiss_store import FaissNoteStore
from local_mcp_memory.domain.identifiers import CanonicalProjectId, GlobalKey, GroupId, Namespace, NoteId
from local_mcp_memory.domain.link import Link, LinkKey, Relation
from local_mcp_memory.domain.note import GlobalEntry, Note, Tags

NS = Namespace("local", "damage-model", 8)
PROJECTS = (CanonicalProjectId("/tmp/damage/app"), CanonicalProjectId("api"))
T0 = datetime(2024, 5, 1, tzinfo=timezone.utc)
FAR = datetime(2999, 1, 1, tzinfo=timezone.utc)


@attrs.define
class Written:
    notes: dict[NoteId, Note] = attrs.Factory(dict)
    vectors: dict[NoteId, np.ndarray] = attrs.Factory(dict)
    globals: dict[tuple[CanonicalProjectId, GlobalKey], GlobalEntry] = attrs.Factory(dict)
    links: dict[LinkKey, Link] = attrs.Factory(dict)  # in write order

    def links_of(self, note_id: NoteId) -> list[Link]:
        """What ``links`` must answer: newest first, ties last written first."""
        touching = [link for link in self.links.values() if link.touches(note_id)]
        return sorted(reversed(touching), key=lambda link: link.created_at, reverse=True)

    def all_links(self) -> list[Link]:
        """What ``iter_links`` must answer: oldest first, ties first written first."""
        return sorted(self.links.values(), key=lambda link: link.created_at)


def vector(index: int) -> np.ndarray:
    v = np.random.default_rng(index).normal(size=NS.dim).astype(np.float32)
    return v / np.linalg.norm(v)


def note(index: int, text: str | None = None) -> Note:
    return Note(
        id=NoteId(str(uuid.uuid5(uuid.NAMESPACE_URL, f"damage/{index}"))),
        project_id=PROJECTS[index % 2],
        group_id=GroupId(f"feature-{index % 3}"),
        text=text or f"note {index} about caching and retries, part {index}",
        created_at=T0 + timedelta(minutes=index),
        title=f"title {index}" if index % 2 else None,
        tags=Tags(("decision", f"t{index % 2}")),
        source="cli" if index % 3 == 0 else None,
        metadata={"index": index, "nested": {"id": f"x{index}", "list": [1, 2.5, None]}} if index % 2 else None,
        expires_at=FAR + timedelta(days=index) if index in (5, 8) else None,
    )


def link(source: int, target: int, relation: str, hours: int) -> Link:
    return Link(LinkKey(note(source).id, note(target).id, Relation(relation)), T0 + timedelta(hours=hours))


def setting(project: CanonicalProjectId, key: str, value: object, day: int) -> GlobalEntry:
    return GlobalEntry(project, GlobalKey(key), value, T0 + timedelta(days=day))


def build(data: Path) -> Written:
    written = Written()
    store = FaissNoteStore(data)

    def put(n: Note, index: int) -> None:
        store.put(n, NS, vector(index))
        written.notes[n.id], written.vectors[n.id] = n, vector(index)

    def put_global(entry: GlobalEntry) -> None:
        store.put_global(entry)
        written.globals[(entry.project_id, entry.key)] = entry

    def add_link(made: Link) -> None:
        assert store.link(made)
        written.links.setdefault(made.key, made)

    try:
        for index in range(6):
            put(note(index), index)
        put_global(setting(PROJECTS[0], "global.project.conventions", "small PRs", 1))
        put_global(setting(PROJECTS[1], "global.memory.groupDefaults", {"featurePrefix": "feature-"}, 2))
        add_link(link(0, 4, "relates_to", 1))
        add_link(link(1, 3, "supersedes", 2))
        add_link(link(5, 1, "relates_to", 3))
        add_link(link(3, 5, "relates_to", 3))
        add_link(link(2, 0, "relates_to", 4))  # goes with note 2
        store.unlink(link(3, 5, "relates_to", 0).key)
        del written.links[link(3, 5, "relates_to", 0).key]
        put(note(1, "note 1, updated: caching moved to the edge"), 101)
        store.delete(note(2).id)
        del written.notes[note(2).id], written.vectors[note(2).id], written.links[link(2, 0, "relates_to", 0).key]
        store.compact()
        for index in range(6, 9):
            put(note(index), index)
        put(note(3, "note 3, updated after the snapshot"), 103)
        add_link(link(6, 0, "relates_to", 5))
        add_link(link(0, 4, "supersedes", 5))  # ties with the one before: written last, listed first
        add_link(link(7, 5, "supersedes", 6))
        put_global(setting(PROJECTS[0], "global.memory.embedder.model", "nomic-embed-text", 3))
    finally:
        store.close()
    (data / "LOCK").unlink()
    return written
