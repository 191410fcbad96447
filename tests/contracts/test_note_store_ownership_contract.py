"""The store contract for notes a markdown sync owns: dedup on write never answers with one
of them (the next sync of its file may delete it), so an agent told its note is stored keeps
it. Passed by every adapter: the in-memory fake, the FAISS store and the PostgreSQL store."""

from __future__ import annotations

import attrs

from local_mcp_memory.application.ports import NoteStore
from local_mcp_memory.domain.note import SyncOrigin
from tests.contracts.test_note_store_contract import (
    NS,
    T0,
    Reopen,
    axis,
    make_note,
)


def test_dedup_never_answers_with_a_note_a_markdown_sync_owns(opened: tuple[NoteStore, Reopen]) -> None:
    store, reopen = opened
    synced = attrs.evolve(make_note("Deploy with make release"), origin=SyncOrigin("/kb", "deploy.md", "ab" * 32))
    store.put_many([(synced, axis(0))], NS)
    agents = make_note("Deploy  with make release")
    assert store.add([(agents, axis(1))], NS, T0) == [agents.id]
    again = reopen()
    assert again.get(agents.id).note.origin is None
    second = make_note("Deploy with make release")
    assert again.add([(second, axis(2))], NS, T0) == [agents.id]  # the agent's own note is a holder

