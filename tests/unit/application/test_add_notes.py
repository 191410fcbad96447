"""memory.add_notes: many notes in one request, embedded in one call, all or nothing."""

from __future__ import annotations

import json
from typing import Any

import attrs
import msgspec
import pytest

from tests.fakes.memory_store import InMemoryNoteStore
from local_mcp_memory.application.add_notes import AddNotes, add_notes
from local_mcp_memory.application.errors import StoreError
from local_mcp_memory.application.list_recent import ListRecent, list_recent
from local_mcp_memory.application.search import SearchNotes, search
from local_mcp_memory.application.services import Services
from local_mcp_memory.entrypoints.server import build_dispatcher
from local_mcp_memory.entrypoints.methods.add_notes import AddNotesParams
from tests.unit.steps import rpc


def rpc(services: Services, method: str, params: Any) -> dict[str, Any]:
    dispatcher = build_dispatcher(lambda: services)
    reply = dispatcher.handle(json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode())
    assert reply is not None
    return json.loads(reply)


def note(text: str, **fields: Any) -> dict[str, Any]:
    return {"projectId": "proj", "groupId": "feature-1", "text": text, **fields}


def stored_count(services: Services) -> int:
    return len(list_recent(ListRecent("proj", limit=200), services).items)


def test_every_note_is_stored_and_the_ids_come_back_in_order(services: Services) -> None:
    reply = rpc(services, "memory.add_notes", {"notes": [note("first note"), note("second note", tags=["x"])]})

    ids = reply["result"]["ids"]
    assert len(ids) == 2 and reply["result"]["namespace"]
    for note_id, text in zip(ids, ("first note", "second note")):
        assert rpc(services, "memory.get", {"id": note_id})["result"]["text"] == text


def test_stored_notes_are_found_by_search(services: Services) -> None:
    rpc(services, "memory.add_notes", {"notes": [note("webhooks retry with backoff"), note("lunch at noon")]})

    found = search(SearchNotes("proj", "webhooks retry", top_k=1), services)

    assert found.hits[0].stored.note.text == "webhooks retry with backoff"


def test_a_bad_item_is_reported_at_its_index_and_field_and_nothing_is_stored(services: Services) -> None:
    notes = [note("ok one"), note("ok two"), note("ok three"), note("bad group", groupId="not valid")]

    error = rpc(services, "memory.add_notes", {"notes": notes})["error"]

    assert error["code"] == -32602
    assert error["data"]["field"] == "notes[3].groupId"
    assert stored_count(services) == 0


def test_an_unknown_field_in_an_item_is_reported_at_its_index(services: Services) -> None:
    error = rpc(services, "memory.add_notes", {"notes": [note("ok"), note("x", colour="red")]})["error"]

    assert error["code"] == -32602
    assert error["data"]["field"] == "notes[1].colour"


def test_a_blank_text_is_reported_at_its_item_and_nothing_is_stored(services: Services) -> None:
    error = rpc(services, "memory.add_notes", {"notes": [note("ok"), note("   ")]})["error"]

    assert error["code"] == -32602
    assert error["data"]["field"].startswith("notes[1]")
    assert stored_count(services) == 0


@pytest.mark.parametrize("count", [0, AddNotes.MAX_NOTES + 1])
def test_an_empty_or_oversized_batch_is_refused(services: Services, count: int) -> None:
    error = rpc(services, "memory.add_notes", {"notes": [note(f"n{i}") for i in range(count)]})["error"]

    assert error["code"] == -32602
    assert error["data"]["field"] == "notes"


class FailingStore(InMemoryNoteStore):
    """A store whose writes fail (a full disk)."""

    def add(self, *args: Any, **kwargs: Any) -> list:
        raise StoreError("disk full", "/data")


def test_a_store_failure_is_reported_and_stores_none_of_the_batch(services: Services) -> None:
    broken = attrs.evolve(services, store=FailingStore())
    command = rpc_command([note("one"), note("two"), note("three")])

    with pytest.raises(StoreError, match="disk full"):
        add_notes(command, broken)

    assert stored_count(broken) == 0


def rpc_command(notes: list[dict[str, Any]]) -> AddNotes:
    return msgspec.convert({"notes": notes}, AddNotesParams).command()


def test_duplicates_of_the_store_and_of_the_batch_are_listed_and_written_once(services: Services) -> None:
    stored = rpc(services, "memory.add_note", {"projectId": "p", "groupId": "g", "text": "known"})["result"]["id"]
    texts = ["known", "new one", " new  one", "another"]
    result = rpc(services, "memory.add_notes", {"notes": [{"projectId": "p", "groupId": "g", "text": t} for t in texts]})["result"]
    assert result["duplicates"] == [0, 2]
    assert result["ids"][0] == stored and result["ids"][2] == result["ids"][1]
    assert len(set(result["ids"])) == 3 and len(list(services.store.iter_notes())) == 3


def test_an_expiry_in_the_past_is_refused_at_its_entry(services: Services) -> None:
    notes = [{"projectId": "p", "groupId": "g", "text": "a"}, {"projectId": "p", "groupId": "g", "text": "b", "expiresAt": "2001-01-01T00:00:00Z"}]
    reply = rpc(services, "memory.add_notes", {"notes": notes})
    assert reply["error"]["data"]["field"] == "notes[1].expiresAt"
    assert list(services.store.iter_notes()) == []
