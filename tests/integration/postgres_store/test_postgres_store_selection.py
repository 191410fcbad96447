"""Choosing the PostgreSQL store as a user does: ``--store``, ``MCP_MEMORY_STORE`` or the
config file's ``store.url`` (flag > env > file), every data command, the missing extra, and
moving a memory from the local store to PostgreSQL and back with export and import."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.hashing_embedder_factory import HashingEmbedderFactory
from local_mcp_memory.adapters.json_config import ConfigFileError, JsonFileConfigRepository
from local_mcp_memory.adapters.postgres_store import PostgresNoteStore
from local_mcp_memory.application.add_note import AddNote, add_note
from local_mcp_memory.application.upsert_global import UpsertGlobal, upsert_global
from local_mcp_memory.domain.identifiers import GlobalKey, GroupId, NoteId
from local_mcp_memory.domain.note import Tags
from local_mcp_memory.entrypoints.composition.compose import compose
from local_mcp_memory.entrypoints.composition.settings import ServerOptions
from local_mcp_memory.entrypoints.composition.settings import POSTGRES_EXTRA
from tests.integration.http_server import HttpServer, rpc
from tests.integration.serve import MCP_MEMORY, StdioServer, server_env
from tests.postgres_server import TEAM_PASSWORD, EmbeddedPostgres, postgres, postgres_url  # noqa: F401

ROOT = Path(__file__).resolve().parents[3]
LOCAL = "local:all-MiniLM-L6-v2:64"


def serve_once(home: Path, requests: list[dict[str, Any]], *args: str, **env: str) -> list[dict[str, Any]]:
    """Run ``mcp-memory serve`` over stdio for ``requests``; its replies."""
    lines = "".join(json.dumps({"jsonrpc": "2.0", "id": i, **r}) + "\n" for i, r in enumerate(requests, 1))
    done = subprocess.run(
        [MCP_MEMORY, "serve", *args], input=lines, capture_output=True, text=True, env=server_env(home, **env), timeout=120
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def local_mcp_memory(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([MCP_MEMORY, *args], capture_output=True, text=True, env=server_env(home), timeout=120)


def store_of(home: Path, *args: str, **env: str) -> dict[str, Any]:
    (reply,) = serve_once(home, [{"method": "memory.get_config"}], *args, **env)
    return reply["result"]["store"]


def test_serve_with_a_store_url_keeps_notes_in_postgresql_and_shows_the_url_masked(
    tmp_path: Path, postgres: EmbeddedPostgres, postgres_url: str
) -> None:
    with StdioServer(tmp_path, "--store", postgres_url) as server:
        server.result("memory.upsert_global", {"projectId": "team-app", "key": "global.project.conventions", "value": "Type hints."})
        config = server.result("memory.get_config")
    database = postgres_url.rsplit("/", 1)[1]
    assert config["store"] == {"type": "postgresql", "url": f"postgresql://team:***@127.0.0.1:{postgres.port}/{database}"}
    assert TEAM_PASSWORD not in json.dumps(config)
    store = PostgresNoteStore(postgres_url)
    assert [e.value for e in store.iter_globals()] == ["Type hints."]
    store.close()
    assert not (tmp_path / "data").exists()


def test_the_flag_wins_over_the_environment_which_wins_over_the_config_file(tmp_path: Path, postgres: EmbeddedPostgres) -> None:
    by_flag, by_env, by_file = (postgres.url(postgres.new_database()) for _ in range(3))
    (tmp_path / "config.json").write_text(json.dumps({"format": 1, "store": {"url": by_file}}))
    shown = lambda url: url.replace(TEAM_PASSWORD, "***")  # noqa: E731
    assert store_of(tmp_path, "--store", by_flag, MCP_MEMORY_STORE=by_env)["url"] == shown(by_flag)
    assert store_of(tmp_path, MCP_MEMORY_STORE=by_env)["url"] == shown(by_env)
    assert store_of(tmp_path)["url"] == shown(by_file)
    assert store_of(tmp_path, "--store", str(tmp_path / "local")) == {"type": "faiss", "path": str(tmp_path / "local")}


def test_a_database_going_away_mid_session_answers_32006_and_the_server_recovers(
    tmp_path: Path, postgres: EmbeddedPostgres, postgres_url: str
) -> None:
    key = {"projectId": "team-app", "key": "global.project.conventions"}
    with StdioServer(tmp_path, "--store", postgres_url) as server:
        server.result("memory.upsert_global", {**key, "value": "kept"})
        with postgres.down():
            failed = server.call("memory.get_global", key)
        assert failed["error"]["code"] == -32006
        assert f"127.0.0.1:{postgres.port}" in failed["error"]["message"]
        assert postgres_url.rsplit("/", 1)[1] in failed["error"]["message"]
        assert TEAM_PASSWORD not in json.dumps(failed)
        assert server.result("memory.get_global", key)["value"] == "kept"


def test_an_http_server_started_while_the_database_is_down_listens_and_serves_once_it_is_up(
    tmp_path: Path, postgres: EmbeddedPostgres, postgres_url: str
) -> None:
    key = {"projectId": "team-app", "key": "global.project.conventions"}
    postgres.stop()
    try:
        server = HttpServer(tmp_path / "home", env={"MCP_MEMORY_STORE": postgres_url})
        assert server.wait_listening().status_code == 503  # it listens although the store cannot be opened
        with server.client() as client:
            failed = client.post("/rpc", json=rpc("memory.get_global", key)).json()
    finally:
        postgres.start()
    try:
        assert failed["error"]["code"] == -32006
        assert f"127.0.0.1:{postgres.port}" in failed["error"]["message"]
        assert postgres_url.rsplit("/", 1)[1] in failed["error"]["message"]
        assert TEAM_PASSWORD not in json.dumps(failed) and TEAM_PASSWORD not in server.log()
        with server.client() as client:  # the database is back: the same process serves
            assert client.get("/health").status_code == 200
            stored = client.post("/rpc", json=rpc("memory.upsert_global", {**key, "value": "kept"})).json()
            assert stored["result"]["ok"] is True
            assert client.post("/rpc", json=rpc("memory.get_global", key)).json()["result"]["value"] == "kept"
    finally:
        assert server.stop() == 0, server.log()


def test_an_http_server_whose_login_is_refused_listens_and_answers_32006_saying_why(
    tmp_path: Path, postgres: EmbeddedPostgres
) -> None:
    url = postgres.url(postgres.new_database(), password="not-the-password")
    server = HttpServer(tmp_path / "home", env={"MCP_MEMORY_STORE": url})
    try:
        assert server.wait_listening().status_code == 503
        with server.client() as client:
            failed = client.post("/rpc", json=rpc("memory.list_recent", {"projectId": "team-app"})).json()
        assert failed["error"]["code"] == -32006
        assert "password authentication failed" in failed["error"]["message"]
        assert "not-the-password" not in json.dumps(failed) and "not-the-password" not in server.log()
    finally:
        assert server.stop() == 0, server.log()


def without_the_extra(tmp_path: Path) -> Path:
    """A copy of this environment's packages without psycopg, psycopg-pool and pgvector."""
    import site

    shim = tmp_path / "site"
    (shim / "local_mcp_memory").mkdir(parents=True)
    for layer in ("domain", "application", "adapters", "entrypoints"):  # the package, as a wheel installs it
        (shim / "local_mcp_memory" / layer).symlink_to(ROOT / layer)
    for packages in site.getsitepackages():
        for entry in Path(packages).iterdir():
            if not entry.name.lower().startswith(("psycopg", "pgvector")) and not (shim / entry.name).exists():
                (shim / entry.name).symlink_to(entry)
    return shim


@pytest.mark.parametrize("command", [["serve"], ["export"], ["stats"]])
def test_a_postgresql_url_without_the_extra_exits_2_with_the_pip_command(tmp_path: Path, command: list[str]) -> None:
    shim = without_the_extra(tmp_path)
    program = f"import sys; sys.path[:0] = [{str(shim)!r}]; from local_mcp_memory.entrypoints.cli import main; sys.exit(main())"
    done = subprocess.run(
        [sys.executable, "-S", "-c", program, *command, "--store", "postgresql://team:pw@127.0.0.1:5432/team"],
        capture_output=True, text=True, env=server_env(tmp_path), timeout=60, stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2, done.stderr
    assert POSTGRES_EXTRA in done.stderr and "pw@" not in done.stderr


@pytest.mark.parametrize("command", [["serve"], ["stats"]])
def test_a_store_url_that_does_not_parse_exits_2(tmp_path: Path, command: list[str]) -> None:
    done = local_mcp_memory(tmp_path, *command, "--store", "postgresql://team:pw@db.example:port/team")
    assert done.returncode == 2 and "port" in done.stderr


@pytest.mark.parametrize("command", [["verify"], ["salvage", "out.jsonl"]])
def test_verify_and_salvage_say_they_check_the_local_store_only(tmp_path: Path, command: list[str]) -> None:
    done = local_mcp_memory(tmp_path, *command, "--store", "postgresql://team:pw@127.0.0.1:5432/team")
    assert done.returncode == 2 and "local store" in done.stderr and "pg_dump" in done.stderr


def test_the_config_file_keeps_its_store_section_through_updates_and_refuses_unknown_fields(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"format": 1, "store": {"url": "postgresql://team:pw@db:5432/team"}}))
    repository = JsonFileConfigRepository(path)
    repository.update(lambda settings: settings)
    assert repository.store_url() == "postgresql://team:pw@db:5432/team"
    assert os.stat(path).st_mode & 0o077 == 0
    path.write_text(json.dumps({"format": 1, "store": {"url": "postgresql://db/team", "poolSize": 3}}))
    with pytest.raises(ConfigFileError) as raised:
        repository.load()
    assert "poolSize" in str(raised.value)


# -- migration both ways --------------------------------------------------------------


def fill_local(home: Path) -> list[str]:
    """Notes and a global in ``home``'s local store, namespace LOCAL; the notes' ids."""
    services = compose(
        ServerOptions.resolve({}, home / "config.json", home / "data"),
        embedders=HashingEmbedderFactory(),
    )
    ids = []
    for i in range(12):
        command = AddNote(project_id="/work/app", group_id=GroupId(f"g{i % 3}"), text=f"note {i} on caching \x00 ok",
                          tags=Tags(("db",)), metadata={"i": i, "big": 2**70, "f": 1.0})
        ids.append(add_note(command, services).id.value)
    upsert_global(UpsertGlobal("/work/app", GlobalKey("global.project.conventions"), {"style": "black", "n": 1.5}), services)
    services.store.close()
    return ids


def notes_of(export: str) -> list[str]:
    """The lines after the header (which carries the export's time)."""
    return export.splitlines()[1:]


def test_export_from_the_local_store_imports_into_postgresql_and_back_with_ids_and_vectors(
    tmp_path: Path, postgres_url: str
) -> None:
    home = tmp_path / "home"
    ids = fill_local(home)
    config = ["--config", str(home / "config.json")]
    local = local_mcp_memory(home, "export", "--vectors", *config, "--data-dir", str(home / "data"))
    assert local.returncode == 0, local.stderr
    (tmp_path / "local.jsonl").write_text(local.stdout)

    into = local_mcp_memory(home, "import", str(tmp_path / "local.jsonl"), *config, "--store", postgres_url)
    assert into.returncode == 0, into.stderr
    assert "12 written (0 embedded)" in into.stderr
    team = local_mcp_memory(home, "export", "--vectors", *config, "--store", postgres_url)
    assert notes_of(team.stdout) == notes_of(local.stdout)

    (tmp_path / "team.jsonl").write_text(team.stdout)
    back = local_mcp_memory(home, "import", str(tmp_path / "team.jsonl"), *config, "--data-dir", str(tmp_path / "back"))
    assert back.returncode == 0, back.stderr
    again = local_mcp_memory(home, "export", "--vectors", *config, "--data-dir", str(tmp_path / "back"))
    assert notes_of(again.stdout) == notes_of(local.stdout)
    store = PostgresNoteStore(postgres_url)
    assert {s.note.id.value for s in store.iter_notes()} == set(ids)
    assert store.namespaces() == {next(iter(store.namespaces())): 12} and str(next(iter(store.namespaces()))) == LOCAL
    assert store.vector(NoteId(ids[0]), next(iter(store.namespaces()))) is not None
    store.close()
    stats = json.loads(local_mcp_memory(home, "stats", *config, "--store", postgres_url).stdout)
    assert (stats["notes"], stats["globals"], stats["byGroup"]) == (12, 1, {"g0": 4, "g1": 4, "g2": 4})
