"""What the keyword index's scores mean (terms: ``test_text_analysis``)."""

from __future__ import annotations

from collections import Counter

import numpy as np

from local_mcp_memory.adapters.keyword_index import PREPARED_MIN, KeywordIndex, rank
from local_mcp_memory.adapters.text_analysis import tokens


def index_of(notes: dict[str, str], created: dict[str, int] | None = None) -> KeywordIndex:
    return KeywordIndex(lambda project: ((i, (created or {}).get(i, 0), tokens(t)) for i, t in notes.items()))


def search(index: KeywordIndex, query: str) -> dict[str, float]:
    return dict(index.search("p", query, 10))


def test_a_note_holding_every_query_term_once_scores_about_one() -> None:
    index = index_of({"a": "deploy the billing service", "b": "lunch menu", "c": "rotate the vault key"})

    assert search(index, "billing deploy")["a"] > 0.95


def test_a_note_sharing_one_common_word_scores_low() -> None:
    notes = {str(i): f"release checklist item {i}" for i in range(8)}
    notes["x"] = "kubernetes upgrade playbook"
    scores = search(index_of(notes), "kubernetes release checklist for upgrade")

    assert scores["x"] > 0.5
    assert max(s for k, s in scores.items() if k != "x") < 0.3


def test_scores_stay_within_0_and_1() -> None:
    scores = search(index_of({"a": "cache cache cache cache", "b": "cache"}), "cache")

    assert all(0.0 < s <= 1.0 for s in scores.values())


def test_scores_equal_but_for_the_order_of_their_sum_rank_alike() -> None:
    first, second = 0.1 + 0.2 + 0.3, 0.3 + 0.2 + 0.1  # the same terms added in two orders

    assert first != second and rank(first) == rank(second)
    assert rank(0.6) > rank(0.6 - 2e-9)


def test_ties_go_to_the_newer_note_then_the_smaller_id() -> None:
    notes = {"b": "rotate the key", "a": "rotate the key", "c": "rotate the key", "d": "rotate the key"}
    index = index_of(notes, created={"a": 5, "b": 5, "c": 9, "d": 1})

    found = index.search("p", "rotate key", 3)

    assert [i for i, _ in found] == ["c", "a", "b"]


def test_notes_the_filter_turns_away_are_passed_over_however_many_rank_above() -> None:
    notes = {f"crowd-{i}": "release checklist release checklist" for i in range(500)}
    notes |= {f"wanted-{i}": "release checklist and a much longer text around it" for i in range(7)}
    index = index_of(notes)

    wanted = lambda ids: np.array([i.startswith("wanted") for i in ids])  # noqa: E731
    found = index.search("p", "release checklist", 5, wanted)

    assert len(found) == 5 and all(i.startswith("wanted") for i, _ in found)


def test_a_common_terms_scoring_arrays_are_built_with_the_index_and_answer_as_those_built_later() -> None:
    notes = {str(i): f"release note {i} " + ("checklist" if i % 2 else "rollback") for i in range(PREPARED_MIN * 2)}
    notes["x"] = "kubernetes upgrade checklist"
    built, lazy = KeywordIndex(None), KeywordIndex(None)
    entries = [(key, 0, dict(Counter(tokens(text)))) for key, text in notes.items()]
    built.build("p", entries)
    lazy.build("p", [])
    for key, created, counts in entries:  # one note at a time: no arrays until a search asks
        lazy.add_counts("p", key, created, counts)
    prepared = built._projects["p"]._arrays
    assert {"checklist", "rollback", "releas"} <= set(prepared) and not {"kubernet", "upgrad"} & set(prepared)
    assert not lazy._projects["p"]._arrays
    for query in ("kubernetes checklist", "release rollback", "upgrade"):
        assert built.search("p", query, 10) == lazy.search("p", query, 10)
