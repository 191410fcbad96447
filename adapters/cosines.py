"""The cosines of a few stored vectors with each other: what both stores answer for
``StoreMaintenance.cosines``, computed where the vectors are (numpy), one matrix product."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from local_mcp_memory.application.ports import Vector
from local_mcp_memory.domain.identifiers import NoteId


def cosine_table(found: Mapping[NoteId, Vector]) -> dict[NoteId, dict[NoteId, float]]:
    """Every two of ``found`` (L2-normalized vectors) with their dot product, both ways."""
    ids = list(found)
    if not ids:
        return {}
    return cosine_rows(ids, np.stack([np.asarray(found[i], dtype=np.float32) for i in ids]))


def cosine_rows(ids: Sequence[NoteId], matrix: np.ndarray) -> dict[NoteId, dict[NoteId, float]]:
    """``cosine_table`` of the distinct ``ids`` whose vectors are the rows of ``matrix`` (float32)."""
    products = (matrix @ matrix.T).tolist()
    table: dict[NoteId, dict[NoteId, float]] = {}
    for i, a in enumerate(ids):
        row = dict(zip(ids, products[i]))
        del row[a]
        table[a] = row
    return table
