"""Fits the "does note B replace note A" decision of ``add_note``'s ``possiblySupersedes``
(``application.suggestions``: ``WEIGHTS``, ``INTERCEPT``, ``THRESHOLD``, ``SECOND_THRESHOLD``)
on the dev part of the knowledge-update set, and measures it.

    .venv/bin/python -m bench.replace_fit [--models all-MiniLM-L6-v2,multilingual-e5-small] [--parts heldout]

Every note of a project is added in the benchmark's order (``bench.knowledge``: old facts,
then related and unrelated notes, then new facts); for each add, its ``DEPTH`` closest earlier
notes are the candidates, each with ``suggestions.pair_features``. A candidate is a positive
when the added note is a new fact and the candidate its old fact; every other is a negative.
One logistic regression (L2 ``PENALTY``, Newton steps, numpy) is fitted on the candidates of
every model at once: the features are in each model's own units, so one rule serves them all.
Measured as the server decides: the best candidate is named when its chance is at least the
first threshold, the next best too when its chance is at least the second; **recall**: new
facts naming their old fact; **false alarms**: related and unrelated notes naming any;
**extra**: new facts naming another note than their old one.

Cross-validated by leaving one dev **project** out (in every model at once): the weights
fitted on the other dev projects score the left-out one. The thresholds are those with the
best cross-validated recall whose false alarms stay at or below ``TARGET_ALARMS`` (a margin
under the 10 % limit) and extra at or below ``TARGET_EXTRA``, for every model. The weights
printed for ``application/suggestions.py`` are fitted on all dev projects. The held-out part
is only measured with them, never used to choose; the final part only with ``--parts
final``, once, at the very end. Beside them: the rule before this fit (``today``), and per
model the best cross-validated recall at false-alarm bounds of 4 to 10 % whatever the
thresholds (``recall_at``), which compares sets of features (``--drop``) less noisily than
one operating point.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a script: python bench/replace_fit.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.newer_study import Pairs, knowledge
from local_mcp_memory.application import suggestions
from local_mcp_memory.application.ports import Spread

PENALTY = 1.0
"""L2 penalty on the weights (not the intercept), fixed before fitting."""

TARGET_ALARMS = 0.07
"""The cross-validated false-alarm share the thresholds may reach, for every model (a margin
under the 10 % the set's checks allow)."""

TARGET_EXTRA = 0.3
"""The cross-validated share of new notes naming a wrong note beside (or instead of) the right
one that the thresholds may reach: a second name is one more note for the agent to check."""


@dataclass
class Add:
    """One add of the benchmark's order: its candidates' features and what is right."""

    kind: str  # "old", "related", "unrelated", "new"
    features: np.ndarray  # candidates × FEATURES
    positive: np.ndarray  # per candidate: is it the note this one replaces?


Extra = Callable[[int, list[int], list[int], np.ndarray], np.ndarray]
"""More columns for the candidates of one add (``adds``): given the added note's index, the
earlier notes' indexes, its candidates' indexes (closest first) and their ``pair_features``
rows, a candidates × columns array."""


def adds(project: Pairs, extra: Extra | None = None) -> list[Add]:
    """Every add of ``project`` in the benchmark's order, with its candidates as the server
    sees them; ``extra``: columns beside ``pair_features``' (a feature under study)."""
    order = sorted(range(len(project.texts)), key=lambda i: project.created[i])
    first_new = len(project.texts) - len(project.old)
    out = []
    for n, i in enumerate(order):
        earlier = order[:n]
        if not earlier:
            continue
        cos = project.vectors[earlier] @ project.vectors[i]
        spread = Spread(len(earlier), float(cos.mean()), float(cos.std()))
        closest = sorted(zip(cos.tolist(), earlier), reverse=True)[: suggestions.DEPTH]
        similar = [(str(j), project.texts[j], c) for c, j in closest if project.texts[j] != project.texts[i]]
        if not similar:
            continue
        rows = np.array(suggestions.pair_features(project.texts[i], similar, spread))
        candidates = [int(s[0]) for s in similar]
        if extra is not None:
            rows = np.hstack([rows, extra(i, earlier, candidates, rows)])
        old = project.old[i - first_new] if project.kinds[i] == "new" else -1
        out.append(Add(project.kinds[i], rows, np.array([j == old for j in candidates])))
    return out


def fit(data: list[Add], penalty: float = PENALTY, drop: tuple[int, ...] = ()) -> np.ndarray:
    """Logistic regression over every candidate of ``data``: [intercept, *weights]; the
    features numbered ``drop`` left out (weight 0)."""
    x = np.vstack([a.features for a in data])
    x[:, list(drop)] = 0.0
    y = np.concatenate([a.positive for a in data]).astype(float)
    x = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(x.shape[1])
    ridge = np.eye(x.shape[1]) * penalty
    ridge[0, 0] = 0.0
    for n in drop:
        ridge[n + 1, n + 1] = 1.0  # a column of zeros: its weight stays 0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ w, -30, 30)))
        gradient = x.T @ (p - y) + ridge @ w
        hessian = (x * (p * (1 - p))[:, None]).T @ x + ridge
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def chances(add: Add, w: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(w[0] + add.features @ w[1:], -30, 30)))


@dataclass
class Decided:
    """One add as the server decides it: its kind, and per named candidate whether it is right."""

    kind: str
    named: list[bool]


def decided(data: list[Add], w: np.ndarray, first: float, second: float) -> list[Decided]:
    """Each add of ``data`` under weights ``w`` (``_decide``)."""
    return _decide([(add, chances(add, w)) for add in data], first, second)


def measure(results: list[Decided]) -> tuple[float, float, float]:
    """Recall (new facts naming their old fact), false alarms (related and unrelated notes
    naming any) and extra (new facts naming another note too)."""
    new = [r for r in results if r.kind == "new"]
    others = [r for r in results if r.kind in ("related", "unrelated")]
    recall = np.mean([any(r.named) for r in new])
    alarms = np.mean([bool(r.named) for r in others])
    extra = np.mean([not all(r.named) for r in new])
    return float(recall), float(alarms), float(extra)


def today(data: list[Add], alone: float = 0.4, cued: float = 0.2) -> list[Decided]:
    """The rule before this fit, for comparison: only the closest candidate, when it stands
    2 standard deviations out, at ``excess`` ``alone``, or ``cued`` with a change word."""
    column = {name: n for n, name in enumerate(suggestions.FEATURES)}
    out = []
    for add in data:
        row = add.features[0]
        close = row[column["excess"]] >= alone or (row[column["excess"]] >= cued and row[column["cue"]] > 0)
        named = row[column["standing"]] >= 2.0 and close
        out.append(Decided(add.kind, [bool(add.positive[0])] if named else []))
    return out


def today_cross_validated(dev: list[list[Add]]) -> tuple[float, float, float]:
    """The rule before, its two thresholds chosen per left-out dev project on the others (its
    grid, the best recall with false alarms at or below ``TARGET_ALARMS``)."""
    grid = [(alone, cued) for alone in (0.3, 0.35, 0.4, 0.45, 0.5, 2.0) for cued in (0.15, 0.2, 0.25, 0.3, 2.0)]
    out: list[Decided] = []
    for left in range(len(dev)):
        rest = [a for n, project in enumerate(dev) if n != left for a in project]
        figures = {g: measure(today(rest, *g)) for g in grid}
        best = max((g for g in grid if figures[g][1] <= TARGET_ALARMS), key=lambda g: figures[g][0])
        out += today(dev[left], *best)
    return measure(out)


FIRSTS = tuple(round(float(t), 2) for t in np.arange(0.10, 0.71, 0.01))
SECONDS = (1.0, 0.5, 1 / 3)  # the second name's threshold, as a share of the first's (1.0: never lower)


def choose(folds: dict[str, list[tuple[Add, np.ndarray]]], seconds: tuple[float, ...] = SECONDS) -> tuple[float, float]:
    """The (first, second) thresholds with the best cross-validated recall (summed over the
    models) whose false alarms stay at or below ``TARGET_ALARMS`` and extra at or below
    ``TARGET_EXTRA`` for every model; ties: the higher thresholds."""
    best: tuple[float, float, float] | None = None
    for first in FIRSTS:
        for share in seconds:
            second = round(first * share, 3) if share < 1.0 else 1.0
            figures = [measure(_decide(rows, first, second)) for rows in folds.values()]
            if all(f[1] <= TARGET_ALARMS and f[2] <= TARGET_EXTRA for f in figures):
                recall = sum(f[0] for f in figures)
                if best is None or recall > best[0] + 1e-9:
                    best = (recall, first, second)
    assert best is not None, "no threshold keeps the false alarms down"
    return best[1], best[2]


BOUNDS = (0.04, 0.06, 0.08, 0.10)
"""False-alarm bounds at which ``recall_at`` reads the cross-validated recall."""


def recall_at(rows: list[tuple[Add, np.ndarray]], bound: float) -> float:
    """The best recall of ``rows`` (one model's cross-validated chances) at false alarms of at
    most ``bound``, over ``FIRSTS`` with the second name at half the first: what a set of
    features can reach at that bound whatever the thresholds, to compare sets of features
    without the noise of one operating point."""
    figures = [measure(_decide(rows, first, first / 2)) for first in FIRSTS]
    return max((recall for recall, alarms, _ in figures if alarms <= bound), default=0.0)


def cross_validated(dev: dict[str, list[list[Add]]], drop: tuple[int, ...] = ()) -> dict[str, list[tuple[Add, np.ndarray]]]:
    """Per model of ``dev`` (its dev projects' adds), each add with its candidates' chances
    under the weights fitted on the other projects, of every model at once."""
    folds: dict[str, list[tuple[Add, np.ndarray]]] = {m: [] for m in dev}
    for left in range(len(next(iter(dev.values())))):
        w = fit([a for projects in dev.values() for n, project in enumerate(projects) if n != left for a in project], drop=drop)
        for m, projects in dev.items():
            folds[m] += [(a, chances(a, w)) for a in projects[left]]
    return folds


def _decide(rows: list[tuple[Add, np.ndarray]], first: float, second: float) -> list[Decided]:
    """Each add of ``rows`` (with its candidates' chances) as ``suggestions.likely_replaced``
    decides: the best candidate named at a chance of at least ``first``, then the next best at
    least ``second``."""
    out = []
    for add, p in rows:
        order = np.argsort(-p, kind="stable")
        named = [int(order[0])] if p[order[0]] >= first else []
        if named and len(order) > 1 and p[order[1]] >= second:
            named.append(int(order[1]))
        out.append(Decided(add.kind, [bool(add.positive[i]) for i in named]))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.replace_fit", description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="all-MiniLM-L6-v2,multilingual-e5-small", help="fitted together: one rule for every model")
    parser.add_argument("--parts", default="heldout", help="parts measured with the dev fit (final: once, at the very end)")
    parser.add_argument("--drop", default="", help="comma-separated features to leave out (to measure what each brings)")
    args = parser.parse_args(argv)
    drop = tuple(suggestions.FEATURES.index(f) for f in args.drop.split(",") if f)
    models = args.models.split(",")
    dev = {m: [adds(p) for p in knowledge(m, "dev")] for m in models}
    projects = len(dev[models[0]])
    folds = cross_validated(dev, drop)
    first, second = choose(folds)
    alone = choose(folds, (1.0,))
    w = fit([a for m in models for project in dev[m] for a in project], drop=drop)
    print(f"models {models}; per model {sum(len(p) for p in dev[models[0]])} dev adds, "
          f"{sum(len(a.positive) for p in dev[models[0]] for a in p)} candidates; {projects} dev projects\n")
    print(f"leave-one-project-out thresholds (false alarms ≤ {TARGET_ALARMS}, extra ≤ {TARGET_EXTRA} for every model): "
          f"first {first}, second {second}")
    print(f"fitted on every dev project: INTERCEPT = {w[0]:.2f}")
    print("WEIGHTS = (" + ", ".join(f"{v:.2f}" for v in w[1:]) + ")  # " + ", ".join(suggestions.FEATURES))
    in_use = np.array([suggestions.INTERCEPT, *suggestions.WEIGHTS])
    print("\n| model | part | recall / false alarms / extra: fitted here | in use | the rule before |\n|---|---|---|---|---|")
    def show(values: tuple[float, float, float]) -> str:
        return " / ".join(f"{v:.3f}" for v in values)
    for m in models:
        print(f"| {m} | dev, cross-validated | {show(measure(_decide(folds[m], first, second)))} | | "
              f"{show(today_cross_validated(dev[m]))} |")
        print(f"| {m} | dev, cross-validated, one name only (at {alone[0]}) | "
              f"{show(measure(_decide(folds[m], *alone)))} | | |")
        reach = ", ".join(f"{recall_at(folds[m], bound):.3f} at ≤ {bound:.0%}" for bound in BOUNDS)
        print(f"| {m} | dev, cross-validated, best recall by false-alarm bound | {reach} | | |")
        parts = {"dev": [a for p in dev[m] for a in p]}
        for part in args.parts.split(","):
            if part and part != "dev":
                parts[part] = [a for p in knowledge(m, part) for a in adds(p)]
        for part, data in parts.items():
            here = measure(decided(data, w, first, second))
            used = measure(decided(data, in_use, suggestions.THRESHOLD, suggestions.SECOND_THRESHOLD))
            print(f"| {m} | {part} | {show(here)} | {show(used)} | {show(measure(today(data)))} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
