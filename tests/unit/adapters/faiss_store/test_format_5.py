"""Format 5 (SPEC §13): note fields may carry importance and the expiry's span; a format 4
store is read as it is and upgraded by its first writer, its links hiding superseded notes."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import attrs

from local_mcp_memory.adapters.faiss_store import FaissNoteStore
from local_mcp_memory.adapters.faiss_store.format.records import FORMAT, decode_sidecar
from local_mcp_memory.adapters.faiss_store.persistence.snapshot import load_snapshot
from local_mcp_memory.domain.link import SUPERSEDES, Link, LinkKey
from local_mcp_memory.domain.note import NoteFilter
from tests.unit.adapters.faiss_store.stores import NS, PROJECT, T0, as_format_4, note, snapshot_of, vector


def test_a_format_4_store_is_read_with_default_importance_and_upgraded_by_its_first_writer(tmp_path: Path) -> None:
    data = tmp_path / "data"
    store = FaissNoteStore(data)
    old, new = note(0, "CI runs on Jenkins"), note(1, "CI runs on GitHub Actions")
    store.put_many([(old, vector(0)), (new, vector(1))], NS)
    store.link(Link(LinkKey(new.id, old.id, SUPERSEDES), T0))
    store.compact()
    store.close()
    as_format_4(data)
    snapshot = snapshot_of(data)
    state = load_snapshot(data, snapshot.name, int(snapshot.name.split("-")[1]), None)
    assert [state.get(n.id.value).note.importance for n in (old, new)] == [0.5, 0.5]
    store = FaissNoteStore(data)  # a writer upgrades it
    try:
        assert snapshot_of(data) != snapshot
        assert decode_sidecar((snapshot_of(data) / "sidecar.json").read_bytes(), "sidecar.json").format == FORMAT
        assert [s.note for s in store.list_recent(NoteFilter(PROJECT, now=T0), 10)] == [new]
        weighty = attrs.evolve(new, importance=0.9).with_expiry(new.created_at + timedelta(days=2))
        store.put(weighty, NS, None)
    finally:
        store.close()
    reopened = FaissNoteStore(data)
    try:
        assert reopened.get(new.id).note == weighty and weighty.expiry_span == timedelta(days=2)
    finally:
        reopened.close()
