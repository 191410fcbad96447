"""One markdown file's text as the notes a sync keeps: front matter, title, tags, sections.

The rules (docs/cli.md, "Markdown knowledge base", states them for users):

* Front matter: a first line ``---``, YAML, then a line ``---`` or ``...``. It is read with
  PyYAML's ``safe_load`` and is not part of any note's text. It must be a mapping; ``tags``
  is a list or one value (strings, numbers and dates; empty entries dropped); ``title`` is
  the fallback title of a file without a heading. YAML that does not parse skips the file.
* Headings are ATX headings (``#`` to ``######``) outside fenced code blocks.
* A text (after the front matter, ends trimmed) of at most ``Document.SPLIT_OVER``
  characters is one note, titled by its first heading. A longer one is one note per level-2
  (``## ``) section, heading line included and titled by it, plus the text before the first
  section when it is not blank (titled by its first heading, addressed by the bare path).
* A section's fragment is its heading's slug as GitHub makes it: lower case, every
  character but letters, digits, ``_``, ``-`` and spaces dropped, spaces turned into ``-``;
  at most 100 characters; ``section`` when nothing is left; a repeat gets ``-1``, ``-2``, …
* A text longer than ``Note.TEXT_MAX`` is cut at paragraph (else line, else character)
  boundaries into pieces of at most that size; the second piece on gets ``part-2``, … added
  to the fragment.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator

import yaml

from local_mcp_memory.application.folder_documents import Document, Part, Skipped
from local_mcp_memory.domain.note import Note

SLUG_MAX = 100
_FRONT = re.compile(r"---[ \t]*\n(.*?\n)?(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL)
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*")
_NOT_SLUG = re.compile(r"[^\w\- ]")
_SCALARS = (str, int, float, dt.date)
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def parse(path: str, data: bytes, digest: str) -> Document | Skipped:
    """The document of a file's bytes, or why it cannot be synced."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Skipped(path, f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})")
    if "\x00" in text:
        return Skipped(path, "holds NUL characters: not a text file")
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    front = _FRONT.match(text)
    meta: object = None
    if front:
        try:
            meta = yaml.load(front.group(1) or "", Loader=_Loader)  # noqa: S506 (a safe loader)
        except (yaml.YAMLError, ValueError, RecursionError) as exc:
            return Skipped(path, f"front matter is not valid YAML: {_yaml_problem(exc)}")
        if meta is not None and not isinstance(meta, dict):
            return Skipped(path, "front matter must be a YAML mapping (key: value lines)")
        text = text[front.end() :]
    meta = meta or {}
    tags = _tags(meta.get("tags"))
    if isinstance(tags, str):
        return Skipped(path, tags)
    fallback = meta.get("title") if isinstance(meta.get("title"), str) else None
    body = text.strip()
    parts = tuple(_parts(body, fallback and fallback.strip() or None, tags)) if body else ()
    return Document(path, digest, parts)


def _yaml_problem(exc: BaseException) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or (str(exc).splitlines() or [type(exc).__name__])[0]
    return f"{problem} (line {mark.line + 2})" if mark is not None else problem


def _tags(value: object) -> tuple[str, ...] | str:
    """The tags of a front matter value, or why they are refused."""
    values = value if isinstance(value, list) else [value]
    tags: list[str] = []
    for item in values:
        if item is None:
            continue
        if isinstance(item, bool) or not isinstance(item, _SCALARS):
            return "front matter tags must be a list of strings or one string"
        tag = (item.isoformat() if isinstance(item, dt.date) else str(item)).strip()
        if tag:
            tags.append(tag)
    return tuple(dict.fromkeys(tags))


def _parts(body: str, fallback_title: str | None, tags: tuple[str, ...]) -> Iterator[Part]:
    if len(body) <= Document.SPLIT_OVER:
        yield from _pieces(None, _first_heading(body) or fallback_title, body, tags, set())
        return
    used: set[str] = set()
    intro, sections = _sections(body)
    if intro.strip():
        yield from _pieces(None, _first_heading(intro) or fallback_title, intro.strip(), tags, used)
    for heading, text in sections:
        fragment = _unique(_slug(heading), used)
        yield from _pieces(fragment, _title(heading), text.strip(), tags, used)


def _pieces(fragment: str | None, title: str | None, text: str, tags: tuple[str, ...], used: set[str]) -> Iterator[Part]:
    for i, piece in enumerate(_cut(text, Note.TEXT_MAX), 1):
        if i == 1:
            yield Part(fragment, title, piece, tags)
        else:
            yield Part(_unique(f"{fragment}-part-{i}" if fragment else f"part-{i}", used), title, piece, tags)


def _lines_outside_fences(text: str) -> Iterator[tuple[str, bool]]:
    """Each line of ``text`` (ends kept) and whether it is outside a fenced code block."""
    fence: str | None = None
    for line in _lines(text):
        opening = _FENCE.match(line)
        if fence is None:
            if opening:
                fence = opening.group(1)
                yield line, False
            else:
                yield line, True
        else:
            stripped = line.strip()
            if opening and stripped == opening.group(1) and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = None
            yield line, False


def _lines(text: str) -> Iterator[str]:
    """The lines of ``text``, each with its ``\n``: markdown breaks lines at ``\n`` only (``\r``
    is gone by now), not at the other characters ``str.splitlines`` breaks at."""
    lines = text.split("\n")
    for line in lines[:-1]:
        yield line + "\n"
    if lines[-1]:
        yield lines[-1]


def _heading(line: str) -> tuple[int, str] | None:
    match = _HEADING.fullmatch(line.rstrip("\n"))
    return None if match is None else (len(match.group(1)), (match.group(2) or "").strip())


def _first_heading(text: str) -> str | None:
    for line, outside in _lines_outside_fences(text):
        if outside and (found := _heading(line)) is not None and found[1]:
            return _title(found[1])
    return None


def _sections(body: str) -> tuple[str, list[tuple[str, str]]]:
    intro: list[str] = []
    sections: list[tuple[str, list[str]]] = []
    for line, outside in _lines_outside_fences(body):
        found = _heading(line) if outside else None
        if found is not None and found[0] == 2 and line.lstrip(" ").startswith("## "):
            sections.append((found[1], [line]))
        elif sections:
            sections[-1][1].append(line)
        else:
            intro.append(line)
    return "".join(intro), [(heading, "".join(lines)) for heading, lines in sections]


def _title(heading: str) -> str | None:
    return heading[: Note.TITLE_MAX] or None


def _slug(heading: str) -> str:
    slug = _NOT_SLUG.sub("", heading.lower()).replace(" ", "-")[:SLUG_MAX]
    return slug or "section"


def _unique(slug: str, used: set[str]) -> str:
    candidate, n = slug, 0
    while candidate in used:
        n += 1
        candidate = f"{slug}-{n}"
    used.add(candidate)
    return candidate


def _cut(text: str, limit: int) -> Iterator[str]:
    """``text`` in non-blank pieces of at most ``limit`` characters, cut at the last blank
    line, else the last line end, else anywhere."""
    while len(text) > limit:
        window = text[: limit + 1]
        at = window.rfind("\n\n")
        at = at if at > 0 else window.rfind("\n")
        at = at if at > 0 else limit
        piece, text = text[:at].strip(), text[at:].lstrip("\n")
        if piece:
            yield piece
    if text.strip():
        yield text.strip()
