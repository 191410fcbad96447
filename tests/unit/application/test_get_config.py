"""memory.get_config's use case: the paths and the embedder, and never a secret: the apiKey
stays in the file, and a baseUrl shows its userinfo as ``***``."""

from __future__ import annotations

import pytest

from local_mcp_memory.application.get_config import get_config
from local_mcp_memory.application.services import Services
from local_mcp_memory.application.set_config import SetConfig, SetEmbedder, set_config


@pytest.mark.parametrize(
    ("base_url", "shown"),
    [
        ("http://user:pw@host:11434/x", "http://***@host:11434/x"),
        ("https://token-only@proxy.example/v1", "https://***@proxy.example/v1"),
        ("http://127.0.0.1:11434", "http://127.0.0.1:11434"),
    ],
)
def test_the_base_url_is_shown_with_its_userinfo_masked(services: Services, base_url: str, shown: str) -> None:
    set_config(SetConfig(SetEmbedder(provider="ollama", base_url=base_url)), services)
    assert get_config(services).base_url == shown
    assert services.config.load().embedder.base_url == base_url  # the file keeps what was set


def test_the_api_key_is_not_in_the_view(services: Services) -> None:
    set_config(SetConfig(SetEmbedder(provider="openai", api_key="sk-kept-in-the-file-only")), services)
    assert "sk-kept-in-the-file-only" not in repr(get_config(services))


def test_get_config_reports_paths_and_the_embedder(services: Services) -> None:
    view = get_config(services)
    assert view.config_path.endswith("config.json") and view.data_dir.endswith("data")
    assert (view.provider, view.model) == ("local", "all-MiniLM-L6-v2")
