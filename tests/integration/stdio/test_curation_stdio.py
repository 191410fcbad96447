"""Curation (SPEC §11) through real ``mcp-memory serve`` processes on each real store, with
restarts between the steps: dedup on write, expiry in real time, links, and an export /
import round trip that keeps links and expiry. No note is lost or changed by dedup or by
the expiry of other notes."""

from __future__ import annotations

import json
import subprocess
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from tests.integration.serve import MCP_MEMORY, StdioServer, server_env
from tests.postgres_server import postgres, postgres_url  # noqa: F401  (fixtures)

PROJECT = "curation-project"


@pytest.fixture(params=["faiss", "postgresql"])
def store_args(request: pytest.FixtureRequest) -> tuple[str, ...]:
    if request.param == "postgresql":
        return ("--store", request.getfixturevalue("postgres_url"))
    return ()


def rfc3339(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def add(server: StdioServer, text: str, group: str = "g", **fields: object) -> dict:
    return server.result("memory.add_note", {"projectId": PROJECT, "groupId": group, "text": text, **fields})


def recent(server: StdioServer) -> list[dict]:
    return server.result("memory.list_recent", {"projectId": PROJECT, "limit": 100})["items"]


def test_dedup_holds_across_restarts_and_between_two_servers(tmp_path: Path, store_args: tuple[str, ...]) -> None:
    with StdioServer(tmp_path, *store_args) as one, StdioServer(tmp_path, *store_args) as two:
        first = add(one, "Releases are cut from main on Tuesdays.", title="Releases", tags=["process"])
        again = add(two, "  Releases are cut from main\non Tuesdays. ", title="changed", tags=["other"])
        assert again == {"id": first["id"], "namespace": first["namespace"], "duplicate": True, "possiblySupersedes": []}
        batch = two.result(
            "memory.add_notes",
            {"notes": [{"projectId": PROJECT, "groupId": "g", "text": t} for t in ("new A", "Releases are cut from main on Tuesdays.", "new A")]},
        )
        assert batch["duplicates"] == [1, 2] and batch["ids"][1] == first["id"] and batch["ids"][2] == batch["ids"][0]
    with StdioServer(tmp_path, *store_args) as server:
        kept = server.result("memory.get", {"id": first["id"]})
        assert (kept["title"], kept["tags"], kept["text"]) == ("Releases", ["process"], "Releases are cut from main on Tuesdays.")
        assert len(recent(server)) == 2
        assert "duplicate" not in add(server, "Releases are cut from main on Tuesdays.", group="other")


def test_an_expired_note_disappears_in_real_time_and_stays_gone_after_a_restart(tmp_path: Path, store_args: tuple[str, ...]) -> None:
    with StdioServer(tmp_path, *store_args) as server:
        keep = add(server, "The staging database is called atlas.")
        soon = add(server, "The deploy freeze lasts until the release is out.", expiresAt=rfc3339(datetime.now(timezone.utc) + timedelta(seconds=3)))
        later = add(server, "The on-call rotation changes monthly.", expiresAt="2999-01-01T00:00:00Z")
        assert {n["id"] for n in recent(server)} == {keep["id"], soon["id"], later["id"]}
        assert server.result("memory.get", {"id": later["id"]})["expiresAt"] == "2999-01-01T00:00:00Z"
        server.result("memory.link", {"fromId": keep["id"], "toId": soon["id"], "relation": "relates_to"})
        time.sleep(3.5)
        assert {n["id"] for n in recent(server)} == {keep["id"], later["id"]}
        assert server.call("memory.get", {"id": soon["id"]})["error"]["code"] == -32004
        found = server.result("memory.search", {"projectId": PROJECT, "query": "deploy freeze release"})["results"]
        assert soon["id"] not in {r["id"] for r in found}
        assert server.result("memory.related", {"id": keep["id"]})["items"] == []
        past = server.call("memory.add_note", {"projectId": PROJECT, "groupId": "g", "text": "x", "expiresAt": "2001-01-01T00:00:00Z"})
        assert past["error"]["code"] == -32602 and past["error"]["data"]["field"] == "expiresAt"
    with StdioServer(tmp_path, *store_args) as server:
        assert {n["id"] for n in recent(server)} == {keep["id"], later["id"]}
        assert server.result("memory.get", {"id": keep["id"]})["text"] == "The staging database is called atlas."
        assert server.result("memory.stats", {"projectId": PROJECT})["notes"] == 2


def test_links_survive_restarts_deletes_and_an_export_import_round_trip(tmp_path: Path, store_args: tuple[str, ...]) -> None:
    with StdioServer(tmp_path, *store_args) as server:
        old = add(server, "We deploy with Fabric.")
        new = add(server, "We deploy with GitHub Actions.", expiresAt="2999-01-01T00:00:00Z")
        gone = add(server, "Temporary note.")
        assert server.result("memory.link", {"fromId": new["id"], "toId": old["id"], "relation": "supersedes"}) == {"ok": True}
        server.result("memory.link", {"fromId": gone["id"], "toId": old["id"], "relation": "relates_to"})
    with StdioServer(tmp_path, *store_args) as server:
        assert [(i["id"], i["direction"]) for i in server.result("memory.related", {"id": old["id"]})["items"]] == [
            (gone["id"], "in"),
            (new["id"], "in"),
        ]
        server.result("memory.delete", {"id": gone["id"]})
        assert server.result("memory.stats", {"projectId": PROJECT})["links"] == 1
    home = tmp_path / "cli"
    env = server_env(tmp_path)
    exported = subprocess.run([MCP_MEMORY, "export", "--vectors", *store_args], env=env, capture_output=True, check=True)
    lines = [json.loads(line) for line in exported.stdout.splitlines()]
    assert [line.get("type") for line in lines[1:]] == ["note", "note", "link"]
    assert next(line for line in lines if line.get("id") == new["id"])["expiresAt"] == "2999-01-01T00:00:00Z"
    (tmp_path / "out.jsonl").write_bytes(exported.stdout)
    subprocess.run([MCP_MEMORY, "import", str(tmp_path / "out.jsonl")], env=server_env(home), capture_output=True, check=True)
    with StdioServer(home) as server:
        items = server.result("memory.related", {"id": new["id"]})["items"]
        assert [(i["id"], i["relation"], i["direction"]) for i in items] == [(old["id"], "supersedes", "out")]
        assert server.result("memory.get", {"id": new["id"]})["expiresAt"] == "2999-01-01T00:00:00Z"
