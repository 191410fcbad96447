"""Links in the FAISS store: journal records, a checksummed file of the snapshot, their
order, and damage to either failing only the link answers it touches."""

from __future__ import annotations

from pathlib import Path

import pytest

from local_mcp_memory.adapters.faiss_store import FaissNoteStore
from local_mcp_memory.adapters.faiss_store.format.framing import encode_line
from local_mcp_memory.adapters.faiss_store.format.records import FORMAT, PutLink, decode_sidecar
from local_mcp_memory.adapters.faiss_store.recovery.salvage import as_export, salvage
from local_mcp_memory.adapters.faiss_store.recovery.verify import verify
from local_mcp_memory.application.errors import StoreCorrupt
from tests.unit.adapters.faiss_store.stores import NS, flip_byte, journal_of, link, note, snapshot_of, vector

A, B, C, D = (note(i) for i in range(4))


def linked_store(data: Path, *, compact: bool) -> None:
    """A→B, A→C (same instant, written later), C→D; and B→D removed."""
    store = FaissNoteStore(data)
    try:
        store.put_many([(n, vector(i)) for i, n in enumerate((A, B, C, D))], NS)
        assert store.link(link(A, B, minutes=1))
        assert store.link(link(A, C, "supersedes", minutes=1))
        assert store.link(link(C, D, minutes=2))
        assert store.link(link(B, D, minutes=3)) and store.unlink(link(B, D).key)
        if compact:
            store.compact()
    finally:
        store.close()
    (data / "LOCK").unlink()


def keys(links) -> list[tuple[str, str, str]]:
    return [(l.key.from_id.value, l.key.to_id.value, l.key.relation.value) for l in links]


def k(a, b, relation="relates_to") -> tuple[str, str, str]:
    return (a.id.value, b.id.value, relation)


@pytest.mark.parametrize("compact", [False, True])
def test_links_read_back_in_order_from_the_journal_and_from_the_snapshot(tmp_path: Path, compact: bool) -> None:
    linked_store(tmp_path / "data", compact=compact)
    store = FaissNoteStore(tmp_path / "data")
    try:
        assert keys(store.links(A.id)) == [k(A, C, "supersedes"), k(A, B)]  # a tie: the last written first
        assert keys(store.links(D.id)) == [k(C, D)]
        assert keys(store.iter_links()) == [k(A, B), k(A, C, "supersedes"), k(C, D)]
    finally:
        store.close()


def test_the_snapshot_lists_its_links_in_a_checksummed_file_it_counts(tmp_path: Path) -> None:
    linked_store(tmp_path / "data", compact=True)
    snapshot = snapshot_of(tmp_path / "data")
    sidecar = decode_sidecar((snapshot / "sidecar.json").read_bytes(), "sidecar.json")
    assert sidecar.format == FORMAT and sidecar.link_count == 3
    assert (snapshot / "links.jsonl").read_bytes().count(b'{"crc":"') == 3


def test_linking_again_after_an_unlink_is_a_new_link(tmp_path: Path) -> None:
    store = FaissNoteStore(tmp_path / "data")
    try:
        store.put_many([(A, vector(0)), (B, vector(1))], NS)
        assert store.link(link(A, B, minutes=1)) and store.link(link(A, B, minutes=5))
        assert [l.created_at for l in store.links(A.id)] == [link(A, B, minutes=1).created_at]
        assert store.unlink(link(A, B).key) and not store.unlink(link(A, B).key)
        assert store.link(link(A, B, minutes=5))
        assert [l.created_at for l in store.links(B.id)] == [link(A, B, minutes=5).created_at]
    finally:
        store.close()


def test_a_link_to_a_note_another_process_deleted_is_refused(tmp_path: Path) -> None:
    data = tmp_path / "data"
    one, other = FaissNoteStore(data), FaissNoteStore(data)
    try:
        one.put_many([(A, vector(0)), (B, vector(1))], NS)
        assert other.get(B.id) is not None
        assert one.delete(B.id)
        before = journal_of(data).read_bytes()
        assert not other.link(link(A, B))
        assert journal_of(data).read_bytes() == before
    finally:
        one.close()
        other.close()


def test_a_deleted_notes_links_are_gone_for_every_process_and_after_compaction(tmp_path: Path) -> None:
    data = tmp_path / "data"
    linked_store(data, compact=False)
    one, other = FaissNoteStore(data), FaissNoteStore(data)
    try:
        assert keys(other.links(C.id)) == [k(C, D), k(A, C, "supersedes")]
        assert one.delete(C.id)
        assert keys(other.links(A.id)) == [k(A, B)] and other.links(D.id) == []
        one.compact()
        assert keys(other.iter_links()) == [k(A, B)]
    finally:
        one.close()
        other.close()


def damaged_links_line(data: Path, number: int, *places: int) -> None:
    """Flip the bytes at ``places`` of line ``number`` of the snapshot's links.jsonl
    (negative: from the line's end)."""
    path = snapshot_of(data) / "links.jsonl"
    lines = path.read_bytes().split(b"\n")
    for at in places:
        flip_byte(path, sum(len(line) + 1 for line in lines[:number]) + at % len(lines[number]))


def test_a_damaged_link_line_fails_the_link_answers_of_its_two_notes_only(tmp_path: Path) -> None:
    data = tmp_path / "data"
    linked_store(data, compact=True)
    damaged_links_line(data, 2, -5)  # inside the record of C→D
    store = FaissNoteStore(data)
    try:
        for n in (C, D):
            with pytest.raises(StoreCorrupt) as raised:
                store.links(n.id)
            assert raised.value.path.endswith("links.jsonl")
        assert keys(store.links(B.id)) == [k(A, B)]
        with pytest.raises(StoreCorrupt):
            store.iter_links()
        assert store.get(C.id).note == C
        with pytest.raises(StoreCorrupt):
            store.compact()  # a snapshot written now would lose the damaged link for good
        assert store.unlink(link(C, D).key)  # the record heals it
        assert store.links(D.id) == []
        store.compact()
    finally:
        store.close()


def test_verify_and_salvage_report_a_damaged_link_line_and_keep_the_rest(tmp_path: Path) -> None:
    data = tmp_path / "data"
    linked_store(data, compact=True)
    damaged_links_line(data, 0, -5)
    checkup = verify(data)
    assert [path for path in checkup.problems] == [str(snapshot_of(data) / "links.jsonl")]
    export, unusable = as_export(salvage(data))
    assert unusable == 0 and len(list(export.notes)) == 4
    assert keys(export.links) == [k(A, C, "supersedes"), k(C, D)]


def test_a_link_line_that_lost_its_key_too_fails_every_link_answer_and_no_note(tmp_path: Path) -> None:
    data = tmp_path / "data"
    linked_store(data, compact=True)
    damaged_links_line(data, 1, 60, -5)  # the record and what it is about
    store = FaissNoteStore(data)
    try:
        for n in (A, B, C, D):
            with pytest.raises(StoreCorrupt):
                store.links(n.id)
            assert store.get(n.id).note == n
    finally:
        store.close()


def test_a_links_file_shorter_than_its_sidecar_says_fails_every_link_answer(tmp_path: Path) -> None:
    data = tmp_path / "data"
    linked_store(data, compact=True)
    path = snapshot_of(data) / "links.jsonl"
    path.write_bytes(b"\n".join(path.read_bytes().split(b"\n")[1:]))  # the first line gone
    store = FaissNoteStore(data)
    try:
        with pytest.raises(StoreCorrupt):
            store.links(D.id)
    finally:
        store.close()


def test_a_damaged_link_record_in_the_journal_fails_its_notes_link_answers_until_a_delete_heals_it(tmp_path: Path) -> None:
    data = tmp_path / "data"
    linked_store(data, compact=False)
    journal = journal_of(data)
    lines = journal.read_bytes().split(b"\n")
    number = next(i for i, line in enumerate(lines) if b'"type":"link"' in line and C.id.value.encode() + b'","target"' in line)
    flip_byte(journal, sum(len(line) + 1 for line in lines[:number]) + len(lines[number]) - 5)
    store = FaissNoteStore(data)
    try:
        with pytest.raises(StoreCorrupt):
            store.links(D.id)
        assert keys(store.links(B.id)) == [k(A, B)]
        assert store.delete(D.id)
        assert keys(store.links(C.id)) == [k(A, C, "supersedes")]
    finally:
        store.close()


def test_a_missing_links_file_fails_every_link_answer_and_no_note(tmp_path: Path) -> None:
    data = tmp_path / "data"
    linked_store(data, compact=True)
    (snapshot_of(data) / "links.jsonl").unlink()
    assert not verify(data).ok
    store = FaissNoteStore(data)
    try:
        with pytest.raises(StoreCorrupt) as raised:
            store.links(A.id)
        assert raised.value.path.endswith("links.jsonl")
        assert store.get(A.id).note == A
    finally:
        store.close()


def test_a_well_framed_link_record_whose_instant_cannot_be_read_is_damage_of_that_link(tmp_path: Path) -> None:
    data = tmp_path / "data"
    linked_store(data, compact=False)
    with journal_of(data).open("ab") as journal:
        journal.write(encode_line(PutLink(source=A.id.value, target=D.id.value, relation="relates_to", created="yesterday")))
    store = FaissNoteStore(data)
    try:
        with pytest.raises(StoreCorrupt):
            store.links(D.id)
        assert keys(store.links(B.id)) == [k(A, B)]
        assert store.link(link(A, D, minutes=9))  # a good record of that key heals it
        assert keys(store.links(D.id)) == [k(A, D), k(C, D)]
    finally:
        store.close()
