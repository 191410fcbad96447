"""On-disk formats of the FAISS store, version 3 (version 2 still read): journal records,
snapshot, manifest.

Every JSON format is a msgspec Struct (frozen, unknown fields refused) carrying or framed
by its ``"format"``. A reader meeting a version it does not know raises ``StoreCorrupt``
rather than guess. Vectors travel as little-endian float32 bytes, which msgspec writes as
base64 in the journal. Anything a damaged file can make a decoder raise surfaces as
``StoreCorrupt`` naming the file.

Journal line, format 3 (one record per line, UTF-8, ``\\n``-terminated)::

    {"crc":"1a2b3c4d","acrc":"5e6f7a8b","about":{"notes":["<id>"]},"rec":{"type":"put",...}}

``crc`` is the CRC-32 (8 lower-case hex digits) of the exact bytes of ``rec``, ``acrc``
that of ``about``: the notes, global keys or namespace the record changes, so a line whose
record is damaged still says what it was about. A line whose ``crc`` does not hold is never
applied. Format 2 lines are ``{"crc":"…","rec":…}``. The manifest and the lines of a
snapshot's ``globals.jsonl`` are framed the same way.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Union

import msgspec
import numpy as np

from application.errors import StoreCorrupt, StoreError
from domain.identifiers import CanonicalProjectId, GroupId, Namespace, NoteId
from domain.note import Note, Tags
from domain.time import format_instant, parse_instant

FORMAT = 3
READS = (2, 3)
"""Formats this code reads: format 2 stores are upgraded by the first writer that opens them."""

# gc=False: records are acyclic, and untracked objects make decoding 100k notes far cheaper.
_STRUCT = dict(frozen=True, forbid_unknown_fields=True, kw_only=True, gc=False)


class NoteFields(msgspec.Struct, **_STRUCT):
    """A note's fields as stored; ``created`` is ISO 8601 UTC (``...Z``)."""

    id: str
    project: str
    group: str
    text: str
    created: str
    title: str | None = None
    tags: tuple[str, ...] = ()
    source: str | None = None
    metadata: dict[str, Any] | None = None


class Header(msgspec.Struct, tag="header", **_STRUCT):
    """First record of every journal file."""

    format: int
    generation: int


class Put(msgspec.Struct, tag="put", **_STRUCT):
    """Insert or replace a note, home ``namespace``; ``vector`` None keeps the one there."""

    note: NoteFields
    namespace: str
    vector: bytes | None = None


class Rehome(msgspec.Struct, tag="rehome", **_STRUCT):
    """Vectors for ``ids`` in ``namespace`` (rows of ``vectors``, in order), made home."""

    namespace: str
    ids: tuple[str, ...]
    vectors: bytes


class Delete(msgspec.Struct, tag="delete", **_STRUCT):
    id: str


class Drop(msgspec.Struct, tag="drop", **_STRUCT):
    """Remove every vector of ``namespace`` that is not its note's home."""

    namespace: str


class PutGlobal(msgspec.Struct, tag="global", **_STRUCT):
    project: str
    key: str
    value: Any
    updated: str


Record = Union[Put, Rehome, Delete, Drop, PutGlobal]
JournalEntry = Union[Header, Put, Rehome, Delete, Drop, PutGlobal]


class About(msgspec.Struct, omit_defaults=True, **_STRUCT):
    """What a record changes, framed beside it with a checksum of its own: the notes, the
    global keys (project, key), or the namespace of a drop. Empty for a header."""

    notes: tuple[str, ...] = ()
    globals: tuple[tuple[str, str], ...] = ()
    namespace: str | None = None


def about(entry: msgspec.Struct) -> About:
    if isinstance(entry, Put):
        return About(notes=(entry.note.id,))
    if isinstance(entry, Delete):
        return About(notes=(entry.id,))
    if isinstance(entry, Rehome):
        return About(notes=entry.ids)
    if isinstance(entry, PutGlobal):
        return About(globals=((entry.project, entry.key),))
    if isinstance(entry, Drop):
        return About(namespace=entry.namespace)
    return About()


class SpaceFile(msgspec.Struct, **_STRUCT):
    """One namespace's vectors: ``vectors`` (float32, ``(count, dim)``) and ``owners``
    (int32, ``(count,)``: the note row owning each vector row), both ``.npy`` files. With a
    partition (``partition``): ``centroids`` (float32, ``(lists, dim)``), ``lists`` (int32,
    ``(count,)``: each vector row's list; rows are grouped by list), its ``probes`` and the
    vector count it was ``trained`` on."""

    namespace: str
    vectors: str
    owners: str
    count: int
    centroids: str | None = None
    lists: str | None = None
    probes: int = 0
    trained: int = 0


class Sidecar(msgspec.Struct, **_STRUCT):
    """A snapshot's index: the note ids in row (write) order, the interned names the
    binary columns refer to by code, the vector files, and the CRC-32 of every file of the
    snapshot but ``globals.jsonl`` (whose lines carry one each). Format 3 keeps the global
    KV in ``globals.jsonl`` (``global_count`` lines); format 2 kept it in ``globals``."""

    format: int
    generation: int
    ids: list[str]
    names: list[str]
    spaces: list[SpaceFile]
    checksums: dict[str, int]
    global_count: int = 0
    globals: list[PutGlobal] = []


# One row of ``notes.npy`` per note, in write order: codes into ``Sidecar.names``,
# createdAt in µs, and where the note's bytes end in ``notes.bin`` and its tags in ``tags.npy``.
NOTE_ROW = np.dtype(
    [
        ("project", "<i4"),
        ("group", "<i4"),
        ("home", "<i4"),
        ("crc", "<u4"),
        ("created", "<i8"),
        ("body_end", "<i8"),
        ("tags_end", "<i8"),
    ]
)


class Manifest(msgspec.Struct, **_STRUCT):
    """Names the live generation: its snapshot directory (None: empty) and journal, and
    (format 3) the CRC-32 of the snapshot's ``sidecar.json``."""

    format: int
    generation: int
    snapshot: str | None
    journal: str
    sidecar_crc: int | None = None


_encoder = msgspec.json.Encoder()
_entry_decoder = msgspec.json.Decoder(JournalEntry)
_about_decoder = msgspec.json.Decoder(About)
_sidecar_decoder = msgspec.json.Decoder(Sidecar)
_fields_decoder = msgspec.json.Decoder(NoteFields)
_manifest_decoder = msgspec.json.Decoder(Manifest)
PREFIX = b'{"crc":"'
_ABOUT = b'","acrc":"'
_ABOUT_BODY = b'","about":'
_REC = b',"rec":'
_V2_REC = b'","rec":'
_HEAD_V2 = len(PREFIX) + 8 + len(_V2_REC)
_ABOUT_CRC = len(PREFIX) + 8 + len(_ABOUT)
_HEAD_V3 = _ABOUT_CRC + 8 + len(_ABOUT_BODY)


def encode_line(entry: msgspec.Struct) -> bytes:
    """One checksummed line (format 3), ending in ``\\n``."""
    body = _encoder.encode(entry)
    subject = _encoder.encode(about(entry))
    return b"".join(
        (PREFIX, b"%08x" % zlib.crc32(body), _ABOUT, b"%08x" % zlib.crc32(subject), _ABOUT_BODY, subject, _REC, body, b"}\n")
    )


def read_line(line: bytes | memoryview) -> tuple[bytes | None, About | None]:
    """The record bytes of one line (without its ``\\n``) if its checksum holds, else None;
    and what the line says it is about if that part's own checksum holds, whatever happened
    to the rest of the line (None for format 2 lines)."""
    line = bytes(line)
    crc = line[len(PREFIX) : len(PREFIX) + 8]
    well_framed = line.startswith(PREFIX) and line[-1:] == b"}"
    if line[len(PREFIX) + 8 : _HEAD_V2] == _V2_REC:
        body = line[_HEAD_V2:-1]
        return (body if well_framed and crc == b"%08x" % zlib.crc32(body) else None), None
    subject, end = _about_part(line)
    if end < 0:
        return None, subject
    body = line[end + len(_REC) : -1]
    framed = well_framed and line[len(PREFIX) + 8 : _ABOUT_CRC] == _ABOUT and line[_ABOUT_CRC + 8 : _HEAD_V3] == _ABOUT_BODY
    return (body if framed and crc == b"%08x" % zlib.crc32(body) else None), subject


def _about_part(line: bytes) -> tuple[About | None, int]:
    """The line's verified ``about`` (or None) and where its record starts (-1: unknown).
    Found by position and checksum alone, so damage elsewhere in the line spares it."""
    crc = line[_ABOUT_CRC : _ABOUT_CRC + 8]
    end = line.find(_REC, _HEAD_V3)
    if end >= 0:
        return _about_of(line[_HEAD_V3:end], crc), end
    close = line.find(b"}", _HEAD_V3)
    while close >= 0:  # the marker after it is damaged: try each end the object may have
        found = _about_of(line[_HEAD_V3 : close + 1], crc)
        if found is not None:
            return found, -1
        close = line.find(b"}", close + 1)
    return None, -1


def _about_of(subject: bytes, crc: bytes) -> About | None:
    if crc != b"%08x" % zlib.crc32(subject):
        return None
    try:
        return _about_decoder.decode(subject)
    except msgspec.DecodeError:
        return None


def decode_line(line: bytes | memoryview) -> JournalEntry | None:
    """The entry of one line (without its ``\\n``), or None if the line is damaged."""
    body, _about = read_line(line)
    if body is None:
        return None
    try:
        return _entry_decoder.decode(body)
    except msgspec.DecodeError:
        return None


def encode(value: msgspec.Struct) -> bytes:
    return _encoder.encode(value)


def decode_sidecar(data: bytes, path: str) -> Sidecar:
    sidecar = _decode(_sidecar_decoder, data, path)
    _check_format(sidecar.format, path)
    return sidecar


def decode_fields(data: bytes | memoryview, path: str) -> NoteFields:
    """One note's fields from its bytes in ``notes.bin``; ``StoreCorrupt`` if malformed."""
    return _decode(_fields_decoder, data, path)


def encode_manifest(manifest: Manifest) -> bytes:
    return encode_line(manifest)


def decode_manifest(data: bytes, path: str) -> Manifest:
    """A format 3 manifest (one checksummed line) or a format 2 one (plain JSON)."""
    if data.startswith(PREFIX):
        body, _about = read_line(data[:-1] if data.endswith(b"\n") else data)
        if body is None or not data.endswith(b"\n"):
            raise StoreCorrupt(f"{path} fails its checksum; restore MANIFEST.json or run `mcp-memory salvage`", path)
        manifest = _decode(_manifest_decoder, body, path)
        expected = FORMAT
    else:
        manifest = _decode(_manifest_decoder, data, path)
        expected = 2
    if manifest.format != expected:
        raise StoreCorrupt(f"{path} has format {manifest.format} in a format-{expected} frame", path)
    _check_format(manifest.format, path)
    return manifest


def _decode(decoder: msgspec.json.Decoder, data: bytes, path: str) -> Any:
    try:
        return decoder.decode(data)
    except (msgspec.DecodeError, UnicodeDecodeError, ValueError) as exc:
        raise StoreCorrupt(f"{path} is not a valid store file ({exc}); restore it from a backup", path) from exc


def _check_format(version: int, path: str) -> None:
    if version not in READS:
        raise StoreCorrupt(
            f"{path} has format {version}; this version of mcp-memory reads formats {READS[0]} to {READS[-1]}", path
        )


def fields_of(note: Note) -> NoteFields:
    return NoteFields(
        id=note.id.value,
        project=note.project_id.value,
        group=note.group_id.value,
        text=note.text,
        created=format_instant(note.created_at),
        title=note.title,
        tags=note.tags.values,
        source=note.source,
        metadata=note.metadata,
    )


def note_of(fields: NoteFields) -> Note:
    return Note(
        id=NoteId(fields.id),
        project_id=CanonicalProjectId(fields.project),
        group_id=GroupId(fields.group),
        text=fields.text,
        created_at=parse_instant(fields.created),
        title=fields.title,
        tags=Tags(tuple(fields.tags)),
        source=fields.source,
        metadata=fields.metadata,
    )


def micros(created: str) -> int:
    """Microseconds since the epoch of an ISO 8601 UTC instant as stored."""
    return _to_micros(datetime.fromisoformat(created))


def _to_micros(moment: datetime) -> int:
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


_EPOCH = datetime.fromisoformat("1970-01-01T00:00:00+00:00")


def instant_micros(moment: datetime) -> int:
    return _to_micros(moment)


def vector_bytes(vector: Sequence[float], dim: int) -> bytes:
    """Little-endian float32 bytes of one vector; ``StoreError`` if its length is not ``dim``."""
    array = np.asarray(vector, dtype="<f4").reshape(-1)
    if array.shape[0] != dim:
        raise StoreError(f"a vector of namespace dimension {dim} was expected, got {array.shape[0]} floats")
    return array.tobytes()


def vector_rows(data: bytes, dim: int) -> np.ndarray:
    """Rows of float32 vectors from their bytes (shape ``(n, dim)``)."""
    return np.frombuffer(data, dtype="<f4").reshape(-1, dim).astype(np.float32, copy=False)


def namespace_dim(namespace: str) -> int:
    return Namespace.parse(namespace).dim
