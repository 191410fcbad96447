"""The protobuf wire format of an ONNX model, read and written directly: only the few fields
a graph rewrite at load time needs (nodes, their inputs, outputs, operators and attributes;
initializers' names, shapes and raw bytes; the operator sets), so no ``onnx`` package is
needed, and the bytes of weights are copied, never decoded. The rewrites themselves are
``quantized_rows`` (int8 tables and products) and ``attention`` (one operator per attention
block): each is a ``Rule`` that ``rewritten`` applies to a serialized ``ModelProto``.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator

import attrs

VARINT, FIXED64, LEN, FIXED32 = 0, 1, 2, 5
# ModelProto.graph, .opset_import; GraphProto.node, .initializer; NodeProto fields;
# TensorProto.dims, .data_type, .name, .raw_data; OperatorSetIdProto.domain, .version
MODEL_GRAPH, MODEL_OPSET, GRAPH_NODE, GRAPH_INITIALIZER = 7, 8, 1, 5
NODE_INPUT, NODE_OUTPUT, NODE_NAME, NODE_OP, NODE_ATTRIBUTE, NODE_DOMAIN = 1, 2, 3, 4, 5, 7
TENSOR_DIMS, TENSOR_TYPE, TENSOR_NAME, TENSOR_RAW = 1, 2, 8, 9
OPSET_DOMAIN, OPSET_VERSION = 1, 2
ATTR_NAME, ATTR_FLOAT, ATTR_INT, ATTR_TYPE = 1, 2, 3, 20  # AttributeProto.name, .f, .i, .type
ATTR_FLOAT_TYPE, ATTR_INT_TYPE = 1, 2  # AttributeProto.AttributeType
FLOAT, INT32, INT64 = 1, 6, 7  # TensorProto.DataType
MICROSOFT = "com.microsoft"  # onnxruntime's own operators


class GraphNotRecognized(ValueError):
    """The bytes are no ModelProto this rewrite understands."""


def varint(data: memoryview, pos: int) -> tuple[int, int]:
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


def fields(data: memoryview) -> Iterator[tuple[int, int, int | memoryview, memoryview]]:
    """(field number, wire type, value, the field's whole encoding) of each field."""
    pos = 0
    while pos < len(data):
        start = pos
        key, pos = varint(data, pos)
        number, wire = key >> 3, key & 7
        value: int | memoryview
        if wire == VARINT:
            value, pos = varint(data, pos)
        elif wire == LEN:
            size, pos = varint(data, pos)
            if pos + size > len(data):
                raise GraphNotRecognized("a field runs past the end of its message")
            value, pos = data[pos : pos + size], pos + size
        elif wire in (FIXED64, FIXED32):
            size = 8 if wire == FIXED64 else 4
            value, pos = data[pos : pos + size], pos + size
        else:
            raise GraphNotRecognized(f"wire type {wire} is not used by ONNX")
        yield number, wire, value, data[start:pos]


def encode_varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def len_field(number: int, payload: bytes) -> bytes:
    return encode_varint(number << 3 | LEN) + encode_varint(len(payload)) + payload


@attrs.frozen
class Node:
    op: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    domain: str
    attributes: tuple[bytes, ...]
    encoded: bytes

    @classmethod
    def decode(cls, data: memoryview, encoded: memoryview) -> Node:
        parts: dict[int, list[str]] = {NODE_INPUT: [], NODE_OUTPUT: [], NODE_OP: [], NODE_DOMAIN: []}
        attributes = []
        for number, _, value, _ in fields(data):
            if number in parts and isinstance(value, memoryview):
                parts[number].append(bytes(value).decode())
            elif number == NODE_ATTRIBUTE and isinstance(value, memoryview):
                attributes.append(bytes(value))
        return cls("".join(parts[NODE_OP]), tuple(parts[NODE_INPUT]), tuple(parts[NODE_OUTPUT]),
                   "".join(parts[NODE_DOMAIN]), tuple(attributes), bytes(encoded))


def node(op: str, inputs: list[str], output: str, attributes: tuple[bytes, ...] = (), domain: str = "") -> bytes:
    payload = b"".join(len_field(NODE_INPUT, name.encode()) for name in inputs)
    payload += len_field(NODE_OUTPUT, output.encode()) + len_field(NODE_NAME, output.encode())
    payload += len_field(NODE_OP, op.encode())
    payload += b"".join(len_field(NODE_ATTRIBUTE, attribute) for attribute in attributes)
    if domain:
        payload += len_field(NODE_DOMAIN, domain.encode())
    return len_field(GRAPH_NODE, payload)


def int_attribute_field(name: str, value: int) -> bytes:
    return (len_field(ATTR_NAME, name.encode()) + encode_varint(ATTR_INT << 3) + encode_varint(value % (1 << 64))
            + encode_varint(ATTR_TYPE << 3) + encode_varint(ATTR_INT_TYPE))


def float_attribute_field(name: str, value: float) -> bytes:
    return (len_field(ATTR_NAME, name.encode()) + encode_varint(ATTR_FLOAT << 3 | FIXED32) + struct.pack("<f", value)
            + encode_varint(ATTR_TYPE << 3) + encode_varint(ATTR_FLOAT_TYPE))


def initializer(name: str, data_type: int, dims: tuple[int, ...], raw: bytes) -> bytes:
    payload = b"".join(encode_varint(TENSOR_DIMS << 3) + encode_varint(dim) for dim in dims)
    payload += encode_varint(TENSOR_TYPE << 3) + encode_varint(data_type)
    payload += len_field(TENSOR_NAME, name.encode()) + len_field(TENSOR_RAW, raw)
    return len_field(GRAPH_INITIALIZER, payload)


TO_FLOAT = int_attribute_field("to", FLOAT)


def initializer_header(data: memoryview) -> tuple[str, tuple[int, ...], float | None]:
    """An initializer's name, its shape, and its value when it is one float held as raw bytes."""
    name, dims, data_type, raw = "", [], 0, None
    for number, wire, value, _ in fields(data):
        if number == TENSOR_NAME and isinstance(value, memoryview):
            name = bytes(value).decode()
        elif number == TENSOR_DIMS and wire == VARINT and isinstance(value, int):
            dims.append(value)
        elif number == TENSOR_DIMS and isinstance(value, memoryview):  # packed
            pos = 0
            while pos < len(value):
                dim, pos = varint(value, pos)
                dims.append(dim)
        elif number == TENSOR_TYPE and isinstance(value, int):
            data_type = value
        elif number == TENSOR_RAW and isinstance(value, memoryview):
            raw = value
    scalar = struct.unpack("<f", raw)[0] if data_type == FLOAT and raw is not None and len(raw) == 4 else None
    return name, tuple(dims), scalar


@attrs.frozen
class Initializers:
    """What a rule may read of the graph's initializers: each one's shape, and the value of
    each that is a single float."""

    shapes: dict[str, tuple[int, ...]]
    scalars: dict[str, float]


Rule = Callable[[list[Node], Initializers], tuple[dict[int, bytes], bytes]]


def rewritten(model: bytes, rule: Rule, domain: str = "") -> tuple[bytes, int]:
    """``model`` with the nodes ``rule`` replaces (per node id, what replaces it: several
    nodes, or nothing) and the initializers it adds, and how many patterns it rewrote (a
    replacement that is not empty counts one); ``domain``: the operator set the new nodes
    use, imported by the model if it was not."""
    data = memoryview(model)
    graph = next((v for n, _, v, _ in fields(data) if n == MODEL_GRAPH and isinstance(v, memoryview)), None)
    if graph is None:
        raise GraphNotRecognized("the model has no graph")
    nodes: list[Node] = []
    known = Initializers({}, {})
    graph_fields = list(fields(graph))
    for number, _, value, encoded in graph_fields:
        if number == GRAPH_NODE and isinstance(value, memoryview):
            nodes.append(Node.decode(value, encoded))
        elif number == GRAPH_INITIALIZER and isinstance(value, memoryview):
            name, dims, scalar = initializer_header(value)
            known.shapes[name] = dims
            if scalar is not None:
                known.scalars[name] = scalar
    replaced, initializers = rule(nodes, known)
    if not replaced:
        return model, 0
    graph_parts: list[bytes | memoryview] = []  # views of ``model``: its weights are copied once, by the join
    for number, _, _, encoded in graph_fields:
        if number != GRAPH_NODE:
            graph_parts.append(encoded)
        elif nodes:
            graph_parts += [replaced.get(id(found), found.encoded) for found in nodes]
            nodes = []
    graph_parts.append(initializers)
    parts: list[bytes | memoryview] = []
    imported = set()
    for number, _, value, encoded in fields(data):
        if number == MODEL_GRAPH:
            size = sum(len(part) for part in graph_parts)
            parts += [encode_varint(MODEL_GRAPH << 3 | LEN) + encode_varint(size), *graph_parts]
        else:
            parts.append(encoded)
            if number == MODEL_OPSET and isinstance(value, memoryview):
                imported |= {bytes(v).decode() for n, _, v, _ in fields(value) if n == OPSET_DOMAIN and isinstance(v, memoryview)}
    if domain and domain not in imported:
        opset = len_field(OPSET_DOMAIN, domain.encode()) + encode_varint(OPSET_VERSION << 3) + encode_varint(1)
        parts.append(len_field(MODEL_OPSET, opset))
    return b"".join(parts), sum(1 for encoded in replaced.values() if encoded)


def int_attribute(found: Node, name: bytes, default: int) -> int:
    """The node's integer attribute ``name`` (a negative one reads as a huge number)."""
    for attribute in found.attributes:
        parts = {number: value for number, _, value, _ in fields(memoryview(attribute))}
        named = parts.get(ATTR_NAME)
        if isinstance(named, memoryview) and bytes(named) == name:
            value = parts.get(ATTR_INT)
            return value if isinstance(value, int) else -1
    return default
