"""Each attention block of a BERT export as one operator: a graph rewrite at load time.

The pinned MiniLM export spells scaled dot-product attention out in some 28 small operators
a layer: Q, K and V each reshaped into heads and transposed, the key through a second
reshape and transpose, Q and K each multiplied by the fourth root of the scale, their
product, an additive mask built with ``Where``, the softmax, ``IsNaN`` and ``Where`` to
clean it, the product with V, and a transpose and reshape back. onnxruntime's own attention
fusion does not recognize this pattern, so a short text pays for each of those operators
one after another. ``fuse_attention`` replaces each block by ONNX's own ``Attention``
(operator set 23, which the model then imports) on the projected Q, K and V, with the
product of the two scales as its scale and, built once for every block, the keys each token
may attend to: the attention mask's tokens, for every token, padding included, as the
export's mask does; the operators only the old block used go. Where each block is found,
every operator's kind and each scale's value is checked; a graph that differs anywhere is
left as it was. The vectors may differ by rounding only; on the machines it was measured on
they were the same bit for bit, and the same as with onnxruntime's
``com.microsoft.MultiHeadAttention``, which the rewrite wrote before and which runs each
block in 1.5 times the time (docs/performance.md, "Attention in one operator").
"""

from __future__ import annotations

import struct
from collections import defaultdict
from collections.abc import Mapping, Sequence

from local_mcp_memory.adapters.embedders.onnx_wire import (
    BOOL,
    INT64,
    Initializers,
    Node,
    Rewrite,
    float_attribute_field,
    initializer,
    int_attribute_field,
    node,
    rewritten,
)

MASK_INPUT = "attention_mask"
"""The graph input holding each text's attention mask (1 for a token, 0 for padding)."""

OPSET = 23
"""The first version of ONNX's operator set with ``Attention`` (onnxruntime 1.23 and later)."""

_MASK = "attention_mask/pairs"  # (batch, 1, tokens, tokens): the keys each token attends to


def fuse_attention(model: bytes, heads: int) -> tuple[bytes, int]:
    """``model`` with each attention block (``heads`` heads) as one ``Attention``, and the
    number of blocks fused (0: the bytes come back unchanged). Raises ``GraphNotRecognized``
    for bytes that are no ModelProto."""
    return rewritten(model, lambda nodes, known: _fused(nodes, known, heads), "", OPSET)


def _mask() -> tuple[bytes, bytes]:
    """The nodes that build ``_MASK`` from the attention mask (batch, tokens), and their
    initializers: its tokens as keys, (batch, 1, 1, tokens), repeated for each token as a
    query, (batch, 1, tokens, 1): ``Attention`` takes no mask that broadcasts over queries."""
    tokens, keys, queries, every = (f"{MASK_INPUT}/{part}" for part in ("tokens", "keys", "queries", "every"))
    nodes = b"".join([
        node("Cast", [MASK_INPUT], tokens, (int_attribute_field("to", BOOL),)),
        node("Unsqueeze", [tokens, f"{keys}/axes"], keys),
        node("Unsqueeze", [tokens, f"{queries}/axes"], queries),
        node("Equal", [queries, queries], every),
        node("And", [keys, every], _MASK),
    ])
    axes = (initializer(f"{keys}/axes", INT64, (2,), struct.pack("<2q", 1, 2))
            + initializer(f"{queries}/axes", INT64, (2,), struct.pack("<2q", 1, 3)))
    return nodes, axes


def _fused(nodes: list[Node], known: Initializers, heads: int) -> Rewrite:
    """Per node id, what replaces it: each block's last node becomes the fused operator (the
    first also builds the mask), every node only the old blocks needed nothing."""
    producer = {output: found for found in nodes for output in found.outputs}
    readers: dict[str, list[Node]] = defaultdict(list)
    for found in nodes:
        for name in found.inputs:
            readers[name].append(found)
    if not any(MASK_INPUT in found.inputs for found in nodes):
        return Rewrite({})
    fused: dict[int, tuple[list[str], bytes]] = {}  # per block's last node: what the operator reads, the operator
    for softmax in nodes:
        block = _block(softmax, producer, readers, known) if softmax.op == "Softmax" and not softmax.domain else None
        if block is not None:
            last, query, key, value, scale = block
            reads = [query, key, value, _MASK]
            attributes = (int_attribute_field("q_num_heads", heads), int_attribute_field("kv_num_heads", heads),
                          float_attribute_field("scale", scale))
            fused[id(last)] = reads, node("Attention", reads, last.outputs[0], attributes)
    if not fused:
        return Rewrite({})
    mask, axes = _mask()
    replaced: dict[int, bytes] = {}
    for found in nodes:
        if id(found) in fused:
            replaced[id(found)] = mask + fused[id(found)][1]
            mask = b""  # once, before the first block
    inputs = {id(found): fused[id(found)][0] if id(found) in fused else found.inputs for found in nodes}
    for dead in _unread(nodes, producer, readers, inputs):
        replaced[id(dead)] = b""
    return Rewrite(replaced, axes, len(fused))


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
