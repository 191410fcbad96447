"""Session context through real processes: ``memory.context`` over a stdio server and
``mcp-memory context`` on the same files print the same page; the command embeds nothing
without --query, prints nothing but the page, and refuses bad flags."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from tests.fakes.embedding_servers import FakeOllamaServer
from tests.integration.serve import MCP_MEMORY, StdioServer, server_env
from tests.postgres_server import postgres, postgres_url  # noqa: F401


@pytest.fixture
def ollama() -> Iterator[FakeOllamaServer]:
    with FakeOllamaServer(dim=16) as fake:
        yield fake


def home_with(tmp_path: Path, base_url: str) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    embedder = {"provider": "ollama", "baseUrl": base_url, "model": "nomic-embed-text"}
    (home / "config.json").write_text(json.dumps({"format": 1, "embedder": embedder}))
    return home


def context(home: Path, cwd: Path, *flags: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [MCP_MEMORY, "context", *flags], cwd=cwd, env=server_env(home), capture_output=True, timeout=120
    )


def fill(server: StdioServer, project: str) -> list[str]:
    server.result("memory.upsert_global", {"projectId": project, "key": "global.project.conventions", "value": "Small PRs; tests first."})
    server.result("memory.upsert_global", {"projectId": project, "key": "global.memory.groupDefaults", "value": {"featurePrefix": "feat-"}})
    server.result("memory.upsert_global", {"projectId": project, "key": "global.team.oncall", "value": ["ana", "bo"]})
    texts = [
        ("task-1", "Deploys go through the blue-green pipeline; never deploy on Fridays."),
        ("task-2", "The cache key includes the tenant id since the leak of March."),
        ("task-2", "Ünïcödé, emoji 🚀 and a second line\nstay as they were written."),
    ]
    return [server.result("memory.add_note", {"projectId": project, "groupId": g, "text": t})["id"] for g, t in texts]


def test_the_command_prints_exactly_the_page_memory_context_answers(tmp_path: Path, ollama: FakeOllamaServer) -> None:
    home = home_with(tmp_path, ollama.url)
    app = tmp_path / "app"
    app.mkdir()
    with StdioServer(home, cwd=app) as server:
        ids = fill(server, str(app))
        plain = server.result("memory.context", {"projectId": str(app)})
        grouped = server.result("memory.context", {"projectId": str(app), "groupId": "task-2", "limit": 1})
        asked = server.result("memory.context", {"projectId": str(app), "query": "blue-green deploys", "limit": 2})
    assert [item["id"] for item in plain["items"]] == ids[::-1]
    assert plain["text"].index("global.memory.groupDefaults") < plain["text"].index("global.project.conventions")
    assert "🚀" in plain["text"]

    done = context(home, app)  # the working directory is the project
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout.decode("utf-8") == plain["text"]
    done = context(home, tmp_path, "--project", str(app), "--group", "task-2", "--limit", "1")
    assert done.stdout.decode("utf-8") == grouped["text"] and [i["id"] for i in grouped["items"]] == [ids[2]]
    done = context(home, tmp_path, "--project", "./app", "--query", "blue-green deploys", "--limit", "2")
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout.decode("utf-8") == asked["text"]
    assert "## Relevant to: blue-green deploys" in asked["text"]


def test_a_project_with_nothing_stored_prints_its_header_alone(tmp_path: Path, ollama: FakeOllamaServer) -> None:
    home = home_with(tmp_path, ollama.url)
    done = context(home, tmp_path, "--project", "empty-project")
    assert (done.returncode, done.stdout, done.stderr) == (0, b"# Project memory: empty-project\n", b"")


def test_without_a_query_nothing_is_embedded_and_no_embedder_code_is_imported(tmp_path: Path, ollama: FakeOllamaServer) -> None:
    home = home_with(tmp_path, ollama.url)
    with StdioServer(home) as server:
        server.result("memory.add_note", {"projectId": "shop", "groupId": "task-1", "text": "Prices are in cents."})
    asked_before = len(ollama.requests)
    (home / "config.json").write_text(json.dumps({"format": 1, "embedder": {"provider": "ollama", "baseUrl": "http://127.0.0.1:9", "model": "other-model"}}))
    done = context(home, tmp_path, "--project", "shop")
    assert (done.returncode, done.stderr) == (0, b"") and b"Prices are in cents." in done.stdout
    traced = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import sys; from local_mcp_memory.entrypoints.cli import main; sys.exit(main())", "context", "--project", "shop"],
        env=server_env(home), capture_output=True, timeout=120,
    )  # fmt: skip
    assert traced.returncode == 0 and b"Prices are in cents." in traced.stdout
    imported = [line.rsplit("|", 1)[-1].strip() for line in traced.stderr.decode().splitlines() if "|" in line]
    assert "local_mcp_memory.adapters.faiss_store" in imported  # the trace does list what was loaded
    assert not [m for m in imported if m.startswith(("local_mcp_memory.adapters.embedders", "sentence_transformers", "onnxruntime", "httpx"))]
    failed = context(home, tmp_path, "--project", "shop", "--query", "prices")
    assert failed.returncode == 1 and failed.stdout == b"" and b"mcp-memory context:" in failed.stderr
    assert len(ollama.requests) == asked_before


def test_an_expired_note_is_not_printed(tmp_path: Path, ollama: FakeOllamaServer) -> None:
    home = home_with(tmp_path, ollama.url)
    with StdioServer(home) as server:
        server.result("memory.add_note", {"projectId": "shop", "groupId": "task-1", "text": "Prices are in cents."})
        expires = datetime.now(timezone.utc) + timedelta(seconds=3)
        server.result("memory.add_note", {
            "projectId": "shop", "groupId": "task-1", "text": "Freeze until the audit ends.",
            "expiresAt": expires.isoformat().replace("+00:00", "Z"),
        })  # fmt: skip
        assert "Freeze until" in server.result("memory.context", {"projectId": "shop"})["text"]
    time.sleep(max(0.0, (expires - datetime.now(timezone.utc)).total_seconds()) + 0.1)
    for flags in ((), ("--query", "audit freeze")):
        done = context(home, tmp_path, "--project", "shop", *flags)
        assert done.returncode == 0 and b"Prices are in cents." in done.stdout and b"Freeze" not in done.stdout


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (("--limit", "0"), b"--limit: must be an integer in 1..100"),
        (("--limit", "101"), b"--limit: must be an integer in 1..100"),
        (("--limit", "ten"), b"--limit: must be an integer in 1..100"),
        (("--group", "a b"), b"--group: must match [A-Za-z0-9_-]+"),
        (("--query", "  "), b"--query: must be a non-blank string"),
        (("--project", "~no-such-user-here/app"), b"--project"),
        (("--project", ""), b"--project: must be a non-empty string"),
        (("--project", "p" * 5000), b"--project: must be at most 1024 characters (got '" + b"p" * 199 + "…'".encode()),
        (("--store", "postgresql://db.example:99999/notes"), b"--store: the store URL's port must be a number in 1..65535"),
    ],
)
def test_bad_flags_are_usage_errors_with_nothing_on_stdout(tmp_path: Path, ollama: FakeOllamaServer, flags: tuple[str, ...], says: bytes) -> None:
    home = home_with(tmp_path, ollama.url)
    done = context(home, tmp_path, *flags)
    assert (done.returncode, done.stdout) == (2, b"")
    assert says in done.stderr


def test_a_store_that_cannot_be_reached_fails_with_its_reason_on_stderr(tmp_path: Path, ollama: FakeOllamaServer) -> None:
    home = home_with(tmp_path, ollama.url)
    done = context(home, tmp_path, "--store", "postgresql://u@127.0.0.1:1/notes")
    assert (done.returncode, done.stdout) == (1, b"")
    assert done.stderr.startswith(b"mcp-memory context: cannot open the note store") and b"127.0.0.1:1" in done.stderr


def test_a_postgresql_store_gives_the_same_page_as_its_server(tmp_path: Path, ollama: FakeOllamaServer, postgres_url: str) -> None:
    home = home_with(tmp_path, ollama.url)
    with StdioServer(home, "--store", postgres_url) as server:
        ids = fill(server, "team-app")
        expires = datetime.now(timezone.utc) + timedelta(seconds=2)
        server.result("memory.add_note", {
            "projectId": "team-app", "groupId": "task-1", "text": "Freeze until the audit ends.",
            "expiresAt": expires.isoformat().replace("+00:00", "Z"),
        })  # fmt: skip
        time.sleep(max(0.0, (expires - datetime.now(timezone.utc)).total_seconds()) + 0.1)
        page = server.result("memory.context", {"projectId": "team-app", "query": "tenant cache key", "limit": 3})
    assert [item["id"] for item in page["items"]][:2] == [ids[2], ids[1]] and "Freeze" not in page["text"]
    done = context(home, tmp_path, "--project", "team-app", "--store", postgres_url, "--query", "tenant cache key", "--limit", "3")
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout.decode("utf-8") == page["text"]


def test_the_page_carries_no_terminal_control_sequence_of_a_note(tmp_path: Path, ollama: FakeOllamaServer) -> None:
    home = home_with(tmp_path, ollama.url)
    app = tmp_path / "app"
    app.mkdir()
    hostile = "Clear screen\x1b[2J\x1b]0;owned\x07 then\r overwrite\x9b31m, C1\x85 and DEL\x7f;\tkept tab\nand newline"
    with StdioServer(home, cwd=app) as server:
        server.result("memory.add_note", {"projectId": str(app), "groupId": "g", "text": hostile, "title": "t\x1b[1mbold"})
        server.result("memory.upsert_global", {"projectId": str(app), "key": "global.project.conventions", "value": "v\x1b[5m"})
        page = server.result("memory.context", {"projectId": str(app)})["text"]
    printed = context(home, app)
    assert printed.returncode == 0, printed.stderr
    shown = printed.stdout.decode("utf-8")
    assert shown == page
    controls = [c for c in shown if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F]
    assert controls == []
    assert "␛[2J" in shown and "␛]0;owned␇" in shown and "\tkept tab\n" in shown
