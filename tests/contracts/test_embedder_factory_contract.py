"""The ``EmbedderFactory`` contract, run against ``DefaultEmbedderFactory`` and the
``HashingEmbedderFactory`` fake: ``create`` is cheap (no request leaves the process) for
every provider it knows, and an unknown provider is refused with ``EmbedderNotConfigured``
naming it. Which adapter a provider gets is the real factory's own test
(``tests/unit/adapters/embedders/test_factory.py``)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from local_mcp_memory.adapters.embedders.factory import DefaultEmbedderFactory
from local_mcp_memory.application.errors import EmbedderNotConfigured
from local_mcp_memory.application.ports import EmbedderFactory
from local_mcp_memory.application.settings import EmbedderSettings
from tests.fakes.hashing_embedder_factory import HashingEmbedderFactory

KNOWN = [
    EmbedderSettings(),
    EmbedderSettings(provider="openai", api_key="sk-test"),
    EmbedderSettings(provider="ollama"),
    EmbedderSettings(provider="ollama", model="mxbai-embed-large", base_url="http://127.0.0.1:9"),
]


def _refuse(request: httpx.Request) -> httpx.Response:
    raise AssertionError(f"create sent a request: {request.method} {request.url}")


@pytest.fixture(params=["default", "hashing"])
def factory(request: pytest.FixtureRequest) -> Iterator[EmbedderFactory]:
    if request.param == "hashing":
        yield HashingEmbedderFactory()
        return
    client = httpx.Client(transport=httpx.MockTransport(_refuse))
    yield DefaultEmbedderFactory(environ={}, http_client=client)
    client.close()


@pytest.mark.parametrize("settings", KNOWN, ids=lambda s: f"{s.provider}:{s.effective_model}")
def test_creating_an_embedder_for_a_known_provider_sends_no_request(
    factory: EmbedderFactory, settings: EmbedderSettings
) -> None:
    embedder = factory.create(settings)  # the real factory's client refuses every request
    assert callable(embedder.embed)


def test_an_unknown_provider_is_not_configured_and_named(factory: EmbedderFactory) -> None:
    with pytest.raises(EmbedderNotConfigured) as raised:
        factory.create(EmbedderSettings(provider="cohere"))
    assert raised.value.provider == "cohere"
