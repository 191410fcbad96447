"""Where and why a msgspec decode failed, told in the wire's field names: shared by the
JSON-RPC errors (``entrypoints.rpc.errors``) and the export file (``adapters.export_file``).
Imports the standard library only (``shown_as_json`` takes msgspec when first called), so the
edge loads it at start-up for free."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

SHOWN_CHARS = 200
"""Characters of a value, a name or a path an error tells back; a longer one is cut, so that
a 100,000-character key sent costs no 100,000-character answer (nor an agent's context)."""

_AT = re.compile(r"^(?P<rule>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.DOTALL)
_NAMED = re.compile(r"(?:missing required|unknown) field `(?P<name>[^`]+)`")
_LONG_QUOTED = re.compile(r"(`|')([^`']{%d,})\1" % (SHOWN_CHARS + 1))


def cut(text: str, limit: int = SHOWN_CHARS) -> str:
    """``text``, or its first ``limit`` - 1 characters and "…"."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def field_and_rule(exc: Exception) -> tuple[str | None, str]:
    """Where a msgspec validation failed, as a path (``patch.tags[0]``), and why."""
    match = _AT.match(str(exc))
    rule = match.group("rule") if match else str(exc)
    path = (match.group("path") or "") if match else ""
    named = _NAMED.search(rule)
    if named:
        path = f"{path}.{named.group('name')}"
    rule = _LONG_QUOTED.sub(lambda m: m.group(1) + cut(m.group(2)) + m.group(1), rule)  # a long name or value sent
    return cut(path.lstrip(".")) or None, rule


_SNAKE = re.compile(r"_([a-z0-9])")


def wire_path(path: str | None) -> str | None:
    """A field path in wire names: the domain's ``notes[2].created_at`` is ``notes[2].createdAt``."""
    return None if path is None else _SNAKE.sub(lambda m: m.group(1).upper(), path)


def shown_as_json(value: Any, limit: int) -> str:
    """A refused value told back as JSON writes it (an instant in ISO 8601), never as a
    Python repr where JSON can say it, cut to ``limit`` characters."""
    import msgspec

    from local_mcp_memory.domain.time import format_instant

    if isinstance(value, datetime):
        value = format_instant(value)
    try:
        text = msgspec.json.encode(value).decode()
    except (TypeError, ValueError, OverflowError, msgspec.EncodeError):
        text = repr(value)
    return cut(text, limit)
