"""memory.delete over JSON-RPC."""

from __future__ import annotations

from local_mcp_memory.application.services import Services
from tests.unit.steps import add, rpc


def test_memory_delete_answers_ok_then_not_found_with_the_id(services: Services) -> None:
    note_id = add(services, "to delete").value
    assert rpc(services, "memory.delete", {"id": note_id})["result"] == {"ok": True}
    error = rpc(services, "memory.delete", {"id": note_id})["error"]
    assert (error["code"], error["data"]) == (-32004, {"id": note_id})
