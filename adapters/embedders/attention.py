"""Each attention block of a BERT export as one operator: a graph rewrite at load time.

The pinned MiniLM export spells scaled dot-product attention out in some 28 small operators
a layer: Q, K and V each reshaped into heads and transposed, the key through a second
reshape and transpose, Q and K each multiplied by the fourth root of the scale, their
product, an additive mask built with ``Where``, the softmax, ``IsNaN`` and ``Where`` to
clean it, the product with V, and a transpose and reshape back. onnxruntime's own attention
fusion does not recognize this pattern, so a short text pays for each of those operators
one after another. ``fuse_attention`` replaces each block by onnxruntime's
``com.microsoft.MultiHeadAttention`` on the projected Q, K and V, with the attention mask as
the key padding mask and the product of the two scales as its scale; the operators only the
old block used go. Where each block is found, every operator's kind and each scale's value
is checked; a graph that differs anywhere is left as it was. The vectors may differ by
rounding only; on the machine it was measured on they were the same bit for bit
(docs/performance.md, "Attention in one operator").
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from local_mcp_memory.adapters.embedders.onnx_wire import (
    INT32,
    MICROSOFT,
    Initializers,
    Node,
    Rewrite,
    float_attribute_field,
    int_attribute_field,
    node,
    rewritten,
)

MASK_INPUT = "attention_mask"
"""The graph input holding each text's attention mask (1 for a token, 0 for padding)."""

_MASK = "attention_mask/int32"  # the key padding mask MultiHeadAttention reads


def fuse_attention(model: bytes, heads: int) -> tuple[bytes, int]:
    """``model`` with each attention block (``heads`` heads) as one ``MultiHeadAttention``,
    and the number of blocks fused (0: the bytes come back unchanged). Raises
    ``GraphNotRecognized`` for bytes that are no ModelProto."""
    return rewritten(model, lambda nodes, known: Rewrite(_fused(nodes, known, heads)), MICROSOFT)


def _fused(nodes: list[Node], known: Initializers, heads: int) -> dict[int, bytes]:
    """Per node id, what replaces it: each block's last node becomes the fused operator (the
    first also casts the mask), every node only the old blocks needed nothing."""
    producer = {output: found for found in nodes for output in found.outputs}
    readers: dict[str, list[Node]] = defaultdict(list)
    for found in nodes:
        for name in found.inputs:
            readers[name].append(found)
    if not any(MASK_INPUT in found.inputs for found in nodes):
        return {}
    fused: dict[int, tuple[list[str], bytes]] = {}  # per block's last node: what the operator reads, the operator
    for softmax in nodes:
        block = _block(softmax, producer, readers, known) if softmax.op == "Softmax" and not softmax.domain else None
        if block is not None:
            last, query, key, value, scale = block
            reads = [query, key, value, "", _MASK]
            attributes = (int_attribute_field("num_heads", heads), float_attribute_field("scale", scale))
            fused[id(last)] = reads, node("MultiHeadAttention", reads, last.outputs[0], attributes, MICROSOFT)
    if not fused:
        return {}
    cast = node("Cast", [MASK_INPUT], _MASK, (int_attribute_field("to", INT32),))
    replaced: dict[int, bytes] = {}
    for found in nodes:
        if id(found) in fused:
            replaced[id(found)] = cast + fused[id(found)][1]
            cast = b""  # once, before the first block
    inputs = {id(found): fused[id(found)][0] if id(found) in fused else found.inputs for found in nodes}
    for dead in _unread(nodes, producer, readers, inputs):
        replaced[id(dead)] = b""
    return replaced


def _block(
    softmax: Node, producer: Mapping[str, Node], readers: Mapping[str, Sequence[Node]], known: Initializers
) -> tuple[Node, str, str, str, float] | None:
    """The block around ``softmax``: its last node (the reshape back to one row per token),
    the projected Q, K and V it reads, and the scale of Q times K; None unless every node
    of it is what the export writes."""

    def made(name: str, op: str) -> Node | None:
        found = producer.get(name)
        return found if found is not None and found.op == op and not found.domain else None

    def only_reader(name: str, op: str) -> Node | None:
        found = readers.get(name, ())
        return found[0] if len(found) == 1 and found[0].op == op and not found[0].domain else None

    def back(name: str, ops: Sequence[str]) -> str | None:
        """The input reached from ``name`` through ``ops`` (each node's first input)."""
        for op in ops:
            found = made(name, op)
            if found is None:
                return None
            name = found.inputs[0]
        return name

    masked = made(softmax.inputs[0], "Add")
    scores = masked and made(masked.inputs[0], "MatMul")
    cleaners = readers.get(softmax.outputs[0], ())
    if scores is None or sorted(n.op for n in cleaners) != ["IsNaN", "Where"]:
        return None
    (isnan,) = [n for n in cleaners if n.op == "IsNaN"]
    (cleaned,) = [n for n in cleaners if n.op == "Where"]
    if readers.get(isnan.outputs[0], ()) != [cleaned] or cleaned.inputs[0] != isnan.outputs[0]:
        return None
    weighted = only_reader(cleaned.outputs[0], "MatMul")
    transposed = weighted and only_reader(weighted.outputs[0], "Transpose")
    last = transposed and only_reader(transposed.outputs[0], "Reshape")
    q_scaled, k_scaled = made(scores.inputs[0], "Mul"), made(scores.inputs[1], "Mul")
    if last is None or q_scaled is None or k_scaled is None or weighted.inputs[0] != cleaned.outputs[0]:
        return None
    q_scale, k_scale = known.scalar(q_scaled.inputs[1]), known.scalar(k_scaled.inputs[1])
    query = back(q_scaled.inputs[0], ("Transpose", "Reshape"))
    key = back(k_scaled.inputs[0], ("Reshape", "Transpose", "Reshape", "Transpose", "Reshape"))
    value = back(weighted.inputs[1], ("Transpose", "Reshape"))
    if q_scale is None or k_scale is None or query is None or key is None or value is None:
        return None
    return last, query, key, value, q_scale * k_scale


def _unread(
    nodes: Sequence[Node], producer: Mapping[str, Node], readers: Mapping[str, Sequence[Node]],
    inputs: Mapping[int, Sequence[str]],
) -> list[Node]:
    """The nodes no output of the graph needs once each node reads ``inputs[id(node)]``. An
    output no node read before is the graph's (or was never needed): its node stays."""
    needed = [found for found in nodes if any(not readers.get(output) for output in found.outputs)]
    live = {id(found) for found in needed}
    while needed:
        for name in inputs[id(needed.pop())]:
            source = producer.get(name)
            if source is not None and id(source) not in live:
                live.add(id(source))
                needed.append(source)
    return [found for found in nodes if id(found) not in live]
