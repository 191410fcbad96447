"""Servers sharing one config file never lose each other's change: every write is a
read-modify-write of the fresh file under a lock. Real processes on a real file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.fakes.hashing_embedder_factory import HashingEmbedderFactory
from local_mcp_memory.adapters.json_config import JsonFileConfigRepository
from local_mcp_memory.application.embedding import Embedding
from local_mcp_memory.application.set_config import SetEmbedder

WORKER = str(Path(__file__).with_name("config_worker.py"))
COUNT = 150


def start(role: str, config: Path, start_file: Path) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, WORKER, role, str(config), str(start_file), str(COUNT)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stdout.readline() == "ready\n", process.stderr
    return process


def test_a_learned_dimension_and_a_set_config_of_two_processes_both_survive(tmp_path: Path) -> None:
    config, start_file = tmp_path / "config.json", tmp_path / "go"
    learner, switcher = start("learn", config, start_file), start("switch", config, start_file)
    start_file.touch()
    for process in (learner, switcher):
        out, err = process.communicate(timeout=120)
        assert (process.returncode, out) == (0, "done\n"), err
    embedder = json.loads(config.read_text())["embedder"]
    assert embedder["model"] == f"switched-{COUNT - 1}"
    assert {f"local:learned-{i}" for i in range(COUNT)} <= embedder["dims"].keys()
    assert {f"local:switched-{i}" for i in range(COUNT)} <= embedder["dims"].keys()


def test_set_config_keeps_what_another_server_wrote_since_this_one_started(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    first = Embedding(HashingEmbedderFactory(dim=16), JsonFileConfigRepository(path))
    second = Embedding(HashingEmbedderFactory(dim=16), JsonFileConfigRepository(path))
    second.switch(SetEmbedder(provider="ollama", base_url="http://127.0.0.1:11434").applied_to)

    first.namespace()  # learns the local model's dimension, knowing nothing of the switch
    first.switch(SetEmbedder(model="nomic-embed-text-v2").applied_to)

    stored = JsonFileConfigRepository(path).load().embedder
    assert (stored.provider, stored.model, stored.base_url) == ("ollama", "nomic-embed-text-v2", "http://127.0.0.1:11434")
    assert stored.dims == {"ollama:nomic-embed-text": 16, "local:all-MiniLM-L6-v2": 16, "ollama:nomic-embed-text-v2": 16}
