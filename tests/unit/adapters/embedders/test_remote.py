"""The retry timing and header parsing shared by the HTTP embedders."""

from __future__ import annotations

import random
from email.utils import format_datetime
from datetime import datetime, timedelta, timezone

import httpx
import numpy as np
import pytest

from local_mcp_memory.adapters.embedders.remote import SHOWN_CHARS, Backoff, EmbeddingHttp, Hints, retry_after, unit_rows
from local_mcp_memory.application.errors import DimensionChanged, EmbedderRejected


def test_backoff_grows_exponentially_with_jitter_and_a_cap() -> None:
    backoff, rng = Backoff(base=0.5, cap=4.0), random.Random(1)
    for retry, ceiling in enumerate([0.5, 1.0, 2.0, 4.0, 4.0, 4.0]):
        assert ceiling / 2 <= backoff.delay(retry, rng) <= ceiling


def test_backoff_is_deterministic_for_a_seeded_rng() -> None:
    assert Backoff().delay(2, random.Random(5)) == Backoff().delay(2, random.Random(5))


def test_retry_after_reads_seconds_and_http_dates() -> None:
    assert retry_after(httpx.Response(429, headers={"Retry-After": "7"})) == 7.0
    later = format_datetime(datetime.now(timezone.utc) + timedelta(seconds=30), usegmt=True)
    assert 25 <= (retry_after(httpx.Response(429, headers={"Retry-After": later})) or 0) <= 31
    assert retry_after(httpx.Response(429, headers={"Retry-After": "soon"})) is None
    assert retry_after(httpx.Response(429)) is None


def http(secrets: tuple[str, ...] = ()) -> EmbeddingHttp:
    hints = Hints(unreachable="start it", auth="check the key", not_found="check the model")
    return EmbeddingHttp(httpx.Client(), "openai", hints, timeout=httpx.Timeout(1.0), secrets=secrets)


def test_a_provider_error_text_is_shown_with_the_key_bearer_and_password_masked() -> None:
    said = {"error": {"message": "key k-secret-0123 sent as Bearer tok-9876 via http://bob:hunter2@proxy/v1"}}
    with pytest.raises(EmbedderRejected) as caught:
        http(("k-secret-0123",)).fail("http://bob:hunter2@proxy/v1/embeddings", httpx.Response(400, json=said))
    message = str(caught.value)
    assert "via http://***@proxy/v1" in message
    assert all(secret not in message for secret in ("k-secret-0123", "tok-9876", "hunter2"))


def test_a_key_at_the_cut_of_a_long_error_text_is_masked_before_the_cut() -> None:
    said = {"error": {"message": "x" * (SHOWN_CHARS - 6) + " k-secret-0123456789"}}
    with pytest.raises(EmbedderRejected) as caught:
        http(("k-secret-0123456789",)).fail("http://proxy/v1/embeddings", httpx.Response(400, json=said))
    assert "k-sec" not in str(caught.value)


def test_an_error_body_nested_too_deep_to_parse_is_still_reported() -> None:
    with pytest.raises(EmbedderRejected, match="refused the request"):
        http().fail("http://proxy/v1/embeddings", httpx.Response(400, content=b"[" * 100_000))


def test_unit_rows_normalizes_to_float32() -> None:
    matrix = unit_rows([[3.0, 4.0]], "p", "p:m", None)
    assert matrix.dtype == np.float32
    np.testing.assert_allclose(matrix, [[0.6, 0.8]], rtol=1e-6)


def test_unit_rows_refuses_mixed_zero_and_changed_vectors() -> None:
    with pytest.raises(EmbedderRejected, match="lengths"):
        unit_rows([[1.0, 0.0], [1.0]], "p", "p:m", None)
    with pytest.raises(EmbedderRejected, match="zero"):
        unit_rows([[0.0, 0.0]], "p", "p:m", None)
    with pytest.raises(DimensionChanged):
        unit_rows([[1.0, 0.0]], "p", "p:m", 3)
