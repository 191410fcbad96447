"""Why hybrid search loses to meaning alone on English paraphrases with multilingual-e5-small,
and the model-independent changes measured against it.

    .venv/bin/python -m bench.spread_study [--models all-MiniLM-L6-v2,multilingual-e5-small] [--locomo PATH]

In-process, on the server's own ranking code through ``bench.retrieval_study`` (its data,
its ``hybrid``, its leave-one-conversation-out ``held_out``). For each model it prints:

- how decisive the meaning ranking is: per query, the spread (std of the cosines in scope),
  how many standard deviations the best note stands above the mean (z1), the lead of the
  best over the second (z1 - z2) and over the tenth (z1 - z10), medians over LoCoMo and over
  the English paraphrase queries;
- which part of the blend moves the close calls: the default, without context, without
  keywords, without both;
- every family of changes measured (each relative to how decisive or how spread the meaning
  ranking is, none with a per-model constant), with held-out figures for each family.

None of these is the server's configuration; the study only patches ``ranking`` for the run.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import retrieval_study as rs
from bench.datasets import LOCOMO_DIR, PARAPHRASE_SET, data_digest
from local_mcp_memory.application import ranking
from local_mcp_memory.application.ports import Candidate, Spread

Ranker = Callable[[rs.Case, rs.Config], list[int]]


def decisiveness(cases: list[rs.Case]) -> str:
    std, z1, lead2, lead10 = [], [], [], []
    for case in cases:
        top = np.sort(case.sem)[::-1]
        sd, mean = case.sem.std(), case.sem.mean()
        std.append(sd)
        z1.append((top[0] - mean) / sd)
        lead2.append((top[0] - top[1]) / sd)
        lead10.append((top[0] - top[9]) / sd)
    med = lambda xs: float(np.median(xs))  # noqa: E731
    return f"{med(std):.3f} | {med(z1):.2f} | {med(lead2):.2f} | {med(lead10):.2f} |"


@contextmanager
def spread_as(transform: Callable[[rs.Case, Spread], Spread]) -> Iterator[Callable[[rs.Case, rs.Config], list[int]]]:
    """A ranker whose spread (the calibration of the meaning score) is ``transform``ed."""
    current: dict[str, rs.Case] = {}
    saved = rs.Spread

    def patched(count: int, mean: float, std: float) -> Spread:
        return transform(current["case"], saved(count, mean, std))

    def ranker(case: rs.Case, config: rs.Config) -> list[int]:
        current["case"] = case
        return rs.hybrid(case, config)

    rs.Spread = patched  # type: ignore[assignment,misc]
    try:
        yield ranker
    finally:
        rs.Spread = saved  # type: ignore[misc]


def shifted(sigmas: float) -> Callable[[rs.Case, Spread], Spread]:
    """Meaning scores from ``sigmas`` standard deviations above the mean (not from the mean)."""
    return lambda case, s: Spread(s.count, s.mean + sigmas * s.std, s.std)


def top_relative(factor: float) -> Callable[[rs.Case, Spread], Spread]:
    """One unit of meaning = ``factor`` x (best cosine - mean): the best note scores 1/factor."""
    return lambda case, s: Spread(s.count, s.mean, (float(case.sem.max()) - s.mean) * factor / ranking.SPREAD_UNITS)


@contextmanager
def context_as(rule: str) -> Iterator[None]:
    """``floor N``: a linked note lends only what it scores above the N-th best hit;
    ``cap``: context lifts a note toward the note it borrows from, never above it."""
    saved = ranking.with_context

    def patched(fused: list[Candidate], adjacent: dict[str, list[str]], weight: float = ranking.CONTEXT_WEIGHT,
                limit: int | None = None) -> list[Candidate]:
        floor = fused[min(len(fused), int(rule.split()[1])) - 1].score if rule.startswith("floor") and fused else 0.0
        links: dict[str, set[str]] = {}
        for seed, near in adjacent.items():
            for other in near:
                links.setdefault(seed, set()).add(other)
                links.setdefault(other, set()).add(seed)
        own = {c.id: c.score for c in fused}
        rows = []
        for c in fused:
            best = max((own.get(o, 0.0) for o in links.get(c.id, ())), default=0.0)
            if rule == "cap":
                score = max(c.score, min(c.score + weight * best, best))
            else:
                score = min(1.0, c.score + weight * max(0.0, best - floor))
            rows.append((-score, -c.created_at.timestamp(), c.id, c))
        rows.sort(key=lambda r: r[:3])
        return [Candidate(c.id, c.created_at, -s) for s, _, _, c in rows[:limit]]

    ranking.with_context = patched  # type: ignore[assignment]
    try:
        yield
    finally:
        ranking.with_context = saved  # type: ignore[assignment]


def decisive_scaled(reference: float) -> Ranker:
    """Keyword and context weights x min(1, (z1 - z10) / reference): additions in proportion
    to how far the meaning ranking's best stands above its tenth."""

    def ranker(case: rs.Case, config: rs.Config) -> list[int]:
        top = np.sort(case.sem)[::-1]
        f = min(1.0, (top[0] - top[9]) / case.sem.std() / reference)
        return rs.hybrid(case, replace(config, weight=config.weight * f, context=config.context * f))

    return ranker


def run_family(data: rs.Data, floor: dict[str, float], name: str,
               members: dict[str, Callable[[], rs.Measured]]) -> str:
    measured = {}
    for label, measure in members.items():
        measured[label] = measure()
        print(f"| {name} | {label} | {rs._row(measured[label])}", flush=True)
    r5, chosen = rs.held_out(data, measured, floor, 5)
    r10, _ = rs.held_out(data, measured, floor, 10)
    return f"| {name} | {r5:.3f} | {r10:.3f} | {', '.join(chosen)} |"


def study(model: str, locomo: Path) -> None:
    data = rs.load(model, locomo)
    floor = rs.measure(data, rs.semantic).paraphrase
    english = [c for c in data.paraphrase if c.group == "en"]
    print(f"\n## {model}\n\n| queries | spread (std) | z1 | z1 - z2 | z1 - z10 |\n|---|---|---|---|---|")
    print(f"| LoCoMo dev (760) | {decisiveness(data.locomo)}\n| paraphrase, English (38) | {decisiveness(english)}\n")
    print("| family | setting | R@1 | R@5 | R@10 | paraphrase R@1 en/ja/ko/es/cross |\n|---|---|---|---|---|---|")
    print(f"| semantic only | | {rs._row(rs.measure(data, rs.semantic))}")
    base = rs.Config()

    def plain(config: rs.Config) -> Callable[[], rs.Measured]:
        return lambda: rs.measure(data, rs.hybrid, config)

    def with_spread(transform: Callable[[rs.Case, Spread], Spread], config: rs.Config = base) -> Callable[[], rs.Measured]:
        def go() -> rs.Measured:
            with spread_as(transform) as ranker:
                return rs.measure(data, ranker, config)
        return go

    def with_context_rule(rule: str, config: rs.Config) -> Callable[[], rs.Measured]:
        def go() -> rs.Measured:
            with context_as(rule):
                return rs.measure(data, rs.hybrid, config)
        return go

    summary = [run_family(data, floor, "ablation", {
        "default": plain(base), "no context": plain(replace(base, context=0.0)),
        "no keywords": plain(replace(base, weight=0.0)), "neither": plain(replace(base, weight=0.0, context=0.0))})]
    summary.append(run_family(data, floor, "weights (frontier)", {
        f"kw {w} ctx {c}": plain(replace(base, weight=w, context=c)) for w in (0.1, 0.2, 0.3, 0.4) for c in (0.0, 0.1, 0.3, 0.5)}))
    summary.append(run_family(data, floor, "meaning from mean + a std, units", {
        f"a {a} units {u} ctx {c}": with_spread(shifted(a), replace(base, units=u, context=c))
        for a in (0.0, 0.5, 1.0, 1.5) for u in (6.0, 8.0) for c in (0.3, 0.5)}))
    summary.append(run_family(data, floor, "meaning relative to the best note", {
        f"best = 1/{f}": with_spread(top_relative(f)) for f in (1.0, 1.5, 2.0)} | {"default": plain(base)}))
    summary.append(run_family(data, floor, "weights x decisiveness", {
        f"reference {r}": (lambda r=r: rs.measure(data, decisive_scaled(r))) for r in (1.0, 1.5, 2.0, 3.0)} | {"default": plain(base)}))
    summary.append(run_family(data, floor, "context above a floor / capped", {
        f"{rule} ctx {c}": with_context_rule(rule, replace(base, context=c))
        for rule in ("floor 10", "floor 30", "cap") for c in (0.3, 0.5, 0.7)} | {"default": plain(base)}))
    print("\nLeave one conversation out (R@5 choices for 26, 30, 41, 42, 43):\n")
    print("| family | held-out R@5 | held-out R@10 | chosen |\n|---|---|---|---|")
    print("\n".join(summary))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.spread_study", description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="all-MiniLM-L6-v2,multilingual-e5-small")
    parser.add_argument("--locomo", type=Path, default=LOCOMO_DIR)
    args = parser.parse_args(argv)
    print(f"data: LoCoMo {data_digest(args.locomo)['sha256']}, paraphrase {data_digest(PARAPHRASE_SET)['sha256']}")
    for model in args.models.split(","):
        study(model.strip(), args.locomo)
    return 0


if __name__ == "__main__":
    sys.exit(main())
