"""Bounds on the size of a tool result.

Agents pay for every character of a tool result, and clients cap it (Claude Code near
25k tokens, estimated at four characters a token). ``result_bytes`` bounds the whole
``tools/call`` result: ``structuredContent`` and the text block carrying the same JSON
take at most half each. Sizes are UTF-8 bytes of compact JSON (see ``fit``).

What gets cut, in order:

1. In a list of notes (search results, recent notes) each note is a preview: its text
   keeps at most ``note_chars`` characters (fewer when many notes share half of the
   structured part of the budget, but at least ``MIN_SHARE``), its title and source at
   most ``label_chars``, its tags the first that together have at most ``label_chars``
   (then one entry ``"[… N more tags; …]"``), and metadata over ``metadata_bytes`` of
   JSON is replaced by ``{"_cut": "<why and how to read it>"}``. Every marker names the
   note's id for ``memory_get``.
2. A note read alone (``memory_get``) keeps at most ``whole_chars`` characters of text.
3. Whatever is still over the budget is shortened by ``fit.fit``: the last entries of
   the largest list or map (notes, ids, counts) are left out, or a long string is cut,
   and the result says so in ``truncated`` with the tool's advice for getting the rest.

Every step keeps the result valid against the tool's output schema (``fit.Shape`` says
what may be shortened; ``fit.with_truncated`` declares ``truncated``).
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs

from local_mcp_memory.entrypoints.mcp.fit import Shape, cut_text, fit, kept_chars, size

Json = Any


@attrs.frozen
class TextBounds:
    """Sizes in characters (``*_chars``) and UTF-8 bytes of JSON (``*_bytes``)."""

    note_chars: int = 2_000
    whole_chars: int = 20_000
    result_bytes: int = 80_000
    label_chars: int = 300
    metadata_bytes: int = 1_000

    MIN_SHARE: ClassVar[int] = 200
    MIN_RESULT_BYTES: ClassVar[int] = 10_000

    def __attrs_post_init__(self) -> None:
        for name in ("note_chars", "whole_chars", "label_chars", "metadata_bytes"):
            if getattr(self, name) < 1:
                raise ValueError(f"TextBounds.{name} must be at least 1 (got {getattr(self, name)})")
        if self.result_bytes < self.MIN_RESULT_BYTES:
            raise ValueError(f"TextBounds.result_bytes must be at least {self.MIN_RESULT_BYTES} (got {self.result_bytes})")

    @property
    def structured_bytes(self) -> int:
        """The part of ``result_bytes`` for ``structuredContent`` (the text block repeats it)."""
        return self.result_bytes // 2

    def apply(self, result: Json, shape: Shape) -> Json:
        """``result`` (decoded JSON) cut to fit; the input is not changed."""
        if not isinstance(result, dict):
            return result
        if shape.note:
            return fit(result, self.structured_bytes, shape, keep={"text": self.whole_chars})
        lists = [name for name in shape.note_lists if isinstance(result.get(name), list)]
        count = sum(len(result[name]) for name in lists)
        if count:
            share = min(self.note_chars, max(self.MIN_SHARE, self.structured_bytes // 2 // count))
            result = {**result, **{name: [self._preview(note, share) for note in result[name]] for name in lists}}
        return fit(result, self.structured_bytes, shape)

    def message(self, text: str) -> str:
        """An error message cut so that its text block stays within ``result_bytes``."""
        how = "the rest of this message is left out"
        return cut_text(text, kept_chars(text, self.result_bytes, how), how)

    def _preview(self, note: dict[str, Json], share: int) -> dict[str, Json]:
        how = f'call memory_get with id "{note["id"]}" for the whole note'
        shown = {**note, "text": cut_text(note["text"], share, how)}
        for label in ("title", "source"):
            if isinstance(note.get(label), str):
                shown[label] = cut_text(note[label], self.label_chars, how)
        if isinstance(note.get("tags"), list):
            shown["tags"] = _first_tags(note["tags"], self.label_chars, how)
        metadata = note.get("metadata")
        if metadata is not None and size(metadata) > self.metadata_bytes:
            shown["metadata"] = {"_cut": f"metadata of {size(metadata)} bytes of JSON left out; {how}"}
        return shown


def _first_tags(tags: list[str], chars: int, how: str) -> list[str]:
    """The first tags that together have at most ``chars`` characters, then a marker entry."""
    total = 0
    for count, tag in enumerate(tags):
        total += len(tag)
        if total > chars:
            return [*tags[:count], f"[… {len(tags) - count} more tags; {how}]"]
    return tags
