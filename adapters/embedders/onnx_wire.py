"""The protobuf wire format of an ONNX model, read and written directly: only the few fields
a graph rewrite at load time needs (nodes, their inputs, outputs, operators and attributes;
initializers' names, shapes, types and raw bytes; the names of the graph's inputs and value
information; the operator sets), so no ``onnx`` package is needed, and the bytes of weights
are copied, never decoded. The rewrites themselves are ``quantized_rows`` (int8 tables and
products), ``attention`` (one operator per attention block) and ``gelu`` (one per GELU): each
is a ``Rule`` that ``rewritten`` applies to a serialized ``ModelProto``.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator

import attrs

VARINT, FIXED64, LEN, FIXED32 = 0, 1, 2, 5
# ModelProto.graph, .opset_import; GraphProto.node, .initializer; NodeProto fields;
# TensorProto.dims, .data_type, .name, .raw_data; OperatorSetIdProto.domain, .version
MODEL_GRAPH, MODEL_OPSET, GRAPH_NODE, GRAPH_INITIALIZER, GRAPH_INPUT, GRAPH_VALUE_INFO = 7, 8, 1, 5, 11, 13
VALUE_INFO_NAME = 1  # ValueInfoProto.name
NODE_INPUT, NODE_OUTPUT, NODE_NAME, NODE_OP, NODE_ATTRIBUTE, NODE_DOMAIN = 1, 2, 3, 4, 5, 7
TENSOR_DIMS, TENSOR_TYPE, TENSOR_NAME, TENSOR_RAW = 1, 2, 8, 9
OPSET_DOMAIN, OPSET_VERSION = 1, 2
ATTR_NAME, ATTR_FLOAT, ATTR_INT, ATTR_TYPE = 1, 2, 3, 20  # AttributeProto.name, .f, .i, .type
ATTR_FLOAT_TYPE, ATTR_INT_TYPE = 1, 2  # AttributeProto.AttributeType
FLOAT, UINT8, INT8, INT32, INT64, BOOL = 1, 2, 3, 6, 7, 9  # TensorProto.DataType
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


def node(op: str, inputs: list[str], output: str | list[str], attributes: tuple[bytes, ...] = (), domain: str = "") -> bytes:
    """A node field of a graph, named after its (first) output."""
    outputs = [output] if isinstance(output, str) else output
    payload = b"".join(len_field(NODE_INPUT, name.encode()) for name in inputs)
    payload += b"".join(len_field(NODE_OUTPUT, name.encode()) for name in outputs) + len_field(NODE_NAME, outputs[0].encode())
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


@attrs.frozen
class Tensor:
    """What a rule may read of an initializer: its shape, its data type, and its raw bytes
    when it holds them there (a view of the model's bytes, never copied)."""

    shape: tuple[int, ...]
    data_type: int
    raw: memoryview | None

    @property
    def scalar(self) -> float | None:
        """Its value when it is one float held as raw bytes."""
        if self.data_type == FLOAT and self.raw is not None and len(self.raw) == 4:
            return float(struct.unpack("<f", self.raw)[0])
        return None


def initializer_header(data: memoryview) -> tuple[str, Tensor]:
    """An initializer's name and what a rule may read of it."""
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
    return name, Tensor(tuple(dims), data_type, raw)


@attrs.frozen
class Initializers:
    """What a rule may read of the graph's initializers, by name."""

    tensors: dict[str, Tensor]

    def shape(self, name: str) -> tuple[int, ...] | None:
        found = self.tensors.get(name)
        return None if found is None else found.shape

    def scalar(self, name: str) -> float | None:
        found = self.tensors.get(name)
        return None if found is None else found.scalar


@attrs.frozen
class Rewrite:
    """What a rule does to a graph: per node id, what replaces the node (several nodes, or
    nothing); the initializers it adds; and how many patterns it rewrote (by default, how
    many replacements are not empty)."""

    replaced: dict[int, bytes]
    initializers: bytes = b""
    count: int | None = None


Rule = Callable[[list[Node], Initializers], Rewrite]


def rewritten(model: bytes, rule: Rule, domain: str = "", version: int = 1) -> tuple[bytes, int]:
    """``model`` with the nodes ``rule`` replaces and the initializers it adds, and how many
    patterns it rewrote; initializers only the replaced nodes read go with them (not one
    that is a graph input too); ``domain`` and ``version``: the operator set the new nodes
    use, imported by the model at that version at least ("" is ONNX's own: raising it is
    the caller's to check, for the operators the model already holds)."""
    data = memoryview(model)
    graph = next((v for n, _, v, _ in fields(data) if n == MODEL_GRAPH and isinstance(v, memoryview)), None)
    if graph is None:
        raise GraphNotRecognized("the model has no graph")
    nodes: list[Node] = []
    known = Initializers({})
    graph_fields = list(fields(graph))
    names: dict[int, str] = {}  # per graph field that is an initializer, its name
    for at, (number, _, value, encoded) in enumerate(graph_fields):
        if number == GRAPH_NODE and isinstance(value, memoryview):
            nodes.append(Node.decode(value, encoded))
        elif number == GRAPH_INITIALIZER and isinstance(value, memoryview):
            name, tensor = initializer_header(value)
            names[at], known.tensors[name] = name, tensor
    rewrite = rule(nodes, known)
    replaced = rewrite.replaced
    if not replaced:
        return model, 0
    unread = _unread_initializers(nodes, replaced, graph_fields)
    graph_parts: list[bytes | memoryview] = []  # views of ``model``: its weights are copied once, by the join
    for at, (number, _, value, encoded) in enumerate(graph_fields):
        if number == GRAPH_NODE:
            if nodes:
                graph_parts += [replaced.get(id(found), found.encoded) for found in nodes]
                nodes = []
        elif number == GRAPH_INITIALIZER:
            if names.get(at) not in unread:
                graph_parts.append(encoded)
        elif number != GRAPH_VALUE_INFO or not isinstance(value, memoryview) or _value_name(value) not in unread:
            graph_parts.append(encoded)
    graph_parts.append(rewrite.initializers)
    parts: list[bytes | memoryview] = []
    imported = False
    for number, _, value, encoded in fields(data):
        if number == MODEL_GRAPH:
            size = sum(len(part) for part in graph_parts)
            parts += [encode_varint(MODEL_GRAPH << 3 | LEN) + encode_varint(size), *graph_parts]
        elif number == MODEL_OPSET and isinstance(value, memoryview) and (found := _opset(value))[0] == domain:
            imported = True
            parts.append(encoded if found[1] >= version else _opset_field(domain, version))
        else:
            parts.append(encoded)
    if not imported:
        parts.append(_opset_field(domain, version))
    count = rewrite.count if rewrite.count is not None else sum(1 for encoded in replaced.values() if encoded)
    return b"".join(parts), count


def _opset(entry: memoryview) -> tuple[str, int]:
    """The domain and version of an OperatorSetIdProto (an absent domain is ONNX's own, "")."""
    domain, version = "", 0
    for number, _, value, _ in fields(entry):
        if number == OPSET_DOMAIN and isinstance(value, memoryview):
            domain = bytes(value).decode()
        elif number == OPSET_VERSION and isinstance(value, int):
            version = value
    return domain, version


def _opset_field(domain: str, version: int) -> bytes:
    return len_field(MODEL_OPSET, len_field(OPSET_DOMAIN, domain.encode()) + encode_varint(OPSET_VERSION << 3) + encode_varint(version))


def _unread_initializers(nodes: list[Node], replaced: dict[int, bytes], graph_fields: list) -> set[str]:
    """The names that some node of ``nodes`` read and none reads once ``replaced`` is in
    place, less the graph's inputs."""
    before = {name for found in nodes for name in found.inputs}
    after = {name for found in nodes if id(found) not in replaced for name in found.inputs}
    for encoded in replaced.values():
        for number, _, value, whole in fields(memoryview(encoded)):
            if number == GRAPH_NODE and isinstance(value, memoryview):
                after.update(Node.decode(value, whole).inputs)
    inputs = {_value_name(v) for n, _, v, _ in graph_fields if n == GRAPH_INPUT and isinstance(v, memoryview)}
    return before - after - inputs


def _value_name(value: memoryview) -> str:
    """The name of the tensor a ValueInfoProto (a graph's input, output or value information) describes."""
    return next((bytes(v).decode() for n, _, v, _ in fields(value) if n == VALUE_INFO_NAME and isinstance(v, memoryview)), "")


def int_attribute(found: Node, name: bytes, default: int) -> int:
    """The node's integer attribute ``name`` (a negative one reads as a huge number)."""
    for attribute in found.attributes:
        parts = {number: value for number, _, value, _ in fields(memoryview(attribute))}
        named = parts.get(ATTR_NAME)
        if isinstance(named, memoryview) and bytes(named) == name:
            value = parts.get(ATTR_INT)
            return value if isinstance(value, int) else -1
    return default
