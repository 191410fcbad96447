"""JSON values a note's metadata or a global setting may hold, and the rule they follow.

A value is null, a boolean, an integer, a finite number, a string, an array of values or
an object whose keys are strings, nested at most ``MAX_DEPTH`` levels (the value itself
is level 1, each array or object inside it one more). Anything else could not be written
and read back the same: JSON has no NaN, and a parser's stack ends somewhere.
"""

from __future__ import annotations

import math
import json
from typing import Any

MAX_DEPTH = 64
MAX_CHARS = 1_000_000
"""The most characters a note's metadata or a global value may take as compact JSON
(``{"a":[1,2]}``, no spaces, non-ASCII characters as themselves): ten times a note's
text, and within what one request may carry (8 MiB over HTTP, 16 MiB a stdio line)."""

_SCALARS = (str, bool, int, type(None))


def json_value_problem(value: Any) -> str | None:
    """Why ``value`` is not a storable JSON value, or None if it is. Iterative, so a value
    of any depth is judged without recursion."""
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, _SCALARS):
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                return "must hold finite numbers only (no NaN or infinity)"
            continue
        if not isinstance(item, (dict, list, tuple)):
            return f"must hold JSON values only (got a {type(item).__name__})"
        if depth > MAX_DEPTH:
            return f"must be nested at most {MAX_DEPTH} levels deep"
        if isinstance(item, dict):
            if not all(isinstance(key, str) for key in item):
                return "must have string keys only"
            pending.extend((child, depth + 1) for child in item.values())
        else:
            pending.extend((child, depth + 1) for child in item)
    return None


def json_size_problem(value: Any, limit: int = MAX_CHARS) -> str | None:
    """Why ``value`` is too large, or None (also for a value ``json_value_problem`` refuses:
    that rule speaks first)."""
    if value is None:  # most notes' metadata: no encoder built for "null"
        return None
    if json_value_problem(value):
        return None
    size = len(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
    if size > limit:
        return f"must take at most {limit:,} characters as compact JSON (it takes {size:,})"
    return None
