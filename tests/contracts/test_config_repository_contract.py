"""One contract for every ConfigRepository: the file adapter and the in-memory fake."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import attrs

import pytest

from local_mcp_memory.adapters.json_config import ConfigFileError, HttpSection, JsonFileConfigRepository
from tests.fakes.memory_config import InMemoryConfigRepository
from local_mcp_memory.application.settings import EmbedderSettings, Settings

CUSTOM = Settings(
    embedder=EmbedderSettings("openai", "text-embedding-3-large", "https://example.test/v1", "sk-test", {"openai:text-embedding-3-large": 3072}),
)


@pytest.fixture(params=["file", "memory"])
def repository(request: pytest.FixtureRequest, tmp_path: Path):
    if request.param == "file":
        return JsonFileConfigRepository(tmp_path / "nested" / "config.json")
    return InMemoryConfigRepository()


def test_a_fresh_repository_gives_the_defaults(repository) -> None:
    assert repository.load() == Settings()
    assert repository.load().embedder.provider == "local"


def test_what_an_update_stores_is_loaded_and_returned(repository) -> None:
    assert repository.update(lambda _current: CUSTOM) == CUSTOM
    assert repository.load() == CUSTOM


def test_an_update_is_applied_to_the_stored_settings(repository) -> None:
    repository.update(lambda _current: CUSTOM)
    repository.update(lambda current: attrs.evolve(current, embedder=attrs.evolve(current.embedder, api_key=None)))
    assert repository.load() == attrs.evolve(CUSTOM, embedder=attrs.evolve(CUSTOM.embedder, api_key=None))


def test_updates_from_many_threads_all_survive(repository) -> None:
    def learn(worker: int) -> None:
        for step in range(20):
            key = f"local:model-{worker}-{step}"
            repository.update(lambda s: attrs.evolve(s, embedder=attrs.evolve(s.embedder, dims={**s.embedder.dims, key: step + 1})))

    threads = [threading.Thread(target=learn, args=(worker,)) for worker in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(repository.load().embedder.dims) == 4 * 20


def test_the_file_is_private_and_written_whole(tmp_path: Path) -> None:
    path = tmp_path / "dir" / "config.json"
    JsonFileConfigRepository(path).update(lambda _current: CUSTOM)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert sorted(os.listdir(path.parent)) == [".config.json.lock", "config.json"]  # no temporary file left
    assert stat.S_IMODE((path.parent / ".config.json.lock").stat().st_mode) == 0o600
    assert json.loads(path.read_text())["format"] == 1


def test_every_directory_the_repository_creates_is_private_and_others_keep_their_mode(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    previous = os.umask(0o022)
    try:
        JsonFileConfigRepository(tmp_path / "a" / "b" / "config.json").update(lambda _current: CUSTOM)
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "a").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "a" / "b").stat().st_mode) == 0o700
    assert stat.S_IMODE(tmp_path.stat().st_mode) == 0o755


def test_saving_over_a_world_readable_file_makes_it_private(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text("{}")
    path.chmod(0o644)
    JsonFileConfigRepository(path).update(lambda _current: CUSTOM)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_the_file_keeps_its_http_section_for_the_transport_through_updates(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text('{"format": 1, "http": {"allowedOrigins": ["http://localhost:3000"], "token": "token-1"}}')
    repository = JsonFileConfigRepository(path)
    repository.update(lambda _current: CUSTOM)
    assert repository.load() == CUSTOM
    assert repository.http_section() == HttpSection(("http://localhost:3000",), "token-1")
    assert json.loads(path.read_text())["http"] == {"allowedOrigins": ["http://localhost:3000"], "token": "token-1"}


def test_a_file_without_an_http_section_gives_no_origins_and_no_token(tmp_path: Path) -> None:
    assert JsonFileConfigRepository(tmp_path / "config.json").http_section() == HttpSection()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid"),
        ('{"format": 1, "embeder": {}}', "embeder"),
        ('{"format": 9}', "format 9"),
        ('{"format": 1, "embedder": {"provider": 3}}', "provider"),
        ('{"format": 1, "http": {"allowedOrigin": []}}', "allowedOrigin"),
    ],
)
def test_a_bad_file_is_a_clear_error(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(content)
    with pytest.raises(ConfigFileError, match=message):
        JsonFileConfigRepository(path).load()


def test_a_write_the_disk_refuses_is_the_config_files_error_and_leaves_the_file_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    from local_mcp_memory.adapters import json_config

    path = tmp_path / "config.json"
    repository = JsonFileConfigRepository(path)
    repository.update(lambda s: attrs.evolve(s, embedder=attrs.evolve(s.embedder, model="first")))
    before = path.read_bytes()

    def full(target: Path, data: bytes) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(json_config, "replace_durably", full)
    with pytest.raises(ConfigFileError, match="cannot write the config file: No space left on device") as refused:
        repository.update(lambda s: attrs.evolve(s, embedder=attrs.evolve(s.embedder, model="second")))
    assert refused.value.path == str(path)
    assert path.read_bytes() == before


def test_a_file_too_large_to_read_back_is_never_written(tmp_path: Path) -> None:
    # a config is read back only up to 1 MiB: a write beyond it would leave a file no server reads
    repository = JsonFileConfigRepository(tmp_path / "config.json")
    repository.update(lambda _current: CUSTOM)
    before = (tmp_path / "config.json").read_bytes()
    huge = attrs.evolve(CUSTOM, embedder=attrs.evolve(CUSTOM.embedder, api_key="k" * 2**21))
    with pytest.raises(ConfigFileError, match="would be larger than 1 MiB"):
        repository.update(lambda _current: huge)
    assert (tmp_path / "config.json").read_bytes() == before and repository.load() == CUSTOM
