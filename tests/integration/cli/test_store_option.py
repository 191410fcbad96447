"""``--store`` with a URL of a scheme the server does not know is a usage error on every
command that opens the store: a mistyped URL never becomes a local directory named after it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.integration.serve import MCP_MEMORY, server_env


@pytest.mark.parametrize(
    "command", [["serve"], ["stats"], ["export"], ["context", "--project", "p"], ["sync", "docs", "--project", "p"]]
)
@pytest.mark.parametrize("url", ["mysql://team:pw@db:3306/team", "sqlite:///tmp/x.db", "http://example.com"])
def test_a_url_of_an_unknown_scheme_exits_2_and_creates_nothing(tmp_path: Path, command: list[str], url: str) -> None:
    (tmp_path / "docs").mkdir()
    before = sorted(p.name for p in tmp_path.iterdir())
    done = subprocess.run(
        [MCP_MEMORY, *command, "--store", url],
        capture_output=True, text=True, env=server_env(tmp_path), cwd=tmp_path, timeout=60, stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2, done.stderr
    assert "is not a store this server knows" in done.stderr and "pw@" not in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before
