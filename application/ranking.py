"""Scores in the contract's 0..1, and the fusion of keyword and vector rankings.

Hybrid search blends the two *scores*, not their ranks: ``weight * keyword + (1 - weight) *
semantic``. Both are absolute, so a weak match stays weak after fusion: the keyword score is
the share of the query's information (its idf-weighted terms) a note matches
(``adapters.keyword_index``), so a note that shares one common word with a paraphrased
question adds little, while one that matches the names and rare terms of the question adds
much. Rank fusion (RRF) gives the first keyword hit full weight however poor it is, which
is what made it lose to vector search on paraphrased questions (``bench/fusion_study.py``
has the comparison).
"""

from __future__ import annotations

import attrs

from application.ports import Hit

HYBRID_KEYWORD_WEIGHT = 0.3
"""The keyword share of a hybrid score, chosen on LoCoMo and the paraphrase set (see README)."""

KEYWORD_EVIDENCE = 0.2
"""A keyword score below this (a note matching a fifth of the query's information or less,
typically one common word of a paraphrased question) counts as no keyword match at all."""


def similarity_scores(hits: list[Hit]) -> list[Hit]:
    """Cosine similarity -> (1 + cos) / 2, clamped to 0..1."""
    return [attrs.evolve(h, score=min(1.0, max(0.0, (1.0 + h.score) / 2.0))) for h in hits]


def keyword_scores(hits: list[Hit]) -> list[Hit]:
    """Keyword relevance is already a share of the query in 0..1; clamp it."""
    return [attrs.evolve(h, score=min(1.0, max(0.0, h.score))) for h in hits]


def blend(semantic: list[Hit], keyword: list[Hit], weight: float, depth: int) -> list[Hit]:
    """``weight * keyword + (1 - weight) * semantic`` for every note in either ranking, both
    scores in 0..1, sorted highest first (ties: newer createdAt, then id).

    A ranking cut at ``depth`` says nothing exact of the notes below it: they get its lowest
    score. A ranking shorter than ``depth`` holds every note it can score; the others get 0.
    Keyword scores under ``KEYWORD_EVIDENCE`` count as 0.
    """
    sem = {h.stored.note.id.value: h for h in semantic}
    kw = {h.stored.note.id.value: h for h in keyword}
    sem_floor = semantic[-1].score if len(semantic) >= depth else 0.0
    kw_floor = keyword[-1].score if len(keyword) >= depth else 0.0
    fused = []
    for key, hit in {**kw, **sem}.items():
        s = sem[key].score if key in sem else sem_floor
        k = kw[key].score if key in kw else kw_floor
        k = k if k >= KEYWORD_EVIDENCE else 0.0
        fused.append(attrs.evolve(hit, score=min(1.0, max(0.0, weight * k + (1.0 - weight) * s))))
    fused.sort(key=lambda h: (-h.score, -h.stored.note.created_at.timestamp(), h.stored.note.id.value))
    return fused
