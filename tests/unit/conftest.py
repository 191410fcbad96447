from __future__ import annotations

from pathlib import Path

import pytest

from local_mcp_memory.application.services import Services
from local_mcp_memory.entrypoints.composition.compose import compose
from tests.fakes.hashing_embedder_factory import HashingEmbedderFactory
from tests.fakes.manual_clock import ManualClock
from tests.fakes.memory_config import InMemoryConfigRepository
from tests.fakes.memory_store import InMemoryNoteStore


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def config() -> InMemoryConfigRepository:
    return InMemoryConfigRepository()


@pytest.fixture
def services(tmp_path: Path, clock: ManualClock, config: InMemoryConfigRepository) -> Services:
    return compose(
        config_path=tmp_path / "config.json",
        data_dir=tmp_path / "data",
        environ={},
        embedders=HashingEmbedderFactory(),
        store=InMemoryNoteStore(),
        clock=clock,
        config=config,
    )


@pytest.fixture
def fresh(tmp_path: Path, clock: ManualClock) -> Services:
    """A second, empty server: the target of an import."""
    return compose(
        config_path=tmp_path / "fresh.json",
        data_dir=tmp_path / "fresh",
        environ={},
        embedders=HashingEmbedderFactory(),
        store=InMemoryNoteStore(),
        clock=clock,
        config=InMemoryConfigRepository(),
    )
