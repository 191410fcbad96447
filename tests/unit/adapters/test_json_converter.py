"""One converter maps every JSON form of a note: the store's records, export lines and the
wire's views read back as the note, in the very bytes each format has always had."""

from __future__ import annotations

import io
from datetime import datetime, timezone
from typing import Any

import attrs
import msgspec
import pytest
from hypothesis import given

from local_mcp_memory.adapters.faiss_store.format.records import NoteFields, encode, fields_of, note_of
from local_mcp_memory.adapters.json_converter import CAMEL, STORED
from local_mcp_memory.application.export_notes import Export, ExportedNote
from local_mcp_memory.application.ports import StoredNote
from local_mcp_memory.domain.errors import InvalidValue
from local_mcp_memory.domain.identifiers import CanonicalProjectId, GroupId, Namespace, NoteId
from local_mcp_memory.domain.note import Note, Tags
from local_mcp_memory.domain.time import format_instant
from local_mcp_memory.adapters.export_file import NoteLine, read_export, write_export
from local_mcp_memory.entrypoints.methods.wire import stored_view
from tests.strategies import namespaces, notes

NOW = datetime(2024, 1, 15, 10, 30, tzinfo=timezone.utc)


def stored_json(note: Note) -> bytes:
    """The stored fields as the data directory has held them since format 2, in order (format 5
    adds importance and span, left out at their defaults)."""
    return msgspec.json.encode(
        {
            "id": note.id.value,
            "project": note.project_id.value,
            "group": note.group_id.value,
            "text": note.text,
            "created": format_instant(note.created_at),
            "title": note.title,
            "tags": list(note.tags.values),
            "source": note.source,
            "metadata": note.metadata,
            **({} if note.expires_at is None else {"expires": format_instant(note.expires_at)}),
            **({} if note.origin is None else {"origin": attrs.asdict(note.origin)}),
            **({} if note.importance == 0.5 else {"importance": note.importance}),
            **({} if note.expiry_span is None else {"span": note.expiry_span.total_seconds()}),
        }
    )


def camel_json(note: Note, **extra: Any) -> bytes:
    """A note in camelCase as export lines and the wire have always written it, in order."""
    return msgspec.json.encode(
        {
            "id": note.id.value,
            "projectId": note.project_id.value,
            "groupId": note.group_id.value,
            "title": note.title,
            "text": note.text,
            "tags": list(note.tags.values),
            "source": note.source,
            "createdAt": format_instant(note.created_at),
            "metadata": note.metadata,
            "expiresAt": None if note.expires_at is None else format_instant(note.expires_at),
            "importance": note.importance,
            **extra,
        }
    )


@given(notes)
def test_the_stored_fields_keep_their_bytes_and_read_back_as_the_note(note: Note) -> None:
    data = encode(fields_of(note))
    assert data == stored_json(note)
    assert note_of(msgspec.json.decode(data, type=NoteFields)) == note


@given(notes, namespaces)
def test_an_export_line_keeps_its_bytes_and_reads_back_as_the_note(note: Note, namespace: Namespace) -> None:
    out = io.BytesIO()
    write_export(Export(None, namespace, 1, iter([ExportedNote(note, namespace, None)]), []), out, NOW, False)
    line = out.getvalue().splitlines()[1]
    origin = {} if note.origin is None else {"origin": attrs.asdict(note.origin)}
    span = None if note.expiry_span is None else note.expiry_span.total_seconds()
    assert line == b'{"type":"note",' + camel_json(note, expirySpan=span, **origin, namespace=str(namespace))[1:]
    (back,) = read_export(io.BytesIO(out.getvalue())).notes
    assert back.note == note


@given(notes, namespaces)
def test_a_wire_view_keeps_its_bytes_and_reads_back_as_the_note(note: Note, namespace: Namespace) -> None:
    data = msgspec.json.encode(stored_view(StoredNote(note, namespace)))
    assert data == camel_json(note, namespace=str(namespace))
    # the sync origin and the expiry's span are never on the wire
    assert CAMEL.note(msgspec.json.decode(data, type=NoteLine)) == attrs.evolve(note, origin=None, expiry_span=None)


@given(notes)
def test_both_namings_are_one_mapping(note: Note) -> None:
    stored, camel = STORED.fields(note), CAMEL.fields(note)
    renamed = {"project": "project_id", "group": "group_id", "created": "created_at", "expires": "expires_at", "span": "expiry_span"}
    stored_named = {renamed.get(name, name): value for name, value in stored.items()}
    camel_named = {**camel, "tags": tuple(camel["tags"])}
    if note.expires_at is None:
        del camel_named["expires_at"]  # the store leaves it out; the camelCase forms write null
    if note.expiry_span is None:
        del camel_named["expiry_span"]
    if note.importance == 0.5:
        del camel_named["importance"]  # the store leaves the default out
    assert stored_named == camel_named
    assert camel["tags"] == list(note.tags.values)  # a list, as the camelCase Structs declare


GOOD = {
    "id": "0b7a4c1e-1111-4222-8333-444455556666",
    "project": "p",
    "group": "g",
    "text": "t",
    "created": "2024-01-15T10:30:00Z",
    "tags": ("a", "b"),
}


@pytest.mark.parametrize(
    ("change", "field", "type_name"),
    [
        ({"id": "NOT-A-UUID"}, "id", "NoteId"),
        ({"group": "a b", "created": "yesterday"}, "group_id", "GroupId"),
        ({"created": "2024-01-15T10:30:00"}, "created_at", "Instant"),
        ({"tags": ("",)}, "tags", "Tag"),
        ({"text": "  "}, "text", "Note"),
    ],
)
def test_a_refused_value_is_placed_at_the_first_attribute_it_breaks(change: dict[str, Any], field: str, type_name: str) -> None:
    with pytest.raises(InvalidValue) as refused:
        STORED.note(NoteFields(**GOOD | change))
    assert (refused.value.field, refused.value.type_name) == (field, type_name)


def test_a_project_or_group_name_read_again_is_checked_alike() -> None:
    """Names are built once and kept (``_named_once``): a kept name reads back equal, and a
    refused one is refused again, not remembered as good."""
    first, second = (STORED.note(NoteFields(**GOOD | {"project": "Shop", "group": "Team"})) for _ in range(2))
    expected = (CanonicalProjectId("Shop"), GroupId("Team"))
    assert (first.project_id, first.group_id) == (second.project_id, second.group_id) == expected
    for _ in range(2):
        with pytest.raises(InvalidValue) as refused:
            STORED.note(NoteFields(**GOOD | {"project": "bad\x00name"}))
        assert (refused.value.field, refused.value.type_name) == ("project_id", "CanonicalProjectId")


def test_stored_tags_read_back_as_written_and_tags_of_an_export_line_lose_their_repeats() -> None:
    fields = NoteFields(**GOOD | {"tags": ("a", "b", "a")})
    assert STORED.note(fields).tags.values == ("a", "b", "a")
    line = NoteLine(id=fields.id, project_id="p", group_id="g", text="t", created_at=fields.created, tags=["a", "b", "a"])
    assert CAMEL.note(line).tags.values == ("a", "b")


def test_a_note_is_built_from_its_value_objects() -> None:
    note = STORED.note(NoteFields(**GOOD | {"title": "T", "metadata": {"k": [1]}}))
    assert note == Note(
        NoteId(GOOD["id"]), CanonicalProjectId("p"), GroupId("g"), "t", NOW, title="T", tags=Tags(("a", "b")), metadata={"k": [1]}
    )
