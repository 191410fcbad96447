"""OpenAIEmbedder against a fake OpenAI server on 127.0.0.1: batching, retries, and every
failure mapped to an error that says what to do, without ever showing the key."""

from __future__ import annotations

import http.server
import random
import threading
import time
from collections.abc import Iterator

import httpx
import numpy as np
import pytest
import structlog

from local_mcp_memory.adapters.embedders.openai import OpenAIEmbedder
from local_mcp_memory.adapters.embedders.remote import Backoff
from local_mcp_memory.application.errors import DimensionChanged, EmbedderNotConfigured, EmbedderRejected, EmbedderUnavailable
from tests.fakes.embedding_servers import FakeOpenAIServer, refused_url

KEY = "sk-test-0123456789abcdef"


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(dim=16, api_key=KEY) as fake:
        yield fake


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client() as http:
        yield http


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


def make(client: httpx.Client, base_url: str, sleeps: Sleeps, **kwargs: object) -> OpenAIEmbedder:
    options: dict[str, object] = {"api_key": KEY, "base_url": base_url, "sleep": sleeps, "rng": random.Random(7)}
    return OpenAIEmbedder(client, **{**options, **kwargs})  # type: ignore[arg-type]


def test_posts_model_and_inputs_with_the_bearer_key(server: FakeOpenAIServer, client: httpx.Client, sleeps: Sleeps) -> None:
    vectors = make(client, server.base_url, sleeps, model="text-embedding-3-small").embed(["a", "b"], "passage")
    assert vectors.shape == (2, 16)
    (request,) = server.requests
    assert request.path == "/v1/embeddings"
    assert request.body == {"model": "text-embedding-3-small", "input": ["a", "b"]}
    assert request.headers["authorization"] == f"Bearer {KEY}"


def test_splits_inputs_into_batches(server: FakeOpenAIServer, client: httpx.Client, sleeps: Sleeps) -> None:
    vectors = make(client, server.base_url, sleeps, batch_size=4).embed([f"t{i}" for i in range(10)], "passage")
    assert vectors.shape == (10, 16)
    assert [len(r.body["input"]) for r in server.requests] == [4, 4, 2]


def test_missing_key_says_how_to_set_one_and_sends_nothing(server: FakeOpenAIServer, client: httpx.Client, sleeps: Sleeps) -> None:
    with pytest.raises(EmbedderNotConfigured, match=r"set OPENAI_API_KEY or memory.set_config \{embedder:\{apiKey\}\}"):
        make(client, server.base_url, sleeps, api_key=None).embed(["a"], "passage")
    assert server.requests == []


def test_a_rejected_key_is_reported_without_the_key(server: FakeOpenAIServer, client: httpx.Client, sleeps: Sleeps) -> None:
    wrong = "sk-wrong-secret-value-42"
    embedder = make(client, server.base_url, sleeps, api_key=wrong)
    with structlog.testing.capture_logs() as logs, pytest.raises(EmbedderRejected) as caught:
        embedder.embed(["a"], "passage")
    assert caught.value.status == 401
    assert "rejected the API key" in str(caught.value) and "OPENAI_API_KEY" in str(caught.value)
    for text in (str(caught.value), repr(embedder), repr(logs)):
        assert wrong not in text and wrong[-6:] not in text
    assert sleeps == []


def test_429_waits_as_long_as_retry_after_says(server: FakeOpenAIServer, client: httpx.Client, sleeps: Sleeps) -> None:
    server.fail_next(429, headers={"Retry-After": "2"})
    vectors = make(client, server.base_url, sleeps).embed(["a"], "passage")
    assert vectors.shape == (1, 16)
    assert sleeps == [2.0]


def test_persistent_429_ends_as_unavailable_after_the_retries(server: FakeOpenAIServer, client: httpx.Client, sleeps: Sleeps) -> None:
    server.fail_next(429, times=10)
    with pytest.raises(EmbedderUnavailable, match="rate limiting"):
        make(client, server.base_url, sleeps, backoff=Backoff(attempts=3)).embed(["a"], "passage")
    assert len(server.requests) == 3 and len(sleeps) == 2


def test_a_retry_after_beyond_the_limit_fails_at_once(server: FakeOpenAIServer, client: httpx.Client, sleeps: Sleeps) -> None:
    server.fail_next(429, headers={"Retry-After": "3600"})
    with pytest.raises(EmbedderUnavailable, match="try again in 3600 s"):
        make(client, server.base_url, sleeps).embed(["a"], "passage")
    assert sleeps == []


def test_500_then_success_retries_with_jittered_backoff(server: FakeOpenAIServer, client: httpx.Client, sleeps: Sleeps) -> None:
    server.fail_next(500, times=2)
    vectors = make(client, server.base_url, sleeps, backoff=Backoff(base=0.5, cap=8.0)).embed(["a"], "passage")
    assert vectors.shape == (1, 16)
    assert len(sleeps) == 2
    assert 0.25 <= sleeps[0] <= 0.5 and 0.5 <= sleeps[1] <= 1.0


def test_slow_answers_time_out_as_unavailable(server: FakeOpenAIServer, client: httpx.Client, sleeps: Sleeps) -> None:
    server.delay_next(1.0)
    embedder = make(client, server.base_url, sleeps, timeout=httpx.Timeout(0.2))
    with pytest.raises(EmbedderUnavailable, match=r"no answer within 0.2 s") as caught:
        embedder.embed(["a"], "passage")
    assert caught.value.url == server.base_url + "/embeddings"


def test_a_refused_connection_names_the_url(client: httpx.Client, sleeps: Sleeps) -> None:
    url = refused_url() + "/v1"
    with pytest.raises(EmbedderUnavailable, match=f"cannot reach openai at {url}/embeddings") as caught:
        make(client, url, sleeps, backoff=Backoff(attempts=2)).embed(["a"], "passage")
    assert caught.value.url == url + "/embeddings"
    assert len(sleeps) == 1


def test_a_password_in_the_base_url_is_not_shown(client: httpx.Client, sleeps: Sleeps) -> None:
    url = refused_url().replace("http://", "http://user:hunter2@") + "/v1"
    with pytest.raises(EmbedderUnavailable) as caught:
        make(client, url, sleeps, backoff=Backoff(attempts=1)).embed(["a"], "passage")
    assert "hunter2" not in str(caught.value) and "hunter2" not in str(caught.value.url)


def test_a_changed_dimension_between_calls_is_an_error(server: FakeOpenAIServer, client: httpx.Client, sleeps: Sleeps) -> None:
    embedder = make(client, server.base_url, sleeps)
    embedder.embed(["a"], "passage")
    server.dim = 32
    with pytest.raises(DimensionChanged) as caught:
        embedder.embed(["b"], "passage")
    assert (caught.value.expected, caught.value.got) == (16, 32)


def test_answers_are_put_back_in_input_order() -> None:
    with FakeOpenAIServer(dim=16, reverse=True) as server, httpx.Client() as client:
        texts = ["first text", "second text", "third text"]
        vectors = OpenAIEmbedder(client, api_key=None, base_url=server.base_url, require_key=False).embed(texts, "passage")
    np.testing.assert_allclose(vectors, server.vectors(texts), atol=1e-6)


def test_empty_texts_are_sent_as_a_space(server: FakeOpenAIServer, client: httpx.Client, sleeps: Sleeps) -> None:
    make(client, server.base_url, sleeps).embed(["", "x"], "passage")
    assert server.requests[0].body["input"] == [" ", "x"]


def test_a_refused_request_carries_the_server_message(server: FakeOpenAIServer, client: httpx.Client, sleeps: Sleeps) -> None:
    server.fail_next(400, body={"error": {"message": "This model's maximum context length is 8192 tokens"}})
    with pytest.raises(EmbedderRejected, match="maximum context length") as caught:
        make(client, server.base_url, sleeps).embed(["a"], "passage")
    assert caught.value.status == 400


def test_an_unknown_model_or_path_is_not_configured(server: FakeOpenAIServer, client: httpx.Client, sleeps: Sleeps) -> None:
    with pytest.raises(EmbedderNotConfigured, match="check embedder.model"):
        make(client, server.url + "/wrong", sleeps).embed(["a"], "passage")


def test_a_server_that_is_not_openai_compatible_is_rejected(server: FakeOpenAIServer, client: httpx.Client, sleeps: Sleeps) -> None:
    server.fail_next(200, body="<html>hello</html>")
    with pytest.raises(EmbedderRejected, match="did not answer with an embeddings response"):
        make(client, server.base_url, sleeps).embed(["a"], "passage")


def test_repr_hides_the_key(client: httpx.Client) -> None:
    assert KEY not in repr(OpenAIEmbedder(client, api_key=KEY))


LEAKY_TEXT = f"Incorrect API key provided: {KEY}; sent Authorization: Bearer tok-5566778899 to http://bob:hunter2@10.0.0.5/v1"
LEAKED = (KEY, KEY[-8:], "tok-5566778899", "hunter2")


@pytest.mark.parametrize(
    ("status", "error"),
    [(400, EmbedderRejected), (401, EmbedderRejected), (404, EmbedderNotConfigured), (503, EmbedderUnavailable)],
)
def test_an_error_text_echoing_secrets_is_shown_masked(
    server: FakeOpenAIServer, client: httpx.Client, sleeps: Sleeps, status: int, error: type[Exception]
) -> None:
    server.fail_next(status, body={"error": {"message": LEAKY_TEXT}}, headers={"Retry-After": "0"}, times=4)
    base_url = server.base_url.replace("http://", "http://bob:hunter2@")
    with structlog.testing.capture_logs() as logs, pytest.raises(error) as caught:
        make(client, base_url, sleeps).embed(["a"], "passage")
    shown = " ".join((str(caught.value), str(getattr(caught.value, "url", "")), repr(logs)))
    assert [secret for secret in LEAKED if secret in shown] == []
    if status != 401:  # a rejected key is answered with our own hint, not the provider's text
        assert "Incorrect API key provided: ***" in str(caught.value)


class _Endless(http.server.BaseHTTPRequestHandler):
    """Answers 200 and then sends without end: fast (``/fast``) or a byte every 50 ms (``/drip``)."""

    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        chunk = b"[" * (1 << 20) if self.path.startswith("/fast") else b" "
        try:
            while True:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
                if self.path.startswith("/drip"):
                    time.sleep(0.05)
        except OSError:  # the client hung up
            pass

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def endless() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Endless)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def test_an_answer_without_end_is_refused_at_its_bound_not_read_into_memory(endless: str, client: httpx.Client, sleeps: Sleeps) -> None:
    # the whole body was read before it was looked at: a server streaming without end took all memory
    embedder = make(client, endless + "/fast", sleeps)
    with pytest.raises(EmbedderRejected, match="answered more than 64 MiB"):
        embedder.embed(["a"], "passage")


def test_an_answer_that_drips_ends_within_the_read_timeout_in_all(endless: str, client: httpx.Client, sleeps: Sleeps) -> None:
    # httpx's read timeout is per chunk: a byte every 50 ms kept a request waiting for good
    embedder = make(client, endless + "/drip", sleeps, timeout=httpx.Timeout(1.0))
    started = time.monotonic()
    with pytest.raises(EmbedderUnavailable, match=r"no answer within 1.0 s"):
        embedder.embed(["a"], "passage")
    assert time.monotonic() - started < 5


def test_a_base_url_that_httpx_cannot_read_is_not_configured_not_an_internal_error(client: httpx.Client, sleeps: Sleeps) -> None:
    # a config file edited by hand reaches the embedder without set_config's checks
    embedder = make(client, "http://[::1", sleeps)
    with pytest.raises(EmbedderNotConfigured, match=r"embedder.baseUrl gives http://\[::1/embeddings, which is no URL"):
        embedder.embed(["a"], "passage")
    assert sleeps == []  # not retried
