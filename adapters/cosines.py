"""The cosines of a few stored vectors with each other: what both stores answer for
``StoreMaintenance.cosines``, computed where the vectors are (numpy), one matrix product."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from local_mcp_memory.application.ports import Vector
from local_mcp_memory.domain.identifiers import NoteId


def cosine_table(found: Mapping[NoteId, Vector]) -> dict[NoteId, dict[NoteId, float]]:
    """Every two of ``found`` (L2-normalized vectors) with their dot product, both ways."""
    ids = list(found)
    if not ids:
        return {}
    matrix = np.stack([np.asarray(found[i], dtype=np.float32) for i in ids])
    products = (matrix @ matrix.T).tolist()
    return {a: {b: products[i][j] for j, b in enumerate(ids) if j != i} for i, a in enumerate(ids)}
