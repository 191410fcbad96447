"""memory.stats over JSON-RPC."""

from __future__ import annotations

from local_mcp_memory.application.services import Services
from local_mcp_memory.domain.note import Tags
from tests.unit.steps import add, rpc


def test_memory_stats_answers_counts_and_disk_bytes(services: Services) -> None:
    add(services, "a", tags=Tags(("db",)))
    result = rpc(services, "memory.stats", {"projectId": "proj"})["result"]
    assert result["projectId"] == "proj"
    assert (result["notes"], result["byTag"], result["diskBytes"]) == (1, {"db": 1}, 0)
