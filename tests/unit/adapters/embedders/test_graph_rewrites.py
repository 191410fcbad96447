"""The graph rewrites on small graphs written by hand: what they change, what they leave, and
that onnxruntime computes the same function before and after (within the rounding of the
int8 products' inputs to 256 levels)."""

from __future__ import annotations

import math

import numpy as np
import onnxruntime
import pytest

from local_mcp_memory.adapters.embedders.gelu import fuse_gelu
from local_mcp_memory.adapters.embedders.onnx_wire import (
    FLOAT,
    GRAPH_INITIALIZER,
    INT8,
    MICROSOFT,
    MODEL_GRAPH,
    MODEL_OPSET,
    TO_FLOAT,
    Rewrite,
    encode_varint,
    fields,
    initializer,
    initializer_header,
    len_field,
    node,
    rewritten,
)
from local_mcp_memory.adapters.embedders.products import int8_dot_products
from local_mcp_memory.adapters.embedders.quantized_rows import multiply_in_int8

# weights given as uint8 sum exactly on every CPU; as int8 only where it has int8 dot products
# (without them onnxruntime adds pairs of uint8 x int8 products in 16 bits, which saturate here)
UNSIGNED = [True, *([False] if int8_dot_products() else [])]
WIDTH = 8  # the input's channels
OUTLIER = 3  # the channel that carries values thirty times the others'


def _value_info(name: str, dims: tuple[int | str, ...]) -> bytes:
    """A ValueInfoProto of a float tensor: ``dims`` are sizes or names of free sizes."""
    shape = b"".join(
        len_field(1, encode_varint(1 << 3) + encode_varint(d) if isinstance(d, int) else len_field(2, d.encode()))
        for d in dims
    )
    tensor_type = encode_varint(1 << 3) + encode_varint(FLOAT) + len_field(2, shape)
    return len_field(1, name.encode()) + len_field(2, len_field(1, tensor_type))


def _model(nodes: list[bytes], initializers: list[bytes], inputs: dict[str, tuple[int | str, ...]],
           outputs: dict[str, tuple[int | str, ...]], opset: int = 17) -> bytes:
    graph = b"".join(nodes) + len_field(2, b"g") + b"".join(initializers)
    graph += b"".join(len_field(11, _value_info(name, dims)) for name, dims in inputs.items())
    graph += b"".join(len_field(12, _value_info(name, dims)) for name, dims in outputs.items())
    imported = len_field(1, b"") + encode_varint(2 << 3) + encode_varint(opset)
    return encode_varint(1 << 3) + encode_varint(8) + len_field(8, imported) + len_field(MODEL_GRAPH, graph)


def _opsets(model: bytes) -> dict[str, int]:
    """The model's operator sets: per domain ("" is ONNX's own), its version."""
    found = {}
    for number, _, value, _ in fields(memoryview(model)):
        if number == MODEL_OPSET:
            entry = {n: v for n, _, v, _ in fields(value)}
            found[bytes(entry.get(1, b"")).decode()] = entry[2]
    return found


def _floats(name: str, values: np.ndarray) -> bytes:
    return initializer(name, FLOAT, values.shape, values.astype("<f4").tobytes())


def _products(columns: list[int], biased: bool = True, seed: int = 7, opset: int = 17) -> bytes:
    """A graph of one input ``a`` and a product per entry of ``columns``, as the pinned export
    writes them: ``Add(MatMul(a, Mul(Cast(q), s)), b)``, ``q`` int8 with a scale per column."""
    rng = np.random.default_rng(seed)
    nodes, initializers, outputs = [], [], {}
    for i, width in enumerate(columns):
        quantized = rng.integers(-127, 128, size=(WIDTH, width), dtype=np.int8)
        initializers += [initializer(f"q{i}", INT8, quantized.shape, quantized.tobytes()),
                         _floats(f"s{i}", rng.uniform(0.001, 0.01, size=width)),
                         _floats(f"b{i}", rng.normal(size=width))]
        product = f"product{i}" if biased else f"out{i}"
        nodes += [node("Cast", [f"q{i}"], f"q{i}/float", (TO_FLOAT,)),
                  node("Mul", [f"q{i}/float", f"s{i}"], f"w{i}"),
                  node("MatMul", ["a", f"w{i}"], product)]
        if biased:
            nodes.append(node("Add", [product, f"b{i}"], f"out{i}"))
        outputs[f"out{i}"] = (1, "tokens", width)
    return _model(nodes, initializers, {"a": (1, "tokens", WIDTH)}, outputs, opset)


def _run(model: bytes, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    session = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def _activations(tokens: int = 11) -> dict[str, np.ndarray]:
    a = np.random.default_rng(3).normal(size=(1, tokens, WIDTH)).astype(np.float32)
    a[..., OUTLIER] *= 30.0
    return {"a": a}


def _initializer_names(model: bytes) -> set[str]:
    graph = next(v for n, _, v, _ in fields(memoryview(model)) if n == MODEL_GRAPH)
    return {initializer_header(v)[0] for n, _, v, _ in fields(graph) if n == GRAPH_INITIALIZER}


def _close(mine: list[np.ndarray], theirs: list[np.ndarray]) -> None:
    """Within what rounding the input to 256 levels costs (its outlier channel taken out)."""
    assert len(mine) == len(theirs)
    for ours, reference in zip(mine, theirs):
        assert ours.shape == reference.shape
        np.testing.assert_allclose(ours, reference, atol=0.02 * float(np.abs(reference).max()))


@pytest.mark.parametrize("unsigned", UNSIGNED)
def test_products_of_one_input_become_one_product_with_the_biases_added_in(unsigned: bool) -> None:
    model = _products([4, 4, 4])
    rewritten, count = multiply_in_int8(model, {f"q{i}": (OUTLIER,) for i in range(3)}, unsigned=unsigned)
    assert count == 3
    assert rewritten.count(b"DynamicQuantizeMatMul") == 1 and rewritten.count(b"\x22\x05Split") == 1
    assert rewritten.count(b"\x22\x03Add") == 1  # the int8 and float parts; the biases are in the product
    assert not {"q0", "q1", "q2", "s0", "b2"} & _initializer_names(rewritten)  # side by side now
    feeds = _activations()
    _close(_run(rewritten, feeds), _run(model, feeds))
    swapped = multiply_in_int8(_products([4, 4, 4], seed=8), {f"q{i}": (OUTLIER,) for i in range(3)}, unsigned=unsigned)[0]
    with pytest.raises(AssertionError):  # the comparison sees a product that is not this one
        _close(_run(swapped, feeds), _run(model, feeds))


@pytest.mark.parametrize("unsigned", UNSIGNED)
@pytest.mark.parametrize("opset", [17, 23])
def test_the_split_of_a_merged_product_reads_alike_in_the_operator_sets_before_and_after_18(opset: int, unsigned: bool) -> None:
    """Operator set 18 made ``Split`` without its parts' widths an error; the attention's
    rewrite raises the model to 23 before the products are rewritten."""
    model = _products([4, 4, 4], opset=opset)
    merged = multiply_in_int8(model, {f"q{i}": (OUTLIER,) for i in range(3)}, unsigned=unsigned)[0]
    assert merged.count(b"\x22\x05Split") == 1 and _opsets(merged) == {"": opset, MICROSOFT: 1}
    feeds = _activations()
    _close(_run(merged, feeds), _run(model, feeds))


@pytest.mark.parametrize(("before", "domain", "version", "after"), [
    ({"": 17}, "", 23, {"": 23}),  # raised
    ({"": 24}, "", 23, {"": 24}),  # a newer one kept
    ({"": 17}, MICROSOFT, 1, {"": 17, MICROSOFT: 1}),  # imported
])
def test_a_rewrite_imports_the_operator_set_its_nodes_need_at_their_version_at_least(
    before: dict[str, int], domain: str, version: int, after: dict[str, int]
) -> None:
    model = _gelu(opset=before[""])
    assert _opsets(model) == before
    renamed, count = rewritten(model, lambda nodes, known: Rewrite({id(nodes[0]): node("Div", ["x", "root"], "scaled")}),
                               domain, version)
    assert count == 1 and _opsets(renamed) == after
    feeds = {"x": np.linspace(-6.0, 6.0, 60, dtype=np.float32).reshape(10, 6)}
    np.testing.assert_array_equal(_run(renamed, feeds)[0], _run(model, feeds)[0])  # still a model onnxruntime runs


@pytest.mark.parametrize(
    ("columns", "outliers", "biased", "together", "products", "adds"),
    [
        ([4, 5], {"q0": (OUTLIER,), "q1": (OUTLIER,)}, True, True, 2, 2),  # as many columns each, or apart
        ([4, 4], {"q0": (OUTLIER,), "q1": (OUTLIER, 5)}, True, True, 2, 2),  # other channels in float: apart
        ([4, 4], {"q0": (OUTLIER,), "q1": (OUTLIER,)}, False, True, 2, 2),  # no bias to add: apart
        ([4, 4], {"q0": (OUTLIER,)}, True, True, 1, 2),  # a product not named stays float, its bias after
        ([4, 4], {"q0": (OUTLIER,), "q1": (OUTLIER,)}, True, False, 2, 4),  # asked to keep them apart
    ],
)
@pytest.mark.parametrize("unsigned", UNSIGNED)
def test_products_that_cannot_be_one_are_each_multiplied_alone(
    columns: list[int], outliers: dict[str, tuple[int, ...]], biased: bool, together: bool, products: int, adds: int,
    unsigned: bool,
) -> None:
    model = _products(columns, biased)
    rewritten, count = multiply_in_int8(model, outliers, together, unsigned)
    assert count == products and rewritten.count(b"DynamicQuantizeMatMul") == products
    assert b"\x22\x05Split" not in rewritten
    # each int8 product with channels in float adds its two parts; a bias added after is one Add more
    assert rewritten.count(b"\x22\x03Add") == adds
    feeds = _activations()
    _close(_run(rewritten, feeds), _run(model, feeds))


def _gelu(half: float = 0.5, root_is_input: bool = False, opset: int = 17) -> bytes:
    """``y = x * (half * (1 + erf(x / sqrt 2)))``, as the pinned export writes a GELU."""
    initializers = [_floats("root", np.array(math.sqrt(2.0))), _floats("one", np.array(1.0)),
                    _floats("half", np.array(half))]
    nodes = [node("Div", ["x", "root"], "scaled"), node("Erf", ["scaled"], "erf"), node("Add", ["erf", "one"], "plus"),
             node("Mul", ["half", "plus"], "halved"), node("Mul", ["x", "halved"], "y")]
    inputs: dict[str, tuple[int | str, ...]] = {"x": ("tokens", 6)}
    if root_is_input:
        inputs["root"] = ()
    return _model(nodes, initializers, inputs, {"y": ("tokens", 6)}, opset)


def test_a_gelu_spelled_out_becomes_one_operator_of_the_same_values() -> None:
    model = _gelu()
    fused, count = fuse_gelu(model)
    assert count == 1 and fused.count(b"\x22\x04Gelu") == 1 and b"\x22\x03Erf" not in fused
    assert not {"root", "one", "half"} & _initializer_names(fused)  # read by the old nodes only
    feeds = {"x": np.linspace(-6.0, 6.0, 60, dtype=np.float32).reshape(10, 6)}
    np.testing.assert_allclose(_run(fused, feeds)[0], _run(model, feeds)[0], atol=1e-6)
    assert fuse_gelu(fused) == (fused, 0)


def test_a_graph_that_is_no_gelu_is_left_alone_and_a_graph_input_is_kept() -> None:
    other = _gelu(half=0.6)
    assert fuse_gelu(other) == (other, 0)
    fused, count = fuse_gelu(_gelu(root_is_input=True))
    assert count == 1 and "root" in _initializer_names(fused)  # a caller may still feed it
