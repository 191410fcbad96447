"""Secrets taken out of text before it is shown: in a reply, an error or a log line.

``mask_url`` hides the userinfo of a URL (``http://user:pw@host/x`` ->
``http://***@host/x``) and the values of query parameters named like credentials
(``?key=***``), and keeps the rest exactly. ``redact`` does that to every URL in a
text and also masks what looks like a credential: the secrets it is given (the configured
API key), ``sk-...`` keys, the value after ``Bearer`` or ``Basic``, and the value of an
``api_key``/``apiKey``/``token``/``password``/``secret`` field written as ``name=value``,
``name: value`` or ``"name": "value"`` (and OpenAI's ``API key provided: value``). Each
mask is ``***``.

Provider error texts are the main customer: OpenAI answers a bad key with
``Incorrect API key provided: sk-abc***wxyz``, and a proxy may echo a header back.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MASK = "***"
MIN_SECRET_CHARS = 4
"""A configured secret shorter than this is not searched for: it would mask ordinary words."""

_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s?#@]*(?:@[^/\s?#@]*)*@")
_SECRET_QUERY = re.compile(
    r"(?i)([?&](?:[\w.\-]*key|[\w.\-]*token|sig|signature|password|passwd|pwd|secret|[\w.\-]*secret|auth[\w.\-]*)=)[^&#\s\"']+"
)
_PATTERNS = (
    (re.compile(r"\bsk-[\w*.\-]{3,}"), f"sk-{MASK}"),
    (re.compile(r"(?i)\b(bearer|basic)(\s+)[^\s\"',;]+"), rf"\1\2{MASK}"),
    (
        re.compile(
            r"(?i)(\b(?:api[ _-]?key(?:\s+provided)?|access[_-]?token|token|password|secret)[\"']?\s*[:=]\s*[\"']?)"
            r"[^\s\"',;&}]+"
        ),
        rf"\1{MASK}",
    ),
)


def mask_url(url: str) -> str:
    """``url`` with any user name and password replaced by ``***``, and the value of a query
    parameter named like a credential (``key``, ``api-key``, ``token``, ``sig``, ``password``,
    ``secret``, ``auth…``: ``?api-key=***&api-version=2024-02-01``); otherwise unchanged."""
    return _SECRET_QUERY.sub(rf"\1{MASK}", _USERINFO.sub(rf"\1{MASK}@", url))


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` with ``secrets`` and anything shaped like a credential masked."""
    for secret in secrets:
        if secret and len(secret.strip()) >= MIN_SECRET_CHARS:
            text = text.replace(secret, MASK)
    text = mask_url(text)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text
