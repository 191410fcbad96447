"""What every vector the stores keep must be, whichever way it came in (an embedder's
answer, an import, a salvage): finite numbers of L2 length 1, within ``UNIT_TOLERANCE``
(the ports' convention: a search's cosine is the dot product, so a longer vector would
outscore every other, a shorter one sink)."""

from __future__ import annotations

import math

from local_mcp_memory.application.ports import Vector

UNIT_TOLERANCE = 1e-3


def vector_problem(vector: Vector) -> str | None:
    """Why ``vector`` may not be stored, or None. One C-level pass (``math.hypot``): a NaN
    or an infinity makes the length non-finite. An array (an embedder's row) is read as its
    list of floats: unpacking its scalars one at a time takes four times as long."""
    as_list = getattr(vector, "tolist", None)
    return length_problem(math.hypot(*(vector if as_list is None else as_list())))


def length_problem(length: float) -> str | None:
    """``vector_problem`` of a vector whose L2 length, computed without overflow (NaN or
    infinite for a NaN or an infinity in it), is ``length``: for adapters that compute it
    faster on their own arrays."""
    if not math.isfinite(length):
        return "must hold finite numbers only (no NaN or infinity)"
    if abs(length - 1.0) > UNIT_TOLERANCE:
        return f"must have length 1 (within {UNIT_TOLERANCE:g}); its length is {length:.6g}"
    return None
