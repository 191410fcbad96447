"""memory.update's use case: a new text is embedded again, a move keeps the vector."""

from __future__ import annotations

import pytest

from local_mcp_memory.application.errors import NoteNotFound
from local_mcp_memory.application.get_note import GetNote, get_note
from local_mcp_memory.application.search import SearchNotes, search
from local_mcp_memory.application.services import Services
from local_mcp_memory.application.update_note import UpdateNote, update_note
from local_mcp_memory.domain.errors import InvalidValue
from local_mcp_memory.domain.identifiers import GroupId, NoteId
from local_mcp_memory.domain.note import NotePatch, Tags
from tests.fakes.manual_clock import ManualClock
from tests.unit.steps import add


def test_update_of_text_re_embeds_and_keeps_id_and_created_at(services: Services, clock: ManualClock) -> None:
    note_id = add(services, "cache invalidation by version key")
    created = get_note(GetNote(note_id), services).note.created_at
    clock.advance(hours=1)
    update_note(UpdateNote(note_id, NotePatch(text="queue consumers are idempotent")), services)
    found = search(SearchNotes(project_id="proj", query="queue consumers idempotent", top_k=1), services)
    assert found.hits[0].stored.note.id == note_id
    assert found.hits[0].stored.note.created_at == created


def test_update_of_group_keeps_the_vector(services: Services) -> None:
    note_id = add(services, "lint with ruff", group="feature-1")
    update_note(UpdateNote(note_id, NotePatch(group_id=GroupId("global"), tags=Tags(("tooling",)))), services)
    found = search(SearchNotes(project_id="proj", query="lint with ruff", group_id=GroupId("global")), services)
    assert found.hits[0].stored.note.tags.values == ("tooling",)
    assert found.hits[0].score > 0.99


def test_update_of_an_unknown_id_is_not_found(services: Services) -> None:
    with pytest.raises(NoteNotFound):
        update_note(UpdateNote(NoteId.new(), NotePatch(title="x")), services)


def test_update_to_blank_text_is_refused_at_the_patch(services: Services) -> None:
    note_id = add(services, "keep me")
    with pytest.raises(InvalidValue) as caught:
        update_note(UpdateNote(note_id, NotePatch(text="   ")), services)
    assert caught.value.field == "patch.text"
    assert get_note(GetNote(note_id), services).note.text == "keep me"
