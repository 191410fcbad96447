from __future__ import annotations

from pathlib import Path

import pytest

from local_mcp_memory.application.services import Services
from local_mcp_memory.entrypoints.composition.compose import compose
from local_mcp_memory.entrypoints.composition.settings import ServerOptions
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
        ServerOptions.resolve({}, tmp_path / "config.json", tmp_path / "data"),
        embedders=HashingEmbedderFactory(),
        store=InMemoryNoteStore(),
        clock=clock,
        config=config,
    )


@pytest.fixture
def fresh(tmp_path: Path, clock: ManualClock) -> Services:
    """A second, empty server: the target of an import."""
    return compose(
        ServerOptions.resolve({}, tmp_path / "fresh.json", tmp_path / "fresh"),
        embedders=HashingEmbedderFactory(),
        store=InMemoryNoteStore(),
        clock=clock,
        config=InMemoryConfigRepository(),
    )
