"""``HashingEmbedder``: a deterministic, dependency-light embedder for tests.

Each lower-case word is hashed (blake2b, stable across processes) into one of ``dim``
buckets with a sign; the bucket counts are L2-normalized. Texts sharing words get similar
vectors, unrelated texts nearly orthogonal ones, and the same text always the same vector.
A text with no word characters is hashed whole, so every vector has length 1.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from local_mcp_memory.application.ports import EmbedKind

_WORD = re.compile(r"\w+")


class HashingEmbedder:
    """Feature-hashing bag of words; ``kind`` is ignored. Output: float32, shape (n, dim)."""

    def __init__(self, dim: int = 64) -> None:
        if dim < 1:
            raise ValueError(f"HashingEmbedder dim must be >= 1 (got {dim})")
        self._dim = dim

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str], kind: EmbedKind = "passage") -> np.ndarray:
        vectors = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in _WORD.findall(text.lower()) or [text]:
                bucket, sign = self._slot(token)
                vectors[row, bucket] += sign
            norm = np.linalg.norm(vectors[row])
            if norm == 0.0:  # every word cancelled out: fall back to the whole text's slot
                bucket, sign = self._slot("\x00" + text)
                vectors[row, bucket] = sign
            else:
                vectors[row] /= norm
        return vectors

    def _slot(self, token: str) -> tuple[int, float]:
        digest = int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest(), "big")
        return (digest >> 1) % self._dim, 1.0 if digest & 1 else -1.0
