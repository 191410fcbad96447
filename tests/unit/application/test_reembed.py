"""Re-embedding into the current namespace: bounded, resumable, and safe against updates."""

from __future__ import annotations

import pytest

from local_mcp_memory.application.errors import InvalidRequest
from local_mcp_memory.application.reembed import Reembed, reembed
from local_mcp_memory.application.search import SearchNotes, search
from local_mcp_memory.application.services import Services
from local_mcp_memory.application.update_note import UpdateNote, update_note
from local_mcp_memory.domain.identifiers import Namespace
from local_mcp_memory.domain.note import NotePatch
from tests.unit.steps import LOCAL, OLLAMA, add, homes, switch_to_ollama


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
