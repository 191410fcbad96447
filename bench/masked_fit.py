"""One more signal for ``add_note``'s ``possiblySupersedes``, measured before it is built: how
alike a new note and an older one are in subject and frame once the new note's values are
taken out.

    .venv/bin/python -m bench.masked_fit [--models all-MiniLM-L6-v2,multilingual-e5-small]

The new note is embedded again with its values (``suggestions.value_spans``: numbers,
versions, paths, names) blanked out (``masked``: removed, replaced by "something", or by the
word for their kind), and its cosine with each candidate's stored vector becomes a tenth
feature beside ``suggestions.pair_features``' nine: as it is (``masked``), less the raw cosine
(``masked - raw``), as an excess over the masked vector's own mean cosine with the project's
notes less the raw excess (``excess gain``), or less the candidates' mean (``masked -
mean``). As an upper bound of what the one extra embedding per add loses, the candidates
masked too (``both masked``, ``both masked - raw``). Each set of ten is fitted and
cross-validated on the dev part exactly as ``bench.replace_fit`` does, and read by the best
recall at false-alarm bounds of 4 to 10 % (``replace_fit.recall_at``) beside the nine alone.
The rule for building it: recall at 10 % up by at least ``GAIN`` for MiniLM, e5 not lower.
Also printed: how often the old fact is the closest of its candidates by the raw cosine and by
the masked ones. Only the dev part is read. Vectors are cached per list of texts
(``retrieval_study.embed_cached``).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a script: python bench/masked_fit.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.newer_study import Pairs, knowledge
from bench.replace_fit import BOUNDS, Add, Extra, adds, cross_validated, recall_at
from bench.retrieval_study import embed_cached
from local_mcp_memory.application import suggestions
from local_mcp_memory.application.ports import Spread

FILLERS = {"removed": "", "something": "something", "kind": None}
"""How a run of values is blanked out: None, by the word for its kind ("number", "version", "name")."""

GAIN = 0.03
"""How much the cross-validated MiniLM recall at 10 % false alarms must rise to build the feature."""


def masked(text: str, filler: str | None) -> str:
    """``text`` with each run of values (``suggestions.value_spans``; values separated by
    spaces only are one run: "30 Hz") replaced by ``filler`` (None: the first value's kind),
    spaces squeezed; ``text`` itself when nothing is left."""
    runs: list[list] = []
    for start, end, kind in suggestions.value_spans(text):
        if runs and not text[runs[-1][1] : start].strip():
            runs[-1][1] = end
        else:
            runs.append([start, end, kind])
    parts, at = [], 0
    for start, end, kind in runs:
        parts += [text[at:start], kind if filler is None else filler]
        at = end
    out = re.sub(r"\s+", " ", "".join([*parts, text[at:]])).strip()
    return out or text


VARIANTS = ("masked", "masked - raw", "excess gain", "masked - mean", "both masked", "both masked - raw")


def columns(project: Pairs, vectors: np.ndarray) -> Extra:
    """``replace_fit.adds``' extra columns, one per ``VARIANTS``, from the masked texts' ``vectors``."""
    excess_column = suggestions.FEATURES.index("excess")

    def extra(i: int, earlier: list[int], candidates: list[int], rows: np.ndarray) -> np.ndarray:
        own = project.vectors[earlier] @ vectors[i]
        own_spread = Spread(len(own), float(own.mean()), float(own.std()))
        raw = project.vectors[candidates] @ project.vectors[i]
        one = project.vectors[candidates] @ vectors[i]
        both = vectors[candidates] @ vectors[i]
        gain = np.array([suggestions.excess(float(c), own_spread) for c in one]) - rows[:, excess_column]
        return np.column_stack([one, one - raw, gain, one - one.mean(), both, both - raw])

    return extra


def closest_first(data: list[Add], column: int) -> int:
    """How many of ``data``'s new facts have their old fact as the closest candidate by ``column``."""
    return sum(int(a.positive[int(np.argmax(a.features[:, column]))]) for a in data if a.kind == "new" and a.positive.any())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.masked_fit", description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="all-MiniLM-L6-v2,multilingual-e5-small")
    args = parser.parse_args(argv)
    models = args.models.split(",")
    projects = {m: knowledge(m, "dev") for m in models}
    nine = len(suggestions.FEATURES)
    base = {m: [adds(p) for p in projects[m]] for m in models}
    reach = {("the nine alone", ""): {m: [recall_at(f, b) for b in BOUNDS] for m, f in cross_validated(base).items()}}
    firsts = []
    for name, filler in FILLERS.items():
        dev = {}
        for m in models:
            vectors = [embed_cached(m, [masked(t, filler) for t in p.texts], "passage") for p in projects[m]]
            dev[m] = [adds(p, columns(p, v)) for p, v in zip(projects[m], vectors)]
            every = [a for p in dev[m] for a in p]
            firsts.append([m, name, closest_first(every, 0), closest_first(every, nine), closest_first(every, nine + 4),
                           sum(a.kind == "new" for a in every)])
        for k, variant in enumerate(VARIANTS):
            keep = [*range(nine), nine + k]
            one = {m: [[Add(a.kind, a.features[:, keep], a.positive) for a in p] for p in dev[m]] for m in models}
            reach[(variant, name)] = {m: [recall_at(f, b) for b in BOUNDS] for m, f in cross_validated(one).items()}
    before = reach[("the nine alone", "")]
    print("Cross-validated dev recall at false alarms ≤ " + " / ".join(f"{b:.0%}" for b in BOUNDS)
          + f" (leave one project out, {', '.join(models)} fitted together)\n")
    print("| feature beside the nine | values | " + " | ".join(models) + " | built? |")
    print("|---|---|" + "---|" * len(models) + "---|")
    for (variant, name), figures in reach.items():
        gain = figures[models[0]][-1] - before[models[0]][-1]
        kept = all(figures[m][-1] >= before[m][-1] for m in models[1:])
        verdict = "" if not name else ("yes" if gain >= GAIN - 1e-9 and kept else f"no ({gain:+.3f})")
        print(f"| {variant} | {name} | " + " | ".join(" / ".join(f"{r:.3f}" for r in figures[m]) for m in models)
              + f" | {verdict} |")
    print("\nNew facts whose old fact is the closest candidate, by the raw cosine / masked new · stored / both masked:\n")
    print("| model | values | raw | masked | both masked | of |\n|---|---|---|---|---|---|")
    for row in firsts:
        print("| " + " | ".join(str(x) for x in row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
