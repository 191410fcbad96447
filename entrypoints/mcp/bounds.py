"""Bounds on the size of a tool result.

Agents pay for every character of a tool result, and clients cap it (Claude Code near
25k tokens). Note texts are the only unbounded part of our results (up to 100,000
characters each, up to 200 notes per list), so they are what gets cut: a note in a list
keeps at most ``note_chars`` characters (less when many notes share ``total_chars``), a
note read alone with ``memory_get`` at most ``whole_chars``. A cut text ends with a
marker saying how many characters were left out and how to read the rest, so the result
stays valid against the tool's output schema (``text`` is still a string).
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs

Json = Any


@attrs.frozen
class TextBounds:
    note_chars: int = 2_000
    whole_chars: int = 20_000
    total_chars: int = 40_000

    MIN_SHARE: ClassVar[int] = 200

    def __attrs_post_init__(self) -> None:
        for name in ("note_chars", "whole_chars", "total_chars"):
            if getattr(self, name) < 1:
                raise ValueError(f"TextBounds.{name} must be at least 1 (got {getattr(self, name)})")

    def apply(self, result: Json) -> Json:
        """``result`` (decoded JSON) with note texts cut to fit; the input is not changed."""
        if _is_note(result):
            return _cut(result, self.whole_chars, whole=True)
        count = _count_notes(result)
        if count == 0:
            return result
        share = min(self.note_chars, max(self.MIN_SHARE, self.total_chars // count))
        return _walk(result, share)


def _is_note(value: Json) -> bool:
    return isinstance(value, dict) and isinstance(value.get("id"), str) and isinstance(value.get("text"), str)


def _count_notes(value: Json) -> int:
    if _is_note(value):
        return 1
    if isinstance(value, dict):
        return sum(_count_notes(v) for v in value.values())
    if isinstance(value, list):
        return sum(_count_notes(v) for v in value)
    return 0


def _walk(value: Json, limit: int) -> Json:
    if _is_note(value):
        return _cut(value, limit, whole=False)
    if isinstance(value, dict):
        return {k: _walk(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v, limit) for v in value]
    return value


def _cut(note: dict[str, Json], limit: int, *, whole: bool) -> dict[str, Json]:
    text: str = note["text"]
    if len(text) <= limit:
        return note
    left_out = len(text) - limit
    if whole:
        how = "the note is too long for one tool result; `mcp-memory export` or the memory.get JSON-RPC method give it whole"
    else:
        how = f'call memory_get with id "{note["id"]}" for the whole text'
    marker = f"\n[… {left_out} of {len(text)} characters cut; {how}]"
    return {**note, "text": text[:limit] + marker}
