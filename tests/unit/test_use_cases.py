"""The use cases, driven with in-memory fakes; assertions on final state."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from adapters.manual_clock import ManualClock
from adapters.memory_config import InMemoryConfigRepository
from application.add_note import AddNote, add_note
from application.errors import DimensionChanged, InvalidRequest, NoteNotFound
from application.get_config import get_config
from application.get_global import GetGlobal, get_global
from application.get_note import GetNote, get_note
from application.list_recent import ListRecent, list_recent
from application.search import SearchNotes, search
from application.services import Services
from application.set_config import SetConfig, SetEmbedder, set_config
from application.update_note import UpdateNote, update_note
from application.upsert_global import UpsertGlobal, upsert_global
from domain.errors import InvalidValue
from domain.identifiers import GlobalKey, GroupId, NoteId
from domain.note import NotePatch, Tags
from domain.time import TimeWindow


def add(services: Services, text: str, group: str = "feature-1", project: str = "proj", **fields: object) -> NoteId:
    return add_note(AddNote(project_id=project, group_id=GroupId(group), text=text, **fields), services).id


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


def test_search_filters_by_group_and_scores_in_zero_to_one(services: Services) -> None:
    a = add(services, "retry failed webhooks with backoff", group="feature-1")
    b = add(services, "retry failed webhooks with jitter", group="global")
    found = search(SearchNotes(project_id="proj", query="retry webhooks", group_id=GroupId("feature-1")), services)
    assert [h.stored.note.id for h in found.hits] == [a]
    both = search(SearchNotes(project_id="proj", query="retry webhooks"), services)
    assert {h.stored.note.id for h in both.hits} == {a, b}
    assert all(0.0 <= h.score <= 1.0 for h in both.hits)
    assert [h.score for h in both.hits] == sorted((h.score for h in both.hits), reverse=True)


def test_search_applies_tags_and_time_window(services: Services, clock: ManualClock) -> None:
    old = add(services, "deploy with blue green", tags=Tags(("ops", "deploy")))
    clock.advance(days=1)
    new = add(services, "deploy on fridays is banned", tags=Tags(("ops",)))
    tagged = search(SearchNotes(project_id="proj", query="deploy", tags=Tags(("ops", "deploy"))), services)
    assert [h.stored.note.id for h in tagged.hits] == [old]
    recent = search(SearchNotes(project_id="proj", query="deploy", window=TimeWindow(since=clock.now())), services)
    assert [h.stored.note.id for h in recent.hits] == [new]


def test_search_never_crosses_projects(services: Services) -> None:
    add(services, "secret of project a", project="a")
    assert search(SearchNotes(project_id="b", query="secret of project a"), services).hits == []


@pytest.mark.parametrize("top_k", [0, 101])
def test_top_k_out_of_range_is_refused(top_k: int) -> None:
    with pytest.raises(InvalidRequest, match="top_k must be an integer in 1..100"):
        SearchNotes(project_id="p", query="q", top_k=top_k)


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


def test_list_recent_is_newest_first_with_limit_and_filters(services: Services, clock: ManualClock) -> None:
    ids = []
    for i in range(5):
        ids.append(add(services, f"note {i}", group="g1" if i % 2 else "g2"))
        clock.advance(minutes=1)
    recent = list_recent(ListRecent(project_id="proj", limit=3), services)
    assert [s.note.id for s in recent.items] == ids[::-1][:3]
    only_g1 = list_recent(ListRecent(project_id="proj", group_id=GroupId("g1")), services)
    assert [s.note.id for s in only_g1.items] == [ids[3], ids[1]]


def test_list_recent_keeps_write_order_within_one_instant(services: Services) -> None:
    ids = [add(services, f"same instant {i}") for i in range(3)]
    assert [s.note.id for s in list_recent(ListRecent(project_id="proj"), services).items] == ids[::-1]


def test_an_explicit_created_at_is_kept(services: Services) -> None:
    moment = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
    note_id = add(services, "from the past", created_at=moment)
    assert get_note(GetNote(note_id), services).note.created_at == moment


def test_global_kv_has_a_stable_id_and_the_latest_value(services: Services, clock: ManualClock) -> None:
    key = GlobalKey("global.memory.groupDefaults")
    first = upsert_global(UpsertGlobal("proj", key, {"featurePrefix": "feature-"}), services)
    clock.advance(seconds=5)
    second = upsert_global(UpsertGlobal("proj", key, {"featurePrefix": "feat-"}), services)
    entry = get_global(GetGlobal("proj", key), services)
    assert first.id == second.id == entry.id
    assert entry.value == {"featurePrefix": "feat-"} and entry.updated_at == clock.now()
    assert get_global(GetGlobal("other", key), services) is None


def test_set_config_switches_namespace_and_keeps_old_notes_readable(
    services: Services, config: InMemoryConfigRepository
) -> None:
    note_id = add(services, "written with the first model")
    namespace = set_config(SetConfig(SetEmbedder(provider="ollama")), services)
    assert str(namespace) == "ollama:nomic-embed-text:64"
    assert config.settings.embedder.provider == "ollama"
    assert str(get_note(GetNote(note_id), services).namespace) == "local:all-MiniLM-L6-v2:64"
    assert search(SearchNotes(project_id="proj", query="written with the first model", mode="semantic"), services).hits == []
    assert get_config(services).provider == "ollama"


def test_get_config_reports_paths_and_the_embedder(services: Services) -> None:
    view = get_config(services)
    assert view.config_path.endswith("config.json") and view.data_dir.endswith("data")
    assert (view.provider, view.model) == ("local", "all-MiniLM-L6-v2")
