"""Secrets are masked in what the server shows: URLs keep everything but their userinfo,
and provider texts lose keys, bearer values and credential fields."""

from __future__ import annotations

import pytest

from local_mcp_memory.application.redaction import mask_url, redact


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://user:pw@host:11434/x", "http://***@host:11434/x"),
        ("http://user@host:11434/x", "http://***@host:11434/x"),
        ("https://:only-a-password@example.com/v1?a=1#f", "https://***@example.com/v1?a=1#f"),
        ("http://us%40er:p@ss@host/x", "http://***@host/x"),
        ("http://localhost:11434", "http://localhost:11434"),
        ("https://host/v1?mail=a@b.c", "https://host/v1?mail=a@b.c"),
        ("https://az.example/openai?api-version=2024-02-01&api-key=s3cr3t", "https://az.example/openai?api-version=2024-02-01&api-key=***"),
        ("http://proxy/v1?key=abc#top", "http://proxy/v1?key=***#top"),
        ("http://proxy/v1?access_token=t&sig=x&page=2", "http://proxy/v1?access_token=***&sig=***&page=2"),
    ],
)
def test_mask_url_hides_userinfo_and_keeps_the_rest_exactly(url: str, shown: str) -> None:
    assert mask_url(url) == shown


def test_the_configured_secret_is_masked_wherever_it_appears() -> None:
    assert redact("key proj-4f9a2c1e was refused (proj-4f9a2c1e)", ["proj-4f9a2c1e"]) == "key *** was refused (***)"


def test_a_secret_too_short_to_be_told_from_words_is_not_searched_for() -> None:
    assert redact("a bad request", ["a", None, ""]) == "a bad request"


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("Incorrect API key provided: sk-abc***wxyz.", "wxyz"),
        ("Incorrect API key provided: org-12***7890.", "7890"),
        ("use key sk-proj-AbCdEf0123456789 instead", "AbCdEf0123456789"),
        ("header was Authorization: Bearer eyJhbGciOi.J9x_y", "eyJhbGciOi"),
        ("proxy said: basic dXNlcjpwYXNz", "dXNlcjpwYXNz"),
        ("bad query ?api_key=k-7788&x=1", "k-7788"),
        ('{"apiKey": "k-7788", "x": 1}', "k-7788"),
        ("{'api_key': 'k-7788'}", "k-7788"),
        ("token: k-7788", "k-7788"),
        ("upstream http://bob:hunter2@10.0.0.5:8080/v1 refused", "hunter2"),
    ],
)
def test_credential_shapes_are_masked(text: str, secret: str) -> None:
    masked = redact(text)
    assert secret not in masked and "***" in masked


def test_ordinary_text_is_left_alone() -> None:
    text = "This model's maximum context length is 8192 tokens; prompt_tokens=9100 at http://host:11434/api/embed"
    assert redact(text) == text
