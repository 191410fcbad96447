"""The FAISS store's disk formats read back exactly what was written, and damage shows."""

from __future__ import annotations

import msgspec
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from local_mcp_memory.adapters.faiss_store.format.framing import about, checked_line, decode_line, decode_manifest, encode_line, read_line
from local_mcp_memory.adapters.faiss_store.format.records import (
    FORMAT,
    Delete,
    DeleteLink,
    Drop,
    Manifest,
    NoteFields,
    Put,
    PutGlobal,
    PutLink,
    Rehome,
    Sidecar,
    SpaceFile,
    decode_fields,
    decode_sidecar,
    encode,
    fields_of,
    note_of,
    stored_dedup_text,
    vector_bytes,
    vector_rows,
)
from local_mcp_memory.application.errors import StoreCorrupt
from local_mcp_memory.domain.errors import InvalidValue
from local_mcp_memory.domain.note import dedup_text
from local_mcp_memory.domain.time import format_instant
from tests.strategies import group_ids, instants, json_values, namespaces, notes, opaque_project_ids

vectors = st.integers(1, 16).flatmap(
    lambda dim: st.lists(st.floats(-1, 1, width=32), min_size=dim, max_size=dim)
)

puts = st.builds(
    lambda note, ns, vector: Put(
        note=fields_of(note), namespace=str(ns), vector=None if vector is None else vector_bytes(vector, len(vector))
    ),
    notes,
    namespaces,
    st.none() | vectors,
)

put_globals = st.builds(
    lambda p, k, v, t: PutGlobal(project=p, key=f"global.{k}", value=v, updated=format_instant(t)),
    opaque_project_ids,
    group_ids,
    json_values,
    instants,
)

records = st.one_of(
    puts,
    st.builds(
        lambda ns, ids, rows: Rehome(namespace=str(ns), ids=tuple(ids), vectors=np.asarray(rows, "<f4").tobytes()),
        namespaces,
        st.lists(st.uuids().map(str), max_size=3),
        st.lists(st.floats(-1, 1, width=32), max_size=8),
    ),
    st.builds(lambda u: Delete(id=str(u)), st.uuids()),
    st.builds(lambda ns: Drop(namespace=str(ns)), namespaces),
    put_globals,
    st.builds(
        lambda a, b, relation, t: PutLink(source=str(a), target=str(b), relation=relation, created=format_instant(t)),
        st.uuids(),
        st.uuids(),
        st.from_regex(r"[a-z_]{1,32}", fullmatch=True),
        instants,
    ),
    st.builds(
        lambda a, b, relation: DeleteLink(source=str(a), target=str(b), relation=relation),
        st.uuids(),
        st.uuids(),
        st.from_regex(r"[a-z_]{1,32}", fullmatch=True),
    ),
)


@given(notes)
def test_a_note_survives_its_stored_fields(note) -> None:
    assert note_of(fields_of(note)) == note


@given(records)
def test_a_journal_record_survives_its_line(record) -> None:
    line = encode_line(record)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert decode_line(line[:-1]) == record


@given(vectors)
def test_a_vector_survives_its_bytes(vector) -> None:
    data = vector_bytes(vector, len(vector))
    assert vector_rows(data, len(vector))[0].tolist() == np.asarray(vector, np.float32).tolist()


@given(records, st.data())
def test_a_damaged_or_cut_line_is_never_read_as_another_record(record, data) -> None:
    line = encode_line(record)[:-1]
    at = data.draw(st.integers(0, len(line) - 1))
    flipped = line[:at] + bytes([line[at] ^ data.draw(st.integers(1, 255))]) + line[at + 1 :]
    assert decode_line(flipped) in (None, record)
    assert decode_line(line[:at]) is None


@given(records, st.data())
def test_a_line_with_one_damaged_byte_still_says_what_it_was_about(record, data) -> None:
    line = encode_line(record)[:-1]
    at = data.draw(st.integers(0, len(line) - 1))
    flipped = line[:at] + bytes([line[at] ^ data.draw(st.integers(1, 255))]) + line[at + 1 :]
    body, subject = read_line(flipped)
    assert decode_line(flipped) == record or subject == about(record)


@given(notes)
def test_a_notes_stored_fields_survive_their_snapshot_bytes(note) -> None:
    fields = fields_of(note)
    assert decode_fields(encode(fields), "notes.bin") == fields


@given(st.lists(st.tuples(notes, namespaces), max_size=4), st.lists(put_globals, max_size=3))
def test_a_sidecar_survives_encoding(items, globals_) -> None:
    sidecar = Sidecar(
        format=FORMAT,
        generation=3,
        ids=[n.id.value for n, _ns in items],
        names=sorted({str(ns) for _n, ns in items}),
        spaces=[SpaceFile(namespace=str(ns), vectors="space-0000.npy", owners="space-0000.owners.npy", count=1) for _n, ns in items],
        checksums={"notes.npy": 0xFFFFFFFF, "tags.npy": 0},
        global_count=len(globals_),
    )
    assert decode_sidecar(encode(sidecar), "sidecar.json") == sidecar


@given(records)
def test_a_record_that_reads_back_gets_its_line_unchanged(record) -> None:
    assert checked_line(record) == encode_line(record)


def _put(**fields) -> Put:
    base = dict(id="0b7a4c1e-1111-4222-8333-444455556666", project="p", group="g", text="t", created="2024-01-15T10:30:00Z")
    return Put(note=NoteFields(**{**base, **fields}), namespace="local:m:2", vector=None)


@pytest.mark.parametrize(
    "fields, field",
    [
        ({"metadata": {"x": float("nan")}}, "metadata"),  # JSON writes NaN as null
        ({"metadata": {"x": {1: "a"}}}, "metadata"),  # and an integer key as a string
        ({"text": "a\ud800b"}, "text"),  # a lone surrogate is not UTF-8
        ({"group": "g\udfff"}, "group_id"),
    ],
)
def test_a_record_that_would_not_read_back_is_refused_at_its_field(fields, field) -> None:
    with pytest.raises(InvalidValue) as caught:
        checked_line(_put(**fields))
    assert caught.value.field == field


def test_a_global_value_that_would_not_read_back_is_refused_at_value() -> None:
    record = PutGlobal(project="p", key="global.k", value=[float("inf")], updated="2024-01-15T10:30:00Z")
    with pytest.raises(InvalidValue) as caught:
        checked_line(record)
    assert caught.value.field == "value"


@pytest.mark.parametrize("version", [3, 4])
def test_a_checksummed_manifest_of_format_3_or_4_is_read(version: int) -> None:
    manifest = Manifest(format=version, generation=2, snapshot="snapshot-00000002", journal="journal-00000002.jsonl", sidecar_crc=7)
    assert decode_manifest(encode_line(manifest), "MANIFEST.json") == manifest


def test_a_checksummed_manifest_claiming_format_2_is_refused() -> None:
    manifest = Manifest(format=2, generation=2, snapshot=None, journal="journal-00000002.jsonl")
    with pytest.raises(StoreCorrupt):
        decode_manifest(encode_line(manifest), "MANIFEST.json")


def test_a_manifest_of_a_newer_format_says_a_newer_version_upgraded_the_store() -> None:
    manifest = Manifest(format=FORMAT + 1, generation=2, snapshot=None, journal="journal-00000002.jsonl", sidecar_crc=7)
    with pytest.raises(StoreCorrupt, match=f"has format {FORMAT + 1}; .*a newer mcp-memory has upgraded it"):
        decode_manifest(encode_line(manifest), "MANIFEST.json")
    with pytest.raises(StoreCorrupt) as older:
        decode_manifest(encode_line(msgspec.structs.replace(manifest, format=1)), "MANIFEST.json")
    assert "newer" not in str(older.value)


def test_a_link_record_says_which_link_it_is_about() -> None:
    record = PutLink(source="a", target="b", relation="supersedes", created="2024-01-15T10:30:00Z")
    assert about(record).links == (("a", "b", "supersedes"),)
    assert about(DeleteLink(source="a", target="b", relation="supersedes")).links == (("a", "b", "supersedes"),)


WHITESPACE = "".join(chr(c) for c in range(0x3000 + 1) if chr(c).isspace())


@given(st.text(alphabet=st.sampled_from(WHITESPACE) | st.characters(), max_size=60))
def test_the_stored_dedup_text_is_the_domains(text: str) -> None:
    assert stored_dedup_text(text) == dedup_text(text)
