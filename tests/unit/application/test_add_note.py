"""memory.add_note's use case: every field kept, the dimension learned once, an explicit time kept."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from local_mcp_memory.application.errors import DimensionChanged
from local_mcp_memory.application.get_note import GetNote, get_note
from local_mcp_memory.application.services import Services
from local_mcp_memory.domain.note import Tags
from tests.fakes.manual_clock import ManualClock
from tests.fakes.memory_config import InMemoryConfigRepository
from tests.unit.steps import add, rpc


def test_add_then_get_returns_every_field(services: Services, clock: ManualClock) -> None:
    note_id = add(services, "Use UTC everywhere", title="Time", tags=Tags(("conv",)), source="chat", metadata={"conversationId": "c1"})
    stored = get_note(GetNote(note_id), services)
    note = stored.note
    assert (note.text, note.title, note.tags.values, note.source, note.metadata) == (
        "Use UTC everywhere", "Time", ("conv",), "chat", {"conversationId": "c1"}
    )
    assert note.created_at == clock.now()
    assert str(stored.namespace) == "local:all-MiniLM-L6-v2:64"


def test_the_dimension_is_learned_once_and_recorded(services: Services, config: InMemoryConfigRepository) -> None:
    add(services, "first")
    add(services, "second")
    assert config.settings.embedder.dims == {"local:all-MiniLM-L6-v2": 64}
    assert config.saves == 1


def test_a_recorded_dimension_that_changes_is_refused_and_nothing_is_written(
    services: Services, config: InMemoryConfigRepository
) -> None:
    import attrs

    config.settings = attrs.evolve(config.settings, embedder=attrs.evolve(config.settings.embedder, dims={"local:all-MiniLM-L6-v2": 384}))
    fresh = attrs.evolve(services, embedding=type(services.embedding)(services.embedding._factory, config))
    with pytest.raises(DimensionChanged):
        add(fresh, "never stored")
    assert list(fresh.store.iter_notes()) == []


def test_an_explicit_created_at_is_kept(services: Services) -> None:
    moment = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
    note_id = add(services, "from the past", created_at=moment)
    assert get_note(GetNote(note_id), services).note.created_at == moment


# -- dedup on write and expiry (SPEC §11) ---------------------------------------------------


def test_the_same_text_again_answers_the_stored_id_with_duplicate_and_writes_nothing(services: Services) -> None:
    first = rpc(services, "memory.add_note", {"projectId": "proj", "groupId": "g", "text": "Use  UTC\neverywhere ", "title": "a"})
    again = rpc(services, "memory.add_note", {"projectId": "proj", "groupId": "g", "text": "Use UTC everywhere", "title": "b"})
    assert "duplicate" not in first["result"]
    assert again["result"] == {"id": first["result"]["id"], "namespace": first["result"]["namespace"], "duplicate": True, "possiblySupersedes": []}
    assert rpc(services, "memory.get", {"id": first["result"]["id"]})["result"]["title"] == "a"  # left as it was
    assert len(list(services.store.iter_notes())) == 1
    assert rpc(services, "memory.stats", {})["result"]["duplicatesRefused"] == 1


def test_another_group_or_case_is_a_new_note(services: Services) -> None:
    a = add(services, "Use UTC everywhere", group="g")
    assert add(services, "Use UTC everywhere", group="h") != a
    assert add(services, "use utc everywhere", group="g") != a


def test_an_expiry_in_the_past_or_now_is_refused_at_expires_at(services: Services, clock: ManualClock) -> None:
    for moment in ("2024-01-15T10:30:00Z", "2000-01-01T00:00:00Z"):
        reply = rpc(services, "memory.add_note", {"projectId": "p", "groupId": "g", "text": "t", "expiresAt": moment})
        assert reply["error"]["code"] == -32602 and reply["error"]["data"]["field"] == "expiresAt"
    assert list(services.store.iter_notes()) == []


def test_an_expired_note_is_gone_from_every_answer(services: Services, clock: ManualClock) -> None:
    params = {"projectId": "p", "groupId": "g", "text": "the freeze lasts until friday", "expiresAt": "2024-01-15T11:30:00Z"}
    note_id = rpc(services, "memory.add_note", params)["result"]["id"]
    assert rpc(services, "memory.get", {"id": note_id})["result"]["expiresAt"] == "2024-01-15T11:30:00Z"
    clock.advance(hours=1)
    for method, extra in (("memory.get", {"id": note_id}), ("memory.update", {"id": note_id, "patch": {"title": "x"}}), ("memory.delete", {"id": note_id})):
        assert rpc(services, method, extra)["error"]["code"] == -32004, method
    assert rpc(services, "memory.search", {"projectId": "p", "query": "freeze friday"})["result"]["results"] == []
    assert rpc(services, "memory.list_recent", {"projectId": "p"})["result"]["items"] == []
    again = rpc(services, "memory.add_note", {"projectId": "p", "groupId": "g", "text": "the freeze lasts until friday"})
    assert again["result"]["id"] != note_id and "duplicate" not in again["result"]  # expired notes do not count


def test_update_sets_and_clears_the_expiry_and_refuses_a_past_one(services: Services, clock: ManualClock) -> None:
    note_id = add(services, "temporary workaround", project="p").value
    assert rpc(services, "memory.update", {"id": note_id, "patch": {"expiresAt": "2030-01-01T00:00:00Z"}})["result"] == {"ok": True}
    assert rpc(services, "memory.get", {"id": note_id})["result"]["expiresAt"] == "2030-01-01T00:00:00Z"
    past = rpc(services, "memory.update", {"id": note_id, "patch": {"expiresAt": "2020-01-01T00:00:00Z"}})
    assert past["error"]["code"] == -32602 and past["error"]["data"]["field"] == "patch.expiresAt"
    assert rpc(services, "memory.update", {"id": note_id, "patch": {"expiresAt": None}})["result"] == {"ok": True}
    assert rpc(services, "memory.get", {"id": note_id})["result"]["expiresAt"] is None
