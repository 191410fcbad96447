"""On-disk formats of the FAISS store, version 6 (versions 2 to 5 still read): journal
records, snapshot, manifest.

Format 6 is format 5 with one more journal record, ``Batch`` (``"batch"``): the records of
one write (an ``add_notes`` call, an import's batch, the notes one search prolongs) on one
checksummed line, so that a writer killed or a power cut mid-write leaves all of them or
none (a torn line is never applied). A reader applies them in order, as if each had its
own line. A format 5 store is upgraded by its first writer, as below; until it is, its
writers write one line per record, which a format 5 reader still reads.

Format 5 is format 4 whose note fields (``NoteFields``) may carry ``importance`` (0..1,
absent when 0.5) and ``span`` (the expiry's original span in seconds, absent when not
recorded). A format 4 store is upgraded by the first writer that opens it (a compaction),
so that a server of an older version refuses the store instead of reading these fields
as damage.

Format 4 adds, beside format 3: the journal records ``PutLink`` (``"link"``) and
``DeleteLink`` (``"unlink"``); a snapshot's ``links.jsonl`` (``Sidecar.link_count`` lines,
each a checksummed ``PutLink``); and two columns of ``notes.npy`` (``NOTE_ROW``): each
note's ``expires`` instant in µs (``NEVER`` when it has none) and the 64-bit ``dedup``
hash of its dedup key (``dedup_hash``). A note's ``expires`` field (``NoteFields``) is
written only when set, so a note without one keeps the bytes it had in format 3. Format
2 and 3 snapshots have neither column (``NOTE_ROW_V3``): the reader derives them.

Every JSON format is a msgspec Struct (frozen, unknown fields refused) carrying or framed
by its ``"format"``. A reader meeting a version it does not know raises ``StoreCorrupt``
rather than guess. Vectors travel as little-endian float32 bytes, which msgspec writes as
base64 in the journal. Anything a damaged file can make a decoder raise surfaces as
``StoreCorrupt`` naming the file.

Journal lines, the manifest and the lines of a snapshot's ``globals.jsonl`` are framed
with checksums by ``framing``.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Union

import msgspec
from msgspec import UNSET
import numpy as np

from local_mcp_memory.adapters.json_converter import STORED, NoteFields
from local_mcp_memory.application.errors import StoreCorrupt, StoreError
from local_mcp_memory.domain.identifiers import Namespace
from local_mcp_memory.domain.note import Note

FORMAT = 6
READS = (2, 3, 4, 5, 6)
"""Formats this code reads: format 2 to 5 stores are upgraded by the first writer that opens them."""
BATCH_FORMAT = 6
"""The first format whose journal holds ``Batch`` records."""

NEVER = np.iinfo(np.int64).max
"""The ``expires`` of a note that never expires (µs)."""

# gc=False: records are acyclic, and untracked objects make decoding 100k notes far cheaper.
_STRUCT = dict(frozen=True, forbid_unknown_fields=True, kw_only=True, gc=False)


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


class PutLink(msgspec.Struct, tag="link", **_STRUCT):
    """Format 4: a link from note ``source`` to note ``target`` named ``relation``, first
    made at ``created`` (ISO 8601 UTC). Written only when both notes are stored and no link
    of that key is; applied over a stored link of the same key, it changes nothing (the
    first ``created`` stays)."""

    source: str
    target: str
    relation: str
    created: str

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.source, self.target, self.relation)


class DeleteLink(msgspec.Struct, tag="unlink", **_STRUCT):
    """Format 4: remove the link of this key."""

    source: str
    target: str
    relation: str

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.source, self.target, self.relation)


Record = Union[Put, Rehome, Delete, Drop, PutGlobal, PutLink, DeleteLink]


class Batch(msgspec.Struct, tag="batch", **_STRUCT):
    """Format 6: the records of one write, applied all or none, in order."""

    records: tuple[Record, ...]


JournalEntry = Union[Header, Put, Rehome, Delete, Drop, PutGlobal, PutLink, DeleteLink, Batch]


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
    snapshot but ``globals.jsonl`` and ``links.jsonl`` (whose lines carry one each). Format
    3 keeps the global KV in ``globals.jsonl`` (``global_count`` lines); format 2 kept it in
    ``globals``. Format 4 keeps the links in ``links.jsonl`` (``link_count`` lines)."""

    format: int
    generation: int
    ids: list[str]
    names: list[str]
    spaces: list[SpaceFile]
    checksums: dict[str, int]
    global_count: int = 0
    globals: list[PutGlobal] = []
    link_count: int = 0


# One row of ``notes.npy`` per note, in write order: codes into ``Sidecar.names``,
# createdAt in µs, and where the note's bytes end in ``notes.bin`` and its tags in
# ``tags.npy``; format 4 adds expiresAt in µs (``NEVER``: none) and the dedup key's hash.
_ROW_V3 = [
    ("project", "<i4"),
    ("group", "<i4"),
    ("home", "<i4"),
    ("crc", "<u4"),
    ("created", "<i8"),
    ("body_end", "<i8"),
    ("tags_end", "<i8"),
]
NOTE_ROW_V3 = np.dtype(_ROW_V3)
NOTE_ROW = np.dtype([*_ROW_V3, ("expires", "<i8"), ("dedup", "<u8")])


def note_row(version: int) -> np.dtype:
    """The dtype of ``notes.npy`` in a snapshot of format ``version``."""
    return NOTE_ROW if version >= 4 else NOTE_ROW_V3


class Manifest(msgspec.Struct, **_STRUCT):
    """Names the live generation: its snapshot directory (None: empty) and journal, and
    (format 3 on) the CRC-32 of the snapshot's ``sidecar.json``."""

    format: int
    generation: int
    snapshot: str | None
    journal: str
    sidecar_crc: int | None = None


_encoder = msgspec.json.Encoder()
_sidecar_decoder = msgspec.json.Decoder(Sidecar)
_fields_decoder = msgspec.json.Decoder(NoteFields)


def encode(value: msgspec.Struct) -> bytes:
    return _encoder.encode(value)


def decode_sidecar(data: bytes, path: str) -> Sidecar:
    sidecar = decode_checked(_sidecar_decoder, data, path)
    check_format(sidecar.format, path)
    return sidecar


def decode_fields(data: bytes | memoryview, path: str) -> NoteFields:
    """One note's fields from its bytes in ``notes.bin``; ``StoreCorrupt`` if malformed."""
    return decode_checked(_fields_decoder, data, path)


def decode_checked(decoder: msgspec.json.Decoder, data: bytes, path: str) -> Any:
    try:
        return decoder.decode(data)
    except (msgspec.DecodeError, UnicodeDecodeError, ValueError) as exc:
        raise StoreCorrupt(f"{path} is not a valid store file ({exc}); restore it from a backup", path) from exc


def check_format(version: int, path: str) -> None:
    """``StoreCorrupt`` for a format this code cannot read; one newer than it says what to do
    (a newer mcp-memory, in another window perhaps, upgraded the store)."""
    if version not in READS:
        newer = "; a newer mcp-memory has upgraded it: upgrade this one and restart it" if version > READS[-1] else ""
        raise StoreCorrupt(
            f"{path} has format {version}; this version of mcp-memory reads formats {READS[0]} to {READS[-1]}{newer}", path
        )


def fields_of(note: Note) -> NoteFields:
    return STORED.struct(note, NoteFields)


def note_of(fields: NoteFields) -> Note:
    return STORED.note(fields)


def micros(created: str) -> int:
    """Microseconds since the epoch of an ISO 8601 UTC instant as stored."""
    return _to_micros(datetime.fromisoformat(created))


def _to_micros(moment: datetime) -> int:
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


_EPOCH = datetime.fromisoformat("1970-01-01T00:00:00+00:00")


def instant_micros(moment: datetime) -> int:
    return _to_micros(moment)


def expiry_micros(fields: NoteFields) -> int:
    """The note's expiresAt in µs, ``NEVER`` when it has none; ``ValueError`` if malformed."""
    return NEVER if fields.expires is UNSET else micros(fields.expires)


def dedup_hash(project: str, group: str, text: str) -> int:
    """A 64-bit hash of a dedup key (``domain.note.DedupKey``: project, group and the text
    as ``dedup_text`` makes it), the same in every process and version; equal keys have
    equal hashes, and a reader confirms a match by comparing the keys themselves."""
    data = "\x00".join((project, group, text)).encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")


def fields_dedup_hash(fields: NoteFields) -> int:
    return dedup_hash(fields.project, fields.group, stored_dedup_text(fields.text))


def stored_dedup_text(text: str) -> str:
    """``domain.note.dedup_text``, several times faster: ``str.split`` and the ``\\s`` of a
    str pattern both split at ``str.isspace`` characters, so the result is the same; it is
    computed for every note written, in every process."""
    return " ".join(unicodedata.normalize("NFC", text).split())


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
