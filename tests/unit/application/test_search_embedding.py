"""How a search embeds its query (application/search.py, query_vector.QueryVector): on its own
thread while the store reads what needs no vector, failing as it did when the query was
embedded first, and no work still running once a search has answered or failed."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from local_mcp_memory.adapters.faiss_store import FaissNoteStore
from local_mcp_memory.application.errors import EmbedderUnavailable, StoreError
from local_mcp_memory.application.ports import CandidateQuery, Candidates, EmbedKind, NoteStore
from local_mcp_memory.application.search import SearchNotes, search
from local_mcp_memory.application.services import Services
from local_mcp_memory.application.settings import EmbedderSettings
from local_mcp_memory.entrypoints.composition.compose import compose
from local_mcp_memory.entrypoints.composition.settings import ServerOptions
from tests.fakes.hashing_embedder import HashingEmbedder
from tests.fakes.manual_clock import ManualClock
from tests.fakes.memory_config import InMemoryConfigRepository
from tests.fakes.memory_store import InMemoryNoteStore
from tests.unit.steps import add


class SlowQueries:
    """Hashing vectors; a query's after ``delay`` seconds, then ``failure`` raised if set.
    Records the thread of each query and whether one is being embedded."""

    provider = "test"
    model = "slow"

    def __init__(self, delay: float = 0.0) -> None:
        self.delay, self.failure = delay, None
        self.threads: list[threading.Thread] = []
        self.running = 0

    def embed(self, texts: Sequence[str], kind: EmbedKind) -> np.ndarray:
        if kind == "query":
            self.threads.append(threading.current_thread())
            self.running += 1
            try:
                time.sleep(self.delay)
                if self.failure is not None:
                    raise self.failure
            finally:
                self.running -= 1
        return HashingEmbedder(16).embed(texts)


class Factory:
    def __init__(self, embedder: SlowQueries) -> None:
        self.embedder = embedder

    def create(self, settings: EmbedderSettings) -> SlowQueries:
        return self.embedder


class UnreadableStore(InMemoryNoteStore):
    """A store whose searches fail once ``broken``, before any use of the query's vector."""

    broken = False

    def candidates(self, query: CandidateQuery) -> Candidates:
        if self.broken:
            raise StoreError("cannot read the note store: Input/output error", "/data")
        return super().candidates(query)


def services_with(tmp_path: Path, embedder: SlowQueries, store: NoteStore | None = None) -> Services:
    return compose(
        ServerOptions.resolve({}, tmp_path / "config.json", tmp_path / "data"),
        embedders=Factory(embedder),
        store=store or InMemoryNoteStore(),
        clock=ManualClock(),
        config=InMemoryConfigRepository(),
    )


@pytest.mark.parametrize("mode", ["hybrid", "semantic"])
def test_a_query_is_embedded_on_the_searching_thread_and_no_side_thread_outlives_the_server(tmp_path: Path, mode: str) -> None:
    embedder = SlowQueries()
    services = services_with(tmp_path, embedder, FaissNoteStore(tmp_path / "store"))
    first = search(SearchNotes(project_id="proj", query="deploys", mode=mode), services)  # learns the dimension
    note = add(services, "deploys happen on tuesdays")
    found = search(SearchNotes(project_id="proj", query="deploys tuesdays", mode=mode), services)
    assert first.hits == [] and [h.stored.note.id for h in found.hits] == [note]
    assert embedder.threads == [threading.current_thread()] * 2
    services.close()
    assert not any(t.name.startswith("search-side") for t in threading.enumerate())


@pytest.mark.parametrize("mode", ["hybrid", "semantic"])
def test_a_failing_embedding_fails_the_search_with_its_own_error(tmp_path: Path, mode: str) -> None:
    embedder = SlowQueries(delay=0.05)
    services = services_with(tmp_path, embedder)
    add(services, "deploys happen on tuesdays")
    embedder.failure = EmbedderUnavailable("test", "http://127.0.0.1:9/", "timed out")
    with pytest.raises(EmbedderUnavailable) as raised:
        search(SearchNotes(project_id="proj", query="deploys", mode=mode), services)
    assert raised.value is embedder.failure and embedder.running == 0


def test_a_failing_embedding_wins_over_a_store_failing_first_and_ends_before_the_search(tmp_path: Path) -> None:
    embedder, store = SlowQueries(delay=0.2), UnreadableStore()
    services = services_with(tmp_path, embedder, store)
    add(services, "deploys happen on tuesdays")
    store.broken = True
    with pytest.raises(StoreError):
        search(SearchNotes(project_id="proj", query="deploys"), services)
    assert embedder.running == 0  # waited for, though the store failed first
    embedder.failure = EmbedderUnavailable("test", "http://127.0.0.1:9/", "timed out")
    with pytest.raises(EmbedderUnavailable):
        search(SearchNotes(project_id="proj", query="when are deploys"), services)  # not embedded before
    assert embedder.running == 0


def test_a_query_asked_again_is_not_embedded_again_until_the_embedder_changes(tmp_path: Path) -> None:
    embedder = SlowQueries()
    services = services_with(tmp_path, embedder)
    note = add(services, "deploys happen on tuesdays")
    first = search(SearchNotes(project_id="proj", query="deploys"), services)
    embedder.failure = EmbedderUnavailable("test", "http://127.0.0.1:9/", "timed out")
    again = search(SearchNotes(project_id="proj", query="deploys", top_k=3), services)  # its vector kept
    assert [h.stored.note.id for h in again.hits] == [h.stored.note.id for h in first.hits] == [note]
    assert [h.score for h in again.hits] == [h.score for h in first.hits] and len(embedder.threads) == 1
    with pytest.raises(EmbedderUnavailable):  # another text is embedded, and its failure is not kept
        search(SearchNotes(project_id="proj", query="deploy days"), services)
    embedder.failure = None
    search(SearchNotes(project_id="proj", query="deploy days"), services)
    assert len(embedder.threads) == 3
    services.embedding.switch(lambda settings: settings)  # a new embedder (the same one here) forgets them
    search(SearchNotes(project_id="proj", query="deploys"), services)
    assert len(embedder.threads) == 4


def test_only_the_most_recently_asked_queries_are_kept(tmp_path: Path) -> None:
    embedder = SlowQueries()
    services = services_with(tmp_path, embedder)
    add(services, "deploys happen on tuesdays")
    kept = services.embedding.QUERIES_KEPT
    for n in range(kept + 1):
        search(SearchNotes(project_id="proj", query=f"query {n}"), services)
    search(SearchNotes(project_id="proj", query=f"query {kept}"), services)  # the newest: kept
    assert len(embedder.threads) == kept + 1
    search(SearchNotes(project_id="proj", query="query 0"), services)  # the oldest: gone
    assert len(embedder.threads) == kept + 2


def test_a_search_the_store_answers_without_the_vector_still_fails_with_the_embedding(tmp_path: Path) -> None:
    embedder = SlowQueries()
    services = services_with(tmp_path, embedder)
    add(services, "deploys happen on tuesdays", project="other")  # the dimension is known, this project has no vectors
    embedder.failure = EmbedderUnavailable("test", "http://127.0.0.1:9/", "timed out")
    with pytest.raises(EmbedderUnavailable):
        search(SearchNotes(project_id="proj", query="deploys"), services)
