"""The server error codes of the Errors table in docs/methods.md, as a client sees them: the real
``mcp-memory serve`` over stdio, real embedders against fake servers on 127.0.0.1, the real
store on disk. Each answer carries the documented ``data`` and the server keeps serving."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.embedding_servers import FakeOpenAIServer, refused_url
from tests.integration.serve import StdioServer

NOTE = {"projectId": "error-codes", "groupId": "g", "text": "Deploys happen on Tuesdays."}


def write_config(home: Path, **embedder: Any) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps({"format": 1, "embedder": embedder}))


@pytest.fixture(autouse=True)
def no_key_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # it would win over the config's key


@pytest.mark.parametrize(
    ("provider", "base", "endpoint"),
    [("openai", "/v1", "/v1/embeddings"), ("ollama", "", "/api/embed")],
)
def test_an_unreachable_embedder_is_32002_naming_provider_and_url(
    tmp_path: Path, provider: str, base: str, endpoint: str
) -> None:
    closed = refused_url()
    write_config(tmp_path, provider=provider, baseUrl=closed + base)
    with StdioServer(tmp_path) as server:
        error = server.call("memory.add_note", NOTE)["error"]
        assert error["code"] == -32002
        assert error["data"] == {"provider": provider, "url": closed + endpoint}
        assert closed + endpoint in error["message"]
        assert server.result("memory.get_config")["embedder"]["provider"] == provider


def test_a_401_from_the_provider_is_32003_with_the_status_and_without_the_key(tmp_path: Path) -> None:
    wrong_key = "sk-wrong-key-0123456789"
    with FakeOpenAIServer(dim=16, api_key="sk-right") as fake:
        write_config(tmp_path, provider="openai", baseUrl=fake.base_url, apiKey=wrong_key)
        with StdioServer(tmp_path) as server:
            error = server.call("memory.add_note", NOTE)["error"]
            _, stderr = server.close()
    assert error["code"] == -32003
    assert error["data"] == {"provider": "openai", "status": 401}
    assert "rejected the API key" in error["message"]
    assert len(fake.requests) == 1  # a rejected key is not retried
    for text in (json.dumps(error), stderr):
        assert wrong_key not in text and wrong_key[-6:] not in text


def test_a_model_answering_with_another_dimension_than_recorded_is_32005_and_writes_nothing(tmp_path: Path) -> None:
    with FakeOpenAIServer(dim=16) as fake:
        write_config(tmp_path, provider="openai", baseUrl=fake.base_url)
        with StdioServer(tmp_path) as server:
            first = server.result("memory.add_note", NOTE)
        assert first["namespace"] == "openai:text-embedding-3-small:16"
        fake.dim = 24  # the model behind the same name changed while the server was down
        with StdioServer(tmp_path) as server:
            error = server.call("memory.add_note", {**NOTE, "text": "Rollbacks need two approvals."})["error"]
            recent = server.result("memory.list_recent", {"projectId": "error-codes"})
    assert error["code"] == -32005
    assert error["data"] == {"provider": "openai", "model": "text-embedding-3-small", "expected": 16, "got": 24}
    assert [item["id"] for item in recent["items"]] == [first["id"]]
    assert json.loads((tmp_path / "config.json").read_text())["embedder"]["dims"] == {"openai:text-embedding-3-small": 16}


def test_a_dimension_change_while_serving_is_32005_and_writes_nothing(tmp_path: Path) -> None:
    with FakeOpenAIServer(dim=16) as fake:
        write_config(tmp_path, provider="openai", baseUrl=fake.base_url)
        with StdioServer(tmp_path) as server:
            first = server.result("memory.add_note", NOTE)
            fake.dim = 8
            error = server.call("memory.add_note", {**NOTE, "text": "Rollbacks need two approvals."})["error"]
            recent = server.result("memory.list_recent", {"projectId": "error-codes"})
    assert error["code"] == -32005
    assert error["data"] == {"provider": "openai", "model": "text-embedding-3-small", "expected": 16, "got": 8}
    assert [item["id"] for item in recent["items"]] == [first["id"]]


def test_a_data_dir_that_is_a_file_is_32006_naming_the_path_until_it_is_fixed(tmp_path: Path) -> None:
    # chmod cannot stop root from writing; a file where the directory should be stops anyone
    data_dir = tmp_path / "data"
    data_dir.write_text("not a directory")
    with StdioServer(tmp_path) as server:
        error = server.call("memory.list_recent", {"projectId": "error-codes"})["error"]
        assert error["code"] == -32006
        assert error["data"] == {"path": str(data_dir)}
        data_dir.unlink()
        assert server.result("memory.list_recent", {"projectId": "error-codes"})["items"] == []


def test_a_store_file_that_cannot_be_read_is_32006_and_the_notes_return_when_it_is_back(tmp_path: Path) -> None:
    manifest = tmp_path / "data" / "MANIFEST.json"
    with StdioServer(tmp_path) as server:
        added = server.result("memory.add_note", NOTE)
        saved = manifest.read_bytes()
        manifest.unlink()
        manifest.mkdir()  # a directory where the manifest was: unreadable even for root
        for method, params in [("memory.get", {"id": added["id"]}), ("memory.add_note", {**NOTE, "text": "lost?"})]:
            error = server.call(method, params)["error"]
            assert error["code"] == -32006, method
            assert error["data"] == {"path": str(manifest)} and "is not a regular file" in error["message"]
        shutil.rmtree(manifest)
        manifest.write_bytes(saved)
        assert server.result("memory.get", {"id": added["id"]})["text"] == NOTE["text"]
        recent = server.result("memory.list_recent", {"projectId": "error-codes"})
    assert [item["id"] for item in recent["items"]] == [added["id"]]


# A search embeds its query on a thread of its own while the store reads what needs no vector:
# what the embedding raises still answers the search exactly as when it came first.


@pytest.mark.parametrize("mode", ["hybrid", "semantic"])
def test_a_search_whose_query_the_provider_refuses_is_32003_and_the_next_search_answers(tmp_path: Path, mode: str) -> None:
    with FakeOpenAIServer(dim=16) as fake:
        write_config(tmp_path, provider="openai", baseUrl=fake.base_url)
        with StdioServer(tmp_path) as server:
            added = server.result("memory.add_note", NOTE)
            fake.fail_next(400)
            error = server.call("memory.search", {"projectId": "error-codes", "query": "deploys", "mode": mode})["error"]
            found = server.result("memory.search", {"projectId": "error-codes", "query": "deploys", "mode": mode})
    assert error["code"] == -32003
    assert error["data"] == {"provider": "openai", "status": 400}
    assert [r["id"] for r in found["results"]] == [added["id"]]


def test_a_search_after_the_model_changed_its_dimension_is_32005(tmp_path: Path) -> None:
    with FakeOpenAIServer(dim=16) as fake:
        write_config(tmp_path, provider="openai", baseUrl=fake.base_url)
        with StdioServer(tmp_path) as server:
            server.result("memory.add_note", NOTE)
            fake.dim = 8
            error = server.call("memory.search", {"projectId": "error-codes", "query": "deploys"})["error"]
    assert error["code"] == -32005
    assert error["data"] == {"provider": "openai", "model": "text-embedding-3-small", "expected": 16, "got": 8}


def test_a_search_failing_in_both_the_embedder_and_the_store_answers_the_embedders_error(tmp_path: Path) -> None:
    manifest = tmp_path / "data" / "MANIFEST.json"
    with FakeOpenAIServer(dim=16) as fake:
        write_config(tmp_path, provider="openai", baseUrl=fake.base_url)
        with StdioServer(tmp_path) as server:
            server.result("memory.add_note", NOTE)
            saved = manifest.read_bytes()
            manifest.unlink()
            manifest.mkdir()  # the store cannot be read
            fake.fail_next(400)
            error = server.call("memory.search", {"projectId": "error-codes", "query": "deploys"})["error"]
            store_error = server.call("memory.search", {"projectId": "error-codes", "query": "deploys"})["error"]
            manifest.rmdir()
            manifest.write_bytes(saved)
            found = server.result("memory.search", {"projectId": "error-codes", "query": "deploys"})
    assert error["code"] == -32003  # the query is embedded first, as ever
    assert store_error["code"] == -32006
    assert len(found["results"]) == 1


@pytest.mark.parametrize("nesting", ["[" * 100_000 + "]" * 100_000, '{"store":' + '{"a":' * 100_000 + "1" + "}" * 100_001])
def test_a_config_file_nested_past_any_reader_is_32006_naming_it_and_the_commands_say_so(tmp_path: Path, nesting: str) -> None:
    import subprocess

    from tests.integration.serve import MCP_MEMORY, server_env

    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "config.json").write_text(nesting)
    with StdioServer(tmp_path) as server:
        error = server.call("memory.stats")["error"]
        assert server.call("memory.stats")["error"]["code"] == -32006  # and it keeps serving
    assert error["code"] == -32006 and error["data"] == {"path": str(tmp_path / "config.json")}
    stats = subprocess.run([MCP_MEMORY, "stats"], env=server_env(tmp_path), capture_output=True, text=True, timeout=60)
    assert stats.returncode != 0 and "config file is not valid" in stats.stderr and "Traceback" not in stats.stderr
