"""Search (application/search.py): filters, projects and bounds, and hybrid search surfacing
what keyword or meaning alone finds."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from local_mcp_memory.application.add_note import AddNote, add_note
from local_mcp_memory.application.errors import InvalidRequest
from local_mcp_memory.application.ports import CandidateQuery, Candidates, EmbedKind
from local_mcp_memory.application.ranking import CONTEXT_SEEDS
from local_mcp_memory.application.search import DEFAULT_MODE, SearchNotes, search
from local_mcp_memory.application.services import Services
from local_mcp_memory.application.settings import EmbedderSettings
from local_mcp_memory.domain.identifiers import GroupId, NoteId
from local_mcp_memory.domain.note import Tags
from local_mcp_memory.domain.time import TimeWindow
from local_mcp_memory.entrypoints.composition.compose import compose
from local_mcp_memory.entrypoints.composition.settings import ServerOptions
from tests.fakes.manual_clock import ManualClock
from tests.fakes.memory_config import InMemoryConfigRepository
from tests.fakes.memory_store import InMemoryNoteStore
from tests.unit.steps import add


METHODS_PAGE = Path(__file__).resolve().parents[3] / "docs" / "methods.md"


T0 = datetime(2024, 1, 15, 10, 30, tzinfo=timezone.utc)


class TableEmbedder:
    """Vectors by meaning, as a table says: a text containing a key gets that key's vector."""

    provider = "test"
    model = "table"

    def __init__(self, table: dict[str, Sequence[float]], other: Sequence[float] = (0.0, 0.0, 1.0)) -> None:
        self._table = table
        self._other = other

    def embed(self, texts: Sequence[str], kind: EmbedKind) -> list[Sequence[float]]:
        return [next((v for k, v in self._table.items() if k in t), self._other) for t in texts]


class TableEmbedderFactory:
    def __init__(self, embedder: TableEmbedder) -> None:
        self._embedder = embedder

    def create(self, settings: EmbedderSettings) -> TableEmbedder:
        return self._embedder


def services_with(tmp_path: Path, embedder: TableEmbedder) -> Services:
    return compose(
        ServerOptions.resolve({}, tmp_path / "config.json", tmp_path / "data"),
        embedders=TableEmbedderFactory(embedder),
        store=InMemoryNoteStore(),
        clock=ManualClock(),
        config=InMemoryConfigRepository(),
    )


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


def test_a_note_found_only_by_keyword_and_one_found_only_by_meaning_both_surface_in_hybrid_mode(
    tmp_path: Path,
) -> None:
    meaning = (1.0, 0.0, 0.0)
    embedder = TableEmbedder({"ask about release": meaning, "shipping a new version": meaning})
    services = services_with(tmp_path, embedder)
    by_meaning = add_note(AddNote("proj", GroupId("g"), "Steps for shipping a new version to users"), services)
    by_keyword = add_note(AddNote("proj", GroupId("g"), "Ticket XK-4711 tracks the flaky login test"), services)
    add_note(AddNote("proj", GroupId("g"), "Lunch is at noon on Fridays"), services)

    found = search(SearchNotes("proj", "ask about release of XK-4711", mode="hybrid", top_k=2), services)

    assert {h.stored.note.id for h in found.hits} == {by_meaning.id, by_keyword.id}


def test_semantic_mode_alone_misses_the_note_found_only_by_keyword(tmp_path: Path) -> None:
    meaning = (1.0, 0.0, 0.0)
    embedder = TableEmbedder({"ask about release": meaning, "shipping a new version": meaning})
    services = services_with(tmp_path, embedder)
    by_meaning = add_note(AddNote("proj", GroupId("g"), "Steps for shipping a new version to users"), services)
    add_note(AddNote("proj", GroupId("g"), "Ticket XK-4711 tracks the flaky login test"), services)
    add_note(AddNote("proj", GroupId("g"), "Lunch is at noon on Fridays"), services)

    found = search(SearchNotes("proj", "ask about release of XK-4711", mode="semantic", top_k=1), services)

    assert [h.stored.note.id for h in found.hits] == [by_meaning.id]


def _question_and_answer(tmp_path: Path, question_text: str) -> tuple[Services, NoteId, NoteId]:
    """A question and the answer written right after it, among unrelated notes."""
    meaning = (1.0, 0.0, 0.0)
    embedder = TableEmbedder({"deploy": meaning, "blue-green": (0.0, 0.0, 1.0)}, other=(0.0, 1.0, 0.0))
    services = services_with(tmp_path, embedder)
    for minute in range(12):
        at = T0 + timedelta(hours=2, minutes=minute)  # newer: first among equals in a plain search
        add_note(AddNote("proj", GroupId("g"), f"Unrelated chatter number {minute}", created_at=at), services)
    question = add_note(AddNote("proj", GroupId("g"), question_text, created_at=T0 + timedelta(hours=1)), services)
    answer = add_note(AddNote("proj", GroupId("g"), "Through the blue-green switch.", created_at=T0 + timedelta(hours=1, seconds=1)), services)
    add_note(AddNote("proj", GroupId("other"), "Unrelated, written in between", created_at=T0 + timedelta(hours=1)), services)
    return services, question.id, answer.id


def test_a_hybrid_search_that_names_something_brings_up_the_note_written_right_after_a_hit(tmp_path: Path) -> None:
    services, question, answer = _question_and_answer(tmp_path, "How do we deploy the Atlas api?")

    found = search(SearchNotes("proj", "deploy the Atlas api", top_k=2), services)
    lower = search(SearchNotes("proj", "deploy the atlas api", top_k=2), services)  # the note writes it as a name
    plain = search(SearchNotes("proj", "deploy the Atlas api", top_k=2, mode="semantic"), services)

    assert [h.stored.note.id for h in found.hits] == [question, answer]
    assert [h.stored.note.id for h in lower.hits] == [question, answer]
    assert answer not in [h.stored.note.id for h in plain.hits]


def test_a_hybrid_search_that_names_nothing_lends_no_context(tmp_path: Path) -> None:
    services, question, answer = _question_and_answer(tmp_path, "How do we deploy the api?")

    found = search(SearchNotes("proj", "deploy the api", top_k=2), services)

    assert found.hits[0].stored.note.id == question
    assert answer not in [h.stored.note.id for h in found.hits]


def test_a_hybrid_search_that_names_a_day_prefers_what_was_written_that_day(tmp_path: Path) -> None:
    services = services_with(tmp_path, TableEmbedder({}, other=(0.0, 1.0, 0.0)))
    day = datetime(2023, 12, 8, 15, 0, tzinfo=timezone.utc)
    for offset in (-30, -7, 7, 30):  # the same words on other days, newer ones first among equals
        add_note(AddNote("proj", GroupId(f"g{offset + 30}"), "Tim finished reading a book", created_at=day + timedelta(days=offset)), services)
    that_day = add_note(AddNote("proj", GroupId("g"), "Tim finished reading a book", created_at=day), services)

    found = search(SearchNotes("proj", "What book did Tim finish on 8th December, 2023?", top_k=1), services)
    undated = search(SearchNotes("proj", "What book did Tim finish?", top_k=1), services)

    assert [h.stored.note.id for h in found.hits] == [that_day.id]
    assert [h.stored.note.id for h in undated.hits] != [that_day.id]


def test_the_ten_best_hits_lend_context_to_their_neighbours_not_only_the_first_five(tmp_path: Path) -> None:
    embedder = TableEmbedder({"deploy": (1.0, 0.0, 0.0), "blue-green": (0.0, 0.0, 1.0)}, other=(0.0, 1.0, 0.0))
    services = services_with(tmp_path, embedder)
    for n in range(8):  # eight strong matches, each alone in its group, newer than the question below
        at = T0 + timedelta(days=3, hours=n)
        add_note(AddNote("proj", GroupId(f"solo-{n}"), f"deploy the Atlas api, variant {n}", created_at=at), services)
    for minute in range(12):
        add_note(AddNote("proj", GroupId("g"), f"Unrelated chatter number {minute}", created_at=T0 + timedelta(days=2, minutes=minute)), services)
    sixth = add_note(AddNote("proj", GroupId("g"), "How do we deploy Atlas?", created_at=T0 + timedelta(days=1)), services)
    answer = add_note(AddNote("proj", GroupId("g"), "Through the blue-green switch.", created_at=T0 + timedelta(days=1, seconds=1)), services)

    found = search(SearchNotes("proj", "deploy the Atlas api", top_k=20), services)

    ranked = [h.stored.note.id for h in found.hits]
    assert ranked.index(sixth.id) >= 5  # not among the first five hits
    assert answer.id in ranked[:10]  # yet its neighbour came in on its account


class AskedStore(InMemoryNoteStore):
    """A store that records what a search asks of it."""

    def __init__(self) -> None:
        super().__init__()
        self.questions: list[CandidateQuery] = []
        self.seeds: list[list[str]] = []
        self.answers: list[Candidates] = []

    def forget(self) -> None:
        self.questions.clear()
        self.answers.clear()
        self.seeds.clear()

    def candidates(self, query: CandidateQuery) -> Candidates:
        self.questions.append(query)
        self.answers.append(super().candidates(query))
        return self.answers[-1]

    def neighbours(self, note_ids, where, namespace=None, vector=None) -> Candidates:
        self.seeds.append(list(note_ids))
        return super().neighbours(note_ids, where, namespace, vector)


def test_a_hybrid_search_asks_for_the_neighbours_of_its_ten_first_candidates_only(tmp_path: Path) -> None:
    store = AskedStore()
    services = compose(
        ServerOptions.resolve({}, tmp_path / "config.json", tmp_path / "data"),
        embedders=TableEmbedderFactory(TableEmbedder({"deploy": (1.0, 0.0, 0.0)}, other=(0.0, 1.0, 0.0))),
        store=store,
        clock=ManualClock(),
        config=InMemoryConfigRepository(),
    )
    for n in range(40):
        add_note(AddNote("proj", GroupId(f"g-{n % 4}"), f"deploy step {n}", created_at=T0 + timedelta(minutes=n)), services)
    store.forget()  # what writing asked

    found = search(SearchNotes("proj", "deploy step", top_k=20), services)

    assert [q.neighbours for q in store.questions] == [False]
    assert len(store.seeds) == 1 and len(store.seeds[0]) == CONTEXT_SEEDS
    (answer,) = store.answers
    assert set(store.seeds[0]) <= {c.id for c in (*answer.semantic, *answer.keyword)}
    assert found.hits


def test_the_default_mode_is_hybrid_as_the_methods_page_says() -> None:
    documented = re.search(r"default `mode` is `(\w+)`", METHODS_PAGE.read_text())

    assert DEFAULT_MODE == "hybrid"
    assert documented is not None and documented.group(1) == DEFAULT_MODE
    assert SearchNotes("p", "q").mode == DEFAULT_MODE


def _unit(*v: float) -> tuple[float, ...]:
    length = sum(x * x for x in v) ** 0.5
    return tuple(x / length for x in v)


UPDATE_TABLE = {
    "engine": _unit(1, 0, 0, 0, 0, 0),  # the questions
    "older fact": _unit(1, 0.5, 0, 0, 0, 0),
    "newer fact": _unit(0.7, 0.7, 0.3, 0, 0, 0),  # 2.09 standard deviations from the older one's point of view, 2.38 from its own
    **{f"other note {n}": _unit(*v) for n, v in enumerate([
        (0.5, 1.0, 0.1, 0.9, 0.3, 0.4), (0.8, 0.4, 0.5, 0.0, 0.8, 0.5), (0.3, 0.8, 0.3, 0.5, 0.1, 0.4),
        (0.2, 0.3, 0.8, 0.3, 0.5, 1.0), (1.0, 0.7, 0.5, 0.3, 0.2, 1.0), (0.5, 0.1, 0.6, 0.8, 0.6, 0.9),
        (0.0, 0.5, 0.5, 0.1, 0.6, 0.9), (0.6, 0.3, 0.8, 0.5, 0.5, 0.8),
    ])},
}


def test_a_question_about_the_present_puts_the_update_first_one_about_the_past_the_closer_note(tmp_path: Path) -> None:
    services = services_with(tmp_path, TableEmbedder(UPDATE_TABLE))
    older = add_note(AddNote("proj", GroupId("a"), "older fact", created_at=T0), services)
    for n in range(8):
        add_note(AddNote("proj", GroupId(f"o{n}"), f"other note {n}", created_at=T0 + timedelta(days=1, minutes=n)), services)
    newer = add_note(AddNote("proj", GroupId("b"), "newer fact", created_at=T0 + timedelta(days=30)), services)

    def first(query: str, mode: str = "hybrid") -> list[object]:
        return [h.stored.note.id for h in search(SearchNotes("proj", query, top_k=2, mode=mode), services).hits]

    assert first("Which engine do we run?", "semantic") == [older.id, newer.id]  # closer to the question
    assert first("Which engine do we run?") == [newer.id, older.id]  # 2.09 >= SUBJECT_Z 1.75: one subject
    assert first("Which engine did we run?") == [older.id, newer.id]  # 2.09 < PAST_SUBJECT_Z 2.5
