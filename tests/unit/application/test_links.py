"""memory.link, memory.unlink and memory.related (SPEC §11), through the dispatcher on the fake store."""

from __future__ import annotations

import uuid

import pytest

from local_mcp_memory.application.services import Services
from tests.fakes.manual_clock import ManualClock
from tests.unit.steps import add, rpc


def ok(services: Services, method: str, **params: object) -> dict:
    reply = rpc(services, method, params)
    assert "result" in reply, reply
    return reply["result"]


def error(services: Services, method: str, **params: object) -> dict:
    reply = rpc(services, method, params)
    assert "error" in reply, reply
    return reply["error"]


@pytest.fixture
def three(services: Services) -> tuple[str, str, str]:
    return tuple(add(services, text, project="p").value for text in ("old decision", "new decision", "incident"))


def test_related_lists_both_directions_newest_link_first(services: Services, clock: ManualClock, three) -> None:
    old, new, incident = three
    assert ok(services, "memory.link", fromId=new, toId=old, relation="supersedes") == {"ok": True}
    clock.advance(minutes=1)
    ok(services, "memory.link", fromId=incident, toId=new, relation="relates_to")
    items = ok(services, "memory.related", id=new)["items"]
    assert [(i["id"], i["relation"], i["direction"]) for i in items] == [(incident, "relates_to", "in"), (old, "supersedes", "out")]
    assert items[0]["note"]["text"] == "incident" and items[0]["note"]["id"] == incident
    assert [i["id"] for i in ok(services, "memory.related", id=new, relation="supersedes")["items"]] == [old]
    assert ok(services, "memory.related", id=old)["items"][0]["direction"] == "in"


def test_linking_twice_is_one_link(services: Services, three) -> None:
    old, new, _ = three
    for _ in range(3):
        ok(services, "memory.link", fromId=new, toId=old, relation="supersedes")
    assert len(ok(services, "memory.related", id=new)["items"]) == 1
    assert ok(services, "memory.stats", projectId="p")["links"] == 1


def test_unlink_says_whether_it_removed_a_link(services: Services, three) -> None:
    old, new, _ = three
    ok(services, "memory.link", fromId=new, toId=old, relation="supersedes")
    assert ok(services, "memory.unlink", fromId=new, toId=old, relation="supersedes") == {"ok": True, "removed": True}
    assert ok(services, "memory.unlink", fromId=new, toId=old, relation="supersedes") == {"ok": True, "removed": False}
    assert ok(services, "memory.related", id=new)["items"] == []


@pytest.mark.parametrize("relation", ["Supersedes", "", "a" * 33, "relates-to", "é", 7, None])
def test_a_bad_relation_is_refused_at_relation(services: Services, three, relation) -> None:
    old, new, _ = three
    for method in ("memory.link", "memory.unlink"):
        err = error(services, method, fromId=new, toId=old, relation=relation)
        assert err["code"] == -32602 and err["data"]["field"] == "relation", method
    assert error(services, "memory.related", id=new, relation=relation if relation is not None else 1)["data"]["field"] == "relation"


def test_missing_or_expired_notes_are_not_found_naming_the_id(services: Services, clock: ManualClock, three) -> None:
    old, _, _ = three
    ghost = str(uuid.uuid4())
    err = error(services, "memory.link", fromId=ghost, toId=old, relation="relates_to")
    assert err["code"] == -32004 and ghost in err["message"]
    err = error(services, "memory.link", fromId=old, toId=ghost, relation="relates_to")
    assert err["code"] == -32004 and ghost in err["message"]
    assert error(services, "memory.related", id=ghost)["code"] == -32004
    brief = rpc(services, "memory.add_note", {"projectId": "p", "groupId": "g", "text": "brief", "expiresAt": "2024-01-15T11:00:00Z"})["result"]["id"]
    ok(services, "memory.link", fromId=old, toId=brief, relation="relates_to")
    clock.advance(hours=1)
    assert ok(services, "memory.related", id=old)["items"] == []  # links of an expired note are hidden
    assert error(services, "memory.link", fromId=old, toId=brief, relation="relates_to")["code"] == -32004
    assert error(services, "memory.related", id=brief)["code"] == -32004


def test_a_note_cannot_link_to_itself_or_to_another_project(services: Services, three) -> None:
    old, _, _ = three
    elsewhere = add(services, "elsewhere", project="q").value
    for to in (old, elsewhere):
        err = error(services, "memory.link", fromId=old, toId=to, relation="relates_to")
        assert err["code"] == -32602 and err["data"]["field"] == "toId"
    assert ok(services, "memory.related", id=old)["items"] == []


def test_ids_that_are_not_uuids_are_refused_at_their_field(services: Services, three) -> None:
    old, _, _ = three
    assert error(services, "memory.link", fromId="nope", toId=old, relation="x")["data"]["field"] == "fromId"
    assert error(services, "memory.link", fromId=old, toId="nope", relation="x")["data"]["field"] == "toId"


def test_deleting_a_note_removes_its_links(services: Services, three) -> None:
    old, new, incident = three
    ok(services, "memory.link", fromId=new, toId=old, relation="supersedes")
    ok(services, "memory.link", fromId=incident, toId=old, relation="relates_to")
    ok(services, "memory.delete", id=old)
    assert ok(services, "memory.related", id=new)["items"] == [] and ok(services, "memory.related", id=incident)["items"] == []
    assert ok(services, "memory.stats", projectId="p")["links"] == 0
