"""OllamaEmbedder against a fake Ollama server on 127.0.0.1."""

from __future__ import annotations

import random
from collections.abc import Iterator

import httpx
import numpy as np
import pytest
import structlog

from local_mcp_memory.adapters.embedders.ollama import OllamaEmbedder
from local_mcp_memory.adapters.embedders.remote import Backoff
from local_mcp_memory.application.errors import DimensionChanged, EmbedderNotConfigured, EmbedderRejected, EmbedderUnavailable
from tests.fakes.embedding_servers import FakeOllamaServer, refused_url


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client() as http:
        yield http


def make(client: httpx.Client, base_url: str, sleeps: list[float] | None = None, **kwargs: object) -> OllamaEmbedder:
    sink = sleeps if sleeps is not None else []
    return OllamaEmbedder(client, base_url=base_url, sleep=sink.append, rng=random.Random(3), **kwargs)  # type: ignore[arg-type]


def test_embeds_a_batch_with_api_embed(client: httpx.Client) -> None:
    with FakeOllamaServer(dim=12) as server:
        vectors = make(client, server.url).embed(["a", "b", "c"], "passage")
    assert vectors.shape == (3, 12)
    assert server.paths() == ["/api/embed"]
    assert server.requests[0].body == {"model": "nomic-embed-text", "input": ["a", "b", "c"]}


def test_the_dimension_is_whatever_the_model_answers(client: httpx.Client) -> None:
    with FakeOllamaServer(dim=768) as server:
        assert make(client, server.url).embed(["a"], "passage").shape == (1, 768)


def test_splits_inputs_into_batches(client: httpx.Client) -> None:
    with FakeOllamaServer() as server:
        make(client, server.url, batch_size=2).embed(["a", "b", "c"], "passage")
    assert [r.body["input"] for r in server.requests] == [["a", "b"], ["c"]]


def test_older_servers_fall_back_to_api_embeddings_and_stay_there(client: httpx.Client) -> None:
    with FakeOllamaServer(legacy=True) as server:
        embedder = make(client, server.url)
        first = embedder.embed(["a", "b"], "passage")
        embedder.embed(["c"], "passage")
    assert first.shape == (2, 12)
    assert server.paths() == ["/api/embed", "/api/embeddings", "/api/embeddings", "/api/embeddings"]
    assert server.requests[1].body == {"model": "nomic-embed-text", "prompt": "a"}


def test_fallback_and_new_endpoint_give_the_same_vectors(client: httpx.Client) -> None:
    with FakeOllamaServer(legacy=True) as old, FakeOllamaServer() as new:
        texts = ["same text", "", "another"]
        np.testing.assert_allclose(make(client, old.url).embed(texts, "passage"), make(client, new.url).embed(texts, "passage"), atol=1e-6)


def test_a_model_not_pulled_says_how_to_pull_it(client: httpx.Client) -> None:
    with FakeOllamaServer(models=("all-minilm",)) as server:
        with pytest.raises(EmbedderNotConfigured, match="ollama pull nomic-embed-text"):
            make(client, server.url).embed(["a"], "passage")
    assert server.paths() == ["/api/embed"]  # a JSON 404 is not an old server


def test_a_stopped_ollama_names_the_url_and_how_to_start_it(client: httpx.Client) -> None:
    url = refused_url()
    sleeps: list[float] = []
    with pytest.raises(EmbedderUnavailable, match=f"cannot reach ollama at {url}/api/embed .*ollama serve"):
        make(client, url, sleeps, backoff=Backoff(attempts=3)).embed(["a"], "passage")
    assert len(sleeps) == 2


def test_a_503_then_success_is_retried(client: httpx.Client) -> None:
    sleeps: list[float] = []
    with FakeOllamaServer() as server:
        server.fail_next(503, headers={"Retry-After": "1"})
        assert make(client, server.url, sleeps).embed(["a"], "passage").shape == (1, 12)
    assert sleeps == [1.0]


def test_a_proxy_that_refuses_the_request_is_reported_at_once_with_what_to_check(client: httpx.Client) -> None:
    sleeps: list[float] = []
    with FakeOllamaServer(token="proxy-secret") as server:
        with pytest.raises(EmbedderRejected, match=r"HTTP 401.*check the proxy .* embedder.baseUrl") as caught:
            make(client, server.url, sleeps).embed(["a"], "passage")
    assert caught.value.status == 401
    assert server.paths() == ["/api/embed"]  # neither retried nor taken for an old server
    assert sleeps == []


def test_429_waits_as_long_as_retry_after_says(client: httpx.Client) -> None:
    sleeps: list[float] = []
    with FakeOllamaServer() as server:
        server.fail_next(429, headers={"Retry-After": "2"})
        assert make(client, server.url, sleeps).embed(["a"], "passage").shape == (1, 12)
    assert sleeps == [2.0]
    assert server.paths() == ["/api/embed", "/api/embed"]


def test_persistent_429_ends_as_unavailable_after_the_retries(client: httpx.Client) -> None:
    sleeps: list[float] = []
    with FakeOllamaServer() as server:
        server.fail_next(429, times=10)
        with pytest.raises(EmbedderUnavailable, match="rate limiting") as caught:
            make(client, server.url, sleeps, backoff=Backoff(attempts=3)).embed(["a"], "passage")
    assert caught.value.url == server.url + "/api/embed"
    assert len(server.requests) == 3 and len(sleeps) == 2


def test_a_retry_after_beyond_the_limit_fails_at_once(client: httpx.Client) -> None:
    sleeps: list[float] = []
    with FakeOllamaServer() as server:
        server.fail_next(429, headers={"Retry-After": "3600"})
        with pytest.raises(EmbedderUnavailable, match="try again in 3600 s"):
            make(client, server.url, sleeps).embed(["a"], "passage")
    assert sleeps == []
    assert len(server.requests) == 1


def test_slow_answers_time_out_as_unavailable(client: httpx.Client) -> None:
    with FakeOllamaServer() as server:
        server.delay_next(1.0)
        with pytest.raises(EmbedderUnavailable, match="no answer within"):
            make(client, server.url, timeout=httpx.Timeout(0.2)).embed(["a"], "passage")


def test_a_changed_dimension_between_calls_is_an_error(client: httpx.Client) -> None:
    with FakeOllamaServer(dim=12) as server:
        embedder = make(client, server.url)
        embedder.embed(["a"], "passage")
        server.dim = 8
        with pytest.raises(DimensionChanged):
            embedder.embed(["b"], "passage")


LEAKY_TEXT = "proxy: Bearer tok-5566778899 refused for http://bob:hunter2@10.0.0.5:11434, api_key=k-12345678"
LEAKED = ("tok-5566778899", "hunter2", "k-12345678")


@pytest.mark.parametrize(
    ("status", "error"),
    [(400, EmbedderRejected), (403, EmbedderRejected), (404, EmbedderNotConfigured), (502, EmbedderUnavailable)],
)
def test_an_error_text_echoing_secrets_is_shown_masked(client: httpx.Client, status: int, error: type[Exception]) -> None:
    with FakeOllamaServer() as server, structlog.testing.capture_logs() as logs:
        server.fail_next(status, body={"error": LEAKY_TEXT}, headers={"Retry-After": "0"}, times=4)
        with pytest.raises(error) as caught:
            make(client, server.url.replace("http://", "http://bob:hunter2@"), []).embed(["a"], "passage")
    shown = " ".join((str(caught.value), str(getattr(caught.value, "url", "")), repr(logs)))
    assert [secret for secret in LEAKED if secret in shown] == []


def test_an_unreachable_url_is_named_with_its_userinfo_masked(client: httpx.Client) -> None:
    url = refused_url()
    with pytest.raises(EmbedderUnavailable) as caught:
        make(client, url.replace("http://", "http://bob:hunter2@"), backoff=Backoff(attempts=1)).embed(["a"], "passage")
    assert caught.value.url == url.replace("http://", "http://***@") + "/api/embed"
    assert f"cannot reach ollama at {caught.value.url} " in str(caught.value)
