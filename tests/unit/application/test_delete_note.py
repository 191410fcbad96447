"""memory.delete's use case: a deleted note is gone everywhere; an unknown id is not found."""

from __future__ import annotations

import pytest

from local_mcp_memory.application.delete_note import DeleteNote, delete_note
from local_mcp_memory.application.errors import NoteNotFound
from local_mcp_memory.application.get_note import GetNote, get_note
from local_mcp_memory.application.list_recent import ListRecent, list_recent
from local_mcp_memory.application.search import SearchNotes, search
from local_mcp_memory.application.services import Services
from local_mcp_memory.domain.identifiers import NoteId
from tests.unit.steps import add


def test_a_deleted_note_is_gone_from_get_search_and_list_recent(services: Services) -> None:
    kept = add(services, "retry webhooks with backoff")
    gone = add(services, "retry webhooks with jitter")
    delete_note(DeleteNote(gone), services)
    with pytest.raises(NoteNotFound):
        get_note(GetNote(gone), services)
    assert [h.stored.note.id for h in search(SearchNotes(project_id="proj", query="retry webhooks"), services).hits] == [kept]
    assert [s.note.id for s in list_recent(ListRecent(project_id="proj"), services).items] == [kept]


def test_deleting_an_unknown_id_is_not_found_with_the_id(services: Services) -> None:
    unknown = NoteId.new()
    with pytest.raises(NoteNotFound) as raised:
        delete_note(DeleteNote(unknown), services)
    assert raised.value.id == unknown.value


def test_a_second_delete_of_the_same_id_is_not_found(services: Services) -> None:
    note_id = add(services, "short lived")
    delete_note(DeleteNote(note_id), services)
    with pytest.raises(NoteNotFound) as raised:
        delete_note(DeleteNote(note_id), services)
    assert raised.value.id == note_id.value
