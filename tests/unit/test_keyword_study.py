"""``bench.keyword_study``'s held-out choice, and the benchmarks page's paraphrase rows per set."""

from __future__ import annotations

import numpy as np

from bench import report
from bench.keyword_study import Figures, _choose


def figures(r1: list[float], r5: list[float]) -> Figures:
    return Figures({1: np.array(r1), 5: np.array(r5)}, {"dev": 1.0, "heldout": 1.0}, {})


def test_a_setting_replaces_the_rule_in_use_only_when_no_worse_at_recall_1_and_better_at_recall_5() -> None:
    measured = {
        "in use": figures([1, 0, 0, 0], [1, 1, 0, 0]),
        "more at 5, less at 1": figures([0, 0, 0, 0], [1, 1, 1, 1]),
        "the same": figures([1, 0, 0, 0], [1, 1, 0, 0]),
        "more at 5": figures([1, 0, 0, 0], [1, 1, 1, 0]),
    }
    everyone = np.ones(4, dtype=bool)
    assert _choose(measured, list(measured), everyone) == "more at 5"
    assert _choose(measured, ["in use", "more at 5, less at 1", "the same"], everyone) == "in use"


def test_the_choice_reads_only_the_questions_it_is_given() -> None:
    measured = {"in use": figures([0, 1], [0, 1]), "better on the first": figures([1, 0], [1, 0])}
    assert _choose(measured, list(measured), np.array([True, False])) == "better on the first"
    assert _choose(measured, list(measured), np.array([False, True])) == "in use"


def test_each_paraphrase_set_keeps_its_own_rows_on_the_benchmarks_page() -> None:
    def result(path: str, when: str, r1: float) -> dict:
        recall = {"all": {"r@1": r1, "r@5": 1.0, "n": 10}, "en": {"r@1": r1, "r@5": 1.0, "n": 10}}
        run = {"model": "all-MiniLM-L6-v2", "modes": {"hybrid": {"recall": recall}}}
        return {"benchmark": "paraphrase", "when": when, "data": path, "runs": [run]}

    files = {
        "paraphrase.json": result("/somewhere/shared/data/paraphrase/set.json", "2026-11-26T10:00:00Z", 0.88),
        "paraphrase3.json": result("bench/sets/paraphrase3/set.json", "2026-11-26T11:00:00Z", 0.37),
        "paraphrase3_old.json": result("bench/sets/paraphrase3/set.json", "2026-11-26T09:00:00Z", 0.1),
    }
    rows = [line for line in report.paraphrase(files) if line.startswith("| paraphrase")]
    assert [row.split(" | ")[:4] for row in rows] == [
        ["| paraphrase", "all-MiniLM-L6-v2", "hybrid", "0.88"],
        ["| paraphrase3", "all-MiniLM-L6-v2", "hybrid", "0.37"],
    ]
