"""The export file format: what is written reads back the same; a bad line is named."""

from __future__ import annotations

import io
import json
from datetime import datetime, timezone
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from local_mcp_memory.application.export_notes import Export, ExportedNote
from local_mcp_memory.domain.identifiers import CanonicalProjectId, GlobalKey, Namespace, NoteId
from local_mcp_memory.domain.link import Link, LinkKey, Relation
from local_mcp_memory.domain.note import GlobalEntry, Note
from local_mcp_memory.application.errors import ImportFileInvalid
from local_mcp_memory.adapters import export_file
from local_mcp_memory.adapters.export_file import read_export, write_export
from tests.strategies import json_values, namespaces, notes

NOW = datetime(2024, 1, 15, 10, 30, tzinfo=timezone.utc)
NS = Namespace("local", "all-MiniLM-L6-v2", 4)
NOTE_ID = "0b7a4c1e-5d2f-4a3b-8c9d-1e2f3a4b5c6d"


def written(notes: list[ExportedNote], globals_: list[GlobalEntry] = (), vectors: bool = True, links: list[Link] = ()) -> bytes:
    out = io.BytesIO()
    export = Export(None, NS, len(notes), iter(notes), list(globals_), list(links))
    write_export(export, out, NOW, vectors)
    return out.getvalue()


def unit(dim: int, seed: int = 0) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
    return v / np.linalg.norm(v)


@given(note=notes, namespace=namespaces, with_vector=st.booleans())
def test_a_note_reads_back_as_it_was_written(note: Note, namespace: Namespace, with_vector: bool) -> None:
    vector = unit(namespace.dim) if with_vector else None
    read = read_export(io.BytesIO(written([ExportedNote(note, namespace, vector)])))
    (back,) = read.notes
    assert (back.note, back.namespace) == (note, namespace)
    assert (back.vector is None) == (vector is None)
    if vector is not None:
        assert back.vector.tobytes() == vector.tobytes()


@given(value=json_values)
def test_a_global_setting_reads_back_as_it_was_written(value: Any) -> None:
    entry = GlobalEntry(CanonicalProjectId("proj"), GlobalKey("global.project.conventions"), value, NOW)
    assert read_export(io.BytesIO(written([], [entry]))).globals == [entry]


def test_links_read_back_and_bad_link_lines_name_their_line_and_field() -> None:
    a, b = NoteId.new(), NoteId.new()
    link = Link(LinkKey(a, b, Relation("supersedes")), NOW)
    data = written([], links=[link])
    assert data.splitlines()[-1] == (
        f'{{"type":"link","fromId":"{a.value}","toId":"{b.value}","relation":"supersedes","createdAt":"2024-01-15T10:30:00Z"}}'
    ).encode()
    assert read_export(io.BytesIO(data)).links == [link]
    header, line = data.splitlines()
    for change, field in (({"relation": "Bad-One"}, "relation"), ({"toId": a.value}, "toId"), ({"fromId": "x"}, "fromId"), ({"createdAt": "soon"}, "createdAt")):
        bad = json.dumps({**json.loads(line), **change}).encode()
        with pytest.raises(ImportFileInvalid) as refused:
            read_export(io.BytesIO(header + b"\n" + bad + b"\n"))
        assert (refused.value.line, refused.value.field) == (2, field)
    with pytest.raises(ImportFileInvalid, match="repeats a link"):
        read_export(io.BytesIO(b"\n".join([json.dumps({**json.loads(header), "links": 2}).encode(), line, line])))


def test_the_header_names_the_format_version_and_counts() -> None:
    header = json.loads(written([]).splitlines()[0])
    assert header == {
        "format": "mcp-memory-export",
        "version": 1,
        "exportedAt": "2024-01-15T10:30:00Z",
        "projectId": None,
        "namespace": str(NS),
        "vectors": True,
        "notes": 0,
        "globals": 0,
        "links": 0,
    }


def test_a_hand_written_note_needs_only_id_project_group_text_and_created_at() -> None:
    lines = [HEADER, {"type": "note", "id": NOTE_ID, "projectId": "p", "groupId": "g", "text": "t", "createdAt": "2024-01-15"}]
    (exported,) = read_export(io.BytesIO(jsonl(lines))).notes
    assert (exported.namespace, exported.vector, exported.note.tags.values) == (None, None, ())


# ---------------------------------------------------------------- bad files

HEADER = {"format": "mcp-memory-export", "version": 1, "exportedAt": "2024-01-15T10:30:00Z"}
NOTE = {
    "type": "note",
    "id": NOTE_ID,
    "projectId": "/work/app",
    "groupId": "feature-1",
    "title": None,
    "text": "Use UTC everywhere.",
    "tags": ["time"],
    "source": None,
    "createdAt": "2024-01-15T10:30:00Z",
    "metadata": None,
    "namespace": str(NS),
}


def jsonl(lines: list[Any]) -> bytes:
    return b"".join((json.dumps(line) if not isinstance(line, str) else line).encode() + b"\n" for line in lines)


def refusal(lines: list[Any]) -> ImportFileInvalid:
    with pytest.raises(ImportFileInvalid) as raised:
        read_export(io.BytesIO(jsonl(lines)))
    return raised.value


def test_a_truncated_line_is_named() -> None:
    cut = json.dumps(NOTE)[:40]
    error = refusal([HEADER, NOTE | {"id": "1b7a4c1e-5d2f-4a3b-8c9d-1e2f3a4b5c6d"}, cut])
    assert (error.line, error.field) == (3, None)
    assert "truncated" in str(error)


def test_a_wrong_type_names_the_line_and_field() -> None:
    error = refusal([HEADER, NOTE | {"tags": "time"}])
    assert (error.line, error.field) == (2, "tags")
    assert str(error) == "line 2, field tags: Expected `array`, got `str`"


def test_an_unknown_version_is_refused() -> None:
    error = refusal([HEADER | {"version": 2}, NOTE])
    assert (error.line, error.field) == (1, "version")
    assert "unknown version 2" in str(error)


def test_a_file_without_a_header_is_refused() -> None:
    assert refusal([NOTE]).field == "format"


def test_an_empty_file_is_refused() -> None:
    assert "empty" in str(refusal([]))


def test_an_unknown_record_type_is_refused() -> None:
    error = refusal([HEADER, {"type": "conversation", "text": "hi"}])
    assert (error.line, error.field) == (2, "type")
    assert "unknown record type 'conversation'" in str(error)


def test_an_unknown_field_is_refused() -> None:
    assert refusal([HEADER, NOTE | {"colour": "red"}]).field == "colour"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"id": "not-a-uuid"}, "id"),
        ({"groupId": "a b"}, "groupId"),
        ({"createdAt": "2024-01-15T10:30:00"}, "createdAt"),
        ({"text": "   "}, "text"),
        ({"title": "x" * 1001}, "title"),
        ({"namespace": "nonsense"}, "namespace"),
        ({"vector": "AAAA"}, "vector"),
        ({"namespace": None, "vector": "AAAAAAAAAAAAAAAAAAAAAA=="}, "namespace"),
    ],
)
def test_a_value_breaking_a_rule_names_its_field(change: dict[str, Any], field: str) -> None:
    error = refusal([HEADER, NOTE | change])
    assert (error.line, error.field) == (2, field)


@pytest.mark.parametrize(
    ("span", "rule"),
    [
        (-5, "must be a positive number of seconds, with an expiry (got -5.0)"),
        (1e300, "must be a number of seconds a date can hold (got 1e300)"),
    ],
)
def test_an_expiry_span_out_of_range_is_told_in_the_file_s_names_and_units(span: float, rule: str) -> None:
    error = refusal([HEADER, NOTE | {"expiresAt": "2030-01-01T00:00:00Z", "expirySpan": span}])
    assert str(error) == f"line 2, field expirySpan: {rule}"


def test_a_repeated_note_id_is_refused() -> None:
    error = refusal([HEADER, NOTE, NOTE])
    assert (error.line, error.field) == (3, "id")
    assert "first on line 2" in str(error)


def test_a_file_cut_at_a_line_boundary_is_caught_by_the_header_counts() -> None:
    error = refusal([HEADER | {"notes": 2, "globals": 0}, NOTE])
    assert "announces 2 notes, the file holds 1" in str(error)


def test_a_line_longer_than_the_bound_is_refused_before_it_is_read_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(export_file, "MAX_LINE_BYTES", 4096)
    note = {"type": "note", "id": NOTE_ID, "projectId": "p", "groupId": "g", "text": "t", "createdAt": "2024-01-15"}
    fits = read_export(io.BytesIO(jsonl([HEADER, {**note, "text": "x" * 3000}])))
    assert len(fits.notes) == 1  # a line within the bound reads as before
    stream = io.BytesIO(jsonl([HEADER]) + b"x" * 100_000)
    with pytest.raises(ImportFileInvalid, match="line 2: longer than"):
        read_export(stream)
    assert stream.tell() <= 2 * 4096  # the rest of the line was never read
