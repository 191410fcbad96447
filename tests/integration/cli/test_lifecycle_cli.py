"""``mcp-memory export|import|reembed|stats`` as a user runs them: real processes, real
files. Stores are filled in-process with the hashing embedder (named like the local model,
so the CLI reuses their vectors without loading a model); re-embedding talks to a fake
Ollama server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.hashing_embedder_factory import HashingEmbedderFactory
from local_mcp_memory.application.add_note import AddNote, add_note
from local_mcp_memory.domain.identifiers import GroupId
from local_mcp_memory.domain.note import Tags
from local_mcp_memory.entrypoints.composition.compose import compose
from local_mcp_memory.entrypoints.composition.settings import ServerOptions
from tests.fakes.embedding_servers import FakeOllamaServer
from tests.integration.serve import MCP_MEMORY, StdioServer, server_env

LOCAL = "local:all-MiniLM-L6-v2:64"
OLLAMA = "ollama:nomic-embed-text:12"
NOTE_ID = "0b7a4c1e-5d2f-4a3b-8c9d-1e2f3a4b5c6d"


def fill(home: Path, count: int) -> None:
    """``count`` notes in ``home/data``, namespace LOCAL recorded in ``home/config.json``."""
    services = compose(
        ServerOptions.resolve({}, home / "config.json", home / "data"),
        embedders=HashingEmbedderFactory(),
    )
    for i in range(count):
        command = AddNote(project_id="/work/app", group_id=GroupId("feature-1"), text=f"note {i} on caching", tags=Tags(("db",)))
        add_note(command, services)
    services.store.close()


def local_mcp_memory(home: Path, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [MCP_MEMORY, *args, "--config", str(home / "config.json"), "--data-dir", str(home / "data")],
        input=None if stdin is None else stdin.decode(),
        capture_output=True,
        text=True,
        env=server_env(home),
        timeout=120,
    )


def stats(home: Path) -> dict[str, Any]:
    done = local_mcp_memory(home, "stats")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def files(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def use_ollama(home: Path, url: str) -> None:
    config = json.loads((home / "config.json").read_text())
    config["embedder"] |= {"provider": "ollama", "model": None, "baseUrl": url}
    (home / "config.json").write_text(json.dumps(config))


@pytest.fixture
def ollama() -> Iterator[FakeOllamaServer]:
    with FakeOllamaServer(dim=12) as server:
        yield server


# ---------------------------------------------------------------- export and import


def test_export_then_import_into_an_empty_data_dir_gives_the_same_notes(tmp_path: Path) -> None:
    fill(tmp_path / "a", 25)
    out = tmp_path / "a.jsonl"
    assert local_mcp_memory(tmp_path / "a", "export", "--vectors", "--out", str(out)).returncode == 0
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "config.json").write_bytes((tmp_path / "a" / "config.json").read_bytes())
    imported = local_mcp_memory(tmp_path / "b", "import", str(out))
    assert imported.returncode == 0, imported.stderr
    assert "imported 25 notes into local:all-MiniLM-L6-v2:64: 25 written (0 embedded)" in imported.stderr
    again = local_mcp_memory(tmp_path / "b", "export", "--vectors")
    assert again.stdout.splitlines()[1:] == out.read_text().splitlines()[1:]


def test_importing_the_same_file_twice_adds_nothing(tmp_path: Path) -> None:
    fill(tmp_path / "a", 5)
    exported = local_mcp_memory(tmp_path / "a", "export", "--vectors").stdout
    imported = local_mcp_memory(tmp_path / "a", "import", "-", stdin=exported.encode())
    assert imported.returncode == 0
    assert "0 written (0 embedded), 5 already there" in imported.stderr
    assert stats(tmp_path / "a")["notes"] == 5


@pytest.mark.parametrize(
    ("bad_line", "where"),
    [
        ('{"type":"note","id":"0b7a4c1e-5d2f-4a3b', "line 3: not a complete JSON object"),
        ('{"type":"note","id":"%s","projectId":"p","groupId":"g","text":7,"createdAt":"2024-01-15"}' % NOTE_ID, "line 3, field text: Expected `str`, got `int`"),
        ('{"type":"memo"}', "line 3, field type: unknown record type 'memo'"),
    ],
)
def test_a_bad_import_file_fails_naming_the_line_and_changes_nothing(tmp_path: Path, bad_line: str, where: str) -> None:
    home = tmp_path / "home"
    fill(home, 3)
    good = local_mcp_memory(home, "export").stdout.splitlines()
    before = files(home)
    (tmp_path / "bad.jsonl").write_text("\n".join([good[0], good[1], bad_line, *good[2:]]) + "\n")
    failed = local_mcp_memory(home, "import", str(tmp_path / "bad.jsonl"))
    assert failed.returncode == 1
    assert where in failed.stderr
    assert "nothing was imported" in failed.stderr
    assert files(home) == before


def test_an_export_of_an_unknown_version_is_refused(tmp_path: Path) -> None:
    (tmp_path / "v2.jsonl").write_text('{"format":"mcp-memory-export","version":2,"exportedAt":"2030-01-01T00:00:00Z"}\n')
    failed = local_mcp_memory(tmp_path, "import", str(tmp_path / "v2.jsonl"))
    assert (failed.returncode, "line 1, field version: unknown version 2" in failed.stderr) == (1, True)
    assert not (tmp_path / "data").exists()


@pytest.mark.parametrize("args", [["import"], ["reembed", "--batch", "0"], ["reembed", "--from", "nonsense"], ["export", "--colour"]])
def test_usage_errors_exit_with_2(tmp_path: Path, args: list[str]) -> None:
    assert local_mcp_memory(tmp_path, *args).returncode == 2


def test_export_never_puts_a_file_in_place_of_a_pipe_and_writes_through_a_symlink(tmp_path: Path) -> None:
    fill(tmp_path, 2)
    os.mkfifo(tmp_path / "pipe")
    refused = local_mcp_memory(tmp_path, "export", "--out", str(tmp_path / "pipe"))
    assert refused.returncode == 1 and "is not a regular file" in refused.stderr
    assert stat.S_ISFIFO(os.lstat(tmp_path / "pipe").st_mode)
    assert "is empty" in local_mcp_memory(tmp_path, "export", "--out", "").stderr
    (tmp_path / "kept.jsonl").write_text("old\n")
    (tmp_path / "link.jsonl").symlink_to(tmp_path / "kept.jsonl")
    assert local_mcp_memory(tmp_path, "export", "--out", str(tmp_path / "link.jsonl")).returncode == 0
    assert (tmp_path / "link.jsonl").is_symlink()
    assert (tmp_path / "kept.jsonl").read_text().startswith('{"format":"mcp-memory-export"')


def test_export_to_a_directory_says_the_out_path_is_one_and_writes_nothing(tmp_path: Path) -> None:
    fill(tmp_path, 2)
    (tmp_path / "somedir").mkdir()
    refused = local_mcp_memory(tmp_path, "export", "--out", str(tmp_path / "somedir"))
    assert refused.returncode == 1
    assert refused.stderr == f"mcp-memory export: --out {tmp_path / 'somedir'} is a directory; name a file\n"
    assert list((tmp_path / "somedir").iterdir()) == [] and not list(tmp_path.glob(".*partial*"))


def test_export_to_a_file_it_cannot_create_names_that_file_not_a_temporary_one(tmp_path: Path) -> None:
    fill(tmp_path, 2)
    refused = local_mcp_memory(tmp_path, "export", "--out", str(tmp_path / "missing" / "notes.jsonl"))
    assert refused.returncode == 1
    assert refused.stderr == f"mcp-memory export: No such file or directory: {tmp_path / 'missing' / 'notes.jsonl'}\n"


@pytest.mark.parametrize("command", [["stats"], ["export"], ["import", "-"], ["reembed"], ["context"], ["sync", "{tmp}"]])
def test_a_data_directory_that_is_a_file_is_reported_as_one(tmp_path: Path, command: list[str]) -> None:
    command = [word.format(tmp=tmp_path) for word in command]
    (tmp_path / "data").write_text("not a directory")
    header = b'{"format":"mcp-memory-export","version":1,"exportedAt":"2030-01-01T00:00:00Z"}\n'  # import reads its file first
    refused = local_mcp_memory(tmp_path, *command, stdin=header)
    name = command[0]
    assert (refused.returncode, refused.stderr) == (1, f"mcp-memory {name}: the data directory {tmp_path / 'data'} is a file, not a directory\n")
    nested = local_mcp_memory(tmp_path / "data", *command, stdin=header)  # its data directory: data/data
    assert nested.returncode == 1
    assert f"the data directory {tmp_path / 'data' / 'data'} cannot be made: {tmp_path / 'data'} is a file, not a directory" in nested.stderr


def test_stats_prints_counts_as_json(tmp_path: Path) -> None:
    fill(tmp_path, 4)
    counted = stats(tmp_path)
    assert (counted["notes"], counted["byNamespace"], counted["byTag"]) == (4, {LOCAL: 4}, {"db": 4})
    assert counted["diskBytes"] > 0


# ---------------------------------------------------------------- delete across processes


def test_a_delete_through_one_server_is_seen_by_another(tmp_path: Path, ollama: FakeOllamaServer) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.json").write_text(json.dumps({"format": 1, "embedder": {"provider": "ollama", "baseUrl": ollama.url}}))
    with StdioServer(home) as first, StdioServer(home) as second:
        kept = first.result("memory.add_note", {"projectId": "p", "groupId": "g", "text": "cache warmly"})["id"]
        gone = first.result("memory.add_note", {"projectId": "p", "groupId": "g", "text": "cache coldly"})["id"]
        assert second.result("memory.delete", {"id": gone}) == {"ok": True}
        assert first.call("memory.get", {"id": gone})["error"]["code"] == -32004
        found = first.result("memory.search", {"projectId": "p", "query": "cache coldly"})
        assert [r["id"] for r in found["results"]] == [kept]
        listed = first.result("memory.list_recent", {"projectId": "p"})
        assert [i["id"] for i in listed["items"]] == [kept]


# ---------------------------------------------------------------- re-embed


def test_a_reembed_interrupted_with_ctrl_c_resumes_and_ends_with_every_note_once(
    tmp_path: Path, ollama: FakeOllamaServer
) -> None:
    fill(tmp_path, 30)
    use_ollama(tmp_path, ollama.url)
    ollama.delay_next(0.2, times=1000)
    command = [MCP_MEMORY, "reembed", "--batch", "2", "--config", str(tmp_path / "config.json"), "--data-dir", str(tmp_path / "data")]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=server_env(tmp_path))
    deadline = time.monotonic() + 60
    while len(ollama.requests) < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert "done and kept; run the same command again to resume" in stderr
    halfway = stats(tmp_path)["byNamespace"]
    assert 0 < halfway.get(OLLAMA, 0) < 30 and sum(halfway.values()) == 30

    resumed = local_mcp_memory(tmp_path, "reembed", "--batch", "8")
    assert resumed.returncode == 0, resumed.stderr
    assert f"re-embedded {30 - halfway[OLLAMA]} notes into {OLLAMA}" in resumed.stderr
    assert f"mcp-memory reembed --drop {LOCAL}" in resumed.stderr
    done = stats(tmp_path)
    assert (done["notes"], done["byNamespace"], done["vectors"]) == (30, {OLLAMA: 30}, {LOCAL: 30, OLLAMA: 30})

    assert local_mcp_memory(tmp_path, "reembed", "--drop", LOCAL).returncode == 0
    assert stats(tmp_path)["vectors"] == {OLLAMA: 30}


def test_dropping_a_namespace_that_is_still_home_fails_with_advice(tmp_path: Path, ollama: FakeOllamaServer) -> None:
    fill(tmp_path, 2)
    use_ollama(tmp_path, ollama.url)
    refused = local_mcp_memory(tmp_path, "reembed", "--drop", LOCAL)
    assert refused.returncode == 1
    assert "still the home of 2 notes" in refused.stderr


def test_an_import_of_an_endless_stream_stops_at_the_line_bound(tmp_path: Path) -> None:
    # /dev/zero is one line that never ends: read whole, it took all memory
    failed = local_mcp_memory(tmp_path, "import", "/dev/zero")
    assert failed.returncode == 1
    assert "line 1: longer than 32 MiB" in failed.stderr and "nothing was imported" in failed.stderr


@pytest.mark.parametrize("kind", ["fifo", "device", "huge"])
def test_a_config_file_that_is_no_small_regular_file_is_refused_at_once(tmp_path: Path, kind: str) -> None:
    # a FIFO held every command until something wrote to it, /dev/zero took all memory
    config = {"fifo": tmp_path / "config.fifo", "device": Path("/dev/zero"), "huge": tmp_path / "huge.json"}[kind]
    if kind == "fifo":
        os.mkfifo(config)
    elif kind == "huge":
        config.write_text('{"format": 1, "http": {}}' + " " * 2**21)
    done = subprocess.run([MCP_MEMORY, "stats", "--config", str(config), "--data-dir", str(tmp_path / "data")],
                          capture_output=True, text=True, env=server_env(tmp_path), timeout=30)
    assert done.returncode == 1
    assert ("larger than 1 MiB" if kind == "huge" else "not a regular file") in done.stderr


def test_serve_names_a_data_directory_that_is_no_directory_and_an_unknown_log_level(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a folder")
    search = b'{"jsonrpc":"2.0","id":1,"method":"memory.search","params":{"projectId":"p","query":"x"}}\n'
    for data_dir in (tmp_path / "a-file", Path("/dev/null")):  # said "File exists" before
        done = subprocess.run([MCP_MEMORY, "serve", "--data-dir", str(data_dir)], input=search, capture_output=True,
                              env={**server_env(tmp_path), "MCP_MEMORY_LOG_LEVEL": "chatty"}, timeout=60)
        answer = json.loads(done.stdout)
        assert answer["error"]["code"] == -32006 and f"{data_dir} is not a directory" in answer["error"]["message"]
        assert b'"setting_ignored"' in done.stderr and b"MCP_MEMORY_LOG_LEVEL" in done.stderr


@pytest.mark.parametrize("command", ["stats", "export"])
def test_a_project_flag_that_is_no_project_id_is_a_usage_error_saying_the_rule(tmp_path: Path, command: str) -> None:
    # it said "CanonicalProjectId must be …" with all 5,000 characters, and exited 1
    done = local_mcp_memory(tmp_path, command, "--project", "p" * 5000)
    assert done.returncode == 2 and "argument --project: must be at most 1024 characters" in done.stderr
    assert "CanonicalProjectId" not in done.stderr and len(done.stderr) < 1_000
