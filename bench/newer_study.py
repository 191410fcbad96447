"""In-process study of ``ranking.newer_first`` (the newer of two results about one subject
first) and of the add-time suggestions (``application.suggestions``), with held-out figures.

    .venv/bin/python -m bench.newer_study [--model all-MiniLM-L6-v2] [--locomo PATH]

The server's hybrid ranking (``bench.retrieval_study.hybrid``), then ``newer_first`` over
its best ``depth`` results with a same-subject cosine ``same``, on LoCoMo (the five dev
conversations; recall@5 and @10) and on both halves of the knowledge-update set
(``bench/sets/knowledge_update``: the share of questions whose new fact ranks above the old).
Held out: for each LoCoMo conversation, among the settings at or above a newer-wins floor
on the knowledge **dev** half, the one with the best recall@5 on the other four (to three
decimals; ties: the better dev newer-wins, then recall@1) is measured on the one left out;
the knowledge **held-out** half is only ever measured. Then the suggestion rule's recall and
false alarms on each half for a grid of thresholds, the choice made on dev.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a script: python bench/newer_study.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.datasets import LOCOMO_DIR, data_digest, load_locomo
from bench.knowledge import NEW_AT, OLD_AT, OTHER_AT, SETS, load_set
from bench.retrieval_study import Case, embed_cached, hybrid, keyword_matrix, load, recall
from local_mcp_memory.application import ranking, suggestions
from local_mcp_memory.application.ports import Candidate, Spread
from local_mcp_memory.application.query_dates import named_period

FLOOR = 0.8
"""A setting must make the new fact win for at least this share of the dev questions."""


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
        cases = [Case(project["name"], q, sem[i], kw[i], created, frozenset({first_new + i})) for i, q in enumerate(questions)]
        out.append(Pairs(cases, list(range(len(pairs))), vectors, texts, created, kinds))
    return out


Setting = tuple[float, float, float, int]  # same, margin, margin when the newer speaks of a change, depth; same < 0: off


def reordered(case: Case, ranked: list[int], vectors: np.ndarray, texts: list[str], setting: Setting) -> list[int]:
    """``ranked`` (the server's hybrid ranking of ``case``) after ``newer_first`` under ``setting``."""
    same, margin, changed_margin, depth = setting
    if same < 0 or named_period(case.query) is not None:  # as application.search does
        return ranked
    head = [Candidate(str(i), case.created[i], 1.0 - n / 100) for n, i in enumerate(ranked[:depth])]
    own = {c.id: vectors[int(c.id)].tolist() for c in head}
    adjacent = {c.id: [str(int(c.id) - 1), str(int(c.id) + 1)] for c in head}  # one group, in order
    changed = [c.id for c in head if suggestions.UPDATE_CUE.search(texts[int(c.id)])]
    reordered = ranking.newer_first(head, own, adjacent, same, margin, changed, changed_margin)
    return [int(c.id) for c in reordered] + ranked[depth:]


def newer_wins(projects: list[Pairs], base: list[list[list[int]]], setting: Setting) -> float:
    wins = []
    for project, rankings in zip(projects, base):
        for case, old, ranked in zip(project.cases, project.old, rankings):
            ranked = reordered(case, ranked, project.vectors, project.texts, setting)
            (new,) = case.relevant
            position = {i: n for n, i in enumerate(ranked)}
            wins.append(position.get(new, 99) < position.get(old, 99))
    return float(np.mean(wins))


def locomo_texts(path: Path) -> dict[str, list[str]]:
    return {c.name: [n["text"] for n in c.notes] for c in load_locomo(path)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.newer_study", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--locomo", type=Path, default=LOCOMO_DIR)
    args = parser.parse_args(argv)
    digests = {p: data_digest(SETS / f"{p}.json")["sha256"][:12] for p in ("dev", "heldout")}
    print(f"data: LoCoMo {data_digest(args.locomo)['sha256'][:12]}, knowledge {digests}; model {args.model}\n")
    data = load(args.model, args.locomo)
    texts = locomo_texts(args.locomo)
    vectors = {name: embed_cached(args.model, notes, "passage") for name, notes in texts.items()}
    locomo_base = [hybrid(c) for c in data.locomo]
    sets = {part: knowledge(args.model, part) for part in ("dev", "heldout")}
    base = {part: [[hybrid(c) for c in p.cases] for p in projects] for part, projects in sets.items()}
    grid: dict[str, Setting] = {"off": (-1.0, 0.0, 0.0, 10)}
    grid |= {f"same {s} margin {m}{f' (change {c})' if c != m else ''} depth {d}": (s, m, c, d)
             for m in (0.0, 0.1, 0.2, 0.225, 0.25, 0.275, 0.3) for c in (m, 0.2, 0.15, 0.1) if c <= m
             for s in (0.3, 0.4) for d in (10,)}
    rows: dict[str, dict[str, object]] = {}
    print("| setting | LoCoMo R@1 | R@5 | R@10 | newer wins dev | newer wins held-out |\n|---|---|---|---|---|---|")
    for name, setting in grid.items():
        runs = [reordered(c, r, vectors[c.group], texts[c.group], setting) for c, r in zip(data.locomo, locomo_base)]
        at = {k: np.array([recall(c, r, k) for c, r in zip(data.locomo, runs)]) for k in (1, 5, 10)}
        wins = {part: newer_wins(projects, base[part], setting) for part, projects in sets.items()}
        rows[name] = {**at, **wins}
        print(f"| {name} | {at[1].mean():.3f} | {at[5].mean():.3f} | {at[10].mean():.3f} | {wins['dev']:.3f} | {wins['heldout']:.3f} |", flush=True)
    groups = np.array([c.group for c in data.locomo])
    allowed = [n for n, r in rows.items() if r["dev"] >= FLOOR] or list(rows)
    held = {k: np.zeros(len(groups)) for k in (1, 5, 10)}
    chosen = []
    for conversation in dict.fromkeys(groups.tolist()):
        out = groups == conversation
        best = max(allowed, key=lambda n: (round(rows[n][5][~out].mean(), 3), rows[n]["dev"], round(rows[n][1][~out].mean(), 3)))
        chosen.append(best)
        for k in held:
            held[k][out] = rows[best][k][out]
    print(f"\nLeave one conversation out among settings with dev newer-wins >= {FLOOR}: held-out R@1 {held[1].mean():.3f}, "
          f"R@5 {held[5].mean():.3f}, R@10 {held[10].mean():.3f}; chosen {chosen}")
    default = max(allowed, key=lambda n: (round(rows[n][5].mean(), 3), rows[n]["dev"], round(rows[n][1].mean(), 3)))
    print(f"The same rule on all five conversations (the default): {default}")
    suggestions(sets)
    return 0


def suggestions(sets: dict[str, list[Pairs]]) -> None:
    """``suggestions.likely_replaced`` on every add of the benchmark's order, for a grid;
    the choice: the best dev recall with at most 10 % false alarms (ties: the stricter)."""
    print("\n| suggestion setting | dev recall | dev false alarms | dev extra | held-out recall | held-out false alarms | held-out extra |\n|---|---|---|---|---|---|---|")
    best = None
    for alone in (0.45, 0.5, 0.55, 0.6, 2.0):
        for cued in (0.25, 0.3, 0.35, 0.4, 2.0):
            rule = suggestions.Rule(alone, cued)
            got = {part: _suggest(projects, rule) for part, projects in sets.items()}
            d, h = got["dev"], got["heldout"]
            print(f"| alone {alone} cued {cued} | {d[0]:.3f} | {d[1]:.3f} | {d[2]:.3f} | {h[0]:.3f} | {h[1]:.3f} | {h[2]:.3f} |")
            if d[1] <= 0.1 and (best is None or d[0] >= best[1][0]):  # ties: the stricter rule
                best = ((alone, cued), d, h)
    if best:
        print(f"\nchosen on dev (best recall with at most 10% false alarms): alone/cued {best[0]}: "
              f"dev {tuple(round(x, 3) for x in best[1])}, held-out {tuple(round(x, 3) for x in best[2])}")


def _suggest(projects: list[Pairs], rule: suggestions.Rule) -> tuple[float, float, float]:
    """Recall, false alarms (share of related and unrelated notes naming any) and extra
    (share of new facts naming another note than their old one)."""
    found, alarms, extra = [], [], []
    for project in projects:
        order = sorted(range(len(project.texts)), key=lambda i: project.created[i])
        first_new = len(project.texts) - len(project.old)
        for n, i in enumerate(order):
            earlier = order[:n]
            if not earlier:
                continue
            cos = project.vectors[earlier] @ project.vectors[i]
            closest = sorted(zip(cos.tolist(), earlier), reverse=True)[: suggestions.DEPTH]
            spread = Spread(len(earlier), float(cos.mean()), float(cos.std()))
            named = suggestions.likely_replaced(project.texts[i], [(str(j), project.texts[j], c) for c, j in closest], rule, spread)
            if project.kinds[i] == "new":
                old = str(project.old[i - first_new])
                found.append(old in named)
                extra.append(any(x != old for x in named))
            elif project.kinds[i] != "old":
                alarms.append(bool(named))
    return float(np.mean(found)), float(np.mean(alarms)), float(np.mean(extra))


if __name__ == "__main__":
    sys.exit(main())
