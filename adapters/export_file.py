"""The export file: JSON Lines, UTF-8, format ``mcp-memory-export`` version 1. The
application writes and reads it through the ports ``ExportWriter`` and ``ExportReader``
(``EXPORT_FILE`` implements both); ``mcp-memory export``, ``import`` and ``salvage`` use it.

Line 1 is the header; then one line per note, in the store's write order; then one line
per global setting; then one line per link, oldest first. Every line is one JSON object
ending in ``\\n``::

    {"format":"mcp-memory-export","version":1,"exportedAt":"2024-01-15T10:30:00Z",
     "projectId":null,"namespace":"local:all-MiniLM-L6-v2:384","vectors":true,"notes":1,"globals":1}
    {"type":"note","id":"…","projectId":"/home/me/app","groupId":"feature-1","title":null,
     "text":"…","tags":["db"],"source":null,"createdAt":"2024-01-15T10:30:00Z",
     "metadata":null,"namespace":"local:all-MiniLM-L6-v2:384","vector":"<base64>"}
    {"type":"global","id":"…","projectId":"/home/me/app","key":"global.project.conventions",
     "value":"…","updatedAt":"2024-01-15T10:30:00Z"}
    {"type":"link","fromId":"…","toId":"…","relation":"supersedes","createdAt":"2024-01-16T09:00:00Z"}

Header: ``namespace`` is the exporting server's current namespace (null if never used),
``vectors`` whether note lines carry one, ``notes``/``globals``/``links`` how many lines follow (an
importer checks them when present: a file cut at a line boundary is caught too).
A note line carries every field of the note as ``memory.get`` returns it, its home
``namespace``, and with ``--vectors`` its vector there: little-endian float32, base64.
A note line also carries ``expiresAt`` (null when none; expired notes and their links are
not exported) and, for a note a markdown sync wrote, its ``origin`` (``root``, ``path``,
``digest``), so a synced folder keeps owning its notes after a move between stores.
It carries ``importance`` (0..1) and ``expirySpan``: the original span of its expiry in
seconds (null: none recorded, derived as expiresAt - createdAt), so fading goes on after an
import; supersession travels as ``supersedes`` link lines.
``title``, ``tags``, ``source``, ``metadata``, ``expiresAt``, ``importance``, ``expirySpan``,
``origin``, ``namespace`` and ``vector`` may be left out by hand-written files. A global line's ``id`` is derived from projectId and key.

Reading validates the whole file before anything is written; the first broken rule is
raised as ``ImportFileInvalid`` naming the line, the field and the rule.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any, BinaryIO

import msgspec
import numpy as np
from msgspec import UNSET, Struct, UnsetType

from local_mcp_memory.adapters.json_converter import CAMEL
from local_mcp_memory.adapters.msgspec_errors import field_and_rule, shown_as_json, wire_path
from local_mcp_memory.application.errors import ImportFileInvalid
from local_mcp_memory.application.export_notes import Export, ExportedNote, ExportFile
from local_mcp_memory.application.services import at
from local_mcp_memory.application.vectors import length_problem
from local_mcp_memory.domain.errors import InvalidValue
from local_mcp_memory.domain.identifiers import CanonicalProjectId, GlobalKey, Namespace, NoteId
from local_mcp_memory.domain.link import Link, LinkKey, Relation
from local_mcp_memory.domain.note import GlobalEntry, require_within_size
from local_mcp_memory.domain.time import format_instant, parse_instant

FORMAT_NAME = "mcp-memory-export"
VERSION = 1

_STRICT = dict(frozen=True, forbid_unknown_fields=True, kw_only=True, rename="camel")


class Header(Struct, **_STRICT):
    format: str
    version: int
    exported_at: str
    project_id: str | None = None
    namespace: str | None = None
    vectors: bool = False
    notes: int | None = None
    globals: int | None = None
    links: int | None = None


class NoteLine(Struct, tag="note", tag_field="type", **_STRICT):
    id: str
    project_id: str
    group_id: str
    title: str | None = None
    text: str
    tags: list[str] = []
    source: str | None = None
    created_at: str
    metadata: dict[str, Any] | None = None
    expires_at: str | None = None
    importance: float = 0.5
    expiry_span: float | None = None
    origin: dict[str, str] | UnsetType = UNSET
    namespace: str | None = None
    vector: bytes | None | UnsetType = UNSET


class GlobalLine(Struct, tag="global", tag_field="type", **_STRICT):
    id: str | None = None
    project_id: str
    key: str
    value: Any
    updated_at: str


class LinkLine(Struct, tag="link", tag_field="type", **_STRICT):
    from_id: str
    to_id: str
    relation: str
    created_at: str


_LINES: dict[str, type[Struct]] = {"note": NoteLine, "global": GlobalLine, "link": LinkLine}
_TYPED = msgspec.json.Decoder(NoteLine | GlobalLine | LinkLine)
"""A line after the header, by its ``type``: one pass from bytes to the line's Struct (base64
vectors included); a line it refuses is decoded again generically to name what is wrong."""


# ---------------------------------------------------------------- writing


def write_export(export: Export, out: BinaryIO, exported_at: datetime, vectors: bool) -> None:
    encode = msgspec.json.Encoder().encode
    header = Header(
        format=FORMAT_NAME,
        version=VERSION,
        exported_at=format_instant(exported_at),
        project_id=None if export.project_id is None else export.project_id.value,
        namespace=None if export.namespace is None else str(export.namespace),
        vectors=vectors,
        notes=export.note_count,
        globals=len(export.globals),
        links=len(export.links),
    )
    out.write(encode(header) + b"\n")
    for exported in export.notes:
        out.write(encode(_note_line(exported)) + b"\n")
    for entry in export.globals:
        out.write(encode(_global_line(entry)) + b"\n")
    for link in export.links:
        out.write(encode(_link_line(link)) + b"\n")


def _note_line(exported: ExportedNote) -> NoteLine:
    namespace, vector = exported.namespace, exported.vector
    return CAMEL.struct(
        exported.note,
        NoteLine,
        namespace=None if namespace is None else str(namespace),
        vector=UNSET if vector is None else np.asarray(vector, dtype="<f4").tobytes(),
    )


def _global_line(entry: GlobalEntry) -> GlobalLine:
    return GlobalLine(
        id=entry.id,
        project_id=entry.project_id.value,
        key=entry.key.value,
        value=entry.value,
        updated_at=format_instant(entry.updated_at),
    )


def _link_line(link: Link) -> LinkLine:
    key = link.key
    return LinkLine(from_id=key.from_id.value, to_id=key.to_id.value, relation=key.relation.value, created_at=format_instant(link.created_at))


# ---------------------------------------------------------------- reading


MAX_LINE_BYTES = 32 * 2**20
"""The longest line read: a note's 100,000 characters of text and a million of metadata, each
escaped in JSON as six characters, with a vector, fit several times over; a longer one is
refused before it is read whole (a file of one endless line would take all memory)."""


def read_export(lines: Iterable[bytes]) -> ExportFile:
    """Every line checked, or ``ImportFileInvalid`` for the first one that is not right.
    Blank lines after the header are skipped; a repeated note id or global key is refused;
    from a stream (``readline``), a line over ``MAX_LINE_BYTES`` is refused unread."""
    decode = msgspec.json.Decoder().decode
    typed = _TYPED.decode
    header: Header | None = None
    notes: dict[str, ExportedNote] = {}
    globals_: dict[tuple[str, str], GlobalEntry] = {}
    links: list[Link] = []
    seen: dict[object, int] = {}
    number = 0
    for number, raw in enumerate(_bounded(lines), start=1):
        if raw is None:
            raise ImportFileInvalid(number, None, f"longer than {MAX_LINE_BYTES // 2**20} MiB; no line of an export is")
        if not raw.strip() and header is not None:
            continue
        line: Any = None
        if header is not None:
            try:  # the usual line, decoded straight into its shape
                line = typed(raw)
            except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
                pass  # decoded again below, to say what is wrong
        if line is None:
            try:
                obj = decode(raw)
            except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
                raise ImportFileInvalid(number, None, "not a complete JSON object in UTF-8 (a truncated or damaged line?)") from None
            if header is None:
                header = _header(number, obj)
                continue
            line = _shaped(number, obj, _LINES[_kind(number, obj)])
        if isinstance(line, LinkLine):
            link = _checked(number, _link, line)
            _first(seen, link.key, number, "relation", "repeats a link")
            links.append(link)
        elif isinstance(line, NoteLine):
            exported = _checked(number, _note, line)
            note_id = exported.note.id.value
            _first(seen, note_id, number, "id", f"repeats note id {note_id}")
            notes[note_id] = exported
        else:
            entry = _checked(number, _entry, line)
            key = (entry.project_id.value, entry.key.value)
            _first(seen, key, number, "key", f"repeats key {key[1]} of project {key[0]}")
            globals_[key] = entry
    if header is None:
        raise ImportFileInvalid(1, None, "the file is empty; an export starts with a header line")
    _counted(header.notes, len(notes), "notes", number)
    _counted(header.globals, len(globals_), "globals", number)
    _counted(header.links, len(links), "links", number)
    return ExportFile(list(notes.values()), list(globals_.values()), links)


def _bounded(lines: Iterable[bytes]) -> Iterator[bytes | None]:
    """The lines, each read from a stream up to ``MAX_LINE_BYTES`` (None for one longer)."""
    readline = getattr(lines, "readline", None)
    if readline is None:
        yield from lines
        return
    while raw := readline(MAX_LINE_BYTES + 1):
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            yield None
            return
        yield raw


def _header(number: int, obj: Any) -> Header:
    if not isinstance(obj, dict) or obj.get("format") != FORMAT_NAME:
        raise ImportFileInvalid(number, "format", f"must be {FORMAT_NAME!r}: the first line of an mcp-memory export is its header")
    version = obj.get("version")
    if version != VERSION:
        raise ImportFileInvalid(
            number, "version", f"unknown version {version!r}; this mcp-memory reads version {VERSION} (a newer one may read it)"
        )
    return _shaped(number, obj, Header)


def _kind(number: int, obj: Any) -> str:
    kind = obj.get("type") if isinstance(obj, dict) else None
    if kind not in _LINES:
        raise ImportFileInvalid(number, "type", f"unknown record type {kind!r}; expected one of {', '.join(map(repr, _LINES))}")
    return kind


def _shaped(number: int, obj: Any, kind: type[Struct]) -> Any:
    try:
        return msgspec.convert(obj, kind)
    except msgspec.ValidationError as exc:
        field, rule = field_and_rule(exc)
        raise ImportFileInvalid(number, field, rule) from None


def _checked(number: int, build: Any, line: Any) -> Any:
    try:
        return build(line)
    except InvalidValue as exc:
        field = wire_path(exc.field)
        subject = "" if field else f"{exc.type_name} "
        raise ImportFileInvalid(number, field, f"{subject}{exc.field_rule()} (got {shown_as_json(exc.value, 80)})") from None


def _first(seen: dict[object, int], key: object, number: int, field: str, rule: str) -> None:
    if key in seen:
        raise ImportFileInvalid(number, field, f"{rule} (first on line {seen[key]})")
    seen[key] = number


def _counted(announced: int | None, found: int, what: str, last_line: int) -> None:
    if announced is not None and announced != found:
        raise ImportFileInvalid(
            last_line, None, f"the header announces {announced} {what}, the file holds {found} (a truncated file?)"
        )


def _note(line: NoteLine) -> ExportedNote:
    note = CAMEL.note(line)
    require_within_size("Note", "metadata", note.metadata)
    namespace = None if line.namespace is None else _namespace(line.namespace)
    vector = None if line.vector is None or line.vector is UNSET else _vector(line.vector, namespace)
    return ExportedNote(note, namespace, vector)


@functools.lru_cache(maxsize=64)
def _namespace(text: str) -> Namespace:
    """A note line's namespace, parsed once per distinct name (a file has one or a few)."""
    return at("namespace", Namespace.parse, text)


def _vector(data: bytes, namespace: Namespace | None) -> np.ndarray:
    if namespace is None:
        raise InvalidValue("Vector", "needs the note's namespace", "no namespace", "namespace")
    if len(data) != 4 * namespace.dim:
        rule = f"must hold {namespace.dim} float32 values of namespace {namespace}"
        raise InvalidValue("Vector", rule, f"{len(data) / 4:g} values", "vector")
    vector = np.frombuffer(data, dtype="<f4")
    wide = vector.astype(np.float64)  # squares of large float32 values overflow float32
    problem = length_problem(math.sqrt(float(np.dot(wide, wide))))
    if problem is not None:
        raise InvalidValue("Vector", f"{problem}; leave it out and the import embeds the note again", "the line's vector", "vector")
    return vector


def _link(line: LinkLine) -> Link:
    key = LinkKey(at("fromId", NoteId, line.from_id), at("toId", NoteId, line.to_id), at("relation", Relation, line.relation))
    if key.from_id == key.to_id:
        raise InvalidValue("Link", "must link two different notes", line.to_id, "toId")
    return Link(key, at("createdAt", parse_instant, line.created_at))


def _entry(line: GlobalLine) -> GlobalEntry:
    entry = GlobalEntry(
        at("projectId", CanonicalProjectId, line.project_id),
        at("key", GlobalKey, line.key),
        line.value,
        at("updatedAt", parse_instant, line.updated_at),
    )
    require_within_size("GlobalEntry", "value", entry.value)
    if line.id is not None and line.id != entry.id:
        raise InvalidValue("GlobalEntry", "id must be the one derived from projectId and key", line.id, "id")
    return entry


class JsonLinesExportFile:
    """The export file behind ``ports.ExportWriter`` and ``ports.ExportReader``."""

    write = staticmethod(write_export)
    read = staticmethod(read_export)


EXPORT_FILE = JsonLinesExportFile()
