"""Delete, stats, import, re-embed and dropping a namespace, driven with in-memory fakes."""

from __future__ import annotations

import json

import pytest

from application.add_note import AddNote, add_note
from application.delete_note import DeleteNote, delete_note
from application.drop_namespace import DropNamespace, drop_namespace
from application.errors import InvalidRequest, NoteNotFound
from application.export_notes import ExportNotes, export_notes
from application.get_note import GetNote, get_note
from application.import_notes import ImportNotes, import_notes
from application.list_recent import ListRecent, list_recent
from application.reembed import Reembed, reembed
from application.search import SearchNotes, search
from application.services import Services
from application.set_config import SetConfig, SetEmbedder, set_config
from application.stats import GetStats, get_stats
from application.update_note import UpdateNote, update_note
from application.upsert_global import UpsertGlobal, upsert_global
from domain.identifiers import GlobalKey, GroupId, Namespace, NoteId
from domain.note import NotePatch, Tags
from entrypoints.server import build_dispatcher

LOCAL = Namespace("local", "all-MiniLM-L6-v2", 64)
OLLAMA = Namespace("ollama", "nomic-embed-text", 64)


def add(services: Services, text: str, group: str = "feature-1", project: str = "proj", **fields: object) -> NoteId:
    return add_note(AddNote(project_id=project, group_id=GroupId(group), text=text, **fields), services).id


def switch_to_ollama(services: Services) -> Namespace:
    return set_config(SetConfig(SetEmbedder(provider="ollama")), services)


def homes(services: Services) -> dict[str, str]:
    return {s.note.id.value: str(s.namespace) for s in services.store.iter_notes()}


# ---------------------------------------------------------------- delete


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


# ---------------------------------------------------------------- stats


def test_stats_count_notes_by_namespace_project_group_and_tag(services: Services) -> None:
    add(services, "a", group="global", tags=Tags(("db", "ops")))
    add(services, "b", tags=Tags(("db",)))
    add(services, "c", project="other")
    stats = get_stats(GetStats(), services)
    assert (stats.notes, stats.current_namespace) == (3, LOCAL)
    assert stats.by_namespace == {str(LOCAL): 3}
    assert stats.by_project == {"proj": 2, "other": 1}
    assert stats.by_group == {"feature-1": 2, "global": 1}
    assert stats.by_tag == {"db": 2, "ops": 1}
    assert stats.vectors == {str(LOCAL): 3}
    assert stats.disk_bytes == 0


def test_stats_of_one_project_count_only_its_notes(services: Services) -> None:
    add(services, "a")
    add(services, "b", project="other")
    stats = get_stats(GetStats("other"), services)
    assert (stats.project_id.value, stats.notes, stats.by_project) == ("other", 1, {"other": 1})


# ---------------------------------------------------------------- re-embed and drop


def test_switching_provider_starts_a_new_namespace_and_old_notes_stay_home(services: Services) -> None:
    note_id = add(services, "old note")
    assert switch_to_ollama(services) == OLLAMA
    assert homes(services) == {note_id.value: str(LOCAL)}


def test_reembed_moves_every_older_note_into_the_current_namespace_and_keeps_old_vectors(services: Services) -> None:
    ids = [add(services, f"note number {i} about caching") for i in range(5)]
    switch_to_ollama(services)
    done = reembed(Reembed(batch_size=2), services)
    assert (done.namespace, done.reembedded, done.remaining) == (OLLAMA, 5, 0)
    assert set(homes(services).values()) == {str(OLLAMA)}
    assert services.store.namespaces() == {LOCAL: 5, OLLAMA: 5}
    found = search(SearchNotes(project_id="proj", query="note number 3 about caching", top_k=1), services)
    assert found.hits[0].stored.note.id == ids[3]


def test_reembed_in_bounded_calls_ends_with_every_note_once_in_the_new_namespace(services: Services) -> None:
    ids = {add(services, f"note {i}").value for i in range(7)}
    switch_to_ollama(services)
    results = []
    while not results or results[-1].remaining:
        results.append(reembed(Reembed(batch_size=2, limit=3), services))
    assert [(r.reembedded, r.remaining) for r in results] == [(3, 4), (3, 1), (1, 0)]
    assert homes(services) == dict.fromkeys(ids, str(OLLAMA))
    assert len(list(services.store.iter_notes())) == 7


def test_an_interrupted_reembed_resumes_where_it_stopped(services: Services) -> None:
    for i in range(6):
        add(services, f"note {i}")
    switch_to_ollama(services)

    def interrupt_after_first_batch(done: int, total: int) -> None:
        if done:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        reembed(Reembed(batch_size=4), services, interrupt_after_first_batch)
    assert list(homes(services).values()).count(str(OLLAMA)) == 4
    assert reembed(Reembed(batch_size=4), services).reembedded == 2
    assert set(homes(services).values()) == {str(OLLAMA)}


def test_a_note_updated_during_a_reembed_keeps_the_vector_of_its_new_text(services: Services) -> None:
    first, second = add(services, "alpha"), add(services, "beta")
    switch_to_ollama(services)

    def edit_second_meanwhile(done: int, total: int) -> None:
        if done == 1:
            update_note(UpdateNote(second, NotePatch(text="gamma delta")), services)

    done = reembed(Reembed(batch_size=1), services, edit_second_meanwhile)
    assert done.reembedded == 1
    _, (expected,) = services.embedding.embed(["gamma delta"], "passage")
    assert list(services.store.vector(second, OLLAMA)) == list(expected)
    assert homes(services) == {first.value: str(OLLAMA), second.value: str(OLLAMA)}


def test_reembed_only_from_a_named_namespace(services: Services) -> None:
    add(services, "from local")
    switch_to_ollama(services)
    done = reembed(Reembed(from_namespace=Namespace("openai", "text-embedding-3-small", 64)), services)
    assert (done.reembedded, done.remaining) == (0, 0)
    assert reembed(Reembed(from_namespace=LOCAL), services).reembedded == 1


def test_reembed_from_the_current_namespace_is_refused(services: Services) -> None:
    add(services, "a note")
    with pytest.raises(InvalidRequest, match="from_namespace is the current namespace"):
        reembed(Reembed(from_namespace=LOCAL), services)


@pytest.mark.parametrize(("field", "kwargs"), [("batch_size", {"batch_size": 0}), ("limit", {"limit": 0})])
def test_reembed_bounds_are_checked(field: str, kwargs: dict[str, int]) -> None:
    with pytest.raises(InvalidRequest, match=field):
        Reembed(**kwargs)


def test_dropping_a_namespace_that_is_still_home_is_refused(services: Services) -> None:
    add(services, "a note")
    switch_to_ollama(services)
    with pytest.raises(InvalidRequest, match="still the home of 1 notes"):
        drop_namespace(DropNamespace(LOCAL), services)
    assert services.store.namespaces() == {LOCAL: 1}


def test_dropping_an_old_namespace_after_reembed_removes_its_vectors(services: Services) -> None:
    add(services, "a note")
    switch_to_ollama(services)
    reembed(Reembed(), services)
    assert drop_namespace(DropNamespace(LOCAL), services) == 1
    assert services.store.namespaces() == {OLLAMA: 1}
    assert drop_namespace(DropNamespace(LOCAL), services) == 0


def test_dropping_the_current_namespace_is_refused(services: Services) -> None:
    add(services, "a note")
    with pytest.raises(InvalidRequest, match="is the current namespace"):
        drop_namespace(DropNamespace(LOCAL), services)


# ---------------------------------------------------------------- export and import


def export_of(services: Services, vectors: bool = True) -> ImportNotes:
    export = export_notes(ExportNotes(with_vectors=vectors), services)
    return ImportNotes(list(export.notes), export.globals)


def test_importing_an_export_twice_writes_nothing_the_second_time(services: Services, fresh: Services) -> None:
    for i in range(3):
        add(services, f"note {i}")
    command = export_of(services)
    first = import_notes(command, fresh)
    second = import_notes(command, fresh)
    assert (first.written, first.embedded, first.unchanged) == (3, 0, 0)
    assert (second.written, second.unchanged) == (0, 3)
    assert len(list(fresh.store.iter_notes())) == 3


def test_an_import_reuses_vectors_of_the_current_namespace_and_embeds_the_others(
    services: Services, fresh: Services
) -> None:
    add(services, "embedded locally")
    switch_to_ollama(services)
    add(services, "embedded by ollama")
    done = import_notes(export_of(services), fresh)
    assert (done.namespace, done.written, done.embedded) == (LOCAL, 2, 1)
    assert set(homes(fresh).values()) == {str(LOCAL)}


def test_an_import_without_vectors_embeds_every_note(services: Services, fresh: Services) -> None:
    add(services, "a")
    add(services, "b")
    assert import_notes(export_of(services, vectors=False), fresh).embedded == 2


def test_an_interrupted_import_finishes_when_run_again(services: Services, fresh: Services) -> None:
    for i in range(5):
        add(services, f"note {i}")
    command = export_of(services)

    def interrupt_after_first_batch(done: int, total: int) -> None:
        if done:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        import_notes(ImportNotes(command.notes, command.globals, batch_size=2), fresh, interrupt_after_first_batch)
    assert len(list(fresh.store.iter_notes())) == 2
    done = import_notes(command, fresh)
    assert (done.written, done.unchanged) == (3, 2)
    assert [s.note for s in fresh.store.iter_notes()] == [s.note for s in services.store.iter_notes()]


def test_global_settings_are_imported_once(services: Services, fresh: Services) -> None:
    upsert_global(UpsertGlobal("proj", GlobalKey("global.project.conventions"), {"tabs": False}), services)
    command = export_of(services)
    assert import_notes(command, fresh).globals_written == 1
    assert import_notes(command, fresh).globals_unchanged == 1
    assert list(fresh.store.iter_globals()) == list(services.store.iter_globals())


# ---------------------------------------------------------------- over JSON-RPC


def rpc(services: Services, method: str, params: dict[str, object]) -> dict[str, object]:
    reply = build_dispatcher(lambda: services).handle(
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    )
    assert reply is not None
    return json.loads(reply)


def test_memory_delete_answers_ok_then_not_found_with_the_id(services: Services) -> None:
    note_id = add(services, "to delete").value
    assert rpc(services, "memory.delete", {"id": note_id})["result"] == {"ok": True}
    error = rpc(services, "memory.delete", {"id": note_id})["error"]
    assert (error["code"], error["data"]) == (-32004, {"id": note_id})


def test_memory_reembed_reports_progress_and_what_remains(services: Services) -> None:
    for i in range(3):
        add(services, f"note {i}")
    switch_to_ollama(services)
    result = rpc(services, "memory.reembed", {"limit": 2, "batchSize": 1})["result"]
    assert result == {"ok": True, "namespace": str(OLLAMA), "reembedded": 2, "remaining": 1}


def test_memory_drop_namespace_of_a_home_namespace_is_invalid_params(services: Services) -> None:
    add(services, "a note")
    switch_to_ollama(services)
    error = rpc(services, "memory.drop_namespace", {"namespace": str(LOCAL)})["error"]
    assert (error["code"], error["data"]["field"]) == (-32602, "namespace")
    assert "memory.reembed" in error["message"]


def test_memory_drop_namespace_refuses_a_malformed_namespace(services: Services) -> None:
    error = rpc(services, "memory.drop_namespace", {"namespace": "no-colons"})["error"]
    assert (error["code"], error["data"]["field"]) == (-32602, "namespace")


def test_memory_stats_answers_counts_and_disk_bytes(services: Services) -> None:
    add(services, "a", tags=Tags(("db",)))
    result = rpc(services, "memory.stats", {"projectId": "proj"})["result"]
    assert result["projectId"] == "proj"
    assert (result["notes"], result["byTag"], result["diskBytes"]) == (1, {"db": 1}, 0)
