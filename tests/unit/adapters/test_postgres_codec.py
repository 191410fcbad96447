"""A search reads stored notes without re-running the domain's checks: the note it builds
is the one the checked path builds, whatever fields it holds."""

from __future__ import annotations

import attrs
from hypothesis import given

from local_mcp_memory.adapters.postgres_store import codec
from local_mcp_memory.domain.identifiers import Namespace
from local_mcp_memory.domain.note import Note
from tests.strategies import namespaces, notes


@given(notes, namespaces)
def test_a_searched_row_reads_back_as_the_checked_path_reads_it(note: Note, namespace: Namespace) -> None:
    doc = codec.note_doc(note)
    checked, searched = codec.stored_note(doc, str(namespace)), codec.searched_note(doc, str(namespace))
    assert searched == checked and searched.note == note
    assert repr(searched) == repr(checked)  # the same values, down to a datetime's fold
    for value in (searched.note, searched.note.id, searched.note.project_id, searched.note.group_id, searched.note.tags):
        assert type(value) is type(attrs.evolve(value))  # every attribute set, each of the domain's type
    assert attrs.asdict(searched.note, recurse=False) == attrs.asdict(checked.note, recurse=False)
    assert hash(searched.note.id) == hash(note.id) and searched.note.created_at.tzinfo is checked.note.created_at.tzinfo
