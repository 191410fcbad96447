"""memory.reembed over JSON-RPC."""

from __future__ import annotations

from local_mcp_memory.application.services import Services
from tests.unit.steps import OLLAMA, add, rpc, switch_to_ollama


def test_memory_reembed_reports_progress_and_what_remains(services: Services) -> None:
    for i in range(3):
        add(services, f"note {i}")
    switch_to_ollama(services)
    result = rpc(services, "memory.reembed", {"limit": 2, "batchSize": 1})["result"]
    assert result == {"ok": True, "namespace": str(OLLAMA), "reembedded": 2, "remaining": 1}
