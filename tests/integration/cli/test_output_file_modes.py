"""``export --out`` and ``salvage`` write files only their owner may read (mode 0600):
the notes in them are as private as the data directory, also when the file they replace
was readable by others."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from tests.integration.serve import MCP_MEMORY, server_env
from tests.integration.small_store import build as build_small_store
from tests.integration.cli.test_lifecycle_cli import fill, local_mcp_memory


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def readable_by_others(path: Path) -> Path:
    path.write_text("an older file\n")
    os.chmod(path, 0o644)
    return path


@pytest.mark.parametrize("existing", [False, True], ids=["new file", "over a 0644 file"])
def test_export_out_writes_mode_0600(tmp_path: Path, existing: bool) -> None:
    fill(tmp_path, 2)
    out = tmp_path / "export.jsonl"
    if existing:
        readable_by_others(out)
    done = local_mcp_memory(tmp_path, "export", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert mode(out) == 0o600
    assert out.read_text().count('"type":"note"') == 2


@pytest.mark.parametrize("existing", [False, True], ids=["new file", "over a 0644 file"])
def test_salvage_writes_mode_0600(tmp_path: Path, existing: bool) -> None:
    data = tmp_path / "data"
    written = build_small_store(data)
    out = tmp_path / "salvaged.jsonl"
    if existing:
        readable_by_others(out)
    done = subprocess.run([MCP_MEMORY, "salvage", str(out), "--data-dir", str(data)], capture_output=True, text=True, env=server_env(tmp_path), timeout=120)
    assert done.returncode == 0, done.stderr
    assert mode(out) == 0o600
    assert out.read_text().count('"type":"note"') == len(written.notes)
