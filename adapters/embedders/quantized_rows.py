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
directly, only the few fields it needs, so no ``onnx`` package is needed; the bytes of
weights are copied, never decoded.

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
from collections.abc import Callable, Iterator, Mapping, Sequence

import attrs

_VARINT, _FIXED64, _LEN, _FIXED32 = 0, 1, 2, 5
# ModelProto.graph, .opset_import; GraphProto.node, .initializer; NodeProto fields;
# TensorProto.dims, .data_type, .name, .raw_data; OperatorSetIdProto.domain, .version
_MODEL_GRAPH, _MODEL_OPSET, _GRAPH_NODE, _GRAPH_INITIALIZER = 7, 8, 1, 5
_NODE_INPUT, _NODE_OUTPUT, _NODE_NAME, _NODE_OP, _NODE_ATTRIBUTE, _NODE_DOMAIN = 1, 2, 3, 4, 5, 7
_TENSOR_DIMS, _TENSOR_TYPE, _TENSOR_NAME, _TENSOR_RAW = 1, 2, 8, 9
_OPSET_DOMAIN, _OPSET_VERSION = 1, 2
_ATTR_NAME, _ATTR_INT, _ATTR_TYPE, _ATTR_INT_TYPE = 1, 3, 20, 2
_FLOAT, _INT64 = 1, 7  # TensorProto.DataType
_MICROSOFT = "com.microsoft"  # onnxruntime's own operators


class GraphNotRecognized(ValueError):
    """The bytes are no ModelProto this rewrite understands."""


def _varint(data: memoryview, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise GraphNotRecognized("a varint runs past the end of its message")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def _fields(data: memoryview) -> Iterator[tuple[int, int, int | memoryview, memoryview]]:
    """(field number, wire type, value, the field's whole encoding) of each field."""
    pos = 0
    while pos < len(data):
        start = pos
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        value: int | memoryview
        if wire == _VARINT:
            value, pos = _varint(data, pos)
        elif wire == _LEN:
            size, pos = _varint(data, pos)
            if pos + size > len(data):
                raise GraphNotRecognized("a field runs past the end of its message")
            value, pos = data[pos : pos + size], pos + size
        elif wire in (_FIXED64, _FIXED32):
            size = 8 if wire == _FIXED64 else 4
            value, pos = data[pos : pos + size], pos + size
        else:
            raise GraphNotRecognized(f"wire type {wire} is not used by ONNX")
        yield number, wire, value, data[start:pos]


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _len_field(number: int, payload: bytes) -> bytes:
    return _encode_varint(number << 3 | _LEN) + _encode_varint(len(payload)) + payload


@attrs.frozen
class _Node:
    op: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    domain: str
    attributes: tuple[bytes, ...]
    encoded: bytes

    @classmethod
    def decode(cls, data: memoryview, encoded: memoryview) -> _Node:
        parts: dict[int, list[str]] = {_NODE_INPUT: [], _NODE_OUTPUT: [], _NODE_OP: [], _NODE_DOMAIN: []}
        attributes = []
        for number, _, value, _ in _fields(data):
            if number in parts and isinstance(value, memoryview):
                parts[number].append(bytes(value).decode())
            elif number == _NODE_ATTRIBUTE and isinstance(value, memoryview):
                attributes.append(bytes(value))
        return cls("".join(parts[_NODE_OP]), tuple(parts[_NODE_INPUT]), tuple(parts[_NODE_OUTPUT]),
                   "".join(parts[_NODE_DOMAIN]), tuple(attributes), bytes(encoded))


def _node(op: str, inputs: list[str], output: str, attributes: tuple[bytes, ...] = (), domain: str = "") -> bytes:
    payload = b"".join(_len_field(_NODE_INPUT, name.encode()) for name in inputs)
    payload += _len_field(_NODE_OUTPUT, output.encode()) + _len_field(_NODE_NAME, output.encode())
    payload += _len_field(_NODE_OP, op.encode())
    payload += b"".join(_len_field(_NODE_ATTRIBUTE, attribute) for attribute in attributes)
    if domain:
        payload += _len_field(_NODE_DOMAIN, domain.encode())
    return _len_field(_GRAPH_NODE, payload)


def _int_attribute_field(name: str, value: int) -> bytes:
    return (_len_field(_ATTR_NAME, name.encode()) + _encode_varint(_ATTR_INT << 3) + _encode_varint(value % (1 << 64))
            + _encode_varint(_ATTR_TYPE << 3) + _encode_varint(_ATTR_INT_TYPE))


def _initializer(name: str, data_type: int, dims: tuple[int, ...], raw: bytes) -> bytes:
    payload = b"".join(_encode_varint(_TENSOR_DIMS << 3) + _encode_varint(dim) for dim in dims)
    payload += _encode_varint(_TENSOR_TYPE << 3) + _encode_varint(data_type)
    payload += _len_field(_TENSOR_NAME, name.encode()) + _len_field(_TENSOR_RAW, raw)
    return _len_field(_GRAPH_INITIALIZER, payload)


_TO_FLOAT = _int_attribute_field("to", _FLOAT)


def _initializer_dims(data: memoryview) -> tuple[str, tuple[int, ...]]:
    name, dims = "", []
    for number, wire, value, _ in _fields(data):
        if number == _TENSOR_NAME and isinstance(value, memoryview):
            name = bytes(value).decode()
        elif number == _TENSOR_DIMS and wire == _VARINT and isinstance(value, int):
            dims.append(value)
        elif number == _TENSOR_DIMS and isinstance(value, memoryview):  # packed
            pos = 0
            while pos < len(value):
                dim, pos = _varint(value, pos)
                dims.append(dim)
    return name, tuple(dims)


def gather_before_dequantizing(model: bytes) -> tuple[bytes, int]:
    """``model`` with each per-row-quantized table gathered before it is dequantized, and
    the number of tables rewritten (0: the bytes come back unchanged). Raises
    ``GraphNotRecognized`` for bytes that are no ModelProto."""
    return _rewritten(model, lambda nodes, shapes: (_gathered_tables(nodes, shapes), b""))


def multiply_in_int8(model: bytes, outliers: Mapping[str, Sequence[int]]) -> tuple[bytes, int]:
    """``model`` with each product by a per-column-quantized matrix named in ``outliers``
    (its int8 initializer's name: the input channels multiplied in float) done in int8, and
    the number of products rewritten (0: the bytes come back unchanged). Raises
    ``GraphNotRecognized`` for bytes that are no ModelProto."""
    return _rewritten(model, lambda nodes, shapes: _int8_products(nodes, shapes, outliers), _MICROSOFT)


_Rule = Callable[[list["_Node"], dict[str, tuple[int, ...]]], tuple[dict[int, bytes], bytes]]


def _rewritten(model: bytes, rule: _Rule, domain: str = "") -> tuple[bytes, int]:
    """``model`` with the nodes ``rule`` replaces (per node id, what replaces it: several
    nodes, or nothing) and the initializers it adds, and how many patterns it rewrote (a
    replacement that is not empty counts one); ``domain``: the operator set the new nodes
    use, imported by the model if it was not."""
    data = memoryview(model)
    graph = next((v for n, _, v, _ in _fields(data) if n == _MODEL_GRAPH and isinstance(v, memoryview)), None)
    if graph is None:
        raise GraphNotRecognized("the model has no graph")
    nodes: list[_Node] = []
    shapes: dict[str, tuple[int, ...]] = {}
    graph_fields = list(_fields(graph))
    for number, _, value, encoded in graph_fields:
        if number == _GRAPH_NODE and isinstance(value, memoryview):
            nodes.append(_Node.decode(value, encoded))
        elif number == _GRAPH_INITIALIZER and isinstance(value, memoryview):
            name, dims = _initializer_dims(value)
            shapes[name] = dims
    replaced, initializers = rule(nodes, shapes)
    if not replaced:
        return model, 0
    graph_parts: list[bytes | memoryview] = []  # views of ``model``: its weights are copied once, by the join
    for number, _, _, encoded in graph_fields:
        if number != _GRAPH_NODE:
            graph_parts.append(encoded)
        elif nodes:
            graph_parts += [replaced.get(id(node), node.encoded) for node in nodes]
            nodes = []
    graph_parts.append(initializers)
    parts: list[bytes | memoryview] = []
    imported = set()
    for number, _, value, encoded in _fields(data):
        if number == _MODEL_GRAPH:
            size = sum(len(part) for part in graph_parts)
            parts += [_encode_varint(_MODEL_GRAPH << 3 | _LEN) + _encode_varint(size), *graph_parts]
        else:
            parts.append(encoded)
            if number == _MODEL_OPSET and isinstance(value, memoryview):
                imported |= {bytes(v).decode() for n, _, v, _ in _fields(value) if n == _OPSET_DOMAIN and isinstance(v, memoryview)}
    if domain and domain not in imported:
        opset = _len_field(_OPSET_DOMAIN, domain.encode()) + _encode_varint(_OPSET_VERSION << 3) + _encode_varint(1)
        parts.append(_len_field(_MODEL_OPSET, opset))
    return b"".join(parts), sum(1 for encoded in replaced.values() if encoded)


def _dequantized(name: str, producer: dict[str, _Node], uses: Counter[str]) -> tuple[_Node, _Node, str, str] | None:
    """When ``name`` is ``Mul(Cast(q) to float, s)`` read by one node only (a weight
    dequantized in the graph): the Cast, the Mul, ``q`` and ``s``."""
    mul = producer.get(name)
    if mul is None or mul.op != "Mul" or mul.domain or len(mul.inputs) != 2 or uses[name] != 1:
        return None
    cast_output, scale = mul.inputs
    cast = producer.get(cast_output)
    if cast is None or cast.op != "Cast" or cast.domain or len(cast.inputs) != 1 or uses[cast_output] != 1:
        return None
    if _int_attribute(cast, b"to", -1) != _FLOAT:
        return None
    return cast, mul, cast.inputs[0], scale


def _gathered_tables(nodes: list[_Node], shapes: dict[str, tuple[int, ...]]) -> dict[int, bytes]:
    """Per node id, what replaces it: the gather pattern's Gather becomes four nodes, its
    Cast and Mul nothing."""
    producer = {output: node for node in nodes for output in node.outputs}
    uses = Counter(name for node in nodes for name in node.inputs)
    replaced: dict[int, bytes] = {}
    for gather in nodes:
        if gather.op != "Gather" or gather.domain or len(gather.inputs) != 2:
            continue
        table, ids = gather.inputs
        found = _dequantized(table, producer, uses)
        if found is None or _int_attribute(gather, b"axis", 0) != 0:
            continue
        cast, mul, quantized, scale = found
        rows = shapes.get(quantized, ())
        if not rows or shapes.get(scale) != (rows[0], 1):
            continue  # not a table in the initializers with one scale per row
        (out,) = gather.outputs
        replaced[id(cast)] = replaced[id(mul)] = b""
        replaced[id(gather)] = b"".join([
            _node("Gather", [quantized, ids], out + "/rows_int8", gather.attributes),
            _node("Cast", [out + "/rows_int8"], out + "/rows", (_TO_FLOAT,)),
            _node("Gather", [scale, ids], out + "/row_scales", gather.attributes),
            _node("Mul", [out + "/rows", out + "/row_scales"], out),
        ])
    return replaced


def _int8_products(nodes: list[_Node], shapes: dict[str, tuple[int, ...]],
                   outliers: Mapping[str, Sequence[int]]) -> tuple[dict[int, bytes], bytes]:
    """Per node id, what replaces it, and the initializers added: the product's MatMul
    becomes the int8 product of the channels kept plus the float product of the others,
    its Cast and Mul nothing. The channels' split of an input (a mask and a gather) is
    built once however many products read it (a layer's query, key and value)."""
    producer = {output: node for node in nodes for output in node.outputs}
    uses = Counter(name for node in nodes for name in node.inputs)
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
            replaced[id(product)] = _node("DynamicQuantizeMatMul", [activations, quantized, scale], out, domain=_MICROSOFT)
            continue
        split = b""  # the input's split, before the first product that reads it
        if (activations, channels) not in splits:
            kept, taken, indexes = f"{out}/kept", f"{out}/taken", f"{out}/channels"
            keep = [0.0 if c in channels else 1.0 for c in range(matrix[0])]
            initializers += [_initializer(f"{out}/keep", _FLOAT, (matrix[0],), struct.pack(f"<{matrix[0]}f", *keep)),
                             _initializer(indexes, _INT64, (len(channels),), struct.pack(f"<{len(channels)}q", *channels))]
            split = _node("Mul", [activations, f"{out}/keep"], kept) + _node(
                "Gather", [activations, indexes], taken, (_int_attribute_field("axis", -1),))
            splits[activations, channels] = (kept, taken, indexes)
        kept, taken, indexes = splits[activations, channels]
        replaced[id(product)] = split + b"".join([
            _node("DynamicQuantizeMatMul", [kept, quantized, scale], out + "/int8", domain=_MICROSOFT),
            _node("Gather", [quantized, indexes], out + "/rows_int8"),
            _node("Cast", [out + "/rows_int8"], out + "/rows", (_TO_FLOAT,)),
            _node("Mul", [out + "/rows", scale], out + "/rows_float"),
            _node("MatMul", [taken, out + "/rows_float"], out + "/float"),
            _node("Add", [out + "/int8", out + "/float"], out),
        ])
    return replaced, b"".join(initializers)


def _int_attribute(node: _Node, name: bytes, default: int) -> int:
    """The node's integer attribute ``name`` (a negative one reads as a huge number)."""
    for attribute in node.attributes:
        fields = {number: value for number, _, value, _ in _fields(memoryview(attribute))}
        found = fields.get(_ATTR_NAME)
        if isinstance(found, memoryview) and bytes(found) == name:
            value = fields.get(_ATTR_INT)
            return value if isinstance(value, int) else -1
    return default
