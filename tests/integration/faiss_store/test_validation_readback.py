"""What the server accepts reads back the same after a restart and after a compaction; what
it cannot store so is refused with -32602 naming the field's full path, before anything
reaches the disk. Real FAISS store on disk, in-process, through the JSON-RPC dispatcher."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import attrs
import msgspec
import pytest
from hypothesis import HealthCheck, given, settings

from tests.fakes.hashing_embedder_factory import HashingEmbedderFactory
from local_mcp_memory.application.services import Services
from local_mcp_memory.domain.errors import InvalidValue
from local_mcp_memory.domain.identifiers import CanonicalProjectId, GlobalKey, GroupId, Namespace, NoteId
from local_mcp_memory.domain.note import GlobalEntry, Note
from local_mcp_memory.entrypoints.composition.compose import compose
from local_mcp_memory.entrypoints.composition.settings import ServerOptions
from local_mcp_memory.application.errors import ImportFileInvalid
from local_mcp_memory.adapters.export_file import read_export
from local_mcp_memory.entrypoints.cli.lifecycle import export_command
from local_mcp_memory.entrypoints.server import build_dispatcher
from tests.strategies import any_json_values

PROJECT = "validation-project"


class Server:
    """The services of one server process on ``data_dir``; ``restart`` is a new process."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.services = self._build()

    def _build(self) -> Services:
        return compose(
            ServerOptions.resolve({}, self.data_dir.with_suffix(".json"), self.data_dir),
            embedders=HashingEmbedderFactory(),
        )

    def rpc(self, method: str, params: Any) -> dict[str, Any]:
        message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        reply = build_dispatcher(lambda: self.services).handle(msgspec.json.encode(message))
        assert reply is not None
        return json.loads(reply)

    def result(self, method: str, params: Any) -> Any:
        reply = self.rpc(method, params)
        assert "result" in reply, reply
        return reply["result"]

    def restart(self) -> None:
        self.services.store.close()
        self.services = self._build()

    def compact(self) -> None:
        self.services.store.compact()

    def close(self) -> None:
        self.services.store.close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    server = Server(tmp_path / "data")
    yield server
    server.close()


def nested(depth: int) -> dict[str, Any]:
    """An object ``depth`` levels deep: {"a": {"a": ... {}}}."""
    value: dict[str, Any] = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


def add(server: Server, **fields: Any) -> dict[str, Any]:
    return server.rpc("memory.add_note", {"projectId": PROJECT, "groupId": "g", "text": "a note", **fields})


def refusal(reply: dict[str, Any]) -> tuple[int, str | None]:
    assert "error" in reply, reply
    return reply["error"]["code"], reply["error"].get("data", {}).get("field")


def read_back_everywhere(server: Server, note_id: str) -> list[dict[str, Any]]:
    """The note as get answers it now, after a restart and after a compaction and restart."""
    seen = [server.result("memory.get", {"id": note_id})]
    server.restart()
    seen.append(server.result("memory.get", {"id": note_id}))
    server.compact()
    server.restart()
    seen.append(server.result("memory.get", {"id": note_id}))
    return seen


# -- dates ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "written, stored",
    [
        ("0999-12-31T00:00:00Z", "0999-12-31T00:00:00Z"),
        ("0001-01-01T00:00:00Z", "0001-01-01T00:00:00Z"),
        ("0001-01-01T00:30:00-00:30", "0001-01-01T01:00:00Z"),
        ("9999-12-31T23:59:59.999999Z", "9999-12-31T23:59:59.999999Z"),
        ("0050-06-01", "0050-06-01T00:00:00Z"),
    ],
)
def test_a_date_of_any_year_1_to_9999_is_stored_and_reads_back(server: Server, written: str, stored: str) -> None:
    note_id = add(server, createdAt=written)["result"]["id"]

    for note in read_back_everywhere(server, note_id):
        assert note["createdAt"] == stored
    listed = server.result("memory.list_recent", {"projectId": PROJECT})["items"]
    assert [n["createdAt"] for n in listed] == [stored]


def test_a_store_holding_an_early_date_still_exports(server: Server, tmp_path: Path) -> None:
    add(server, createdAt="0999-12-31T00:00:00Z")
    out = tmp_path / "export.jsonl"

    assert export_command(server.services, str(out), project=None, vectors=True, err=io.StringIO()) == 0
    exported = read_export(out.read_bytes().splitlines())
    assert [n.note.created_at.year for n in exported.notes] == [999]


@pytest.mark.parametrize("written", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00", "0000-01-01T00:00:00Z"])
def test_a_date_outside_years_1_to_9999_in_utc_is_refused_at_its_field(server: Server, written: str) -> None:
    assert refusal(add(server, createdAt=written)) == (-32602, "createdAt")
    reply = server.rpc("memory.upsert_global", {"projectId": PROJECT, "key": "global.k", "value": 1, "updatedAt": written})
    assert refusal(reply) == (-32602, "updatedAt")
    search = {"projectId": PROJECT, "query": "q", "since": written}
    assert refusal(server.rpc("memory.search", search)) == (-32602, "since")
    assert server.result("memory.list_recent", {"projectId": PROJECT})["items"] == []


# -- nesting -------------------------------------------------------------------------


def test_metadata_nested_64_levels_reads_back_after_restart_and_compaction(server: Server) -> None:
    metadata = nested(64)
    note_id = add(server, metadata=metadata)["result"]["id"]

    for note in read_back_everywhere(server, note_id):
        assert note["metadata"] == metadata


@pytest.mark.parametrize("depth", [65, 200])
def test_metadata_nested_deeper_than_64_levels_is_refused_and_nothing_is_written(server: Server, depth: int) -> None:
    assert refusal(add(server, metadata=nested(depth))) == (-32602, "metadata")

    server.restart()
    assert server.result("memory.list_recent", {"projectId": PROJECT})["items"] == []


def test_metadata_nested_a_thousand_levels_is_an_error_not_a_crash(server: Server) -> None:
    depth = 1000
    metadata = b'{"a":' * (depth - 1) + b"{}" + b"}" * (depth - 1)
    message = b'{"jsonrpc":"2.0","id":1,"method":"memory.add_note","params":{"projectId":"%s","groupId":"g","text":"t","metadata":%s}}'
    reply = json.loads(build_dispatcher(lambda: server.services).handle(message % (PROJECT.encode(), metadata)) or b"{}")

    assert reply["error"]["code"] in (-32700, -32600, -32602)
    server.restart()
    assert server.result("memory.list_recent", {"projectId": PROJECT})["items"] == []


def test_a_global_value_nested_too_deep_is_refused_and_one_at_the_limit_reads_back(server: Server) -> None:
    deep = {"projectId": PROJECT, "key": "global.deep", "value": [nested(64)]}
    assert refusal(server.rpc("memory.upsert_global", deep)) == (-32602, "value")

    deep["value"] = nested(64)
    server.result("memory.upsert_global", deep)
    server.restart()
    server.compact()
    server.restart()
    assert server.result("memory.get_global", {"projectId": PROJECT, "key": "global.deep"})["value"] == nested(64)


# -- field paths ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "fields, field",
    [
        ({"text": "   "}, "text"),
        ({"title": "t" * 1001}, "title"),
        ({"source": "s" * 1001}, "source"),
        ({"text": "x" * 100_001}, "text"),
    ],
)
def test_a_note_rule_is_reported_at_its_field(server: Server, fields: dict[str, Any], field: str) -> None:
    assert refusal(add(server, **fields)) == (-32602, field)


def test_a_batch_names_the_entry_and_its_field(server: Server) -> None:
    notes = [{"projectId": PROJECT, "groupId": "g", "text": f"note {i}"} for i in range(4)]
    cases = [
        (2, {"metadata": nested(65)}, "notes[2].metadata"),
        (1, {"createdAt": "0001-01-01T00:00:00+05:00"}, "notes[1].createdAt"),
        (3, {"text": " "}, "notes[3].text"),
        (0, {"groupId": "a b"}, "notes[0].groupId"),
        (2, {"tags": ["ok", 7]}, "notes[2].tags[1]"),
    ]
    for index, bad, field in cases:
        batch = [dict(n) for n in notes]
        batch[index].update(bad)
        assert refusal(server.rpc("memory.add_notes", {"notes": batch})) == (-32602, field)
    assert server.result("memory.list_recent", {"projectId": PROJECT})["items"] == []


def test_a_patch_names_the_field_inside_it(server: Server) -> None:
    note_id = add(server)["result"]["id"]
    for patch, field in (({"text": ""}, "patch.text"), ({"metadata": nested(70)}, "patch.metadata"), ({"title": "t" * 1001}, "patch.title")):
        assert refusal(server.rpc("memory.update", {"id": note_id, "patch": patch})) == (-32602, field)

    server.restart()
    assert server.result("memory.get", {"id": note_id})["text"] == "a note"


# -- import --------------------------------------------------------------------------


def export_lines(*notes: dict[str, Any]) -> list[bytes]:
    header = {"format": "mcp-memory-export", "version": 1, "exportedAt": "2024-01-15T10:30:00Z", "notes": len(notes), "globals": 0}
    return [msgspec.json.encode(header)] + [msgspec.json.encode(n) for n in notes]


def note_line(i: int, **fields: Any) -> dict[str, Any]:
    return {
        "type": "note",
        "id": f"00000000-0000-4000-8000-{i:012d}",
        "projectId": PROJECT,
        "groupId": "g",
        "text": f"imported {i}",
        "createdAt": "2024-01-15T10:30:00Z",
        **fields,
    }


@pytest.mark.parametrize(
    "bad, field",
    [
        ({"metadata": nested(65)}, "metadata"),
        ({"createdAt": "0001-01-01T00:00:00+01:00"}, "createdAt"),
        ({"text": " "}, "text"),
    ],
)
def test_an_import_line_that_would_not_read_back_is_refused_with_its_line_and_field(bad: dict[str, Any], field: str) -> None:
    lines = export_lines(note_line(1), note_line(2, **bad), note_line(3))

    with pytest.raises(ImportFileInvalid) as caught:
        read_export(lines)
    assert (caught.value.line, caught.value.field) == (3, field)


@pytest.mark.parametrize("raw", [b'{"type":"note","text":"\xc3"}', b"[" * 5000 + b"]" * 5000, b'{"type":"note","n":1e400}'])
def test_an_import_line_of_bad_bytes_is_refused_with_its_line(raw: bytes) -> None:
    lines = export_lines(note_line(1)) + [raw]

    with pytest.raises(ImportFileInvalid) as caught:
        read_export(lines)
    assert caught.value.line == 3


# -- any accepted JSON value ---------------------------------------------------------


@pytest.mark.slow  # a sweep: forty values, each through a restart and a compaction
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=any_json_values)
def test_any_json_value_accepted_reads_back_equal_after_restart_and_compaction(tmp_path: Path, value: Any) -> None:
    server = Server(tmp_path / f"data-{abs(hash(msgspec.json.encode(value)))}")
    try:
        reply = add(server, metadata={"v": value})
        if "error" in reply:  # refused: then it is a rule, named at the field
            assert refusal(reply) == (-32602, "metadata")
            return
        server.result("memory.upsert_global", {"projectId": PROJECT, "key": "global.v", "value": value})
        for note in read_back_everywhere(server, reply["result"]["id"]):
            assert note["metadata"] == {"v": value}
        assert server.result("memory.get_global", {"projectId": PROJECT, "key": "global.v"})["value"] == value
    finally:
        server.close()


# -- the store reads each record back before writing it ------------------------------


def test_the_store_refuses_a_note_that_would_not_read_back_and_writes_nothing(server: Server) -> None:
    store = server.services.store
    namespace = Namespace.parse("hash:test:4")
    good = Note(NoteId.new(), CanonicalProjectId(PROJECT), GroupId("g"), "fine", datetime(2024, 1, 15, tzinfo=timezone.utc))
    bad = attrs.evolve(good, id=NoteId.new(), text="half a pair \ud800")

    with pytest.raises(InvalidValue) as caught:
        store.put(bad, namespace, [1.0, 0.0, 0.0, 0.0])
    assert caught.value.field == "text"
    with pytest.raises(InvalidValue) as caught:
        store.put_many([(good, [1.0, 0.0, 0.0, 0.0]), (bad, [0.0, 1.0, 0.0, 0.0])], namespace)
    assert caught.value.field == "[1].text"
    with pytest.raises(InvalidValue) as caught:
        store.put_global(GlobalEntry(CanonicalProjectId(PROJECT), GlobalKey("global.k"), ["\udfff"], good.created_at))
    assert caught.value.field == "value"

    server.restart()
    assert list(server.services.store.iter_notes()) == []
    assert list(server.services.store.iter_globals()) == []
