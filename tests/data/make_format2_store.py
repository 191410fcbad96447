"""Writes ``tests/data/format2_store/``: a small store in format 2, the format before
checksummed manifests and the globals file, made by the code of that format (commit
1c345bc). Kept so that every later version is tested reading it.

    python tests/data/make_format2_store.py   (from a checkout of that commit)
"""

from __future__ import annotations

import shutil
import sys
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from local_mcp_memory.adapters.faiss_store import FaissNoteStore  # noqa: E402
from local_mcp_memory.domain.identifiers import CanonicalProjectId, GlobalKey, GroupId, Namespace, NoteId  # noqa: E402
from local_mcp_memory.domain.note import GlobalEntry, Note, Tags  # noqa: E402

NS = Namespace("local", "fixture", 4)
OUT = Path(__file__).with_name("format2_store")


def note(i: int, project: str, text: str, **extra) -> Note:
    return Note(
        id=NoteId(f"00000000-0000-4000-8000-{i:012d}"),
        project_id=CanonicalProjectId(project),
        group_id=GroupId(extra.pop("group", "feature-1")),
        text=text,
        created_at=datetime(2024, 1, 15, 10, 30, i, tzinfo=timezone.utc),
        **extra,
    )


def main() -> None:
    shutil.rmtree(OUT, ignore_errors=True)
    store = FaissNoteStore(OUT)
    store.put(note(1, "/home/me/app", "first decision", tags=Tags(("db", "auth"))), NS, [1.0, 0.0, 0.0, 0.0])
    store.put(note(2, "/home/me/app", "a convention", title="Style", metadata={"k": [1, 2]}), NS, [0.0, 1.0, 0.0, 0.0])
    store.put(note(3, "other", "gone soon", group="task-1"), NS, [0.0, 0.0, 1.0, 0.0])
    store.put_global(GlobalEntry(CanonicalProjectId("/home/me/app"), GlobalKey("global.project.conventions"), "small PRs", datetime(2024, 1, 15, tzinfo=timezone.utc)))
    store.compact()
    store.put(note(2, "/home/me/app", "a convention, updated", title="Style", metadata={"k": [1, 2]}), NS, [0.0, 0.6, 0.8, 0.0])
    store.delete(NoteId("00000000-0000-4000-8000-000000000003"))
    store.put(note(4, "other", "after the snapshot", source="cli"), NS, [0.0, 0.0, 0.0, 1.0])
    store.put_global(GlobalEntry(CanonicalProjectId("other"), GlobalKey("global.memory.groupDefaults"), {"featurePrefix": "feature-"}, datetime(2024, 1, 16, tzinfo=timezone.utc)))
    store.close()
    (OUT / "LOCK").unlink()


if __name__ == "__main__":
    main()
