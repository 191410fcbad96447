"""In-process study of ``ranking.newer_first`` (the newer of two results about one subject
first), with held-out figures.

    .venv/bin/python -m bench.newer_study [--model all-MiniLM-L6-v2] [--locomo PATH] [--cost]

The server's hybrid ranking (``bench.retrieval_study.hybrid``), then ``newer_first`` over
its best ``NEWER_WINDOW`` results with a same-subject threshold in standard deviations, one
for questions about the present and one for questions about the past
(``query_dates.asks_about_past``), ``CUE_LESS`` less when the newer note speaks of a change,
and one for a question about the present whose two notes name other values of one kind
(``suggestions.values_changed``), and one for an update the best results bring up from
below the first ``NEWER_DEPTH`` (``ranking.brought_up``), on LoCoMo (the five dev
conversations; recall@1, @5, @10) and on the dev and held-out parts of the knowledge-update
set (``bench/sets/knowledge_update``: the share of questions whose new fact ranks above the
old). The choice (``_choose``) is made in two steps: among the settings that bring nothing
up, those whose LoCoMo recall@1 and @5 (to three decimals) are at least those of ``BEFORE``
(the rule in use before the value bar) are allowed, and the chosen one has the best dev
newer-wins (ties: the better recall@1); then the bar for bringing up on that setting, allowed
when LoCoMo keeps the setting's own recall@1 and @5; then, the same way, how many of the best
results count as the best answers and their bar (``ranking.ANSWER_DEPTH``, ``ANSWER_Z``), and
the bar at which the rest of the first ten bring up too (``ranking.FAR_LIFT_Z``). Held out: for each LoCoMo conversation, the choice made on the other four
is measured on the one left out; for each dev project, the choice made on the other dev
projects is measured on it (cross-validation); the knowledge **held-out** part is only ever
measured, and the **final** part is not read here at all. The add-time suggestions are
fitted and measured by ``bench.replace_fit``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a script: python bench/newer_study.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.client import table, write_result
from bench.datasets import LOCOMO_DIR, data_digest, load_locomo
from bench.knowledge import NEW_AT, OLD_AT, OTHER_AT, SETS, TOP_K, load_set
from bench.retrieval_study import Case, embed_cached, hybrid, keyword_matrix, load, recall
from local_mcp_memory.application import ranking, suggestions
from local_mcp_memory.application.ports import Candidate
from local_mcp_memory.application.query_dates import asks_about_past, named_period

CUE_LESS = 0.5
"""A newer note that speaks of a change needs this many standard deviations less (fixed, not searched)."""


@dataclass
class Pairs:
    """One knowledge-update project as the in-process ranking sees it."""

    cases: list[Case]  # one per question; relevant = {new index}
    old: list[int]  # the old fact's index per question
    vectors: np.ndarray
    texts: list[str]
    created: list[datetime]
    kinds: list[str]  # "old", "related", "unrelated", "new"


def knowledge(model: str, part: str) -> list[Pairs]:
    out = []
    for project in load_set(part):
        pairs = project["pairs"]
        others = sorted([("related", t) for t in project["related"]] + [("unrelated", t) for t in project["unrelated"]],
                        key=lambda kind_text: kind_text[1])
        texts = [p["old"] for p in pairs] + [t for _, t in others] + [p["new"] for p in pairs]
        kinds = ["old"] * len(pairs) + [k for k, _ in others] + ["new"] * len(pairs)
        created = ([OLD_AT + timedelta(minutes=i) for i in range(len(pairs))]
                   + [OTHER_AT + timedelta(minutes=i) for i in range(len(others))]
                   + [NEW_AT + timedelta(minutes=i) for i in range(len(pairs))])
        vectors = embed_cached(model, texts, "passage")
        questions = [p["question"] for p in pairs]
        sem = embed_cached(model, questions, "query") @ vectors.T
        kw = keyword_matrix(texts, questions)
        first_new = len(pairs) + len(others)
        cases = [Case(project["name"], q, sem[i], kw[i], created, frozenset({first_new + i}), texts)
                 for i, q in enumerate(questions)]
        out.append(Pairs(cases, list(range(len(pairs))), vectors, texts, created, kinds))
    return out


Setting = tuple[float, float, float, float, int, float, float]
"""Subject for a question about the present, about the past, for a question about the
present whose two notes name other values of one kind (``suggestions.values_changed``), and
for an update brought up from below the first ``NEWER_DEPTH`` (``ranking.brought_up``), in
standard deviations; < 0: off. Then the answers' rule (``ranking.ANSWER_DEPTH``, 0: off, and
``ranking.ANSWER_Z``) and the bar at which the rest of the first ``NEWER_DEPTH`` bring up
too, an update naming the old values plus a number, version or path counting
(``ranking.FAR_LIFT_Z``, ``suggestions.values_added``; < 0: off)."""

OFF: tuple[int, float, float] = (0, 0.0, -1.0)
"""The last three parts of a ``Setting`` that adds nothing to the first four."""

REFERENCE: Setting = (2.0, 2.0, -1.0, -1.0, *OFF)
"""The rule before the question's tense counted: 2 standard deviations (1.5 with a change word) for every question."""

BEFORE = "present 1.75, past 2.5, other values off, brought up off"
"""The rule in use before the value bar, the grid's name for it: every allowed setting keeps
LoCoMo at least where it is (``_choose``)."""


def reordered(
    case: Case,
    ranked: list[int],
    vectors: np.ndarray,
    texts: list[str],
    setting: Setting,
    timings: dict[str, list[float]] | None = None,
) -> list[int]:
    """``ranked`` (the server's hybrid ranking of ``case``) after ``newer_first`` under
    ``setting``; ``timings``: gets the seconds ``ranking.brought_up`` took, when it runs, and
    those it and ``ranking.newer_first`` took together, under "brought_up" and "step"."""
    past = asks_about_past(case.query)
    subject = setting[1] if past else setting[0]
    if subject < 0 or named_period(case.query) is not None:  # as application.search does
        return ranked
    window = [Candidate(str(i), case.created[i], 1.0 - n / 100) for n, i in enumerate(ranked[: ranking.NEWER_WINDOW])]
    rows = [int(c.id) for c in window]
    products = (vectors[rows] @ vectors[rows].T).tolist()
    own = {str(a): {str(b): products[i][j] for j, b in enumerate(rows) if j != i} for i, a in enumerate(rows)}
    adjacent = {c.id: [str(int(c.id) - 1), str(int(c.id) + 1)] for c in window[: ranking.NEWER_DEPTH]}  # one group, in order
    changed = [c.id for c in window if suggestions.UPDATE_CUE.search(texts[int(c.id)])]
    def other_values(newer: str, older: str) -> bool:
        return suggestions.values_changed(texts[int(newer)], texts[int(older)])

    def lifted_values(newer: str, older: str) -> bool:
        return other_values(newer, older) or suggestions.values_added(texts[int(newer)], texts[int(older)])

    shared: list[frozenset[str]] = []  # read once if ever asked, as application.search does

    def answer_values(newer: str, older: str) -> bool:
        if not shared:
            shared.append(suggestions.shared_values((texts[int(c.id)] for c in window), ranking.ANSWER_SHARED))
        return suggestions.values_changed(texts[int(newer)], texts[int(older)], shared[0])

    def states(note_id: str) -> bool:
        return not texts[int(note_id)].rstrip().endswith("?")

    def asks(note_id: str) -> bool:
        return ranking.asks_something(texts[int(note_id)])

    started = time.perf_counter()
    if not past and setting[3] >= 0:
        far = setting[6] if setting[6] >= 0 else None
        window = ranking.brought_up(window, own, adjacent, other_values if far is None else lifted_values, states,
                                    subject=setting[3], far_subject=far, asks=asks)
        if timings is not None:
            timings["brought_up"].append(time.perf_counter() - started)
    if past or setting[2] < 0:
        out = ranking.newer_first(window, own, adjacent, set(changed).__contains__, subject, subject - CUE_LESS, asks=asks)
    else:
        out = ranking.newer_first(window, own, adjacent, set(changed).__contains__, subject, subject - CUE_LESS,
                                  values_changed=other_values, value_subject=setting[2], answer_depth=setting[4],
                                  answer_subject=setting[5], answer_values=answer_values, asks=asks)
    if timings is not None:
        timings["step"].append(time.perf_counter() - started)
    return [int(c.id) for c in out] + ranked[ranking.NEWER_WINDOW :]


def newer_wins(projects: list[Pairs], base: list[list[list[int]]], setting: Setting) -> list[list[bool]]:
    """Per project, per question: does the new fact rank above the old one in the top
    ``TOP_K``, as ``bench.knowledge`` counts (a fact below it ranks below every one in it)?"""
    out = []
    for project, rankings in zip(projects, base):
        wins = []
        for case, old, ranked in zip(project.cases, project.old, rankings):
            ranked = reordered(case, ranked, project.vectors, project.texts, setting)
            (new,) = case.relevant
            position = {i: n for n, i in enumerate(ranked[:TOP_K])}
            wins.append(position.get(new, TOP_K) < position.get(old, TOP_K))
        out.append(wins)
    return out


def _share(per_project: list[list[bool]]) -> float:
    return float(np.mean([w for wins in per_project for w in wins]))


def locomo_texts(path: Path) -> dict[str, list[str]]:
    return {c.name: [n["text"] for n in c.notes] for c in load_locomo(path)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.newer_study", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--locomo", type=Path, default=LOCOMO_DIR)
    parser.add_argument("--cost", action="store_true", help="only time ranking.brought_up under the rule in use")
    args = parser.parse_args(argv)
    digests = {p: data_digest(SETS / f"{p}.json")["sha256"][:12] for p in ("dev", "heldout")}
    print(f"data: LoCoMo {data_digest(args.locomo)['sha256'][:12]}, knowledge {digests}; model {args.model}\n")
    data = load(args.model, args.locomo)
    texts = locomo_texts(args.locomo)
    vectors = {name: embed_cached(args.model, notes, "passage") for name, notes in texts.items()}
    locomo_base = [hybrid(c) for c in data.locomo]
    sets = {part: knowledge(args.model, part) for part in ("dev", "heldout")}
    base = {part: [[hybrid(c) for c in p.cases] for p in projects] for part, projects in sets.items()}
    if args.cost:
        return _cost(data.locomo, locomo_base, vectors, texts, sets["dev"], base["dev"], args.locomo)
    grid: dict[str, Setting] = {"off": (-1.0, -1.0, -1.0, -1.0, *OFF), "reference (2.0 for every question)": REFERENCE}
    for present in (1.5, 1.75, 2.0):
        for past in (2.5, 3.0):
            for value in (-1.0, 1.25, 1.0, 0.75, 0.5):
                for lift in (-1.0, 2.0, 1.5, 1.0):
                    if value < 0 and lift >= 0:
                        continue  # brought up: by the value test only
                    grid[f"present {present}, past {past}, other values {'off' if value < 0 else value}, "
                         f"brought up {'off' if lift < 0 else lift}"] = (present, past, value, lift, *OFF)
    rows = Rows(lambda setting: _measured(setting, data.locomo, locomo_base, vectors, texts, sets, base))
    print("| setting (change word: 0.5 less) | LoCoMo R@1 | R@5 | R@10 | newer wins dev | newer wins held-out |\n|---|---|---|---|---|---|")
    for name, setting in grid.items():
        rows.add(name, setting)
    groups = np.array([c.group for c in data.locomo])
    everyone = np.ones(len(groups), dtype=bool)
    held = {k: np.zeros(len(groups)) for k in (1, 5, 10)}
    chosen = []
    for conversation in dict.fromkeys(groups.tolist()):
        out = groups == conversation
        best = _choose(rows, ~out, range(len(sets["dev"])))
        chosen.append(best)
        for k in held:
            held[k][out] = rows[best][k][out]
    print(f"\nChosen per left-out LoCoMo conversation (the best dev newer-wins whose recall@1 and @5 on the other four "
          f"are at least those of {BEFORE}, then the bar for bringing up on it: `_choose`): held-out R@1 {held[1].mean():.3f}, R@5 {held[5].mean():.3f}, "
          f"R@10 {held[10].mean():.3f}; chosen {chosen}")
    projects = len(sets["dev"])
    cv, picks = [], []
    for left in range(projects):
        best = _choose(rows, everyone, [p for p in range(projects) if p != left])
        picks.append(best)
        cv += rows[best]["dev"][left]  # type: ignore[index]
    print(f"Chosen per left-out dev project (the same rule on the other dev projects): dev newer-wins "
          f"{np.mean(cv):.3f} cross-validated; chosen {sorted(set(picks))}")
    default = _choose(rows, everyone, range(projects))
    print("\nThe last step's settings on the default's first four:")
    for name in rows.last_step(default):
        rows.add(name, rows.settings[name])
    print(f"The same choice on all conversations and dev projects (the default): {default}: LoCoMo R@1 "
          f"{rows[default][1].mean():.3f}, R@5 {rows[default][5].mean():.3f}; newer wins dev "  # type: ignore[union-attr]
          f"{_share(rows[default]['dev']):.3f}, held-out {_share(rows[default]['heldout']):.3f}")  # type: ignore[arg-type]
    return 0


class Rows(dict[str, dict[str, object]]):
    """The figures of each setting measured, by name; ``last_step`` names (and measures) the
    last step's settings on a setting's first four."""

    ANSWERS: tuple[tuple[int, float], ...] = ((0, 0.0), (4, 0.0), (5, 0.5), (5, 0.0), (5, -0.5), (6, 0.0))
    FAR: tuple[float, ...] = (-1.0, 4.0, 3.0, 2.5)

    def __init__(self, measure) -> None:  # type: ignore[no-untyped-def]
        super().__init__()
        self.measure = measure
        self.settings: dict[str, Setting] = {}

    def add(self, name: str, setting: Setting, quiet: bool = False) -> None:
        self.settings[name] = setting
        if name not in self:
            self[name] = {**self.measure(setting), "setting": setting}
        if not quiet:
            row = self[name]
            print(f"| {name} | {row[1].mean():.3f} | {row[5].mean():.3f} | {row[10].mean():.3f} | "  # type: ignore[union-attr]
                  f"{_share(row['dev']):.3f} | {_share(row['heldout']):.3f} |", flush=True)  # type: ignore[arg-type]

    def last_step(self, first: str) -> list[str]:
        first = first.split("; answers")[0]
        base: Setting = self[first]["setting"]  # type: ignore[assignment]
        names = [first]
        for depth, answer in self.ANSWERS:
            for far in self.FAR:
                if (depth, far) == (0, -1.0):
                    continue
                name = (f"{first}; answers {'off' if depth == 0 else f'{depth} at {answer}'}, "
                        f"the first ten bring up {'off' if far < 0 else far}")
                self.add(name, (*base[:4], depth, answer, far), quiet=True)
                names.append(name)
        return names


def _measured(setting: Setting, locomo: list[Case], locomo_base: list[list[int]], vectors: dict[str, np.ndarray],
              texts: dict[str, list[str]], sets: dict[str, list[Pairs]], base: dict[str, list[list[list[int]]]]) -> dict[str, object]:
    runs = [reordered(c, r, vectors[c.group], texts[c.group], setting) for c, r in zip(locomo, locomo_base)]
    at = {k: np.array([recall(c, r, k) for c, r in zip(locomo, runs)]) for k in (1, 5, 10)}
    return {**at, **{part: newer_wins(projects, base[part], setting) for part, projects in sets.items()}}


IN_USE: Setting = (ranking.SUBJECT_Z, ranking.PAST_SUBJECT_Z, ranking.VALUE_Z, ranking.LIFT_Z, ranking.ANSWER_DEPTH,
                   ranking.ANSWER_Z, ranking.FAR_LIFT_Z)


def _cost(locomo: list[Case], locomo_base: list[list[int]], vectors: dict[str, np.ndarray], texts: dict[str, list[str]],
          dev: list[Pairs], dev_base: list[list[list[int]]], locomo_path: Path) -> int:
    """What ``ranking.brought_up``, and it with ``ranking.newer_first`` (the whole step after the
    store's cosines), cost a search under the rule in use (``IN_USE``), over every LoCoMo and
    dev question about the present: each timed three times, the fastest kept; the step also
    with the texts' readings dropped before each try (as for notes no search read lately)."""
    runs = [(c, r, vectors[c.group], texts[c.group]) for c, r in zip(locomo, locomo_base)]
    runs += [(c, r, p.vectors, p.texts) for p, rankings in zip(dev, dev_base) for c, r in zip(p.cases, rankings)]
    seconds: dict[str, list[float]] = {"brought_up": [], "step": [], "step, unread texts": []}
    for case, ranked, own_vectors, own_texts in runs:
        if asks_about_past(case.query) or named_period(case.query) is not None:
            continue
        warm: dict[str, list[float]] = {"brought_up": [], "step": []}
        cold: dict[str, list[float]] = {"brought_up": [], "step": []}
        for _ in range(3):
            reordered(case, ranked, own_vectors, own_texts, IN_USE, warm)
            suggestions._read_head.cache_clear()
            reordered(case, ranked, own_vectors, own_texts, IN_USE, cold)
        seconds["brought_up"].append(min(warm["brought_up"]))
        seconds["step"].append(min(warm["step"]))
        seconds["step, unread texts"].append(min(cold["step"]))
    figures = {}
    for name, values in seconds.items():
        ms = np.array(values) * 1000
        figures[name] = {"p50": round(float(np.median(ms)), 3), "p95": round(float(np.percentile(ms, 95)), 3),
                         "max": round(float(ms.max()), 3), "n": len(ms)}
    print(table(["step", "searches", "p50 ms", "p95 ms", "max ms"],
                [[name, f["n"], f["p50"], f["p95"], f["max"]] for name, f in figures.items()]))
    digest = {"locomo": data_digest(locomo_path), "dev": data_digest(SETS / "dev.json")}
    result = {"brought_up_ms": figures["brought_up"], "step_ms": figures["step"],
              "step_unread_ms": figures["step, unread texts"], "setting": list(IN_USE)}
    print(f"\nwritten: {write_result('newer_cost', result, digest)}")
    return 0


def _choose(rows: Rows, conversations: np.ndarray, projects: Iterable[int]) -> str:
    """In two steps, each the best dev newer-wins on ``projects`` (ties: the better LoCoMo
    recall@1 on ``conversations``, then the first in the grid) among the settings whose
    recall@1 and @5 there, to three decimals, are at least a reference's: first among the
    settings that bring nothing up, against ``BEFORE`` (the choice the study made before
    ``ranking.brought_up``); then the bar for bringing up on that setting, against the
    setting itself, so that bringing up may cost LoCoMo nothing: what the rule is for,
    without what it must not cost; then, the same way, the answers' rule and the rest of the
    first ten bringing up (``Rows.last_step``) on the setting of the second step."""
    kept = list(projects)

    def at(name: str, k: int) -> float:
        return round(float(rows[name][k][conversations].mean()), 3)  # type: ignore[index]

    def best(names: list[str], reference: str) -> str:
        allowed = [n for n in names if at(n, 1) >= at(reference, 1) and at(n, 5) >= at(reference, 5)]
        return max(allowed, key=lambda n: (round(_share([rows[n]["dev"][p] for p in kept]), 3), at(n, 1)))  # type: ignore[index]

    def setting(name: str) -> Setting:
        return rows[name]["setting"]  # type: ignore[return-value]

    grid = [n for n in rows if setting(n)[4:] == OFF]
    first = best([n for n in grid if setting(n)[3] < 0], BEFORE)
    second = best([n for n in grid if setting(n)[:3] == setting(first)[:3]], first)
    return best(rows.last_step(second), second)


if __name__ == "__main__":
    sys.exit(main())
