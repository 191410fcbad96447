"""The markdown of a session context, and how it stays within its budget.

The page is, in this order: a header line naming the project (and the group); the
project's global settings (the standard keys of SPEC §7 in their order, then the others by
key; strings as written, other values as compact JSON); the most recent notes, newest
first; with a query, the most relevant notes not already listed, best first. A section
with nothing in it is left out, so a project with nothing stored is the header alone.

The budget (``Budget``, sizes in characters as Python counts them, code points):

1. A global value is cut to ``value_chars``. The settings are listed while the section,
   keeping 80 characters for one more line, stays within ``globals_chars``; the first
   setting that does not fit is left out with all after it, and that line says how many.
2. Each note is one list item: a line with its createdAt, group, title (cut to
   ``label_chars``), tags (cut to ``label_chars``), score (relevant notes) and id, then
   its text, indented two spaces. The notes share what the header and the settings
   leave, less ``reserve`` for a closing line, in the order of the page: a note's text
   may take the room left divided by the notes not yet placed, less the note's own line
   (and its section's heading, for the first note of a section), or ``min_share``
   characters if that is more, but never more than the room left. A text longer than
   that is cut with "…" (``memory.get`` returns it whole); a short note leaves what it
   does not use to the notes after it. A note that would keep fewer than ``min_text``
   characters of its text is left out with every note after it, and a closing line
   says how many.

So the page is never longer than ``total`` characters.

The page is printed to terminals (``mcp-memory context``, the SessionStart hook), so a
control character other than newline and tab, wherever it comes from (a note, a title, a
setting, the project), is shown as the symbol picturing it (ESC as ␛), never sent as is.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import attrs

from local_mcp_memory.application.ports import Hit, StoredNote
from local_mcp_memory.domain.identifiers import CanonicalProjectId, GroupId
from local_mcp_memory.domain.note import GlobalEntry
from local_mcp_memory.domain.time import format_instant

STANDARD_KEYS = (
    "global.memory.embedder.provider",
    "global.memory.embedder.model",
    "global.memory.groupDefaults",
    "global.project.conventions",
)
"""SPEC §7's standard keys, in the order a page lists them."""

CUT = "…"


@attrs.frozen
class Budget:
    total: int = 8_000
    globals_chars: int = 3_000
    value_chars: int = 500
    label_chars: int = 120
    min_share: int = 200
    min_text: int = 40
    reserve: int = 200


@attrs.frozen
class Page:
    text: str
    items: list[StoredNote]


def render(
    project: CanonicalProjectId,
    group: GroupId | None,
    query: str | None,
    settings: Sequence[GlobalEntry],
    recent: Sequence[StoredNote],
    relevant: Sequence[Hit],
    budget: Budget,
) -> Page:
    parts = [f"# Project memory: {project}" + (f" (group {group})" if group else "") + "\n"]
    if settings:
        parts.append(_settings(settings, budget))
    notes: list[tuple[str, StoredNote, float | None]] = [("## Recent notes", s, None) for s in recent]
    if query is not None:
        notes += [(f"## Relevant to: {_label(query, budget.label_chars)}", h.stored, h.score) for h in relevant]
    room = budget.total - len("".join(parts)) - budget.reserve
    items: list[StoredNote] = []
    section = None
    for placed, (heading, stored, score) in enumerate(notes):
        opening = f"\n{heading}\n" if heading != section else ""
        line = _head(stored, score, budget)
        fair = room // (len(notes) - placed) - len(opening) - len(line)
        body = _body_within(stored.note.text.strip(), min(room - len(opening) - len(line), max(fair, budget.min_share)), budget)
        if body is None:
            parts.append(f"\n{CUT} {len(notes) - placed} more notes left out to stay within {budget.total:,} characters.\n")
            break
        parts += [opening, line, body]
        room -= len(opening) + len(line) + len(body)
        items.append(stored)
        section = heading
    return Page(printable("".join(parts)), items)


def _settings(settings: Sequence[GlobalEntry], budget: Budget) -> str:
    rank = {key: i for i, key in enumerate(STANDARD_KEYS)}
    ordered = sorted(settings, key=lambda e: (rank.get(e.key.value, len(rank)), e.key.value))
    lines = ["\n## Global settings\n"]
    for shown, entry in enumerate(ordered):
        line = f"- {entry.key}: {_indented(_cut(_value(entry.value), budget.value_chars))}\n"
        if len("".join(lines)) + len(line) > budget.globals_chars - 80:
            lines.append(f"- {CUT} {len(ordered) - shown} more global settings left out.\n")
            break
        lines.append(line)
    return "".join(lines)


def _head(stored: StoredNote, score: float | None, budget: Budget) -> str:
    note = stored.note
    head = [format_instant(note.created_at), f"group {note.group_id}"]
    if note.title is not None and note.title.strip():
        head.append(f"**{_label(note.title, budget.label_chars)}**")
    if note.tags.values:
        head.append("tags: " + _label(", ".join(note.tags.values), budget.label_chars))
    if score is not None:
        head.append(f"score {score:.2f}")
    head.append(f"id {note.id}")
    return "- " + " · ".join(head) + "\n"


def _body_within(text: str, room: int, budget: Budget) -> str | None:
    """``text`` indented under its list item in at most ``room`` characters, cut with "…"
    if need be; None when fewer than ``min_text`` of its characters would be left."""
    if len(_body(text)) <= room:
        return _body(text)
    if len(_body(_cut(text, budget.min_text + 1))) > room:
        return None
    low, high = budget.min_text + 1, len(text)  # _body(_cut(text, low)) fits, _body(text) does not
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if len(_body(_cut(text, middle))) <= room else (low, middle)
    return _body(_cut(text, low))


_VISIBLE = {
    **{code: 0x2400 + code for code in range(0x20) if chr(code) not in "\n\t"},
    0x7F: 0x2421,
    **{code: 0xFFFD for code in range(0x80, 0xA0)},
}


def printable(text: str) -> str:
    """``text`` with each control character but newline and tab shown as the symbol that
    pictures it (ESC as ␛, CR as ␍, DEL as ␡; a C1 control, which has none, as �), one
    character for one, so a budget holds: whatever prints it to a terminal (the page, a
    hook's output) runs no escape sequence a note carried."""
    return text.translate(_VISIBLE)


def _body(text: str) -> str:
    return "".join(f"  {line}\n" if line.strip() else "\n" for line in text.splitlines())


def _indented(text: str) -> str:
    return "\n  ".join(text.splitlines())


def _value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _label(text: str, limit: int) -> str:
    return _cut(" ".join(text.split()), limit)


def _cut(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` characters, the last of a shortened one "…"."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + CUT
