"""Hybrid search: keyword and meaning blended into one 0..1 score (application/ranking.py)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from adapters.manual_clock import ManualClock
from adapters.memory_config import InMemoryConfigRepository
from adapters.memory_store import InMemoryNoteStore
from application.add_note import AddNote, add_note
from application.ports import Candidate, EmbedKind, Spread
from application.ranking import KEYWORD_EVIDENCE, SPREAD_MIN_NOTES, blend, calibrated_scores, with_context
from application.search import DEFAULT_MODE, SearchNotes, search
from application.services import Services
from application.settings import EmbedderSettings
from domain.identifiers import GroupId
from entrypoints.bootstrap import ServerOptions, build

README = Path(__file__).resolve().parents[2] / "README.md"
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
    options = ServerOptions(tmp_path / "config.json", tmp_path / "data", "stdio", environ={})
    return build(
        options,
        embedders=TableEmbedderFactory(embedder),
        store=InMemoryNoteStore(),
        clock=ManualClock(),
        config=InMemoryConfigRepository(),
    )


def hit(key: int, score: float, minutes: int = 0) -> Candidate:
    return Candidate(f"00000000-0000-4000-8000-{key:012x}", T0 + timedelta(minutes=minutes), score)


def ids(found: list[Candidate]) -> list[int]:
    return [int(c.id[-12:], 16) for c in found]


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


def test_a_note_in_both_rankings_outranks_notes_in_one() -> None:
    fused = blend([hit(0xA, 0.8), hit(0xB, 0.8)], [hit(0xB, 0.6), hit(0xC, 0.9)], 0.5, depth=10)

    assert ids(fused)[0] == 0xB


def test_a_keyword_match_below_the_evidence_threshold_counts_as_none() -> None:
    weak = KEYWORD_EVIDENCE / 2
    fused = blend([hit(0xA, 0.9), hit(0xB, 0.85)], [hit(0xB, weak)], 0.5, depth=10)

    assert ids(fused) == [0xA, 0xB]
    assert fused[1].score == 0.5 * 0.85


def test_a_note_below_a_ranking_cut_at_depth_gets_that_rankings_lowest_score() -> None:
    semantic = [hit(0xA, 0.9), hit(0xB, 0.7)]  # cut at depth 2: "c" scores at most 0.7 there
    fused = blend(semantic, [hit(0xC, 0.8)], 0.5, depth=2)

    assert dict(zip(ids(fused), (h.score for h in fused)))[0xC] == 0.5 * 0.8 + 0.5 * 0.7


def test_calibrated_scores_are_the_same_for_cosines_shifted_and_squeezed_by_another_model() -> None:
    cosines = [0.62, 0.40, 0.15, 0.05]
    spread = Spread(100, 0.08, 0.07)
    squeezed = Spread(100, 0.8 + 0.08 / 4, 0.07 / 4)  # the same notes as a model with cosines near 0.8

    plain = calibrated_scores([hit(i, c) for i, c in enumerate(cosines)], spread)
    other = calibrated_scores([hit(i, 0.8 + c / 4) for i, c in enumerate(cosines)], squeezed)

    assert [round(h.score, 9) for h in plain] == [round(h.score, 9) for h in other]
    assert plain[0].score > plain[1].score > plain[2].score > plain[3].score == 0.0


def test_calibration_needs_enough_notes_to_measure_a_spread() -> None:
    few = calibrated_scores([hit(1, 0.6)], Spread(SPREAD_MIN_NOTES - 1, 0.5, 0.1))

    assert few[0].score == (1 + 0.6) / 2


def test_the_neighbours_of_the_best_hits_share_their_score() -> None:
    fused = [hit(0xA, 0.8), hit(0xB, 0.5), hit(0xC, 0.45), hit(0xD, 0.3)]

    rescored = with_context(fused, {hit(0xA, 0).id: [hit(0xC, 0).id]}, 0.3)

    assert ids(rescored) == [0xA, 0xC, 0xB, 0xD]
    assert [round(h.score, 6) for h in rescored] == [round(0.8 + 0.3 * 0.45, 6), round(0.45 + 0.3 * 0.8, 6), 0.5, 0.3]


def test_a_hybrid_search_brings_up_the_note_written_right_after_a_hit(tmp_path: Path) -> None:
    meaning = (1.0, 0.0, 0.0)
    embedder = TableEmbedder({"deploy": meaning}, other=(0.0, 1.0, 0.0))
    services = services_with(tmp_path, embedder)
    for minute in range(12):
        at = T0 + timedelta(hours=2, minutes=minute)  # newer: first among equals in a plain search
        add_note(AddNote("proj", GroupId("g"), f"Unrelated chatter number {minute}", created_at=at), services)
    question = add_note(AddNote("proj", GroupId("g"), "How do we deploy the api?", created_at=T0 + timedelta(hours=1)), services)
    answer = add_note(AddNote("proj", GroupId("g"), "Through the blue-green switch.", created_at=T0 + timedelta(hours=1, seconds=1)), services)
    add_note(AddNote("proj", GroupId("other"), "Unrelated, written in between", created_at=T0 + timedelta(hours=1)), services)

    found = search(SearchNotes("proj", "deploy the api", top_k=2), services)
    plain = search(SearchNotes("proj", "deploy the api", top_k=2, mode="semantic"), services)

    assert [h.stored.note.id for h in found.hits] == [question.id, answer.id]
    assert answer.id not in [h.stored.note.id for h in plain.hits]


scores = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@given(
    st.lists(scores, max_size=12),
    st.lists(scores, max_size=12),
    st.floats(min_value=0.0, max_value=1.0),
    st.integers(min_value=1, max_value=20),
)
def test_hybrid_scores_are_in_0_1_and_sorted_highest_first(
    semantic: list[float], keyword: list[float], weight: float, depth: int
) -> None:
    sem_hits = [hit(i, s, i) for i, s in enumerate(sorted(semantic, reverse=True))]
    kw_hits = [hit(i if i % 2 else 100 + i, s, i) for i, s in enumerate(sorted(keyword, reverse=True))]

    fused = blend(sem_hits, kw_hits, weight, depth)

    assert all(0.0 <= h.score <= 1.0 for h in fused)
    assert [h.score for h in fused] == sorted((h.score for h in fused), reverse=True)
    assert len(fused) == len({c.id for c in sem_hits + kw_hits})


def test_the_default_mode_is_hybrid_as_the_readme_says() -> None:
    documented = re.search(r"default `mode` is `(\w+)`", README.read_text())

    assert DEFAULT_MODE == "hybrid"
    assert documented is not None and documented.group(1) == DEFAULT_MODE
    assert SearchNotes("p", "q").mode == DEFAULT_MODE
