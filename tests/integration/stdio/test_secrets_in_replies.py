"""A real ``mcp-memory serve`` never shows a secret: not the configured apiKey, not a bearer
value or password a provider echoes in its error text, not the userinfo of a baseUrl —
neither in a JSON-RPC reply (message and data) nor in the log lines on stderr."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.embedding_servers import FakeOpenAIServer
from tests.integration.serve import StdioServer

KEY = "sk-live-0123456789abcdef"
LEAKY = {"error": {"message": f"Incorrect API key provided: {KEY}. Sent: Bearer tok-5566778899 via http://bob:hunter2@10.0.0.5/v1"}}
SECRETS = (KEY, KEY[-8:], "tok-5566778899", "hunter2")
NOTE = {"projectId": "secrets", "groupId": "g", "text": "a note"}


@pytest.fixture(autouse=True)
def no_key_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.fixture
def provider() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(dim=16) as fake:
        yield fake


def shown_secrets(text: str) -> list[str]:
    return [secret for secret in SECRETS if secret in text]


def test_errors_and_logs_show_no_key_bearer_value_or_password(tmp_path: Path, provider: FakeOpenAIServer) -> None:
    base_url = provider.base_url.replace("http://", "http://bob:hunter2@")
    embedder = {"provider": "openai", "baseUrl": base_url, "apiKey": KEY}
    (tmp_path / "config.json").write_text(json.dumps({"format": 1, "embedder": embedder}))
    with StdioServer(tmp_path) as server:
        provider.fail_next(400, body=LEAKY)
        rejected = server.call("memory.add_note", NOTE)
        provider.fail_next(503, body=LEAKY, headers={"Retry-After": "0"}, times=4)
        unavailable = server.call("memory.add_note", NOTE)
        provider.fail_next(401, body=LEAKY)
        refused = server.call("memory.set_config", {"embedder": {"apiKey": KEY[::-1]}})
        config = server.result("memory.get_config")
        _code, stderr = server.close()

    assert (rejected["error"]["code"], unavailable["error"]["code"], refused["error"]["code"]) == (-32003, -32002, -32003)
    assert "Incorrect API key provided: ***" in rejected["error"]["message"]
    assert unavailable["error"]["data"]["url"] == provider.base_url.replace("http://", "http://***@") + "/embeddings"
    assert config["embedder"]["baseUrl"] == provider.base_url.replace("http://", "http://***@")
    assert "embedder_retry" in stderr  # the retries were logged, with the URL masked
    for shown in (rejected, unavailable, refused, config):
        assert shown_secrets(json.dumps(shown)) == []
    assert shown_secrets(stderr) == []
