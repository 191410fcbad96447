"""Each GELU of a BERT export as one operator: a graph rewrite at load time.

The pinned MiniLM export spells the feed-forward block's activation out in five operators,
``x * (0.5 * (1 + erf(x / sqrt 2)))``: a division, ``Erf``, an addition and two products, one
after another for every text, which onnxruntime's own GELU fusion does not recognize in this
order. ``fuse_gelu`` replaces them by onnxruntime's ``com.microsoft.Gelu`` of ``x``, the same
function in one pass; every operator's kind and each constant's value is checked, and a
graph that differs anywhere is left as it was. The vectors may differ by rounding only.
"""

from __future__ import annotations

import math
from collections import defaultdict

from local_mcp_memory.adapters.embedders.onnx_wire import MICROSOFT, Initializers, Node, Rewrite, node, rewritten

_CLOSE = 1e-6


def fuse_gelu(model: bytes) -> tuple[bytes, int]:
    """``model`` with each GELU as one ``Gelu``, and the number fused (0: the bytes come back
    unchanged). Raises ``GraphNotRecognized`` for bytes that are no ModelProto."""
    return rewritten(model, lambda nodes, known: Rewrite(_fused(nodes, known)), MICROSOFT)


def _fused(nodes: list[Node], known: Initializers) -> dict[int, bytes]:
    """Per node id, what replaces it: each pattern's last product becomes ``Gelu``, its other
    four nodes nothing."""
    readers: dict[str, list[Node]] = defaultdict(list)
    for found in nodes:
        for name in found.inputs:
            readers[name].append(found)

    def then(found: Node, op: str, constant: float | None) -> Node | None:
        """The one node reading ``found``'s output, an ``op`` of it and of ``constant`` (an
        initializer of one float) or, with None, of anything."""
        (output,) = found.outputs
        after = readers.get(output, ())
        if len(after) != 1 or after[0].op != op or after[0].domain or len(after[0].inputs) != 2:
            return None
        (other,) = [name for name in after[0].inputs if name != output] or [""]
        if constant is None:
            return after[0]
        value = known.scalar(other)
        return after[0] if value is not None and math.isclose(value, constant, rel_tol=_CLOSE) else None

    replaced: dict[int, bytes] = {}
    for divide in nodes:
        if divide.op != "Div" or divide.domain or len(divide.inputs) != 2 or len(divide.outputs) != 1:
            continue
        x, root = divide.inputs
        value = known.scalar(root)
        if value is None or not math.isclose(value, math.sqrt(2.0), rel_tol=_CLOSE):
            continue
        erf = readers.get(divide.outputs[0], ())
        if len(erf) != 1 or erf[0].op != "Erf" or erf[0].domain or len(erf[0].outputs) != 1:
            continue
        plus_one = then(erf[0], "Add", 1.0)
        half = plus_one and then(plus_one, "Mul", 0.5)
        times_x = half and then(half, "Mul", None)
        if times_x is None or x not in times_x.inputs or len(times_x.outputs) != 1:
            continue
        for gone in (divide, erf[0], plus_one, half):
            replaced[id(gone)] = b""
        replaced[id(times_x)] = node("Gelu", [x], times_x.outputs[0], domain=MICROSOFT)
    return replaced
