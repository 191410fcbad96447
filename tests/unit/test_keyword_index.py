"""What the keyword index's scores mean (terms: ``test_text_analysis``)."""

from __future__ import annotations

from adapters.keyword_index import KeywordIndex
from adapters.text_analysis import tokens


def index_of(notes: dict[str, str]) -> KeywordIndex:
    return KeywordIndex(lambda project: ((i, tokens(t)) for i, t in notes.items()))


def search(index: KeywordIndex, query: str) -> dict[str, float]:
    return dict(index.search("p", query, 10, lambda _: True, lambda i: (i,)))


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
