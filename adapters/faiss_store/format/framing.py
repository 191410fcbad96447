"""Checksummed lines: how journal records, the manifest and a snapshot's globals are framed.

Journal line, formats 3 to 6 (one record per line, UTF-8, ``\\n``-terminated; in format 6 a
``batch`` record holds the records of one write)::

    {"crc":"1a2b3c4d","acrc":"5e6f7a8b","about":{"notes":["<id>"]},"rec":{"type":"put",...}}

``crc`` is the CRC-32 (8 lower-case hex digits) of the exact bytes of ``rec``, ``acrc``
that of ``about``: the notes, global keys, namespace or (format 4) links the record
changes, so a line whose record is damaged still says what it was about. A link is named
by its key, ``[source, target, relation]``: ``{"links":[["<id>","<id>","supersedes"]]}``. A line whose ``crc`` does not hold is never
applied. Format 2 lines are ``{"crc":"…","rec":…}``. The manifest and the lines of a
snapshot's ``globals.jsonl`` are framed the same way.

Before a record is written it is read back from its own line (``checked_line``): a record
that would not decode equal is refused at the field that differs, and nothing is written.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import attrs
import msgspec

from local_mcp_memory.adapters.faiss_store.format.records import (
    Batch,
    Delete,
    DeleteLink,
    Drop,
    JournalEntry,
    Manifest,
    Put,
    PutGlobal,
    PutLink,
    Record,
    Rehome,
    check_format,
    decode_checked,
)
from local_mcp_memory.adapters.json_converter import READ_BACK_RULE, unreadable_field
from local_mcp_memory.application.errors import StoreCorrupt
from local_mcp_memory.domain.errors import InvalidValue

_encoder = msgspec.json.Encoder()
_entry_decoder = msgspec.json.Decoder(JournalEntry)
_manifest_decoder = msgspec.json.Decoder(Manifest)


class About(msgspec.Struct, omit_defaults=True, frozen=True, forbid_unknown_fields=True, kw_only=True, gc=False):
    """What a record changes, framed beside it with a checksum of its own: the notes, the
    global keys (project, key), the namespace of a drop, or the links (source, target,
    relation) of a link or unlink. Empty for a header."""

    notes: tuple[str, ...] = ()
    globals: tuple[tuple[str, str], ...] = ()
    namespace: str | None = None
    links: tuple[tuple[str, str, str], ...] = ()


@attrs.frozen
class Damaged:
    """A damaged record at byte ``offset`` of ``path`` (a journal line, a global line);
    ``about`` is what it changed (None: not known)."""

    path: str
    offset: int
    about: About | None


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
    if isinstance(entry, (PutLink, DeleteLink)):
        return About(links=(entry.key,))
    if isinstance(entry, Batch):
        parts = [about(record) for record in entry.records]
        namespaces = {part.namespace for part in parts} - {None}
        return About(
            notes=tuple(dict.fromkeys(n for part in parts for n in part.notes)),
            globals=tuple(dict.fromkeys(g for part in parts for g in part.globals)),
            namespace=namespaces.pop() if len(namespaces) == 1 else None,
            links=tuple(dict.fromkeys(k for part in parts for k in part.links)),
        )
    return About()


_about_decoder = msgspec.json.Decoder(About)
PREFIX = b'{"crc":"'
_ABOUT = b'","acrc":"'
_ABOUT_BODY = b'","about":'
_REC = b',"rec":'
_V2_REC = b'","rec":'
_HEAD_V2 = len(PREFIX) + 8 + len(_V2_REC)
_ABOUT_CRC = len(PREFIX) + 8 + len(_ABOUT)
_HEAD_V3 = _ABOUT_CRC + 8 + len(_ABOUT_BODY)


def encode_line(entry: msgspec.Struct) -> bytes:
    """One checksummed line (the frame of formats 3 and 4), ending in ``\\n``."""
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


def encode_manifest(manifest: Manifest) -> bytes:
    return encode_line(manifest)


def decode_manifest(data: bytes, path: str) -> Manifest:
    """A format 3 or 4 manifest (one checksummed line) or a format 2 one (plain JSON)."""
    if data.startswith(PREFIX):
        body, _about = read_line(data[:-1] if data.endswith(b"\n") else data)
        if body is None or not data.endswith(b"\n"):
            raise StoreCorrupt(f"{path} fails its checksum; restore MANIFEST.json or run `mcp-memory salvage`", path)
        manifest = decode_checked(_manifest_decoder, body, path)
        framed = manifest.format >= 3
    else:
        manifest = decode_checked(_manifest_decoder, data, path)
        framed = manifest.format == 2
    if not framed:
        raise StoreCorrupt(f"{path} has format {manifest.format} in the frame of another format", path)
    check_format(manifest.format, path)
    return manifest


def batch_line(records: Sequence[Record]) -> bytes:
    """One line holding ``records``, each already read back from its own line
    (``checked_line``): a ``Batch`` of them decodes equal as its parts do."""
    return encode_line(Batch(records=tuple(records)))


def checked_line(record: Record) -> bytes:
    """The line of ``record``, once it has been read back from that line and found equal.
    ``InvalidValue`` naming the first field that would not read back as written (a value
    JSON cannot carry: NaN, a non-string key, a lone surrogate), before anything is written."""
    try:
        line = encode_line(record)
    except (msgspec.EncodeError, TypeError, ValueError, OverflowError):
        line = None
    if line is not None and decode_line(line[:-1]) == record:
        return line
    fields = record.note if isinstance(record, Put) else record
    raise InvalidValue(type(record).__name__, READ_BACK_RULE, "a value that would not read back", unreadable_field(fields))
