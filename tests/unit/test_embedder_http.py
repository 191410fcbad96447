"""The retry timing and header parsing shared by the HTTP embedders."""

from __future__ import annotations

import random
from email.utils import format_datetime
from datetime import datetime, timedelta, timezone

import httpx
import numpy as np
import pytest

from adapters.embedders.remote import Backoff, display_url, retry_after, unit_rows
from application.errors import DimensionChanged, EmbedderRejected


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


def test_urls_in_messages_drop_credentials() -> None:
    assert display_url("https://bob:secret@example.com/v1") == "https://example.com/v1"
    assert display_url("http://localhost:11434/api/embed") == "http://localhost:11434/api/embed"


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
