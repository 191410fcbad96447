"""Fitting a result object into a size limit by leaving out what comes last.

``fit(result, limit, shape)`` returns ``result`` (a decoded JSON object) as it is when its
JSON takes at most ``limit`` bytes. Otherwise it shortens the largest field it may
shorten, then the next, until the result fits:

* a list keeps its first entries, an object its first members (whole: nothing inside an
  entry is cut, so entries stay valid against the schema);
* a string keeps its first characters and ends with a marker saying how many were cut
  and how to get the rest.

A shortened result carries one more member, ``truncated`` (``TRUNCATED_SCHEMA``):
``leftOut`` counts what each field lost and ``hint`` tells the agent how to get it.

Which fields may be shortened is read from the result's output schema (``Shape``): a
string, an array, or an object whose members are free-form (a map, ``metadata``, a
global value), never an object with required members or a constrained string. Sizes
are UTF-8 bytes of compact JSON, as ``msgspec`` encodes it: a bound in bytes holds for
characters too, and also keeps text in scripts where a character takes 2-4 bytes (and
often a whole token) under a client's token limit. Units: ``limit`` and ``size`` in
bytes; a string's ``keep`` in characters.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs
import msgspec

Json = Any
Schema = dict[str, Any]

TRUNCATED = "truncated"
TRUNCATED_SCHEMA: Schema = {
    "type": "object",
    "description": "Only when the result was cut to fit: leftOut counts what each field lost; hint says how to get it.",
    "properties": {
        "leftOut": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 1}},
        "hint": {"type": "string"},
    },
    "required": ["leftOut", "hint"],
}

_encode = msgspec.json.Encoder().encode
_FIXED = frozenset({"required", "enum", "const", "pattern", "format", "minLength", "minItems", "minProperties"})
_SHORTENABLE_TYPES = frozenset({"string", "array", "object", None})


def size(value: Json) -> int:
    """Bytes of ``value`` as compact JSON."""
    return len(_encode(value))


def cut_text(text: str, keep: int, how: str) -> str:
    """``text`` when it has at most ``keep`` characters, else its first ``keep`` and a marker."""
    if len(text) <= keep:
        return text
    return f"{text[:keep]}\n[… {len(text) - keep} of {len(text)} characters cut; {how}]"


def kept_chars(text: str, limit: int, how: str, keep: int | None = None) -> int:
    """How many characters of ``text`` (at most ``keep``) ``cut_text`` may keep for its
    JSON to take at most ``limit`` bytes, marker included (0 when even that is too long)."""
    upper = len(text) if keep is None else min(keep, len(text))
    if size(cut_text(text, upper, how)) <= limit:
        return upper
    low, high = 0, upper  # size grows with the characters kept: the largest that fits
    while low < high:
        middle = (low + high + 1) // 2
        if size(cut_text(text, middle, how)) <= limit:
            low = middle
        else:
            high = middle - 1
    return low


@attrs.frozen
class Shape:
    """What bounding needs to know of a tool's result, read from its output schema.

    ``note``: the result is one note; ``note_lists``: its top-level arrays of notes;
    ``shortenable``: its top-level fields that stay valid when shortened; ``advice``: how
    the agent gets what was left out (ends every marker).
    """

    note: bool
    note_lists: frozenset[str]
    shortenable: frozenset[str]
    advice: str

    @classmethod
    def of(cls, schema: Schema, advice: str) -> Shape:
        properties: dict[str, Schema] = schema.get("properties", {})
        return cls(
            note=_is_note(schema),
            note_lists=frozenset(n for n, p in properties.items() if p.get("type") == "array" and _is_note(p.get("items", {}))),
            shortenable=frozenset(n for n, p in properties.items() if _shortenable(p)),
            advice=advice,
        )


def with_truncated(schema: Schema) -> Schema:
    """A copy of an output schema that declares the ``truncated`` member."""
    return {**schema, "properties": {**schema.get("properties", {}), TRUNCATED: TRUNCATED_SCHEMA}}


def fit(result: dict[str, Json], limit: int, shape: Shape, keep: Mapping[str, int] | None = None) -> dict[str, Json]:
    """``result`` shortened until its JSON takes at most ``limit`` bytes (when its
    shortenable fields allow). ``keep``: string fields cut to at most that many characters
    whatever the size. The input is not changed."""
    keep = keep or {}
    allowed: dict[str, int] = {}  # field -> bytes its value may take
    while True:
        fitted: dict[str, Json] = {}
        left_out: dict[str, int] = {}
        for name, value in result.items():
            fitted[name], lost = _shorten(value, allowed.get(name), keep.get(name), shape.advice)
            if lost:
                left_out[name] = lost
        marked = {**fitted, TRUNCATED: _marker(result, left_out, shape.advice)} if left_out else fitted
        over = size(marked) - limit
        if over <= 0:
            return marked
        room = {n: size(fitted[n]) for n in shape.shortenable if n in fitted and allowed.get(n) != 0}
        if not room:  # fields that may not be shortened take more than the limit: it goes out as it is
            return marked
        largest = max(room, key=room.__getitem__)
        allowed[largest] = max(0, room[largest] - over)


def _shorten(value: Json, allowed: int | None, keep: int | None, how: str) -> tuple[Json, int]:
    """``value`` within ``allowed`` bytes (None: any) and, for a string, ``keep`` characters;
    with how many of its entries or characters were left out."""
    if isinstance(value, str):
        kept = len(value) if keep is None else min(keep, len(value))
        if allowed is not None:
            kept = kept_chars(value, allowed, how, kept)
        return cut_text(value, kept, how), len(value) - kept
    if allowed is None:
        return value, 0
    if isinstance(value, list):
        kept = _prefix([size(v) + 1 for v in value], allowed - 1)  # "[" and "]", a comma after each but the last
        return value[:kept], len(value) - kept
    if isinstance(value, dict):
        members = list(value.items())
        kept = _prefix([size(k) + size(v) + 2 for k, v in members], allowed - 1)  # and a colon in each member
        return dict(members[:kept]), len(members) - kept
    return value, 0


def _prefix(sizes: list[int], room: int) -> int:
    """How many of the first ``sizes`` add up to at most ``room``."""
    total = 0
    for count, item in enumerate(sizes):
        total += item
        if total > room:
            return count
    return len(sizes)


def _marker(result: dict[str, Json], left_out: dict[str, int], how: str) -> dict[str, Json]:
    lost = "; ".join(f"{name}: the last {n} of {len(result[name])} {_unit(result[name])}" for name, n in left_out.items())
    return {"leftOut": left_out, "hint": f"Cut to fit the tool output limit ({lost} left out). To get the rest: {how}."}


def _unit(value: Json) -> str:
    return "characters" if isinstance(value, str) else "entries"


def _is_note(schema: Schema) -> bool:
    return {"id", "text"} <= set(schema.get("required", ()))


def _shortenable(schema: Schema) -> bool:
    branches = [b for b in schema.get("anyOf", [schema]) if b.get("type") != "null"]
    return all(b.get("type") in _SHORTENABLE_TYPES and not _FIXED & b.keys() for b in branches)
