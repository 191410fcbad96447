"""What the HTTP embedders (``openai``, ``ollama``) share: one JSON POST with retries,
the mapping of HTTP failures to ``application.errors``, and checking the vectors that come
back.

Retries: on 429, on 5xx, on connection failures and connect timeouts, up to
``Backoff.attempts`` tries in all, waiting ``base * 2**n`` seconds (capped) with jitter, or
the server's ``Retry-After`` when it sends one. A read timeout is not retried: the server
got the request and is slow, and asking again would only make it slower.

Failures, after retries. No message, error field or log line shows a secret: URLs have
their userinfo masked (``http://***@host/...``) and the provider's own error text is
passed through ``application.redaction.redact`` with the API key, so a key, a bearer
value or a password the provider echoes back is shown as ``***``:

* connection refused, DNS failure, timeout, 5xx, 429 -> ``EmbedderUnavailable(url)``
* 401, 403 -> ``EmbedderRejected(status)``, the provider's hint about the key
* 404 -> ``EmbedderNotConfigured``, the provider's hint about model and baseUrl
* other 4xx, a body that is not the expected JSON, wrong vectors -> ``EmbedderRejected``
* a dimension other than the one this embedder saw first -> ``DimensionChanged``
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping, Sequence
from email.utils import parsedate_to_datetime
from typing import Any, NoReturn, TypeVar

import attrs
import httpx
import msgspec
import numpy as np
import structlog

from local_mcp_memory.application.errors import DimensionChanged, EmbedderNotConfigured, EmbedderRejected, EmbedderUnavailable
from local_mcp_memory.application.redaction import mask_url, redact

log = structlog.get_logger()

T = TypeVar("T")
RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})
SHOWN_CHARS = 300
"""How much of a provider's error text a message shows."""
MAX_ANSWER_BYTES = 64 * 2**20
"""The largest answer read: 256 vectors of 3,072 dimensions as JSON numbers take about 17 MB.
A server that sends more, or sends without end, is not an embeddings endpoint."""
EMPTY_TEXT_STANDIN = " "
"""Sent instead of an empty text: OpenAI refuses ``""`` and Ollama's older endpoint answers
it with no vector at all."""


@attrs.frozen
class Backoff:
    """Retry timing, in seconds. ``attempts`` counts the first try."""

    attempts: int = 4
    base: float = 0.5
    cap: float = 8.0
    max_retry_after: float = 60.0

    def delay(self, retry: int, rng: random.Random) -> float:
        """Exponential with equal jitter: half fixed, half random, never above ``cap``."""
        ceiling = min(self.cap, self.base * 2**retry)
        return ceiling / 2 + rng.uniform(0, ceiling / 2)


@attrs.frozen
class Hints:
    """What the user should do, per provider, when the server cannot be reached, refuses
    the key, or does not know the model."""

    unreachable: str
    auth: str
    not_found: str


class EmbeddingHttp:
    """POSTs JSON to one provider's endpoints through an injected ``httpx.Client``.
    ``secrets`` (the API key) are masked in whatever the provider's answers say."""

    def __init__(
        self,
        client: httpx.Client,
        provider: str,
        hints: Hints,
        *,
        timeout: httpx.Timeout,
        backoff: Backoff = Backoff(),
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        secrets: Sequence[str | None] = (),
    ) -> None:
        self._client = client
        self._provider = provider
        self._hints = hints
        self._timeout = timeout
        self._backoff = backoff
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._secrets = tuple(secrets)

    def post(self, url: str, payload: Any, headers: Mapping[str, str] | None = None) -> httpx.Response:
        """The first answer that is neither retryable nor a server error: a 2xx, or a 4xx
        (other than 429) left for the caller to inspect or pass to ``fail``."""
        body = msgspec.json.encode(payload)
        send_headers = {"Content-Type": "application/json", **(headers or {})}
        for retry in range(self._backoff.attempts):
            last = retry == self._backoff.attempts - 1
            try:
                response = self._bounded_post(url, body, send_headers)
            except httpx.InvalidURL as exc:  # a config file edited by hand: memory.set_config refuses such a URL
                raise EmbedderNotConfigured(
                    self._provider, f"embedder.baseUrl gives {mask_url(url)[:SHOWN_CHARS]}, which is no URL ({exc}); correct it"
                ) from exc
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                if last:
                    self._unreachable(url, "connection failed", exc)
                self._wait(url, retry, None, type(exc).__name__)
                continue
            except httpx.TimeoutException as exc:
                self._unreachable(url, f"no answer within {self._timeout.read} s", exc)
            except httpx.TransportError as exc:
                if last:
                    self._unreachable(url, type(exc).__name__, exc)
                self._wait(url, retry, None, type(exc).__name__)
                continue
            if response.status_code not in RETRYABLE_STATUS:
                return response
            if last:
                self._gave_up(url, response)
            self._wait(url, retry, response, f"HTTP {response.status_code}")
        raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover

    def _bounded_post(self, url: str, body: bytes, headers: Mapping[str, str]) -> httpx.Response:
        """The answer to one POST, read whole only within ``MAX_ANSWER_BYTES`` (decoded) and
        within the read timeout in all, not only between two chunks: a server that streams
        without end, or a byte a minute, gets ``EmbedderRejected`` or a timeout."""
        deadline = time.monotonic() + (self._timeout.read or 60.0)
        with self._client.stream("POST", url, content=body, headers=headers, timeout=self._timeout) as streamed:
            chunks, size = [], 0
            for chunk in streamed.iter_bytes():
                size += len(chunk)
                if size > MAX_ANSWER_BYTES:
                    raise EmbedderRejected(
                        self._provider, streamed.status_code,
                        f"{mask_url(url)} answered more than {MAX_ANSWER_BYTES // 2**20} MiB, which no embeddings "
                        "response is; check embedder.baseUrl",
                    )
                if time.monotonic() > deadline:
                    raise httpx.ReadTimeout("the answer did not end in time", request=streamed.request)
                chunks.append(chunk)
        kept = [(name, value) for name, value in streamed.headers.raw if name.lower() != b"content-encoding"]  # decoded
        return httpx.Response(streamed.status_code, headers=kept, content=b"".join(chunks), request=streamed.request)

    def fail(self, url: str, response: httpx.Response) -> NoReturn:
        """Raise the error a non-2xx ``response`` means."""
        status, said = response.status_code, self._said(response)
        where = mask_url(url)
        if status in (401, 403):
            raise EmbedderRejected(
                self._provider, status, f"{self._provider} rejected the API key (HTTP {status}); {self._hints.auth}"
            )
        if status == 404:
            raise EmbedderNotConfigured(
                self._provider, f"{where} answered 404 Not Found ({said}); {self._hints.not_found}"
            )
        raise EmbedderRejected(self._provider, status, f"{self._provider} refused the request (HTTP {status}): {said}")

    def decode(self, url: str, response: httpx.Response, decoder: msgspec.json.Decoder[T]) -> T:
        """The body of a 2xx ``response`` as ``decoder``'s type; ``fail`` for any other."""
        if not response.is_success:
            self.fail(url, response)
        try:
            return decoder.decode(response.content)
        except msgspec.DecodeError as exc:
            raise EmbedderRejected(
                self._provider,
                response.status_code,
                f"{mask_url(url)} did not answer with an embeddings response ({exc}); "
                "check embedder.baseUrl",
            ) from exc

    def _wait(self, url: str, retry: int, response: httpx.Response | None, reason: str) -> None:
        delay = self._backoff.delay(retry, self._rng)
        advised = retry_after(response) if response is not None else None
        if advised is not None:
            if advised > self._backoff.max_retry_after:
                assert response is not None
                self._gave_up(url, response)
            delay = advised
        log.warning("embedder_retry", provider=self._provider, url=mask_url(url), reason=reason, retry=retry + 1, delay_s=round(delay, 3))
        self._sleep(delay)

    def _gave_up(self, url: str, response: httpx.Response) -> NoReturn:
        status, where, said = response.status_code, mask_url(url), self._said(response)
        if status == 429:
            wait = retry_after(response)
            later = f"try again in {wait:.0f} s" if wait is not None else "try again later"
            message = f"{self._provider} is rate limiting requests to {where} ({said}); {later}"
        else:
            message = f"{self._provider} at {where} kept failing (HTTP {status}: {said}); try again later"
        raise EmbedderUnavailable(self._provider, where, message)

    def _said(self, response: httpx.Response) -> str:
        """The provider's error text, masked before it is cut, so that no cut-off secret
        is left showing."""
        return redact(server_message(response, limit=4 * SHOWN_CHARS), self._secrets)[:SHOWN_CHARS]

    def _unreachable(self, url: str, what: str, exc: Exception) -> NoReturn:
        where = mask_url(url)
        raise EmbedderUnavailable(
            self._provider, where, f"cannot reach {self._provider} at {where} ({what}); {self._hints.unreachable}"
        ) from exc


def retry_after(response: httpx.Response) -> float | None:
    """The ``Retry-After`` header in seconds (delta-seconds or an HTTP date), if usable."""
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def server_message(response: httpx.Response, limit: int) -> str:
    """The error text a server sent: OpenAI's ``error.message``, Ollama's ``error``, or the
    start of the body."""
    try:
        body = response.json()
    except (ValueError, RecursionError):  # not JSON, or nested too deep to parse
        body = None
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return error["message"][:limit]
        if isinstance(error, str):
            return error[:limit]
    return response.text.strip()[:limit] or "empty body"


def standins(texts: Sequence[str]) -> list[str]:
    """``texts`` with empty strings replaced by ``EMPTY_TEXT_STANDIN``."""
    return [text if text else EMPTY_TEXT_STANDIN for text in texts]


def unit_rows(rows: Sequence[Sequence[float]], provider: str, model_key: str, expected_dim: int | None) -> np.ndarray:
    """``rows`` as an L2-normalized float32 matrix, checked: all one length, no zero or
    non-finite vector, and the length ``expected_dim`` when one is known."""
    dims = {len(row) for row in rows}
    if len(dims) > 1 or 0 in dims:
        raise EmbedderRejected(provider, None, f"{model_key} returned vectors of lengths {sorted(dims)} in one answer")
    matrix = np.asarray(rows, dtype=np.float32).reshape(len(rows), dims.pop() if dims else 0)
    if expected_dim is not None and rows and matrix.shape[1] != expected_dim:
        raise DimensionChanged(provider, model_key, expected_dim, matrix.shape[1])
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    if not np.all(np.isfinite(norms)) or np.any(norms == 0):
        raise EmbedderRejected(provider, None, f"{model_key} returned a zero or non-finite vector")
    return matrix / norms
