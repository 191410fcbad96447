from __future__ import annotations

from pathlib import Path

import pytest

from local_mcp_memory.application.services import Services
from tests.unit.entrypoints.mcp.dispatch_client import Client


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The server's own project: a directory, as the working directory would be."""
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def client(services: Services, project: Path) -> Client:
    return Client(services, project)
