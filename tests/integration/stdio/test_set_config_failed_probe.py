"""memory.set_config probes the new embedder before it persists anything: when the probe
fails, the server answers the probe's error and the previous embedder stays in force — in
get_config, in the config file, and for the next note. Real ``mcp-memory serve`` over
stdio, embedders against fake servers on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.embedding_servers import FakeOllamaServer, FakeOpenAIServer, refused_url
from tests.integration.serve import StdioServer

PROJECT = "set-config-probe"
OLD_NAMESPACE = "openai:text-embedding-3-small:16"


def unreachable_ollama(_rejecting: FakeOpenAIServer) -> dict[str, Any]:
    return {"provider": "ollama", "baseUrl": refused_url()}


def openai_rejecting_the_key(rejecting: FakeOpenAIServer) -> dict[str, Any]:
    return {"baseUrl": rejecting.base_url, "apiKey": "sk-not-accepted-here"}


def a_server_with_another_model(_rejecting: FakeOpenAIServer) -> dict[str, Any]:
    return {"model": "text-embedding-3-large"}  # the fake answers 16-d; 3072 are recorded below


FAILURES: list[tuple[Callable[[FakeOpenAIServer], dict[str, Any]], int]] = [
    (unreachable_ollama, -32002),
    (openai_rejecting_the_key, -32003),
    (a_server_with_another_model, -32005),
]


@pytest.fixture(autouse=True)
def no_key_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # it would win over the config's key


@pytest.fixture
def current() -> Iterator[FakeOpenAIServer]:
    """The embedder in force before set_config: an OpenAI-compatible server needing no key."""
    with FakeOpenAIServer(dim=16) as fake:
        yield fake


@pytest.fixture
def rejecting() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(dim=16, api_key="sk-the-only-good-key") as fake:
        yield fake


@pytest.mark.parametrize(("change", "code"), FAILURES, ids=[f.__name__ for f, _ in FAILURES])
def test_a_failed_probe_leaves_the_previous_embedder_in_force(
    tmp_path: Path,
    current: FakeOpenAIServer,
    rejecting: FakeOpenAIServer,
    change: Callable[[FakeOpenAIServer], dict[str, Any]],
    code: int,
) -> None:
    config_file = tmp_path / "config.json"
    dims = {"openai:text-embedding-3-large": 3072}
    config_file.write_text(json.dumps({"format": 1, "embedder": {"provider": "openai", "baseUrl": current.base_url, "dims": dims}}))
    with StdioServer(tmp_path) as server:
        first = server.result("memory.add_note", {"projectId": PROJECT, "groupId": "g", "text": "before the switch"})
        assert first["namespace"] == OLD_NAMESPACE
        config_before, file_before = server.result("memory.get_config"), config_file.read_bytes()

        failed = server.call("memory.set_config", {"embedder": change(rejecting)})

        assert failed["error"]["code"] == code
        assert server.result("memory.get_config") == config_before
        assert config_file.read_bytes() == file_before
        asked = len(current.requests)
        second = server.result("memory.add_note", {"projectId": PROJECT, "groupId": "g", "text": "after the failed switch"})
        assert second["namespace"] == OLD_NAMESPACE
        assert server.result("memory.get", {"id": second["id"]})["namespace"] == OLD_NAMESPACE
        assert len(current.requests) == asked + 1  # embedded by the old embedder, not the probed one
    assert current.requests[-1].body["model"] == "text-embedding-3-small"


def test_a_successful_probe_switches_the_embedder_for_the_next_note(tmp_path: Path, current: FakeOpenAIServer) -> None:
    # the counterpart of the tests above: the same steps with a probe that succeeds do switch
    with FakeOllamaServer(dim=12) as ollama:
        (tmp_path / "config.json").write_text(json.dumps({"format": 1, "embedder": {"provider": "openai", "baseUrl": current.base_url}}))
        with StdioServer(tmp_path) as server:
            switched = server.result("memory.set_config", {"embedder": {"provider": "ollama", "baseUrl": ollama.url}})
            added = server.result("memory.add_note", {"projectId": PROJECT, "groupId": "g", "text": "after the switch"})
        assert switched["effectiveNamespace"] == added["namespace"] == "ollama:nomic-embed-text:12"
        assert ollama.paths() == ["/api/embed", "/api/embed"]  # the probe, then the note
    assert json.loads((tmp_path / "config.json").read_text())["embedder"]["baseUrl"] == ollama.url
