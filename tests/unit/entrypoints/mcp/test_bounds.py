"""Bounded tool results: whatever the notes hold, a tools/call result (structuredContent and
its text block together) stays within ``TextBounds.result_bytes`` and valid against the
tool's outputSchema; a small result goes out as the method answered it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import msgspec
import pytest

from local_mcp_memory.application.services import Services
from local_mcp_memory.entrypoints.mcp import TextBounds
from tests.unit.entrypoints.mcp.dispatch_client import Client
from tests.unit.entrypoints.mcp.test_protocol import _ok

BUDGET = TextBounds().result_bytes


def result_bytes(result: dict[str, Any]) -> int:
    """UTF-8 bytes of structuredContent's JSON and of every text block."""
    structured = len(msgspec.json.encode(result["structuredContent"])) if "structuredContent" in result else 0
    return structured + sum(len(block["text"].encode()) for block in result["content"])


def huge_note(i: int) -> dict[str, Any]:
    """As large as a note may be, and then some metadata: about 500 KB of JSON."""
    return {
        "groupId": "feature-big",
        "title": f"{i} " + "T" * 990,
        "text": f"note {i} " + "ü" * 99_000,
        "tags": [f"{i}-{j}-" + "t" * 120 for j in range(64)],
        "source": "s" * 1000,
        "metadata": {"blob": "m" * 200_000, "n": i},
    }


@pytest.fixture
def huge(client: Client) -> list[str]:
    return _ok(client.tool("memory_add_notes", notes=[huge_note(i) for i in range(40)]))["ids"]


def checked(client: Client, name: str, **arguments: Any) -> dict[str, Any]:
    """The structuredContent of a call, after checking the size and the schema."""
    result = client.tool(name, **arguments)
    assert result_bytes(result) <= BUDGET, (name, result_bytes(result))
    structured = _ok(result)
    jsonschema.validate(structured, client.tools()[name]["outputSchema"])
    return structured


@pytest.mark.parametrize(
    ("name", "arguments", "key", "advice"),
    [
        ("memory_list_recent", {"limit": 40}, "items", "smaller limit"),
        ("memory_search", {"query": "note", "topK": 40}, "results", "smaller topK"),
    ],
)
def test_a_list_of_huge_notes_leaves_out_its_last_entries_and_says_how_to_get_them(
    client: Client, huge: list[str], name: str, arguments: dict[str, Any], key: str, advice: str
) -> None:
    structured = checked(client, name, **arguments)
    kept = structured[key]
    assert 0 < len(kept) < 40
    assert structured["truncated"]["leftOut"] == {key: 40 - len(kept)}
    assert advice in structured["truncated"]["hint"] and "memory_get" in structured["truncated"]["hint"]
    for note in kept:
        assert f'memory_get with id "{note["id"]}"' in note["text"]


def test_notes_in_lists_have_their_title_source_tags_and_metadata_cut_with_a_pointer(client: Client, huge: list[str]) -> None:
    note = checked(client, "memory_list_recent", limit=1)["items"][0]
    whole = huge_note(huge.index(note["id"]))
    *kept, marker = note["tags"]
    assert kept == whole["tags"][: len(kept)] and sum(map(len, kept)) <= 300 < sum(map(len, whole["tags"][: len(kept) + 1]))
    assert marker.startswith(f"[… {64 - len(kept)} more tags;") and note["id"] in marker
    assert note["title"].startswith(whole["title"][:300]) and not note["title"].startswith(whole["title"][:301])
    assert note["source"].startswith("s" * 300) and not note["source"].startswith("s" * 301)
    assert set(note["metadata"]) == {"_cut"} and note["id"] in note["metadata"]["_cut"]
    assert note["id"] in note["title"] and note["id"] in note["source"]


def test_a_huge_note_read_alone_keeps_what_fits_and_says_what_was_left_out(client: Client, huge: list[str]) -> None:
    note = checked(client, "memory_get", id=huge[0])
    assert note["text"].startswith("note 0 üüü") and "characters cut" in note["text"] and "mcp-memory export" in note["text"]
    left_out = note["truncated"]["leftOut"]
    assert set(left_out) <= {"text", "metadata", "tags"} and "text" in left_out
    assert note["title"] == huge_note(0)["title"]


def test_a_result_in_bounds_is_the_methods_answer_untouched(client: Client, project: Path) -> None:
    added = _ok(client.tool("memory_add_note", groupId="global", title="Lint", text="We lint with ruff.", metadata={"why": "fast"}))
    _ok(client.tool("memory_upsert_global", key="global.project.conventions", value={"commits": "small"}))
    here = {"projectId": str(project)}
    for tool, arguments, raw_params in (
        ("memory_search", {"query": "lint"}, here),
        ("memory_list_recent", {}, here),
        ("memory_get", {"id": added["id"]}, {}),
        ("memory_get_global", {"key": "global.project.conventions"}, here),
        ("memory_stats", {}, here),
    ):
        raw = client.result(tool.replace("_", ".", 1), {**arguments, **raw_params})
        assert checked(client, tool, **arguments) == raw, tool


def test_many_notes_share_half_of_the_structured_budget(client: Client) -> None:
    _ok(client.tool("memory_add_notes", notes=[{"groupId": "task-1", "text": f"{i:03} " + "x" * 996} for i in range(100)]))
    items = checked(client, "memory_list_recent", limit=100)["items"]
    assert items and all(n["text"][4:].startswith("x" * 196) and not n["text"][4:].startswith("x" * 197) for n in items)


def test_the_ids_of_a_large_batch_are_cut_but_every_note_is_stored(services: Services, project: Path) -> None:
    client = Client(services, project, TextBounds(result_bytes=10_000))
    result = client.tool("memory_add_notes", notes=[{"groupId": "task-1", "text": f"n{i}"} for i in range(300)])
    assert result_bytes(result) <= 10_000
    added = _ok(result)
    assert 0 < len(added["ids"]) < 300 and added["truncated"]["leftOut"] == {"ids": 300 - len(added["ids"])}
    assert "memory_list_recent" in added["truncated"]["hint"]
    assert _ok(client.tool("memory_stats"))["notes"] == 300


def test_stats_keep_the_largest_counts_first(client: Client) -> None:
    notes = [{"groupId": "task-1", "text": f"n{i}", "tags": ["common", *(f"{i}-{j}-" + "t" * 100 for j in range(63))]} for i in range(20)]
    _ok(client.tool("memory_add_notes", notes=notes))
    stats = checked(client, "memory_stats")
    assert next(iter(stats["byTag"].items())) == ("common", 20)
    assert stats["truncated"]["leftOut"] == {"byTag": 20 * 63 + 1 - len(stats["byTag"])}
    assert stats["notes"] == 20 and stats["byGroup"] == {"task-1": 20}


def test_a_huge_global_value_keeps_its_first_members(client: Client) -> None:
    value = {f"k{i:04}": "v" * 100 for i in range(2000)}
    _ok(client.tool("memory_upsert_global", key="global.project.conventions", value=value))
    found = checked(client, "memory_get_global", key="global.project.conventions")
    kept = found["value"]
    assert 0 < len(kept) < 2000 and kept == dict(list(value.items())[: len(kept)])
    assert found["truncated"]["leftOut"] == {"value": 2000 - len(kept)} and found["found"] is True


def test_an_error_message_stays_within_the_budget(client: Client) -> None:
    result = client.tool("memory_search", query="x", **{"y" * 200_000: 1})
    assert result["isError"] is True and result_bytes(result) <= BUDGET
    assert result["content"][0]["text"].startswith("Invalid params")


def test_every_output_schema_declares_truncated_as_optional(client: Client) -> None:
    for tool in client.tools().values():
        schema = tool["outputSchema"]
        assert schema["properties"]["truncated"]["required"] == ["leftOut", "hint"], tool["name"]
        assert "truncated" not in schema.get("required", ()), tool["name"]


def test_bounds_refuse_a_budget_too_small_for_a_result() -> None:
    with pytest.raises(ValueError, match="result_bytes must be at least 10000"):
        TextBounds(result_bytes=9_999)
