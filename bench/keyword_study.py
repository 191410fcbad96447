"""In-process study of how keywords (and the context step) enter hybrid search, on the three
paraphrase sets, LoCoMo and the knowledge-update set, with held-out choices.

    .venv/bin/python -m bench.keyword_study [--model all-MiniLM-L6-v2] [--locomo PATH]

Why: on the third paraphrase set (``bench/sets/paraphrase3``: notes on neighbouring subjects
share a paraphrased question's words) hybrid search ranks below meaning alone. Each setting
here changes one thing of the server's hybrid ranking (``bench.retrieval_study.hybrid``, with
``Config.keywords`` for how keyword scores and their weight enter ``ranking.blend``, and
``Config.linked`` for which neighbours lend context), followed, for LoCoMo and the knowledge
set, by ``newer_first`` under the rule in use (``bench.newer_study.reordered``). A setting is
*allowed* when it keeps the knowledge dev part's newer-wins at least the rule in use's and
hybrid at least semantic search's recall@1 and @5 on the first two paraphrase sets (the rule
in use always is: it is what every choice falls back on). Held out:
for each LoCoMo conversation, among the allowed settings of a family whose recall@1 and @5 on
the other four are at least the rule in use's, the one with the best recall@5 there (then
@1, then the first listed: the rule in use) is measured on it. The third
paraphrase set and the knowledge held-out part are only measured here, never used to choose;
the keyword share of a query that names nothing (``ranking.UNNAMED_KEYWORD_SHARE``), which
leaves LoCoMo as it is, was chosen from its family's rows as the one keeping hybrid at least
semantic on all three sets (docs/retrieval.md, "Queries that name nothing").
Writes ``bench/results/keyword_study.md`` (``--out``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a script: python bench/keyword_study.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.client import REPO, RESULTS
from bench.datasets import LOCOMO_DIR, PARAPHRASE_SET, data_digest, load_paraphrase
from bench.knowledge import TOP_K
from bench.newer_study import IN_USE, Pairs, knowledge, locomo_texts, reordered
from bench.retrieval_study import Case, Config, embed_cached, hybrid, keyword_matrix, load, recall
from local_mcp_memory.application import ranking
from local_mcp_memory.application.ports import Candidate

PARAPHRASE_SETS = {
    "first": PARAPHRASE_SET,
    "second": REPO / "bench" / "sets" / "paraphrase2" / "set.json",
    "third": REPO / "bench" / "sets" / "paraphrase3" / "set.json",
}
CHOOSING = ("first", "second")
"""The paraphrase sets a setting must keep hybrid >= semantic on to be chosen; the third is only measured."""

Rule = Callable[[list[Candidate], list[Candidate], float], tuple[list[Candidate], float]]


def _evident(keyword: list[Candidate], score: Callable[[float], float]) -> list[Candidate]:
    """Keyword scores under ``KEYWORD_EVIDENCE`` out, the others through ``score``."""
    return [Candidate(c.id, c.created_at, score(c.score)) for c in keyword if c.score >= ranking.KEYWORD_EVIDENCE]


def ramp(start: float) -> Rule:
    """Keyword evidence counted from ``start`` of the query's information on, rising to 1."""
    return lambda sem, kw, w: (_evident(kw, lambda k: max(0.0, (k - start) / (1.0 - start))), w)


def power(exponent: float) -> Rule:
    """Partial matches count less than in proportion: share ** exponent."""
    return lambda sem, kw, w: (_evident(kw, lambda k: k**exponent), w)


def lead(share: float) -> Rule:
    """Only the keyword hits within ``share`` of the best keyword score count."""

    def rule(sem: list[Candidate], kw: list[Candidate], w: float) -> tuple[list[Candidate], float]:
        best = max((c.score for c in kw), default=0.0)
        return [c for c in _evident(kw, float) if c.score >= share * best], w

    return rule


def best_share(full: float) -> Rule:
    """The keyword weight in proportion to the best keyword score, full from ``full`` on."""
    return lambda sem, kw, w: (kw, w * min(1.0, max((c.score for c in kw), default=0.0) / full))


def plausible(fraction: float) -> Rule:
    """A note's keyword score counts as far as meaning finds it plausible: in proportion to
    its semantic score up to ``fraction`` of the best one's (notes below the semantic cut:
    the cut's score)."""

    def rule(sem: list[Candidate], kw: list[Candidate], w: float) -> tuple[list[Candidate], float]:
        own = {c.id: c.score for c in sem}
        floor = sem[-1].score if sem else 0.0
        best = sem[0].score if sem else 0.0
        if best <= 0.0:
            return [], w
        return [Candidate(c.id, c.created_at, c.score * min(1.0, own.get(c.id, floor) / (fraction * best)))
                for c in _evident(kw, float)], w

    return rule


def worded(top: int, factor: float) -> Rule:
    """The keyword weight times ``factor`` when none of meaning's ``top`` best shares the
    query's words (keyword evidence): the question is a paraphrase."""

    def rule(sem: list[Candidate], kw: list[Candidate], w: float) -> tuple[list[Candidate], float]:
        evident = {c.id for c in kw if c.score >= ranking.KEYWORD_EVIDENCE}
        return kw, w if any(c.id in evident for c in sem[:top]) else w * factor

    return rule


def agreeing(top: int, best: int) -> Rule:
    """The keyword weight times the share of keyword's ``best`` hits among meaning's ``top``."""

    def rule(sem: list[Candidate], kw: list[Candidate], w: float) -> tuple[list[Candidate], float]:
        near = {c.id for c in sem[:top]}
        first = [c.id for c in kw if c.score >= ranking.KEYWORD_EVIDENCE][:best]
        return kw, w * sum(i in near for i in first) / len(first) if first else w

    return rule


def confident(measure: str, bar: float, factor: float) -> Rule:
    """The keyword weight times ``factor`` when meaning is sure: its best result stands
    ``bar`` standard deviations above the second ("lead") or above the mean ("best")."""

    def rule(sem: list[Candidate], kw: list[Candidate], w: float) -> tuple[list[Candidate], float]:
        z = [c.score * ranking.SPREAD_UNITS for c in sem[:2]]
        if len(z) < 2:
            return kw, w
        return kw, w * factor if (z[0] - z[1] if measure == "lead" else z[0]) >= bar else w

    return rule


def lends_from(floor: float, both: bool) -> Callable[[Case, int, int], bool]:
    """A neighbour link lends context only when the neighbour's (``both``: and the seed's)
    own cosine stands at least ``floor`` on the calibrated scale (``ranking.calibrated_scores``)."""

    def linked(case: Case, seed: int, neighbour: int) -> bool:
        unit = ranking.SPREAD_UNITS * case.sem.std()
        mean = case.sem.mean()
        return (case.sem[neighbour] - mean) / unit >= floor and (not both or (case.sem[seed] - mean) / unit >= floor)

    return linked


def across_a_question(case: Case, seed: int, neighbour: int) -> bool:
    """A neighbour link lends context only when one of its two notes asks something (holds
    a "?"): the answer after a question, not a team's next separate fact."""
    return "?" in case.texts[seed] or "?" in case.texts[neighbour]


def families() -> dict[str, dict[str, Config]]:
    base = Config()
    settings = {
        "keyword weight": {f"weight {w}": replace(base, weight=w) for w in (0.0, 0.2, 0.3, 0.5)},
        "evidence from a share, rising to 1": {f"from {s}": replace(base, keywords=ramp(s), evidence=0.0) for s in (0.2, 0.3, 0.4)},
        "partial matches count less (share ** p)": {f"p {p}": replace(base, keywords=power(p), evidence=0.0) for p in (1.5, 2.0, 3.0)},
        "only keyword hits near the best": {f"within {s}": replace(base, keywords=lead(s), evidence=0.0) for s in (0.5, 0.75, 0.9)},
        "weight by the best keyword share": {f"full at {s}": replace(base, keywords=best_share(s)) for s in (0.5, 0.7, 0.9)},
        "keywords count as far as meaning finds the note plausible": {
            f"full at {f} of the best": replace(base, keywords=plausible(f), evidence=0.0) for f in (0.25, 0.5, 0.75, 1.0)
        },
        "less weight when meaning's best share no query word": {
            f"top {t}, x {f}": replace(base, keywords=worded(t, f)) for t in (1, 3, 10) for f in (0.0, 0.5)
        },
        "weight by keyword's best among meaning's best": {
            f"best {b} in top {t}": replace(base, keywords=agreeing(t, b)) for t in (10, 30) for b in (1, 3)
        },
        "less weight when meaning's best leads the second": {
            f"lead {z}, x {f}": replace(base, keywords=confident("lead", z, f)) for z in (0.5, 1.0, 1.5, 2.0) for f in (0.0, 0.5)
        },
        "less weight when meaning's best stands far above the mean": {
            f"best {z}, x {f}": replace(base, keywords=confident("best", z, f)) for z in (3.5, 4.0, 4.5, 5.0) for f in (0.0, 0.5)
        },
        "queries that name nothing (query_names)": {
            "no such rule (before)": replace(base, unnamed=None),
            **{f"keywords x {f}, no context": replace(base, unnamed=f) for f in (0.0, 0.25, 0.5, 1.0) if f != base.unnamed},
        },
        "context weight": {f"context {c}": replace(base, context=c) for c in (0.0, 0.3)},
        "context from the best n": {f"seeds {s}": replace(base, seeds=s) for s in (3, 5, 20)},
        "neighbours lend across a question only": {"one of the two asks": replace(base, linked=across_a_question)},
        "neighbours lend when their own meaning stands out": {
            f"{'both' if both else 'neighbour'} at {f}": replace(base, linked=lends_from(f, both))
            for both in (False, True)
            for f in (0.0, 0.1, 0.2, 0.3)
        },
    }
    return {name: {"in use": base, **members} for name, members in settings.items()}  # in use first: kept unless beaten


@dataclass
class Figures:
    locomo: dict[int, np.ndarray]  # k -> recall per question
    knowledge: dict[str, float]  # part -> newer-wins share
    paraphrase: dict[str, tuple[float, float]]  # set -> recall@1, @5


def paraphrase_cases(model: str, path: Path) -> list[Case]:
    """As ``bench.paraphrase`` stores them: one group, in order (neighbours); cross-language queries left out."""
    data = load_paraphrase(path)
    queries = [q for q, _, _ in data.queries]
    sem = embed_cached(model, queries, "query") @ embed_cached(model, data.notes, "passage").T
    kw = keyword_matrix(data.notes, queries)
    created = [datetime.fromtimestamp(1_704_067_200 + i, tz=timezone.utc) for i in range(len(data.notes))]
    return [Case(lang, q, sem[r], kw[r], created, frozenset({t}), data.notes)
            for r, (q, t, lang) in enumerate(data.queries) if lang != "cross"]


def _recalls(cases: list[Case], runs: list[list[int]]) -> tuple[float, float]:
    return (float(np.mean([recall(c, r, 1) for c, r in zip(cases, runs)])),
            float(np.mean([recall(c, r, 5) for c, r in zip(cases, runs)])))


class Study:
    def __init__(self, model: str, locomo: Path) -> None:
        self.data = load(model, locomo)
        self.texts = locomo_texts(locomo)
        self.vectors = {name: embed_cached(model, notes, "passage") for name, notes in self.texts.items()}
        self.knowledge: dict[str, list[Pairs]] = {part: knowledge(model, part) for part in ("dev", "heldout")}
        self.paraphrase = {name: paraphrase_cases(model, path) for name, path in PARAPHRASE_SETS.items()}
        self.semantic = {name: _recalls(cases, [[int(i) for i in np.argsort(-c.sem, kind="stable")[:5]] for c in cases])
                         for name, cases in self.paraphrase.items()}

    def measure(self, config: Config) -> Figures:
        runs = [reordered(c, hybrid(c, config), self.vectors[c.group], self.texts[c.group], IN_USE) for c in self.data.locomo]
        locomo = {k: np.array([recall(c, r, k) for c, r in zip(self.data.locomo, runs)]) for k in (1, 5)}
        wins = {}
        for part, projects in self.knowledge.items():
            won = []
            for p in projects:
                for case, old in zip(p.cases, p.old):
                    ranked = reordered(case, hybrid(case, config), p.vectors, p.texts, IN_USE)[:TOP_K]
                    (new,) = case.relevant
                    won.append((ranked.index(new) if new in ranked else TOP_K) < (ranked.index(old) if old in ranked else TOP_K))
            wins[part] = float(np.mean(won))
        para = {name: _recalls(cases, [hybrid(c, config) for c in cases]) for name, cases in self.paraphrase.items()}
        return Figures(locomo, wins, para)

    def allowed(self, figures: Figures, reference: Figures) -> bool:
        return figures.knowledge["dev"] >= reference.knowledge["dev"] - 1e-9 and all(
            figures.paraphrase[s][i] >= self.semantic[s][i] - 1e-9 for s in CHOOSING for i in (0, 1)
        )


def _choose(measured: dict[str, Figures], allowed: list[str], questions: np.ndarray) -> str:
    """Among ``allowed`` whose LoCoMo recall@1 and @5 on ``questions`` are at least the rule in
    use's (to three decimals), the best recall@5, then @1; ties: the first listed (in use)."""

    def at(name: str, k: int) -> float:
        return round(float(measured[name].locomo[k][questions].mean()), 3)

    keep = [n for n in allowed if at(n, 1) >= at("in use", 1) and at(n, 5) >= at("in use", 5)]
    return max(keep, key=lambda n: (at(n, 5), at(n, 1)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.keyword_study", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--locomo", type=Path, default=LOCOMO_DIR)
    parser.add_argument("--out", default="keyword_study")
    args = parser.parse_args(argv)
    digests = {name: data_digest(path)["sha256"][:12] for name, path in PARAPHRASE_SETS.items()}
    lines = [f"data: LoCoMo {data_digest(args.locomo)['sha256'][:12]}, paraphrase sets {digests}; model {args.model}", ""]

    def say(line: str) -> None:
        print(line, flush=True)
        lines.append(line)

    for line in lines:
        print(line)
    study = Study(args.model, args.locomo)
    sem = study.semantic
    say("| family | setting | LoCoMo R@1 | R@5 | newer wins dev | held-out | " + " | ".join(f"{s} set R@1 / R@5" for s in PARAPHRASE_SETS) + " | allowed |")
    say("|---|---|---|---|---|---|" + "---|" * len(PARAPHRASE_SETS) + "---|")
    say("| semantic only | | | | | | " + " | ".join(f"{sem[s][0]:.3f} / {sem[s][1]:.3f}" for s in PARAPHRASE_SETS) + " | |")
    reference = study.measure(Config())
    groups = np.array([c.group for c in study.data.locomo])
    summary = []
    for family, configs in families().items():
        measured = {name: reference if name == "in use" else study.measure(config) for name, config in configs.items()}
        for name, f in measured.items():
            para = " | ".join(f"{f.paraphrase[s][0]:.3f} / {f.paraphrase[s][1]:.3f}" for s in PARAPHRASE_SETS)
            say(f"| {family} | {name} | {f.locomo[1].mean():.3f} | {f.locomo[5].mean():.3f} | {f.knowledge['dev']:.3f} | "
                f"{f.knowledge['heldout']:.3f} | {para} | {'yes' if study.allowed(f, reference) else 'no'} |")
        allowed = [n for n, f in measured.items() if n == "in use" or study.allowed(f, reference)]  # in use: the fallback
        held = {k: np.zeros(len(groups)) for k in (1, 5)}
        chosen = []
        for conversation in dict.fromkeys(groups.tolist()):
            out = groups == conversation
            best = _choose(measured, allowed, ~out)
            chosen.append(best)
            for k in held:
                held[k][out] = measured[best].locomo[k][out]
        whole = _choose(measured, allowed, np.ones(len(groups), dtype=bool))
        third = measured[whole].paraphrase["third"]
        summary.append(f"| {family} | {held[1].mean():.3f} | {held[5].mean():.3f} | {', '.join(chosen)} | {whole}: "
                       f"{third[0]:.3f} / {third[1]:.3f} |")
    say("")
    say("Leave one conversation out: per conversation, the allowed setting best on the other four (R@5, then R@1) "
        "among those not below the rule in use there, measured on it; the setting chosen the same way on all five, "
        "and its third-set recall@1 / @5 (semantic: "
        f"{sem['third'][0]:.3f} / {sem['third'][1]:.3f}):")
    say("")
    say("| family | held-out R@1 | held-out R@5 | chosen for each conversation | chosen on all five: third set |")
    say("|---|---|---|---|---|")
    for line in summary:
        say(line)
    path = RESULTS / f"{args.out}.md"
    path.write_text("\n".join(lines) + "\n")
    print(f"\nwritten: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
