"""``bench.replace_fit``'s reading of a set of features: the best recall at a false-alarm bound,
whatever the thresholds, as the server decides (the likeliest named, the next beside it)."""

from __future__ import annotations

import numpy as np

from bench.replace_fit import Add, recall_at


def add(kind: str, chances: list[float], right: int = -1) -> tuple[Add, np.ndarray]:
    """One add with a candidate per chance; ``right``: the one it replaces."""
    positive = np.array([n == right for n in range(len(chances))])
    return Add(kind, np.zeros((len(chances), 1)), positive), np.array(chances)


def test_the_recall_at_a_bound_is_the_best_any_threshold_keeping_the_false_alarms_under_it_gives() -> None:
    rows = [
        add("new", [0.9, 0.1], right=0),  # named at any threshold up to 0.9
        add("new", [0.5, 0.2], right=0),  # named at 0.5 or less
        add("new", [0.3, 0.25], right=1),  # the right one second: named beside the first at 0.3 or less (0.25 ≥ half)
        add("new", [0.15], right=0),  # named at 0.15 or less only
        add("related", [0.6]),  # a false alarm at 0.6 or less
        add("unrelated", [0.35]),  # a false alarm at 0.35 or less
        add("related", [0.05]),
        add("unrelated", [0.05]),
    ]
    assert recall_at(rows, 0.0) == 0.25  # above 0.6: the first new fact only
    assert recall_at(rows, 0.25) == 0.5  # 0.36–0.5: one false alarm of four
    assert recall_at(rows, 0.5) == 1.0  # at 0.10 both false alarms, and every new fact named


def test_no_threshold_under_the_bound_reaches_no_recall() -> None:
    rows = [add("new", [0.2], right=0), add("related", [0.95])]
    assert recall_at(rows, 0.5) == 0.0
