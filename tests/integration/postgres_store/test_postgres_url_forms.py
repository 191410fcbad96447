"""The PostgreSQL URL in the forms libpq reads: host and port as query parameters (a
socket directory or a host name), and the scheme in any case. Replies, errors and logs
name the host and port libpq really uses, never a guessed ``localhost:5432``, and never
the password."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.serve import StdioServer
from tests.postgres_server import TEAM, TEAM_PASSWORD, EmbeddedPostgres, postgres  # noqa: F401

KEY = {"projectId": "team-app", "key": "global.project.conventions"}


def forms(postgres: EmbeddedPostgres, database: str) -> dict[str, tuple[str, str]]:
    """Each URL form and what must be shown of it (its host and port)."""
    folder, port = str(postgres.folder), postgres.port
    return {
        "socket in the query": (f"postgresql://{TEAM}:{TEAM_PASSWORD}@/{database}?host={folder}&port={port}", f"{folder}:{port}"),
        "host in the query": (f"postgresql:///{database}?host=127.0.0.1&port={port}&user={TEAM}&password={TEAM_PASSWORD}", f"127.0.0.1:{port}"),
        "upper-case scheme": (f"POSTGRESQL://{TEAM}:{TEAM_PASSWORD}@127.0.0.1:{port}/{database}", f"127.0.0.1:{port}"),
    }  # fmt: skip


@pytest.mark.parametrize("form", ["socket in the query", "host in the query", "upper-case scheme"])
def test_every_url_form_serves_and_is_reported_where_it_really_connects(tmp_path: Path, postgres: EmbeddedPostgres, form: str) -> None:
    database = postgres.new_database()
    url, where = forms(postgres, database)[form]
    host, port = where.rsplit(":", 1)
    server = StdioServer(tmp_path, "--store", url)
    try:
        assert server.result("memory.upsert_global", {**KEY, "value": "kept"})["ok"] is True
        shown = server.result("memory.get_config")["store"]
        assert shown["type"] == "postgresql"
        assert host in shown["url"] and port in shown["url"] and "localhost" not in shown["url"]
        with postgres.down():
            failed = server.call("memory.get_global", KEY)
        assert failed["error"]["code"] == -32006
        assert f"{database} on {where}" in failed["error"]["message"]
        assert server.result("memory.get_global", KEY)["value"] == "kept"
    finally:
        code, log = server.close()
        postgres.drop_database(database)
    replies = json.dumps([shown, failed])
    assert code == 0, log
    for text in (replies, log):
        assert TEAM_PASSWORD not in text and "localhost:5432" not in text
    assert f"{database} on {where}" in log
