"""memory.set_config's use case: a new embedder starts a new namespace, old notes stay home."""

from __future__ import annotations

import pytest

from local_mcp_memory.application.errors import InvalidRequest
from local_mcp_memory.application.get_config import get_config
from local_mcp_memory.application.get_note import GetNote, get_note
from local_mcp_memory.application.search import SearchNotes, search
from local_mcp_memory.application.services import Services
from local_mcp_memory.application.set_config import SetConfig, SetEmbedder, set_config
from tests.fakes.memory_config import InMemoryConfigRepository
from tests.unit.steps import LOCAL, OLLAMA, add, homes, switch_to_ollama


def test_set_config_switches_namespace_and_keeps_old_notes_readable(
    services: Services, config: InMemoryConfigRepository
) -> None:
    note_id = add(services, "written with the first model")
    namespace = set_config(SetConfig(SetEmbedder(provider="ollama")), services)
    assert str(namespace) == "ollama:nomic-embed-text:64"
    assert config.settings.embedder.provider == "ollama"
    assert str(get_note(GetNote(note_id), services).namespace) == "local:all-MiniLM-L6-v2:64"
    assert search(SearchNotes(project_id="proj", query="written with the first model", mode="semantic"), services).hits == []
    assert get_config(services).provider == "ollama"


def test_switching_provider_starts_a_new_namespace_and_old_notes_stay_home(services: Services) -> None:
    note_id = add(services, "old note")
    assert switch_to_ollama(services) == OLLAMA
    assert homes(services) == {note_id.value: str(LOCAL)}


@pytest.mark.parametrize(
    ("url", "rule"),
    [
        ("ftp://example.com/v1", "must start with http:// or https://"),
        ("http://[::1", "must be a URL (Invalid IPv6 URL)"),  # was -32603: httpx refused it mid-probe
        ("http://127.0.0.1:99999/v1", "must be a URL (Port out of range 0-65535)"),
        ("http://127.0.0.1:0/v1", "must have a port in 1..65535"),
        ("http://:8080/v1", "must name a host"),
        ("http://" + "a" * 5000 + ".com", "must be at most 2048 characters"),
    ],
)
def test_a_base_url_that_is_no_usable_url_is_refused_naming_the_rule(url: str, rule: str) -> None:
    with pytest.raises(InvalidRequest) as refused:
        SetEmbedder(provider="openai", base_url=url)
    assert (refused.value.field, refused.value.rule) == ("embedder.base_url", rule)


@pytest.mark.parametrize("url", ["https://api.openai.com/v1", "http://[::1]:8080/v1", "http://localhost:11434"])
def test_a_usable_base_url_is_taken(url: str) -> None:
    assert SetEmbedder(provider="openai", base_url=url).base_url == url


@pytest.mark.parametrize("model", ["m" * 257, "line\nbreak", "tab\there"])
def test_a_model_name_too_long_or_not_printable_is_refused(model: str) -> None:
    # the name is part of every note's namespace: 100,000 characters were taken as one
    with pytest.raises(InvalidRequest) as refused:
        SetEmbedder(provider="ollama", model=model)
    assert (refused.value.field, refused.value.rule) == ("embedder.model", "must be at most 256 printable characters")
    assert SetEmbedder(provider="ollama", model="m" * 256).model == "m" * 256


def test_an_api_key_too_long_or_not_printable_is_refused_and_not_echoed() -> None:
    for key in ("k" * 4097, "sk-\nsecret"):
        with pytest.raises(InvalidRequest) as refused:
            SetEmbedder(provider="openai", api_key=key)
        assert refused.value.field == "embedder.api_key" and refused.value.value is None
