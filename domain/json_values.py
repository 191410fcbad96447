"""JSON values a note's metadata or a global setting may hold, and the rule they follow.

A value is null, a boolean, an integer, a finite number, a string, an array of values or
an object whose keys are strings, nested at most ``MAX_DEPTH`` levels (the value itself
is level 1, each array or object inside it one more). Anything else could not be written
and read back the same: JSON has no NaN, and a parser's stack ends somewhere.
"""

from __future__ import annotations

import math
from typing import Any

MAX_DEPTH = 64

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
