"""One contract for every ConfigRepository: the file adapter and the in-memory fake."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from adapters.json_config import ConfigFileError, JsonFileConfigRepository
from adapters.memory_config import InMemoryConfigRepository
from application.settings import EmbedderSettings, HttpSettings, Settings

CUSTOM = Settings(
    embedder=EmbedderSettings("openai", "text-embedding-3-large", "https://example.test/v1", "sk-test", {"openai:text-embedding-3-large": 3072}),
    http=HttpSettings(("http://localhost:3000",), "token-1"),
)


@pytest.fixture(params=["file", "memory"])
def repository(request: pytest.FixtureRequest, tmp_path: Path):
    if request.param == "file":
        return JsonFileConfigRepository(tmp_path / "nested" / "config.json")
    return InMemoryConfigRepository()


def test_a_fresh_repository_gives_the_defaults(repository) -> None:
    assert repository.load() == Settings()
    assert repository.load().embedder.provider == "local"


def test_what_is_saved_is_loaded(repository) -> None:
    repository.save(CUSTOM)
    assert repository.load() == CUSTOM


def test_the_file_is_private_and_written_whole(tmp_path: Path) -> None:
    path = tmp_path / "dir" / "config.json"
    JsonFileConfigRepository(path).save(CUSTOM)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert os.listdir(path.parent) == ["config.json"]
    assert json.loads(path.read_text())["format"] == 1


def test_saving_over_a_world_readable_file_makes_it_private(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text("{}")
    path.chmod(0o644)
    JsonFileConfigRepository(path).save(CUSTOM)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid"),
        ('{"format": 1, "embeder": {}}', "embeder"),
        ('{"format": 9}', "format 9"),
        ('{"format": 1, "embedder": {"provider": 3}}', "provider"),
    ],
)
def test_a_bad_file_is_a_clear_error(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(content)
    with pytest.raises(ConfigFileError, match=message):
        JsonFileConfigRepository(path).load()
