"""memory.search over JSON-RPC: the shape of a result, and the home namespace of each hit."""

from __future__ import annotations

from local_mcp_memory.application.services import Services
from tests.unit.steps import LOCAL, OLLAMA, add, rpc, switch_to_ollama


def test_each_result_carries_the_note_fields_its_home_namespace_and_a_score(services: Services) -> None:
    note = add(services, "Retry webhooks with exponential backoff")
    result = rpc(services, "memory.search", {"projectId": "proj", "query": "retry webhooks"})["result"]
    assert result["namespace"] == str(LOCAL)
    (hit,) = result["results"]
    assert list(hit) == [
        "id", "projectId", "groupId", "title", "text", "tags", "source", "createdAt", "metadata", "expiresAt", "importance",
        "namespace", "score",
    ]
    assert hit["id"] == note.value and hit["namespace"] == str(LOCAL) and 0.0 < hit["score"] <= 1.0


def test_a_note_not_yet_reembedded_is_found_by_its_words_and_says_where_its_vector_is(services: Services) -> None:
    old = add(services, "The billing worker leaks memory under load")
    switch_to_ollama(services)
    new = add(services, "Rotate the signing key every quarter")
    for mode in ("hybrid", "keyword"):
        result = rpc(services, "memory.search", {"projectId": "proj", "query": "billing worker memory leak", "mode": mode})
        hits = {h["id"]: h["namespace"] for h in result["result"]["results"]}
        assert result["result"]["namespace"] == str(OLLAMA)
        assert hits[old.value] == str(LOCAL), mode  # found by keywords, its vector elsewhere
    semantic = rpc(services, "memory.search", {"projectId": "proj", "query": "billing worker memory leak", "mode": "semantic"})
    assert [h["id"] for h in semantic["result"]["results"]] == [new.value]  # meaning reaches only the current namespace
    assert rpc(services, "memory.reembed", {})["result"]["remaining"] == 0
    after = rpc(services, "memory.search", {"projectId": "proj", "query": "billing worker memory leak"})["result"]
    assert after["results"][0]["id"] == old.value and after["results"][0]["namespace"] == str(OLLAMA)
