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
``outliers`` stays as it was. A text is a couple of hundred operators, each with a cost of its
own beside its arithmetic, so fewer of them: the int8 product adds the bias that followed the
product (its optional input), and products of one input with the same channels (a layer's
query, key and value) are one product of their matrices side by side, its output split::

    [a @ Q + q, a @ K + k, a @ V + v]  ==  Split(a @ [Q K V] + [q k v])

The input is then quantized once instead of three times; the vectors may differ by the
rounding of the sums (docs/performance.md, "Each layer in fewer operators").

On an x86 CPU without int8 dot products, onnxruntime's kernel for uint8 x int8 adds two
products in 16 bits with saturation (``vpmaddubsw``), and 2 x 255 x 127 overflows them; with
``unsigned`` the weights are given as uint8 with a zero point of 128 (``q + 128``, the same
values), whose kernel widens both to 16 bits first: exact sums, the same as with VNNI.
"""

from __future__ import annotations

import struct
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence

import attrs

from local_mcp_memory.adapters.embedders.onnx_wire import (
    FLOAT,
    INT8,
    INT64,
    MICROSOFT,
    TO_FLOAT,
    UINT8,
    Initializers,
    Node,
    Rewrite,
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
    return rewritten(model, lambda nodes, known: Rewrite(_gathered_tables(nodes, known)))


def multiply_in_int8(model: bytes, outliers: Mapping[str, Sequence[int]], together: bool = True,
                     unsigned: bool = False) -> tuple[bytes, int]:
    """``model`` with each product by a per-column-quantized matrix named in ``outliers``
    (its int8 initializer's name: the input channels multiplied in float) done in int8, and
    the number of products rewritten (0: the bytes come back unchanged); with ``together``,
    products of one input are one where they can be and each adds its bias itself (else each
    is alone and its bias added after it, as exported); with ``unsigned``, each matrix is
    given to the product as uint8 with a zero point of 128 (for a CPU without int8 dot
    products) and the rows multiplied in float are read from it once, here. Raises
    ``GraphNotRecognized`` for bytes that are no ModelProto."""
    return rewritten(model, lambda nodes, known: _int8_products(nodes, known, outliers, together, unsigned), MICROSOFT)


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


def _gathered_tables(nodes: list[Node], known: Initializers) -> dict[int, bytes]:
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
        rows = known.shape(quantized) or ()
        if not rows or known.shape(scale) != (rows[0], 1):
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


@attrs.frozen
class _Product:
    """A product ``multiply_in_int8`` rewrites: ``MatMul(activations, Mul(Cast(quantized),
    scale))``, the input ``channels`` to multiply in float, and the ``Add`` of a bias that
    alone reads it, if any (``_bias``), which the int8 product then adds itself."""

    matmul: Node
    dequantized: tuple[Node, Node]  # the Cast and the Mul, which go
    activations: str
    quantized: str
    scale: str
    shape: tuple[int, int]  # the matrix's rows (the input's channels) and columns
    channels: tuple[int, ...]
    bias: Node | None

    @property
    def output(self) -> str:
        """What the rewrite produces: the bias's sum when it is added in, else the product."""
        return (self.bias or self.matmul).outputs[0]

    @property
    def bias_values(self) -> str:
        return "" if self.bias is None else next(i for i in self.bias.inputs if i != self.matmul.outputs[0])


def _int8_products(nodes: list[Node], known: Initializers, outliers: Mapping[str, Sequence[int]], together: bool,
                   unsigned: bool = False) -> Rewrite:
    """Per node id, what replaces it, the initializers added, and how many products are
    in int8 now: each product's MatMul becomes the int8 product of the channels kept plus
    the float product of the others, its bias added by the int8 product, its Cast and Mul
    nothing. The channels' split of an input (a mask and a gather) is built once however
    many products read it; products of one input with the same channels, each with a bias,
    and as many columns each (a layer's query, key and value) are one product of their
    matrices side by side, split after (``_merged``)."""
    producer = {output: found for found in nodes for output in found.outputs}
    uses = Counter(name for found in nodes for name in found.inputs)
    readers: dict[str, list[Node]] = defaultdict(list)
    for found in nodes:
        for name in found.inputs:
            readers[name].append(found)
    groups: dict[tuple[str, tuple[int, ...]], list[_Product]] = defaultdict(list)
    count = 0
    for product in nodes:
        if product.op != "MatMul" or product.domain or len(product.inputs) != 2:
            continue
        activations, weights = product.inputs
        found = _dequantized(weights, producer, uses)
        if found is None:
            continue
        cast, mul, quantized, scale = found
        matrix = known.shape(quantized) or ()
        if quantized not in outliers or len(matrix) != 2:
            continue
        channels = tuple(sorted(set(outliers[quantized])))
        if known.shape(scale) not in ((1, matrix[1]), (matrix[1],)) or not all(0 <= c < matrix[0] for c in channels):
            continue  # not a matrix in the initializers with one scale per column
        if unsigned and not _raw_columns(known, quantized, scale, (matrix[0], matrix[1])):
            continue  # weights that cannot be read here stay in float
        bias = _bias(product, matrix[1], readers, known) if together else None
        groups[activations, channels].append(
            _Product(product, (cast, mul), activations, quantized, scale, (matrix[0], matrix[1]), channels, bias))
        count += 1
    replaced: dict[int, bytes] = {}
    initializers: list[bytes] = []
    for (activations, channels), group in groups.items():
        split, kept, taken, indexes = b"", activations, "", ""
        if channels:  # the input's split, before the first product that reads it
            out, rows = group[0].matmul.outputs[0], group[0].shape[0]
            kept, taken, indexes = f"{out}/kept", f"{out}/taken", f"{out}/channels"
            keep = [0.0 if c in channels else 1.0 for c in range(rows)]
            initializers += [initializer(f"{out}/keep", FLOAT, (rows,), struct.pack(f"<{rows}f", *keep)),
                             initializer(indexes, INT64, (len(channels),), struct.pack(f"<{len(channels)}q", *channels))]
            split = node("Mul", [activations, f"{out}/keep"], kept) + node(
                "Gather", [activations, indexes], taken, (int_attribute_field("axis", -1),))
        merged = _merged(group, known)
        for unit in [group] if merged is not None else [[product] for product in group]:
            first = unit[0]
            rows, width = first.shape[0], first.shape[1] * len(unit)
            if merged is not None:
                (quantized, scale, bias), (data_type, matrix, scales, biases) = merged
                out = first.matmul.outputs[0] + "/merged"
                initializers += [*([] if unsigned else [initializer(quantized, data_type, (rows, width), matrix)]),
                                 initializer(scale, FLOAT, (width,), scales), initializer(bias, FLOAT, (width,), biases)]
            else:
                (quantized, scale, bias), out = (first.quantized, first.scale, first.bias_values), first.output
                matrix, scales = known.tensors[quantized].raw, known.tensors[scale].raw
            zero_point = ""
            if unsigned:  # the int8 matrix is read here, once, and given as uint8
                quantized, zero_point, blobs = _unsigned(out, (matrix, scales), (rows, width), channels)
                initializers.append(blobs)
            reads = [kept, quantized, scale, *([zero_point, bias] if bias else [zero_point] if zero_point else [])]
            if not channels:
                body = node("DynamicQuantizeMatMul", reads, out, domain=MICROSOFT)
            else:  # the float channels' rows: an initializer with uint8 weights, else dequantized on each run
                rows_float = b"" if unsigned else b"".join([
                    node("Gather", [quantized, indexes], out + "/rows_int8"),
                    node("Cast", [out + "/rows_int8"], out + "/rows", (TO_FLOAT,)),
                    node("Mul", [out + "/rows", scale], out + "/rows_float"),
                ])
                body = b"".join([
                    node("DynamicQuantizeMatMul", reads, out + "/int8", domain=MICROSOFT),
                    rows_float,
                    node("MatMul", [taken, out + "/rows_float"], out + "/float"),
                    node("Add", [out + "/int8", out + "/float"], out),
                ])
            if merged is not None:  # the parts' widths as an input: read alike by every operator set since 13
                parts = struct.pack(f"<{len(unit)}q", *(product.shape[1] for product in unit))
                initializers.append(initializer(out + "/parts", INT64, (len(unit),), parts))
                body += node("Split", [out, out + "/parts"], [product.output for product in unit], (int_attribute_field("axis", -1),))
            for product in unit:
                for gone in (product.matmul, *product.dequantized, *([product.bias] if product.bias else [])):
                    replaced[id(gone)] = b""
            replaced[id(first.matmul)] = split + body
            split = b""
    return Rewrite(replaced, b"".join(initializers), count)


def _raw_columns(known: Initializers, quantized: str, scale: str, shape: tuple[int, int]) -> bool:
    """Whether ``quantized`` is an int8 matrix of ``shape`` held as raw bytes, and ``scale``
    its columns' float scales."""
    weights, scales = known.tensors.get(quantized), known.tensors.get(scale)
    return (weights is not None and scales is not None and weights.data_type == INT8 and scales.data_type == FLOAT
            and weights.raw is not None and len(weights.raw) == shape[0] * shape[1]
            and scales.raw is not None and len(scales.raw) == 4 * shape[1])


def _unsigned(out: str, weights: tuple[bytes | memoryview | None, bytes | memoryview | None], shape: tuple[int, int],
              channels: Sequence[int]) -> tuple[str, str, bytes]:
    """A product's int8 matrix (with its columns' scales) as uint8 with a zero point of 128,
    and the rows of its input ``channels`` dequantized as the graph would (int8 cast to float
    times the column's scale, in float32) as ``{out}/rows_float``: the names of the matrix and
    the zero points, and those initializers."""
    import numpy as np  # once a model is rewritten: constructing an embedder imports nothing heavy

    rows, columns = shape
    matrix = np.frombuffer(weights[0], dtype=np.int8).reshape(rows, columns)  # type: ignore[arg-type]
    scales = np.frombuffer(weights[1], dtype="<f4")  # type: ignore[arg-type]
    names = (out + "/weights_uint8", out + "/zero_points", out + "/rows_float")
    blobs = [initializer(names[0], UINT8, shape, (matrix.astype(np.int16) + 128).astype(np.uint8).tobytes()),
             initializer(names[1], UINT8, (columns,), bytes([128]) * columns)]
    if channels:
        dequantized = matrix[list(channels)].astype(np.float32) * scales
        blobs.append(initializer(names[2], FLOAT, (len(channels), columns), dequantized.astype("<f4").tobytes()))
    return names[0], names[1], b"".join(blobs)


def _bias(product: Node, columns: int, readers: Mapping[str, Sequence[Node]], known: Initializers) -> Node | None:
    """The ``Add`` that alone reads ``product``'s output, of a float initializer with one value
    per column; None if there is none."""
    found = readers.get(product.outputs[0], ())
    if len(found) != 1 or found[0].op != "Add" or found[0].domain or len(found[0].inputs) != 2:
        return None
    (values,) = [name for name in found[0].inputs if name != product.outputs[0]] or [""]
    tensor = known.tensors.get(values)
    return found[0] if tensor is not None and tensor.data_type == FLOAT and tensor.shape == (columns,) else None


def _merged(group: Sequence[_Product], known: Initializers) -> tuple[tuple[str, str, str], tuple[int, bytes, bytes, bytes]] | None:
    """For two products or more of one input, each with a bias and as many columns, whose
    matrices, scales and biases are raw bytes: the names of their matrices, scales and biases
    side by side (one product, its output split in as many parts, gives the same sums), and
    the matrices' data type and those three side by side, as bytes. None otherwise: each is
    multiplied on its own."""
    if len(group) < 2 or any(p.bias is None or p.shape != group[0].shape for p in group):
        return None
    matrices = [known.tensors[p.quantized] for p in group]
    scales = [known.tensors[p.scale] for p in group]
    biases = [known.tensors[p.bias_values] for p in group]
    (rows, columns), data_type = group[0].shape, matrices[0].data_type
    raw = [m.raw for m in matrices]
    if (data_type not in (INT8, UINT8) or any(m.data_type != data_type or m.shape != (rows, columns) for m in matrices)
            or any(r is None or len(r) != rows * columns for r in raw)
            or any(t.data_type != FLOAT or t.raw is None or len(t.raw) != 4 * columns for t in (*scales, *biases))):
        return None
    base = group[0].matmul.outputs[0] + "/merged"
    names = (base + "_q", base + "_scale", base + "_bias")
    side_by_side = b"".join(part[row * columns : (row + 1) * columns] for row in range(rows) for part in raw)  # type: ignore[index]
    return names, (data_type, side_by_side, b"".join(t.raw for t in scales), b"".join(t.raw for t in biases))  # type: ignore[misc]
