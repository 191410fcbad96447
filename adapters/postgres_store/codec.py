"""How notes, global values and tags are written into PostgreSQL and read back exactly.

A note's fields are kept as one JSON text (``notes.doc``), encoded by msgspec like the FAISS
store's records, not as ``jsonb``: ``jsonb`` normalizes numbers (``1.0`` reads back ``1``,
a large float loses digits) and keeps one of duplicate keys, and no PostgreSQL text or
``jsonb`` value can hold a NUL character. JSON text escapes NUL as ``\\u0000``, so a NUL in
a note's text, title, tags, source or metadata is stored and read back like any other
character. Global values are kept the same way (``globals.value``).

The columns the SQL filters on are copies: ``tags`` holds each tag escaped (``\\`` as
``\\\\``, NUL as ``\\0``), and required tags are escaped alike, so matching stays exact.

Every record is read back before it is written, as the FAISS store does: a value JSON would
change or cannot carry (NaN, a non-string key, a lone surrogate) is refused with
``InvalidValue`` at its field, and nothing is written.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from functools import lru_cache
from typing import Any, TypeVar

import msgspec
from msgspec import UNSET

from local_mcp_memory.adapters.json_converter import READ_BACK_RULE, STORED, NoteFields, stored_origin, stored_span, unreadable_field
from local_mcp_memory.adapters.text_analysis import document_tokens
from local_mcp_memory.application.ports import StoredNote
from local_mcp_memory.domain.errors import InvalidValue
from local_mcp_memory.domain.identifiers import CanonicalProjectId, GlobalKey, GroupId, Namespace, NoteId
from local_mcp_memory.domain.note import GlobalEntry, Note, Tags
from local_mcp_memory.domain.time import parse_instant

T = TypeVar("T")


_encoder = msgspec.json.Encoder()
_doc_decoder = msgspec.json.Decoder(NoteFields)


def note_doc(note: Note) -> str:
    """The JSON text of a note, checked to read back as written."""
    doc = STORED.struct(note, NoteFields)
    text = _encoded(doc)
    if text is not None and _doc_decoder.decode(text) == doc:
        return text
    raise InvalidValue("Note", READ_BACK_RULE, "a value that would not read back", unreadable_field(doc))


def note_of(doc: str) -> Note:
    return STORED.note(_doc_decoder.decode(doc))


def stored_note(doc: str, namespace: str) -> StoredNote:
    return StoredNote(note_of(doc), _namespace(namespace))


def searched_note(doc: str, namespace: str) -> StoredNote:
    """``stored_note`` for the rows a search reads, without the domain's checks: every
    ``notes.doc`` was built from a checked ``Note`` and read back before it was written
    (``note_doc``), and the checks took most of the 40-120 us a search spent per note it
    ranks. The same note as ``stored_note`` (tested on every kind of field)."""
    fields = _doc_decoder.decode(doc)
    expires = None if fields.expires is UNSET else parse_instant(fields.expires)
    note = _built(
        Note,
        id=NoteId(fields.id),  # checked: its hash is cached, which a bare instance lacks (a pattern match)
        project_id=_project(fields.project),
        group_id=_group(fields.group),
        text=fields.text,
        created_at=parse_instant(fields.created),
        title=fields.title,
        tags=_built(Tags, values=fields.tags),
        source=fields.source,
        metadata=fields.metadata,
        expires_at=expires,
        origin=stored_origin(fields.origin),
        importance=0.5 if fields.importance is UNSET else fields.importance,
        expiry_span=stored_span(fields.span),
    )
    return StoredNote(note, _namespace(namespace))


def _built(cls: type[T], **values: Any) -> T:
    """An instance of the frozen attrs class ``cls`` holding ``values`` (every attribute),
    its ``__attrs_post_init__`` not run."""
    made = object.__new__(cls)
    for name, value in values.items():
        object.__setattr__(made, name, value)
    return made


@lru_cache(maxsize=1024)
def _project(value: str) -> CanonicalProjectId:
    return _built(CanonicalProjectId, value=value)


@lru_cache(maxsize=4096)
def _group(value: str) -> GroupId:
    return _built(GroupId, value=value)


@lru_cache(maxsize=256)
def _namespace(name: str) -> Namespace:
    """A stored namespace name parsed once (a search decodes a hundred notes of one or two)."""
    return Namespace.parse(name)


def dedup_hash(note: Note) -> bytes:
    """``notes.dedup``: the SHA-256 of the note's dedup text (``Note.dedup_key``); project
    and group are columns of their own."""
    return hashlib.sha256(note.dedup_key.text.encode("utf-8", "surrogatepass")).digest()


def global_value(entry: GlobalEntry) -> str:
    text = _encoded(entry.value)
    if text is None or msgspec.json.decode(text) != entry.value:
        raise InvalidValue("GlobalEntry", READ_BACK_RULE, "a value that would not read back", "value")
    return text


def global_entry(project: str, key: str, value: str, updated: str) -> GlobalEntry:
    return GlobalEntry(CanonicalProjectId(project), GlobalKey(key), msgspec.json.decode(value), parse_instant(updated))


def escaped_tags(tags: Tags) -> list[str]:
    """Tags as the ``tags`` columns hold them: no NUL, one escaped form per tag."""
    return [t.replace("\\", "\\\\").replace("\x00", "\\0") for t in tags.values]


def array_literal(values: Iterable[str]) -> str:
    """``values`` as a PostgreSQL array literal, each quoted: a batch of arrays of different
    lengths cannot travel as one two-dimensional array, so each travels as text and is cast."""
    return "{" + ",".join('"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"' for v in values) + "}"


def _encoded(value: Any) -> str | None:
    try:
        return _encoder.encode(value).decode()
    except (msgspec.EncodeError, TypeError, ValueError, OverflowError, UnicodeError):
        return None


TERM_MAX = 128
"""A longer term is indexed by its first 96 characters and a hash: a btree entry has a size
limit, and nobody types such a term."""


def term(token: str) -> str:
    """The stored form of one term of ``text_analysis`` (short terms as they are)."""
    if len(token) <= TERM_MAX:
        return token
    return token[:96] + "#" + hashlib.sha1(token.encode("utf-8", "surrogatepass")).hexdigest()


def note_terms(note: Note) -> list[str]:
    """The stored keyword terms of a note, in order, repeats kept (``note_terms``, BM25)."""
    return [term(t) for t in document_tokens(note.title, note.text, note.tags.values)]
