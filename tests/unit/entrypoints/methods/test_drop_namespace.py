"""memory.drop_namespace over JSON-RPC."""

from __future__ import annotations

from local_mcp_memory.application.services import Services
from tests.unit.steps import LOCAL, add, rpc, switch_to_ollama


def test_memory_drop_namespace_of_a_home_namespace_is_invalid_params(services: Services) -> None:
    add(services, "a note")
    switch_to_ollama(services)
    error = rpc(services, "memory.drop_namespace", {"namespace": str(LOCAL)})["error"]
    assert (error["code"], error["data"]["field"]) == (-32602, "namespace")
    assert "memory.reembed" in error["message"]


def test_memory_drop_namespace_refuses_a_malformed_namespace(services: Services) -> None:
    error = rpc(services, "memory.drop_namespace", {"namespace": "no-colons"})["error"]
    assert (error["code"], error["data"]["field"]) == (-32602, "namespace")
