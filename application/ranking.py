"""Scores in the contract's 0..1, and the fusion of keyword and vector rankings."""

from __future__ import annotations

import attrs

from application.ports import Hit


def similarity_scores(hits: list[Hit]) -> list[Hit]:
    """Cosine similarity -> (1 + cos) / 2, clamped to 0..1."""
    return [attrs.evolve(h, score=min(1.0, max(0.0, (1.0 + h.score) / 2.0))) for h in hits]


def keyword_scores(hits: list[Hit]) -> list[Hit]:
    """A relevance r >= 0 -> r / (r + 1): 0 for no match, toward 1 for strong ones."""
    return [attrs.evolve(h, score=h.score / (h.score + 1.0)) for h in hits]


def fuse(semantic: list[Hit], keyword: list[Hit], k: float = 60.0) -> list[Hit]:
    """Reciprocal rank fusion of two rankings; the fused score is rescaled to 0..1."""
    scores: dict[str, float] = {}
    by_id: dict[str, Hit] = {}
    for ranking in (semantic, keyword):
        for rank, hit in enumerate(ranking):
            key = hit.stored.note.id.value
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank + 1)
            by_id.setdefault(key, hit)
    best = 2.0 / (k + 1)
    fused = [attrs.evolve(by_id[key], score=min(1.0, s / best)) for key, s in scores.items()]
    fused.sort(key=lambda h: (-h.score, -h.stored.note.created_at.timestamp(), h.stored.note.id.value))
    return fused
