"""The seed's smoke scenario, through the real stdio entrypoint as a subprocess."""

from __future__ import annotations

import json
from pathlib import Path

from tests.integration.serve import StdioServer

STANDARD_KEYS = {
    "global.memory.embedder.provider": "openai",
    "global.memory.embedder.model": "text-embedding-3-small",
    "global.memory.groupDefaults": {"featurePrefix": "feature-", "taskPrefix": "task-"},
    "global.project.conventions": "Every public function has a docstring and a test.",
}


def test_smoke(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with StdioServer(home) as server:
        first = server.result(
            "memory.add_note",
            {"projectId": "~/tmp/demo", "groupId": "global", "text": "All times are stored in UTC."},
        )
        second = server.result(
            "memory.add_note",
            {
                "projectId": "~/tmp/demo",
                "groupId": "feature-1",
                "title": "Webhooks",
                "text": "Failed webhooks are retried with exponential backoff, five tries at most.",
                "tags": ["webhooks"],
            },
        )
        assert first["namespace"] == second["namespace"] == "local:all-MiniLM-L6-v2:384"

        canonical = str(home.resolve() / "tmp" / "demo")
        feature = server.result(
            "memory.search",
            {"projectId": "~/tmp/demo", "groupId": "feature-1", "query": "how do we retry failed webhooks?"},
        )
        assert [r["id"] for r in feature["results"]] == [second["id"]]
        assert feature["results"][0]["projectId"] == canonical
        assert 0.0 <= feature["results"][0]["score"] <= 1.0

        both = server.result(
            "memory.search", {"projectId": "~/tmp/demo", "groupId": None, "query": "how do we retry failed webhooks?"}
        )
        assert {r["id"] for r in both["results"]} == {first["id"], second["id"]}
        assert both["results"][0]["id"] == second["id"]

        for key, value in STANDARD_KEYS.items():
            upserted = server.result("memory.upsert_global", {"projectId": "~/tmp/demo", "key": key, "value": value})
            assert upserted["ok"] is True
            got = server.result("memory.get_global", {"projectId": "~/tmp/demo", "key": key})
            assert (got["found"], got["id"], got["value"]) == (True, upserted["id"], value)

        config = server.result("memory.get_config")
        assert config["transportDefaults"]["defaultTransport"] == "stdio"
        assert config["paths"]["configPath"] == str(home / "config.json")
        code, stderr = server.close()
    assert code == 0
    for line in filter(None, stderr.splitlines()):
        json.loads(line)  # every log line is structured JSON
