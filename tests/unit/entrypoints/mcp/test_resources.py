"""Notes and session contexts as MCP resources, on the shared dispatcher with fakes behind it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from local_mcp_memory.adapters.msgspec_errors import cut
from local_mcp_memory.entrypoints.mcp.resources import PAGE_SIZE, ContextTarget, NoteTarget, parse, project_uri
from tests.fakes.manual_clock import ManualClock
from tests.unit.entrypoints.mcp.dispatch_client import Client

MISSING_ID = "00000000-0000-4000-8000-000000000000"


def add(client: Client, text: str, **fields: Any) -> str:
    result = client.tool("memory_add_note", groupId=fields.pop("groupId", "feature-1"), text=text, **fields)
    assert result["isError"] is False, result
    return result["structuredContent"]["id"]


def read(client: Client, uri: str) -> dict[str, Any]:
    contents = client.result("resources/read", {"uri": uri})["contents"]
    assert len(contents) == 1 and contents[0]["uri"] == uri
    return contents[0]


def assert_unknown(client: Client, uri: str) -> dict[str, Any]:
    error = client.error("resources/read", {"uri": uri})
    assert error["code"] == -32002 and error["data"]["uri"] == cut(uri), error
    return error


# ---------------------------------------------------------------- templates


def test_both_templates_are_listed_with_their_mime_types(client: Client) -> None:
    templates = client.result("resources/templates/list")["resourceTemplates"]
    assert {(t["uriTemplate"], t["mimeType"]) for t in templates} == {
        ("memory://notes/{id}", "application/json"),
        ("memory://context/{project}", "text/markdown"),
    }
    assert all(t["name"] and t["description"] for t in templates)


def test_the_template_listing_has_one_page_and_refuses_a_cursor(client: Client) -> None:
    error = client.error("resources/templates/list", {"cursor": "abc"})
    assert error["code"] == -32602 and error["data"]["field"] == "cursor"


# ---------------------------------------------------------------- notes


def test_a_note_reads_as_the_json_memory_get_answers(client: Client) -> None:
    note_id = add(client, "We lint with ruff.", title="Linting", tags=["tooling"], metadata={"k": [1, 2]})
    content = read(client, f"memory://notes/{note_id}")
    assert content["mimeType"] == "application/json"
    assert json.loads(content["text"]) == client.result("memory.get", {"id": note_id})


def test_a_long_note_reads_whole(client: Client) -> None:
    text = "word " * 19_000 + "end"  # beyond what a tool result holds (20,000 characters), within a note's 100,000
    note_id = add(client, text)
    assert json.loads(read(client, f"memory://notes/{note_id}")["text"])["text"] == text


def test_a_note_that_never_existed_is_an_unknown_resource(client: Client) -> None:
    error = assert_unknown(client, f"memory://notes/{MISSING_ID}")
    assert "no note has this id" in error["data"]["reason"]


def test_a_deleted_note_is_an_unknown_resource(client: Client) -> None:
    note_id = add(client, "Short-lived.")
    assert client.tool("memory_delete", id=note_id)["isError"] is False
    assert_unknown(client, f"memory://notes/{note_id}")


def test_an_expired_note_is_an_unknown_resource(client: Client, clock: ManualClock) -> None:
    note_id = add(client, "Valid for an hour.", expiresAt="2024-01-15T11:30:00Z")
    assert read(client, f"memory://notes/{note_id}")
    clock.advance(hours=1)
    assert_unknown(client, f"memory://notes/{note_id}")


@pytest.mark.parametrize(
    "uri",
    [
        "memory://notes/",
        "memory://notes/not-a-uuid",
        "memory://notes/00000000-0000-4000-8000-00000000000Z",
        "memory://notes/" + MISSING_ID.upper(),
        "memory://notes/" + MISSING_ID + "/more",
        "memory://notes/" + MISSING_ID + "?x=1",
        "memory://notes/" + MISSING_ID + "#top",
        "memory://elsewhere/x",
        "memory://",
        "file:///etc/passwd",
        "",
        "memory://context/",
        "memory://context/a/b",
        "memory://context/%zz",
        "memory://context/%2",
        "memory://context/%ff%fe",
        "memory://context/%00",
        "memory://context/%20padded",
        "memory://context/" + "a" * 2000,
    ],
)
def test_a_malformed_or_unknown_uri_is_an_unknown_resource_naming_the_uri(client: Client, uri: str) -> None:
    error = assert_unknown(client, uri)
    assert error["message"].startswith("Resource not found") and error["data"]["reason"]


def test_a_long_unknown_uri_is_told_back_cut(client: Client) -> None:
    error = client.error("resources/read", {"uri": "memory://elsewhere/" + "x" * 100_000})
    assert error["data"]["uri"] == ("memory://elsewhere/" + "x" * 100_000)[:199] + "…"  # not 100,000 characters back


@pytest.mark.parametrize("params", [None, {}, {"uri": 7}, {"uri": None}, ["memory://notes/x"]])
def test_read_params_without_a_string_uri_are_invalid_params(client: Client, params: Any) -> None:
    error = client.error("resources/read", params)
    assert error["code"] == -32602


def test_read_ignores_meta(client: Client) -> None:
    note_id = add(client, "Meta is ignored.")
    uri = f"memory://notes/{note_id}"
    assert client.result("resources/read", {"uri": uri, "_meta": {"progressToken": 1}})["contents"][0]["uri"] == uri


# ---------------------------------------------------------------- session context


def test_a_path_projects_context_reads_with_its_path_percent_encoded(client: Client, project: Path) -> None:
    add(client, "The path project's note.")
    client.tool("memory_upsert_global", key="global.project.conventions", value="Small commits.")
    uri = "memory://context/" + str(project).replace("/", "%2F")
    content = read(client, uri)
    assert content["mimeType"] == "text/markdown"
    expected = client.result("memory.context", {"projectId": str(project)})["text"]
    assert content["text"] == expected
    assert "The path project's note." in expected and "Small commits." in expected


def test_lower_case_hex_and_a_non_canonical_path_name_the_same_context(client: Client, project: Path) -> None:
    add(client, "Found either way.")
    same = str(project / "sub" / "..").replace("/", "%2f")
    assert read(client, "memory://context/" + same)["text"] == read(client, project_uri(str(project)))["text"]


def test_an_opaque_projects_context_reads_with_its_slashes_encoded(client: Client) -> None:
    add(client, "Opaque project note.", projectId="github.com/acme/api")
    text = read(client, "memory://context/github.com%2Facme%2Fapi")["text"]
    assert "github.com/acme/api" in text and "Opaque project note." in text
    assert_unknown(client, "memory://context/github.com/acme/api")


def test_a_non_ascii_project_is_encoded_as_utf_8(client: Client) -> None:
    add(client, "Café notes.", projectId="café-app")
    assert project_uri("café-app") == "memory://context/caf%C3%A9-app"
    assert "Café notes." in read(client, project_uri("café-app"))["text"]


def test_a_project_with_nothing_stored_has_a_context_all_the_same(client: Client) -> None:
    text = read(client, "memory://context/empty-project")["text"]
    assert "empty-project" in text


def test_a_context_shows_no_expired_note(client: Client, clock: ManualClock, project: Path) -> None:
    add(client, "Soon gone.", expiresAt="2024-01-15T11:00:00Z")
    assert "Soon gone." in read(client, project_uri(str(project)))["text"]
    clock.advance(hours=1)
    assert "Soon gone." not in read(client, project_uri(str(project)))["text"]


def test_project_uris_encode_every_reserved_character() -> None:
    assert project_uri("/home/ann/app") == "memory://context/%2Fhome%2Fann%2Fapp"
    assert project_uri("~/app") == "memory://context/~%2Fapp"
    assert project_uri("a b?c#d%e") == "memory://context/a%20b%3Fc%23d%25e"


@given(st.text(min_size=1))
def test_every_project_id_round_trips_through_its_uri(project: str) -> None:
    assert parse(project_uri(project)) == ContextTarget(project)


def test_a_note_uri_parses_to_its_id() -> None:
    assert parse(f"memory://notes/{MISSING_ID}") == NoteTarget(MISSING_ID)


# ---------------------------------------------------------------- resources/list


def test_the_listing_starts_with_the_servers_context_then_recent_notes_newest_first(
    client: Client, clock: ManualClock, project: Path
) -> None:
    first = add(client, "First.", title="The first")
    clock.advance(minutes=1)
    second = add(client, "Second note,   spread\nover lines.")
    add(client, "Elsewhere.", projectId="other-project")
    resources = client.result("resources/list")["resources"]
    assert [r["uri"] for r in resources] == [project_uri(str(project)), f"memory://notes/{second}", f"memory://notes/{first}"]
    assert resources[0]["mimeType"] == "text/markdown" and resources[1]["mimeType"] == "application/json"
    assert resources[1]["title"] == "Second note, spread over lines." and resources[2]["title"] == "The first"
    assert all(r["name"] for r in resources)


def test_every_listed_resource_reads(client: Client) -> None:
    for i in range(3):
        add(client, f"Readable {i}.")
    for resource in client.result("resources/list")["resources"]:
        assert read(client, resource["uri"])["mimeType"] == resource["mimeType"]


def test_the_listing_pages_with_cursors_until_every_entry_was_given(client: Client, clock: ManualClock) -> None:
    ids = []
    for i in range(PAGE_SIZE + 7):
        ids.append(add(client, f"Note number {i}."))
        clock.advance(seconds=1)
    first = client.result("resources/list")
    assert len(first["resources"]) == PAGE_SIZE
    second = client.result("resources/list", {"cursor": first["nextCursor"]})
    assert "nextCursor" not in second
    listed = [r["uri"] for r in first["resources"] + second["resources"]]
    assert listed[1:] == [f"memory://notes/{i}" for i in reversed(ids)]


def test_the_listing_holds_at_most_the_list_recent_limit_of_notes(client: Client) -> None:
    for i in range(205):
        add(client, f"Bulk {i}.")
    uris: list[str] = []
    params: dict[str, Any] = {}
    while True:
        page = client.result("resources/list", params)
        uris += [r["uri"] for r in page["resources"]]
        if "nextCursor" not in page:
            break
        params = {"cursor": page["nextCursor"]}
    assert len(uris) == 1 + 200 and len(set(uris)) == len(uris)


@pytest.mark.parametrize("cursor", ["", "nope", "b2Zmc2V0OjA=", "b2Zmc2V0Oi01", "x" * 10_000, "b2Zmc2V0OjUw\n"])
def test_a_cursor_not_given_out_is_invalid_params(client: Client, cursor: str) -> None:
    error = client.error("resources/list", {"cursor": cursor})
    assert error["code"] == -32602 and error["data"]["field"] == "cursor"


def test_a_cursor_past_the_end_gives_an_empty_last_page(client: Client) -> None:
    cursor = "b2Zmc2V0OjUw"  # offset 50, as a listing of more than 50 entries hands it out
    assert client.result("resources/list", {"cursor": cursor}) == {"resources": []}


def test_an_empty_project_lists_its_context_alone(client: Client, project: Path) -> None:
    assert [r["uri"] for r in client.result("resources/list")["resources"]] == [project_uri(str(project))]


def test_a_listed_notes_title_and_description_are_cut(client: Client) -> None:
    add(client, "Text.", title="T" * 500, tags=[f"tag-{i}-" + "x" * 100 for i in range(40)])
    [note] = client.result("resources/list")["resources"][1:]
    assert note["title"] == "T" * 79 + "…" and note["name"] == note["title"]
    assert len(note["description"]) == 300 and note["description"].startswith("Note in group feature-1, tags tag-0-")


LONG = "x" * 100_000


@pytest.mark.parametrize(
    ("method", "params"),
    [
        (LONG, None),  # an unknown method
        ("tools/call", {"name": LONG, "arguments": {}}),  # an unknown tool
        ("tools/call", {"name": "memory_search", "arguments": {LONG: 1, "query": "q"}}),  # an unknown argument
        ("memory.search", {"projectId": "p", "query": "q", LONG: 1}),  # an unknown field
        ("memory.search", {"projectId": "p", "query": "q", "mode": LONG}),  # a value of no enum
        ("resources/read", {"uri": LONG}),
    ],
)
def test_a_long_name_or_value_sent_is_told_back_cut_whatever_the_error(client: Client, method: str, params: Any) -> None:
    # each was told back whole, some two to four times: 100,000 characters in, 400,000 out
    reply = client.call(method, params)
    assert len(json.dumps(reply)) < 2_000, json.dumps(reply)[:300]
    assert "x" * 150 in json.dumps(reply)  # the start of what was sent, to recognise it by
