"""``mcp-memory import`` into either store applies the server's rules: a vector that is not
of length 1 or a metadata value over the size limit refuses the file (line and field named,
nothing written); a note already expired is skipped with its link and never comes back."""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from local_mcp_memory.domain.json_values import MAX_CHARS
from tests.integration.serve import MCP_MEMORY, server_env
from tests.postgres_server import postgres, postgres_url  # noqa: F401

LOCAL = "local:all-MiniLM-L6-v2:64"
IDS = ["0b7a4c1e-5d2f-4a3b-8c9d-1e2f3a4b5c6d", "1c8b5d2f-6e3a-4b4c-9d0e-2f3a4b5c6d7e"]


@pytest.fixture(params=["faiss", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> list[str]:
    if request.param == "faiss":
        return ["--data-dir", str(tmp_path / "data")]
    return ["--store", request.getfixturevalue("postgres_url")]


def vector(seed: int, scale: float = 1.0) -> str:
    v = np.random.default_rng(seed).standard_normal(64).astype("<f4")
    return base64.b64encode((v / np.linalg.norm(v) * scale).astype("<f4").tobytes()).decode()


def note(index: int, **fields: object) -> dict[str, object]:
    return {"type": "note", "id": IDS[index], "projectId": "/work/app", "groupId": "g", "text": f"note {index}",
            "createdAt": "2024-01-15T10:30:00Z", "namespace": LOCAL, "vector": vector(index), **fields}  # fmt: skip


def run_import(home: Path, store: list[str], lines: list[dict[str, object]]) -> subprocess.CompletedProcess[str]:
    home.mkdir(exist_ok=True)
    (home / "config.json").write_text(json.dumps({"format": 1, "embedder": {"provider": "local", "dims": {"local:all-MiniLM-L6-v2": 64}}}))
    header = {"format": "mcp-memory-export", "version": 1, "exportedAt": "2024-01-15T10:30:00Z", "vectors": True}
    (home / "in.jsonl").write_text("".join(json.dumps(line) + "\n" for line in [header, *lines]))
    args = [MCP_MEMORY, "import", str(home / "in.jsonl"), "--config", str(home / "config.json"), *store]
    return subprocess.run(args, capture_output=True, text=True, env=server_env(home), timeout=120)


def exported_ids(home: Path, store: list[str]) -> list[str]:
    args = [MCP_MEMORY, "export", "--config", str(home / "config.json"), *store]
    done = subprocess.run(args, capture_output=True, text=True, env=server_env(home), timeout=120)
    assert done.returncode == 0, done.stderr
    return [json.loads(line)["id"] for line in done.stdout.splitlines()[1:] if '"type":"note"' in line]


@pytest.mark.parametrize(
    ("bad", "field"),
    [({"vector": vector(1, scale=40.0)}, "vector"), ({"metadata": {"k": "x" * MAX_CHARS}}, "metadata")],
    ids=["vector of length 40", "metadata over the limit"],
)
def test_a_line_breaking_a_limit_refuses_the_file_and_writes_nothing(tmp_path: Path, store: list[str], bad: dict, field: str) -> None:
    done = run_import(tmp_path / "home", store, [note(0), note(1, **bad)])
    assert done.returncode != 0
    assert f"line 3, field {field}:" in done.stderr
    assert exported_ids(tmp_path / "home", store) == []


def test_a_note_already_expired_is_skipped_with_its_link(tmp_path: Path, store: list[str]) -> None:
    link = {"type": "link", "fromId": IDS[0], "toId": IDS[1], "relation": "relates_to", "createdAt": "2024-01-15T10:30:00Z"}
    done = run_import(tmp_path / "home", store, [note(0), note(1, expiresAt="2024-02-01T00:00:00Z"), link])
    assert done.returncode == 0, done.stderr
    assert "1 notes skipped as expired, with 1 links" in done.stderr
    assert exported_ids(tmp_path / "home", store) == [IDS[0]]
