"""Embedding tables that stay int8: an ONNX graph rewrite at load time, exact.

The pinned MiniLM export stores each weight as int8 with a float scale and dequantizes it
in the graph (``Cast`` to float, ``Mul`` by the scale). onnxruntime's constant folding
computes those products once at load, so the 30,522 x 384 word-embedding table becomes
45 MiB of float32, and building it takes twice that for a moment. A table is only read row
by row (``Gather``), and its scale is per row, so gathering the int8 rows and their scales
first and dequantizing only those gives the same numbers bit for bit::

    Gather(Mul(Cast(q), s), ids)  ==  Mul(Cast(Gather(q, ids)), Gather(s, ids))

``gather_before_dequantizing`` rewrites every such pattern in a serialized ``ModelProto``
and leaves everything else as it was (matrix weights still fold to float32: multiplying
them as int8 changes the vectors a little, which ``multiply_in_int8`` below does only when
asked). It reads and writes the protobuf wire format
directly (``onnx_wire``).

``multiply_in_int8`` rewrites the other use of those weights, a product with a matrix of
per-column scales, ``MatMul(a, Mul(Cast(q), s))``, where a CPU has int8 dot products (VNNI):
onnxruntime's ``DynamicQuantizeMatMul`` quantizes ``a`` to uint8 on each run and multiplies
it with ``q`` as it is, about twice as fast, at the cost of rounding ``a`` to 256 levels. A
few input channels of this model's products carry values ten to thirty times the others'
(the known outlier features of BERT models): rounded with them, every other channel would
lose its precision. So the channels named in ``outliers`` (per weight, found once by
``bench.int8_outliers`` on text that is no benchmark's) are taken out of ``a`` and multiplied
in float with their rows of the weight, dequantized as before::

    a @ (q * s)  ~  DynamicQuantizeMatMul(a * keep, q, s) + Gather(a, o) @ (Gather(q, o) * s)

where ``keep`` is 0 on the channels ``o`` and 1 elsewhere. A product with no entry in
``outliers`` stays as it was.
"""

from __future__ import annotations

import struct
from collections import Counter
from collections.abc import Mapping, Sequence

from local_mcp_memory.adapters.embedders.onnx_wire import (
    FLOAT,
    INT64,
    MICROSOFT,
    TO_FLOAT,
    Node,
    initializer,
    int_attribute,
    int_attribute_field,
    node,
    rewritten,
)


def gather_before_dequantizing(model: bytes) -> tuple[bytes, int]:
    """``model`` with each per-row-quantized table gathered before it is dequantized, and
    the number of tables rewritten (0: the bytes come back unchanged). Raises
    ``GraphNotRecognized`` for bytes that are no ModelProto."""
    return rewritten(model, lambda nodes, known: (_gathered_tables(nodes, known.shapes), b""))


def multiply_in_int8(model: bytes, outliers: Mapping[str, Sequence[int]]) -> tuple[bytes, int]:
    """``model`` with each product by a per-column-quantized matrix named in ``outliers``
    (its int8 initializer's name: the input channels multiplied in float) done in int8, and
    the number of products rewritten (0: the bytes come back unchanged). Raises
    ``GraphNotRecognized`` for bytes that are no ModelProto."""
    return rewritten(model, lambda nodes, known: _int8_products(nodes, known.shapes, outliers), MICROSOFT)


def _dequantized(name: str, producer: dict[str, Node], uses: Counter[str]) -> tuple[Node, Node, str, str] | None:
    """When ``name`` is ``Mul(Cast(q) to float, s)`` read by one node only (a weight
    dequantized in the graph): the Cast, the Mul, ``q`` and ``s``."""
    mul = producer.get(name)
    if mul is None or mul.op != "Mul" or mul.domain or len(mul.inputs) != 2 or uses[name] != 1:
        return None
    cast_output, scale = mul.inputs
    cast = producer.get(cast_output)
    if cast is None or cast.op != "Cast" or cast.domain or len(cast.inputs) != 1 or uses[cast_output] != 1:
        return None
    if int_attribute(cast, b"to", -1) != FLOAT:
        return None
    return cast, mul, cast.inputs[0], scale


def _gathered_tables(nodes: list[Node], shapes: dict[str, tuple[int, ...]]) -> dict[int, bytes]:
    """Per node id, what replaces it: the gather pattern's Gather becomes four nodes, its
    Cast and Mul nothing."""
    producer = {output: found for found in nodes for output in found.outputs}
    uses = Counter(name for found in nodes for name in found.inputs)
    replaced: dict[int, bytes] = {}
    for gather in nodes:
        if gather.op != "Gather" or gather.domain or len(gather.inputs) != 2:
            continue
        table, ids = gather.inputs
        found = _dequantized(table, producer, uses)
        if found is None or int_attribute(gather, b"axis", 0) != 0:
            continue
        cast, mul, quantized, scale = found
        rows = shapes.get(quantized, ())
        if not rows or shapes.get(scale) != (rows[0], 1):
            continue  # not a table in the initializers with one scale per row
        (out,) = gather.outputs
        replaced[id(cast)] = replaced[id(mul)] = b""
        replaced[id(gather)] = b"".join([
            node("Gather", [quantized, ids], out + "/rows_int8", gather.attributes),
            node("Cast", [out + "/rows_int8"], out + "/rows", (TO_FLOAT,)),
            node("Gather", [scale, ids], out + "/row_scales", gather.attributes),
            node("Mul", [out + "/rows", out + "/row_scales"], out),
        ])
    return replaced


def _int8_products(nodes: list[Node], shapes: dict[str, tuple[int, ...]],
                   outliers: Mapping[str, Sequence[int]]) -> tuple[dict[int, bytes], bytes]:
    """Per node id, what replaces it, and the initializers added: the product's MatMul
    becomes the int8 product of the channels kept plus the float product of the others,
    its Cast and Mul nothing. The channels' split of an input (a mask and a gather) is
    built once however many products read it (a layer's query, key and value)."""
    producer = {output: found for found in nodes for output in found.outputs}
    uses = Counter(name for found in nodes for name in found.inputs)
    replaced: dict[int, bytes] = {}
    initializers: list[bytes] = []
    splits: dict[tuple[str, tuple[int, ...]], tuple[str, str, str]] = {}
    for product in nodes:
        if product.op != "MatMul" or product.domain or len(product.inputs) != 2:
            continue
        activations, weights = product.inputs
        found = _dequantized(weights, producer, uses)
        if found is None:
            continue
        cast, mul, quantized, scale = found
        matrix = shapes.get(quantized, ())
        if quantized not in outliers or len(matrix) != 2:
            continue
        channels = tuple(sorted(set(outliers[quantized])))
        if shapes.get(scale) not in ((1, matrix[1]), (matrix[1],)) or not all(0 <= c < matrix[0] for c in channels):
            continue  # not a matrix in the initializers with one scale per column
        (out,) = product.outputs
        replaced[id(cast)] = replaced[id(mul)] = b""
        if not channels:
            replaced[id(product)] = node("DynamicQuantizeMatMul", [activations, quantized, scale], out, domain=MICROSOFT)
            continue
        split = b""  # the input's split, before the first product that reads it
        if (activations, channels) not in splits:
            kept, taken, indexes = f"{out}/kept", f"{out}/taken", f"{out}/channels"
            keep = [0.0 if c in channels else 1.0 for c in range(matrix[0])]
            initializers += [initializer(f"{out}/keep", FLOAT, (matrix[0],), struct.pack(f"<{matrix[0]}f", *keep)),
                             initializer(indexes, INT64, (len(channels),), struct.pack(f"<{len(channels)}q", *channels))]
            split = node("Mul", [activations, f"{out}/keep"], kept) + node(
                "Gather", [activations, indexes], taken, (int_attribute_field("axis", -1),))
            splits[activations, channels] = (kept, taken, indexes)
        kept, taken, indexes = splits[activations, channels]
        replaced[id(product)] = split + b"".join([
            node("DynamicQuantizeMatMul", [kept, quantized, scale], out + "/int8", domain=MICROSOFT),
            node("Gather", [quantized, indexes], out + "/rows_int8"),
            node("Cast", [out + "/rows_int8"], out + "/rows", (TO_FLOAT,)),
            node("Mul", [out + "/rows", scale], out + "/rows_float"),
            node("MatMul", [taken, out + "/rows_float"], out + "/float"),
            node("Add", [out + "/int8", out + "/float"], out),
        ])
    return replaced, b"".join(initializers)


