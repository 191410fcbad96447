"""MCP resources and the recall prompt over stdio, with the real FAISS store on disk: what a
resource holds survives a restart, and a deleted or expired note is an unknown resource."""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from urllib.parse import quote

from tests.integration.serve import StdioServer


def test_resources_read_the_store_on_disk_across_a_restart(tmp_path: Path) -> None:
    project = tmp_path / "my project"
    project.mkdir()
    with StdioServer(tmp_path / "home", "--project", str(project)) as server:
        note = server.result("tools/call", {"name": "memory_add_note", "arguments": {"groupId": "global", "text": "Deploys go through CI."}})
        note_id = note["structuredContent"]["id"]
        before = server.result("resources/read", {"uri": f"memory://notes/{note_id}"})
    context_uri = "memory://context/" + quote(str(project.resolve()), safe="")
    assert context_uri.endswith("my%20project")
    with StdioServer(tmp_path / "home", "--project", str(project)) as server:
        assert server.result("resources/read", {"uri": f"memory://notes/{note_id}"}) == before
        assert json.loads(before["contents"][0]["text"])["text"] == "Deploys go through CI."
        listed = [r["uri"] for r in server.result("resources/list")["resources"]]
        assert listed == [context_uri, f"memory://notes/{note_id}"]
        assert "Deploys go through CI." in server.result("resources/read", {"uri": context_uri})["contents"][0]["text"]
        recall = server.result("prompts/get", {"name": "recall", "arguments": {"project": str(project)}})
        assert "Deploys go through CI." in recall["messages"][0]["content"]["text"]

        expires = (datetime.now(timezone.utc) + timedelta(seconds=4)).replace(microsecond=0)
        expiring = server.result("memory.add_note", {
            "projectId": "github.com/acme/api", "groupId": "task-1", "text": "Valid for seconds.",
            "expiresAt": expires.strftime("%Y-%m-%dT%H:%M:%SZ"),
        })["id"]
        opaque = "memory://context/github.com%2Facme%2Fapi"
        assert "Valid for seconds." in server.result("resources/read", {"uri": opaque})["contents"][0]["text"]
        assert server.result("resources/read", {"uri": f"memory://notes/{expiring}"})
        # that read moved the expiry out by half its span (fading); listing is no read
        time.sleep(0.3)
        items = server.result("memory.list_recent", {"projectId": "github.com/acme/api"})["items"]
        moved = datetime.fromisoformat(items[0]["expiresAt"].replace("Z", "+00:00"))
        assert moved > expires
        time.sleep(max(0.0, (moved - datetime.now(timezone.utc)).total_seconds()) + 0.2)
        assert server.call("resources/read", {"uri": f"memory://notes/{expiring}"})["error"]["code"] == -32002
        assert "Valid for seconds." not in server.result("resources/read", {"uri": opaque})["contents"][0]["text"]

        assert server.result("memory.delete", {"id": note_id})["ok"] is True
        gone = server.call("resources/read", {"uri": f"memory://notes/{note_id}"})["error"]
        assert gone["code"] == -32002 and gone["data"]["uri"] == f"memory://notes/{note_id}"
        assert [r["uri"] for r in server.result("resources/list")["resources"]] == [context_uri]
