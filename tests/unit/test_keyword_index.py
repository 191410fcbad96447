"""What the keyword index counts as a term, and what its scores mean."""

from __future__ import annotations

from adapters.keyword_index import KeywordIndex, tokens


def index_of(notes: dict[str, str]) -> KeywordIndex:
    return KeywordIndex(lambda project: ((i, tokens(t)) for i, t in notes.items()))


def search(index: KeywordIndex, query: str) -> dict[str, float]:
    return dict(index.search("p", query, 10, lambda _: True, lambda i: (i,)))


def test_function_words_are_not_terms() -> None:
    assert tokens("What is the plan for the release?") == ["plan", "releas"]


def test_english_word_forms_share_one_term() -> None:
    assert len({*tokens("painted"), *tokens("painting"), *tokens("paints"), *tokens("paint")}) == 1


def test_single_kana_are_dropped_but_their_pairs_kept() -> None:
    terms = tokens("会議はいつ")
    assert "は" not in terms and "はい" in terms and "会議" in terms and "会" in terms


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
