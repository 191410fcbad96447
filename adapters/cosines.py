"""The cosines of a few stored vectors with each other: what both stores answer for
``StoreMaintenance.cosines``, computed where the vectors are (numpy), one matrix product."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from local_mcp_memory.application.ports import Vector
from local_mcp_memory.domain.identifiers import NoteId


def cosine_table(found: Mapping[NoteId, Vector]) -> dict[str, dict[str, float]]:
    """Every two of ``found`` (L2-normalized vectors) with their dot product, both ways,
    keyed by the ids' values."""
    ids = list(found)
    if not ids:
        return {}
    return cosine_rows([i.value for i in ids], np.stack([np.asarray(found[i], dtype=np.float32) for i in ids]))


def cosine_rows(ids: Sequence[str], matrix: np.ndarray) -> dict[str, dict[str, float]]:
    """``cosine_table`` of the distinct note ids ``ids`` whose vectors are the rows of ``matrix`` (float32)."""
    products = (matrix @ matrix.T).tolist()
    table: dict[str, dict[str, float]] = {}
    for i, a in enumerate(ids):
        row = dict(zip(ids, products[i]))
        del row[a]
        table[a] = row
    return table
