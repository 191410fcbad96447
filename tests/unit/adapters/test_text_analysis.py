"""What counts as a term: normalization, stop words, stemming and CJK n-grams."""

from __future__ import annotations

from local_mcp_memory.adapters.text_analysis import document_tokens, tokens


def test_function_words_are_not_terms() -> None:
    assert tokens("What is the plan for the release?") == ["plan", "releas"]


def test_english_word_forms_share_one_term() -> None:
    assert len({*tokens("painted"), *tokens("painting"), *tokens("paints"), *tokens("paint")}) == 1


def test_single_kana_are_dropped_but_their_pairs_kept() -> None:
    terms = tokens("会議はいつ")
    assert "は" not in terms and "はい" in terms and "会議" in terms and "会" in terms


def test_runs_of_cjk_characters_become_characters_and_overlapping_pairs() -> None:
    assert tokens("東京都") == ["東", "京", "都", "東京", "京都"]


def test_full_width_and_upper_case_forms_are_one_term() -> None:
    assert tokens("ＤＥＰＬＯＹ Deploy deploy") == ["deploy"] * 3


def test_a_document_is_its_title_text_and_tags() -> None:
    assert document_tokens("Rollout", "canary first", ("kubernetes",)) == ["rollout", "canari", "first", "kubernet"]


def test_english_words_are_stemmed_by_snowball_and_other_words_are_kept() -> None:
    assert tokens("agencies agency hiking hike adoption adopted") == ["agenc", "agenc", "hike", "hike", "adopt", "adopt"]
    assert tokens("k8s v2 running naïve") == ["k8s", "v2", "run", "naïve"]
