"""Keyword and meaning blended into one 0..1 score (application/ranking.py)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, strategies as st

from local_mcp_memory.application.ports import Candidate, Spread
from local_mcp_memory.application.query_dates import Period
from local_mcp_memory.application.ranking import KEYWORD_EVIDENCE, SPREAD_MIN_NOTES, VALUE_MIN_WINDOW, asks_something, blend, calibrated_scores, dated, with_context


T0 = datetime(2024, 1, 15, 10, 30, tzinfo=timezone.utc)


def hit(key: int, score: float, minutes: int = 0) -> Candidate:
    return Candidate(f"00000000-0000-4000-8000-{key:012x}", T0 + timedelta(minutes=minutes), score)


def ids(found: list[Candidate]) -> list[int]:
    return [int(c.id[-12:], 16) for c in found]


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


def test_the_best_hit_stays_first_when_context_lifts_it_and_its_neighbours_past_one() -> None:
    best, before, after = hit(0xA, 0.9, minutes=1), hit(0xB, 0.8, minutes=0), hit(0xC, 0.85, minutes=2)
    rescored = with_context([best, after, before], {best.id: [before.id, after.id]}, 0.5)

    assert ids(rescored) == [0xA, 0xC, 0xB]  # a cap at 1 made all three equal and put the newest first
    top = 0.9 + 0.5 * 0.85
    assert [round(c.score, 6) for c in rescored] == [1.0, round((0.85 + 0.45) / top, 6), round((0.8 + 0.45) / top, 6)]


@given(st.lists(st.floats(min_value=0.0, max_value=1.3, allow_nan=False), min_size=1, max_size=12), st.floats(min_value=0.0, max_value=1.0))
def test_context_keeps_scores_in_0_1_and_sorted(raw: list[float], weight: float) -> None:
    fused = sorted((hit(i, s, i) for i, s in enumerate(raw)), key=lambda c: -c.score)
    adjacent = {fused[0].id: [c.id for c in fused[1:3]]}
    rescored = with_context(fused, adjacent, weight)
    assert all(0.0 <= c.score <= 1.0 for c in rescored)
    assert [c.score for c in rescored] == sorted((c.score for c in rescored), reverse=True)


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


def test_a_note_created_in_the_named_period_gains_the_date_weight_uncapped() -> None:
    fused = [hit(0xA, 0.6), hit(0xB, 0.5, minutes=60 * 24), hit(0xC, 0.95, minutes=60 * 24), hit(0xD, 0.9, minutes=60 * 24)]
    day_two = Period(T0 + timedelta(days=1) - timedelta(hours=1), T0 + timedelta(days=2))

    rescored = dated(fused, day_two, 0.2)

    assert ids(rescored) == [0xC, 0xD, 0xB, 0xA]  # the two dated notes above 0.8 keep their order
    assert [round(c.score, 6) for c in rescored] == [1.15, 1.1, 0.7, 0.6]
    assert dated(fused, None, 0.2) is fused


# -- newer_first: an update ranks right above what it updates ------------------------------

from local_mcp_memory.application.ranking import newer_first  # noqa: E402


def _unit(*xs: float) -> tuple[float, ...]:
    norm = sum(x * x for x in xs) ** 0.5
    return tuple(x / norm for x in xs)


def _cosines(vectors: dict[str, tuple[float, ...]]) -> dict[str, dict[str, float]]:
    return {a: {b: sum(x * y for x, y in zip(u, v)) for b, v in vectors.items() if b != a} for a, u in vectors.items()}


def _others(n: int, dim: int = 12) -> list[tuple[float, ...]]:
    """``n`` unrelated vectors: each mostly along its own axis, with a little of a shared one
    (a different amount each), so that their cosines are low and spread."""
    return [_unit(*(1.0 if j == i + 2 else 0.3 * (i + 1) / n if j == dim - 1 else 0.0 for j in range(dim))) for i in range(n)]


def _window(ranked: list, subject: dict[int, tuple[float, ...]]) -> dict[str, tuple[float, ...]]:
    """Vectors for ``ranked``: those at the positions of ``subject`` given, the rest unrelated."""
    spare = iter(_others(len(ranked)))
    return {c.id: subject[i] if i in subject else next(spare) for i, c in enumerate(ranked)}


SAME = _unit(*([1.0, 0.2] + [0.0] * 9 + [0.3]))
ALSO_SAME = _unit(*([1.0, 0.0] + [0.0] * 9 + [0.3]))


def test_a_newer_note_about_the_same_subject_moves_just_above_the_older_and_takes_the_scores_of_the_places() -> None:
    ranked = [hit(0xA, 0.9, minutes=0), hit(0xB, 0.7, minutes=1), hit(0xC, 0.5, minutes=2), hit(0xD, 0.4, minutes=10)]
    ranked += [hit(0xE0 + i, 0.3 - i / 100, minutes=3 + i) for i in range(3)]
    vectors = _window(ranked, {0: SAME, 3: ALSO_SAME})

    out = newer_first(ranked, _cosines(vectors), {})

    assert ids(out)[:4] == [0xD, 0xA, 0xB, 0xC]  # D updates A; B and C keep their order
    assert [c.score for c in out] == [c.score for c in ranked]


def test_an_older_note_below_a_newer_one_about_the_same_subject_stays_where_it_is() -> None:
    ranked = [hit(0xA, 0.9, minutes=10), hit(0xB, 0.7, minutes=1), hit(0xC, 0.5, minutes=0)]
    ranked += [hit(0xE0 + i, 0.3 - i / 100, minutes=3 + i) for i in range(3)]

    assert newer_first(ranked, _cosines(_window(ranked, {0: SAME, 2: ALSO_SAME})), {}) == ranked


def test_notes_written_one_right_after_the_other_are_context_not_an_update() -> None:
    ranked = [hit(0xA, 0.9, minutes=0), hit(0xB, 0.7, minutes=5), hit(0xC, 0.5, minutes=10)]
    ranked += [hit(0xE0 + i, 0.3 - i / 100, minutes=3 + i) for i in range(3)]

    assert newer_first(ranked, _cosines(_window(ranked, {0: SAME, 2: ALSO_SAME})), {ranked[0].id: [ranked[2].id]}) == ranked


def test_neighbours_in_a_group_written_a_session_apart_are_a_fact_and_its_update() -> None:
    ranked = [hit(0xA, 0.9, minutes=0), hit(0xB, 0.7, minutes=5), hit(0xC, 0.5, minutes=60 * 24 * 30)]
    ranked += [hit(0xE0 + i, 0.3 - i / 100, minutes=3 + i) for i in range(3)]
    cosines, adjacent = _cosines(_window(ranked, {0: SAME, 2: ALSO_SAME})), {ranked[0].id: [ranked[2].id]}

    assert ids(newer_first(ranked, cosines, adjacent))[:3] == [0xC, 0xA, 0xB]
    ranked[2] = hit(0xC, 0.5, minutes=59)  # within the hour: one session
    assert newer_first(ranked, cosines, adjacent) == ranked


def test_neighbours_of_one_session_are_a_question_and_its_answer_only_when_one_asks() -> None:
    ranked = [hit(0xA, 0.9, minutes=0), hit(0xB, 0.7, minutes=5), hit(0xC, 0.5, minutes=1)]
    ranked += [hit(0xE0 + i, 0.3 - i / 100, minutes=3 + i) for i in range(3)]
    cosines, adjacent = _cosines(_window(ranked, {0: SAME, 2: ALSO_SAME})), {ranked[0].id: [ranked[2].id]}
    questions: set[str] = set()

    assert ids(newer_first(ranked, cosines, adjacent, asks=questions.__contains__))[:3] == [0xC, 0xA, 0xB]  # two statements
    questions.add(ranked[0].id)
    assert newer_first(ranked, cosines, adjacent, asks=questions.__contains__) == ranked


def test_when_every_result_is_alike_none_stands_out_as_an_update() -> None:
    ranked = [hit(i, 1.0 - i / 10, minutes=i) for i in range(8)]  # newer ones below
    vectors = {c.id: _unit(1, 0.05 * i) for i, c in enumerate(ranked)}  # all cosines near 1

    assert newer_first(ranked, _cosines(vectors), {}) == ranked


def test_the_same_pair_stands_out_whatever_the_level_of_the_models_cosines() -> None:
    ranked = [hit(0xA, 0.9, minutes=0), hit(0xB, 0.7, minutes=1), hit(0xC, 0.5, minutes=10)]
    ranked += [hit(0xE0 + i, 0.3 - i / 100, minutes=3 + i) for i in range(4)]
    low = _window(ranked, {0: SAME, 2: ALSO_SAME})
    common = _unit(*([0.0] * 11 + [1.0]))
    high = {k: _unit(*(3.0 * c + x for c, x in zip(common, v))) for k, v in low.items()}  # every cosine near 0.9

    assert ids(newer_first(ranked, _cosines(low), {}))[:3] == ids(newer_first(ranked, _cosines(high), {}))[:3] == [0xC, 0xA, 0xB]


def test_a_result_without_a_vector_keeps_its_place_and_a_small_window_changes_nothing() -> None:
    ranked = [hit(0xA, 0.9, minutes=0), hit(0xB, 0.7, minutes=5), hit(0xC, 0.6, minutes=9), hit(0xD, 0.5, minutes=1)]
    ranked += [hit(0xE0 + i, 0.3 - i / 100, minutes=3 + i) for i in range(3)]
    vectors = _window(ranked, {0: SAME, 2: ALSO_SAME})
    del vectors[ranked[1].id]

    assert ids(newer_first(ranked, _cosines(vectors), {}))[:4] == [0xC, 0xA, 0xB, 0xD]
    few = {k: vectors[k] for k in (ranked[0].id, ranked[2].id, ranked[3].id)}
    assert newer_first(ranked, _cosines(few), {}) == ranked


@given(st.lists(st.tuples(st.floats(-1, 1), st.floats(-1, 1), st.integers(0, 1000)), min_size=0, max_size=12, unique_by=lambda t: t[2]))
def test_newer_first_is_a_permutation_keeping_every_score_in_its_place(rows: list[tuple[float, float, int]]) -> None:
    ranked = [hit(i, 1.0 - i / 100, minutes=m) for i, (_, _, m) in enumerate(rows)]
    vectors = {c.id: _unit(x + 0.01, y) for c, (x, y, _) in zip(ranked, rows)}

    out = newer_first(ranked, _cosines(vectors), {}, subject=0.5, changed_subject=0.5)

    assert sorted(ids(out)) == sorted(ids(ranked))
    assert [c.score for c in out] == [c.score for c in ranked]


def test_a_newer_note_that_speaks_of_a_change_needs_less_to_stand_out() -> None:
    ranked = [hit(0xA, 0.9, minutes=0), hit(0xB, 0.7, minutes=1), hit(0xC, 0.5, minutes=10)]
    ranked += [hit(0xE0 + i, 0.3 - i / 100, minutes=3 + i) for i in range(3)]
    vectors = _window(ranked, {0: SAME, 2: ALSO_SAME})

    assert ids(newer_first(ranked, _cosines(vectors), {}, subject=100.0, changed_subject=100.0))[:3] == [0xA, 0xB, 0xC]
    assert ids(newer_first(ranked, _cosines(vectors), {}, {ranked[2].id}.__contains__, subject=100.0, changed_subject=1.0))[:3] == [0xC, 0xA, 0xB]


def test_whether_a_note_speaks_of_a_change_is_asked_only_where_it_decides_a_pair() -> None:
    ranked = [hit(0xA, 0.9, minutes=0), hit(0xB, 0.7, minutes=1), hit(0xC, 0.5, minutes=10)]
    ranked += [hit(0xE0 + i, 0.3 - i / 100, minutes=3 + i) for i in range(3)]
    cosines = _cosines(_window(ranked, {0: SAME, 2: ALSO_SAME}))
    asked: list[str] = []

    def changed(note_id: str) -> bool:
        asked.append(note_id)
        return True

    assert ids(newer_first(ranked, cosines, {}, changed, subject=100.0, changed_subject=100.0))[:3] == [0xA, 0xB, 0xC]
    assert asked == []  # no pair between the two thresholds
    assert ids(newer_first(ranked, cosines, {}, changed, subject=100.0, changed_subject=1.0))[:3] == [0xC, 0xA, 0xB]
    assert sorted(set(asked)) == sorted({ranked[0].id, ranked[2].id}) and len(asked) == len(set(asked))


def test_two_notes_naming_other_values_of_one_kind_need_only_the_value_bar() -> None:
    ranked = [hit(0xA, 0.9, minutes=0), hit(0xB, 0.7, minutes=1), hit(0xC, 0.5, minutes=10)]
    ranked += [hit(0xE0 + i, 0.3 - i / 100, minutes=3 + i) for i in range(7)]  # ten results: VALUE_MIN_WINDOW
    cosines = _cosines(_window(ranked, {0: SAME, 2: ALSO_SAME}))
    asked: list[tuple[str, str]] = []

    def other_values(newer: str, older: str) -> bool:
        asked.append((newer, older))
        return (newer, older) == (ranked[2].id, ranked[0].id)

    bars = {"subject": 100.0, "changed_subject": 100.0}
    assert ids(newer_first(ranked, cosines, {}, **bars))[:3] == [0xA, 0xB, 0xC]
    assert ids(newer_first(ranked, cosines, {}, **bars, values_changed=other_values, value_subject=100.0))[:3] == [0xA, 0xB, 0xC]
    assert ids(newer_first(ranked, cosines, {}, **bars, values_changed=other_values, value_subject=1.0))[:3] == [0xC, 0xA, 0xB]
    assert asked and all(newer == ranked[2].id for newer, _ in asked)  # asked of the newer of a pair only
    asked.clear()
    assert ids(newer_first(ranked, cosines, {}, subject=1.0, values_changed=other_values, value_subject=0.5))[:3] == [0xC, 0xA, 0xB]
    assert (ranked[2].id, ranked[0].id) not in asked  # a pair the subject bar takes asks nothing more



def test_among_fewer_than_ten_results_other_values_of_one_kind_lower_no_bar() -> None:
    def window(fillers: int) -> tuple[list[Candidate], dict[str, dict[str, float]]]:
        ranked = [hit(0xA, 0.9, minutes=0), hit(0xB, 0.7, minutes=1), hit(0xC, 0.5, minutes=10)]
        ranked += [hit(0xE0 + i, 0.3 - i / 100, minutes=3 + i) for i in range(fillers)]
        return ranked, _cosines(_window(ranked, {0: SAME, 2: ALSO_SAME}))

    def other_values(newer: str, older: str) -> bool:
        return True

    bars = {"subject": 100.0, "changed_subject": 100.0, "value_subject": 1.0, "values_changed": other_values}
    assert ids(newer_first(*window(VALUE_MIN_WINDOW - 3), {}, **bars))[:3] == [0xC, 0xA, 0xB]
    assert ids(newer_first(*window(VALUE_MIN_WINDOW - 4), {}, **bars))[:3] == [0xA, 0xB, 0xC]


def test_two_of_the_best_answers_naming_other_values_of_one_kind_need_only_the_answer_bar() -> None:
    ranked = [hit(0xA, 0.9, minutes=0), hit(0xB, 0.7, minutes=1), hit(0xC, 0.5, minutes=60)]
    ranked += [hit(0xE0 + i, 0.3 - i / 100, minutes=3 + i) for i in range(7)]  # ten results: VALUE_MIN_WINDOW
    cosines = _cosines(_window(ranked, {0: SAME, 2: ALSO_SAME}))

    def other_values(newer: str, older: str) -> bool:
        return (newer, older) == (ranked[2].id, ranked[0].id)

    def never(newer: str, older: str) -> bool:
        return False

    bars = {"subject": 100.0, "changed_subject": 100.0, "value_subject": 100.0, "answer_subject": 1.0}
    assert ids(newer_first(ranked, cosines, {}, **bars, values_changed=other_values, answer_depth=3))[:3] == [0xC, 0xA, 0xB]
    assert ids(newer_first(ranked, cosines, {}, **bars, values_changed=other_values, answer_depth=2))[:3] == [0xA, 0xB, 0xC]
    assert ids(newer_first(ranked, cosines, {}, **bars, values_changed=never, answer_depth=3))[:3] == [0xA, 0xB, 0xC]
    assert ids(newer_first(ranked, cosines, {}, **bars, answer_depth=3))[:3] == [0xA, 0xB, 0xC]  # no value test: off
    strict = {**bars, "answer_subject": 100.0}
    assert ids(newer_first(ranked, cosines, {}, **strict, values_changed=other_values, answer_depth=3))[:3] == [0xA, 0xB, 0xC]
    lower = {**strict, "value_subject": 1.0}  # the answers never need more than the value bar
    assert ids(newer_first(ranked, cosines, {}, **lower, values_changed=other_values, answer_depth=3))[:3] == [0xC, 0xA, 0xB]
    # the answers' own value test, when given, decides their pairs (and only theirs)
    assert ids(newer_first(ranked, cosines, {}, **bars, values_changed=other_values, answer_depth=3, answer_values=never))[:3] == [0xA, 0xB, 0xC]
    assert ids(newer_first(ranked, cosines, {}, **bars, values_changed=never, answer_depth=3, answer_values=other_values))[:3] == [0xC, 0xA, 0xB]
    assert ids(newer_first(ranked, cosines, {}, **lower, values_changed=other_values, answer_depth=3, answer_values=never))[:3] == [0xC, 0xA, 0xB]
    # written within the hour of each other: one session, not a fact and its update
    assert ids(newer_first(ranked, cosines, {}, **bars, values_changed=other_values, answer_depth=3, answer_apart=timedelta(minutes=61)))[:3] == [0xA, 0xB, 0xC]
    # ... unless the two name rival tools of one kind (one sitting: "Jekyll", then "Docusaurus")
    within = {**bars, "values_changed": other_values, "answer_depth": 3, "answer_apart": timedelta(minutes=61)}
    assert ids(newer_first(ranked, cosines, {}, **within, rivals=other_values))[:3] == [0xC, 0xA, 0xB]
    assert ids(newer_first(ranked, cosines, {}, **within, rivals=never))[:3] == [0xA, 0xB, 0xC]


# -- brought_up: a likely update from below the head moves just above the result it updates --

from local_mcp_memory.application.ranking import brought_up  # noqa: E402


def _far_window(subject: dict[int, tuple[float, ...]], minutes: dict[int, int] | None = None) -> tuple[list, dict]:
    """Twelve results: the ones of ``subject`` with those vectors, the rest unrelated; each
    created at its place in minutes unless ``minutes`` says otherwise."""
    minutes = minutes or {}
    ranked = [hit(0xA0 + i, 1.0 - i / 20, minutes=minutes.get(i, i)) for i in range(12)]
    return ranked, _cosines(_window(ranked, subject))


def _always(newer: str, older: str) -> bool:
    return True


def test_a_newer_note_below_the_head_like_one_of_the_best_and_naming_another_value_comes_up_just_above_it() -> None:
    ranked, cosines = _far_window({1: SAME, 11: ALSO_SAME}, {11: 60})

    out = brought_up(ranked, cosines, {}, _always, depth=10)

    assert ids(out)[:3] == [0xA0, 0xAB, 0xA1]  # the 12th result updates the 2nd
    assert ids(out)[3:] == [0xA0 + i for i in range(2, 11)]
    assert [c.score for c in out] == [c.score for c in ranked]
    assert newer_first(out, cosines, {}, subject=100.0, changed_subject=100.0) == out  # the head keeps it there


def test_nothing_comes_up_without_another_value_of_one_kind_or_from_a_question_or_an_older_note() -> None:
    ranked, cosines = _far_window({1: SAME, 11: ALSO_SAME}, {11: 60})
    asked: list[tuple[str, str]] = []

    def other_values(newer: str, older: str) -> bool:
        asked.append((newer, older))
        return False

    assert brought_up(ranked, cosines, {}, other_values, depth=10) == ranked
    assert asked == [(ranked[11].id, ranked[1].id)]  # the newer note first
    assert brought_up(ranked, cosines, {}, _always, lambda note_id: note_id != ranked[11].id, depth=10) == ranked
    older, cosines = _far_window({1: SAME, 11: ALSO_SAME}, {1: 60})
    assert brought_up(older, cosines, {}, _always, depth=10) == older


def test_nothing_comes_up_for_a_result_beyond_the_seeds_or_written_right_after_the_seed() -> None:
    ranked, cosines = _far_window({4: SAME, 11: ALSO_SAME}, {11: 60})

    assert brought_up(ranked, cosines, {}, _always, seeds=3, depth=10) == ranked
    assert ids(brought_up(ranked, cosines, {}, _always, seeds=5, depth=10))[4:6] == [0xAB, 0xA4]
    assert brought_up(ranked, cosines, {ranked[4].id: [ranked[11].id]}, _always, seeds=5, depth=10) == ranked


def test_a_result_already_in_the_head_or_not_standing_out_is_left_to_newer_first() -> None:
    ranked, cosines = _far_window({1: SAME, 5: ALSO_SAME}, {5: 60})
    assert brought_up(ranked, cosines, {}, _always, depth=10) == ranked
    ranked, cosines = _far_window({1: SAME, 11: ALSO_SAME}, {11: 60})
    assert brought_up(ranked, cosines, {}, _always, subject=100.0, depth=10) == ranked
    few = {k: v for k, v in list(cosines.items())[:4]}
    assert brought_up(ranked, few, {}, _always, depth=10) == ranked


def test_the_rest_of_the_head_brings_up_only_at_the_far_bar() -> None:
    ranked, cosines = _far_window({6: SAME, 11: ALSO_SAME}, {11: 60})

    assert brought_up(ranked, cosines, {}, _always, depth=10) == ranked
    assert brought_up(ranked, cosines, {}, _always, depth=10, far_subject=100.0) == ranked
    out = brought_up(ranked, cosines, {}, _always, depth=10, far_subject=1.0)
    assert ids(out)[6:8] == [0xAB, 0xA6]
    assert [c.score for c in out] == [c.score for c in ranked]
    assert brought_up(ranked, cosines, {}, _always, depth=6, far_subject=1.0) == ranked  # the 7th is beyond a head of 6


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("Is the API ready?", True),
        ("Ready? Then ship it.", True),
        ("Really!? Yes.", True),
        ("We chose it (why?) for speed.", True),
        ("¿Qué pasa?", True),
        ("テストは通った？", True),
        ('He asked "done?" twice.', True),
        ("The query is SELECT * FROM notes WHERE id = ?", False),
        ("Search lives at /search?q=term", False),
        ("The flag is x=? by default.", False),
        ("The rate limit is 500 requests per minute.", False),
    ],
)
def test_a_note_asks_something_when_a_question_mark_ends_a_word(text: str, asks: bool) -> None:
    assert asks_something(text) is asks
