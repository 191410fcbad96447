"""memory.add_note's use case: every field kept, the dimension learned once, an explicit time kept."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from mcp_memory.application.errors import DimensionChanged
from mcp_memory.application.get_note import GetNote, get_note
from mcp_memory.application.services import Services
from mcp_memory.domain.note import Tags
from tests.fakes.manual_clock import ManualClock
from tests.fakes.memory_config import InMemoryConfigRepository
from tests.unit.steps import add


def test_add_then_get_returns_every_field(services: Services, clock: ManualClock) -> None:
    note_id = add(services, "Use UTC everywhere", title="Time", tags=Tags(("conv",)), source="chat", metadata={"conversationId": "c1"})
    stored = get_note(GetNote(note_id), services)
    note = stored.note
    assert (note.text, note.title, note.tags.values, note.source, note.metadata) == (
        "Use UTC everywhere", "Time", ("conv",), "chat", {"conversationId": "c1"}
    )
    assert note.created_at == clock.now()
    assert str(stored.namespace) == "local:all-MiniLM-L6-v2:64"


def test_the_dimension_is_learned_once_and_recorded(services: Services, config: InMemoryConfigRepository) -> None:
    add(services, "first")
    add(services, "second")
    assert config.settings.embedder.dims == {"local:all-MiniLM-L6-v2": 64}
    assert config.saves == 1


def test_a_recorded_dimension_that_changes_is_refused_and_nothing_is_written(
    services: Services, config: InMemoryConfigRepository
) -> None:
    import attrs

    config.settings = attrs.evolve(config.settings, embedder=attrs.evolve(config.settings.embedder, dims={"local:all-MiniLM-L6-v2": 384}))
    fresh = attrs.evolve(services, embedding=type(services.embedding)(services.embedding._factory, config))
    with pytest.raises(DimensionChanged):
        add(fresh, "never stored")
    assert list(fresh.store.iter_notes()) == []


def test_an_explicit_created_at_is_kept(services: Services) -> None:
    moment = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
    note_id = add(services, "from the past", created_at=moment)
    assert get_note(GetNote(note_id), services).note.created_at == moment
