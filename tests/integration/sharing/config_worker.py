"""A process that writes the shared config file, for the tests of concurrent writers.

    python config_worker.py learn CONFIG START_FILE COUNT
        record a dimension for COUNT models ``local:learned-<i>``, as a server learning them
    python config_worker.py switch CONFIG START_FILE COUNT
        memory.set_config {embedder: {model: "switched-<i>"}} COUNT times, as another server

Each prints "ready", waits for START_FILE to exist, writes, then prints "done".
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import attrs

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from tests.fakes.hashing_embedder_factory import HashingEmbedderFactory  # noqa: E402
from local_mcp_memory.adapters.json_config import JsonFileConfigRepository  # noqa: E402
from local_mcp_memory.application.embedding import Embedding  # noqa: E402
from local_mcp_memory.application.set_config import SetEmbedder  # noqa: E402
from local_mcp_memory.application.settings import Settings  # noqa: E402

DIM = 8


def learned(key: str):
    def change(settings: Settings) -> Settings:
        dims = {**settings.embedder.dims, key: DIM}
        return attrs.evolve(settings, embedder=attrs.evolve(settings.embedder, dims=dims))

    return change


def main(role: str, config: str, start_file: str, count: int) -> None:
    repository = JsonFileConfigRepository(Path(config))
    embedding = Embedding(HashingEmbedderFactory(dim=DIM), repository)
    print("ready", flush=True)
    while not Path(start_file).exists():
        time.sleep(0.005)
    for i in range(count):
        if role == "learn":
            repository.update(learned(f"local:learned-{i}"))
        else:
            embedding.switch(SetEmbedder(model=f"switched-{i}").applied_to)
    print("done", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))
