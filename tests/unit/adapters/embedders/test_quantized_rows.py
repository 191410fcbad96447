"""The graph rewrites read protobuf bytes they did not write: damaged bytes are an error
that says what is wrong, never a crash or a silently different graph."""

from __future__ import annotations

import pytest

from local_mcp_memory.adapters.embedders.attention import fuse_attention
from local_mcp_memory.adapters.embedders.gelu import fuse_gelu
from local_mcp_memory.adapters.embedders.onnx_wire import GraphNotRecognized
from local_mcp_memory.adapters.embedders.quantized_rows import gather_before_dequantizing, multiply_in_int8

REWRITES = {
    "tables": gather_before_dequantizing,
    "products": lambda model: multiply_in_int8(model, {"w": (0,)}),
    "attention": lambda model: fuse_attention(model, 12),
    "gelu": fuse_gelu,
}


@pytest.mark.parametrize(
    ("model", "reason"),
    [
        (b"", "has no graph"),
        (b"\x08\x07", "has no graph"),  # ir_version only
        (b"\x3a\x10\x0a", "past the end"),  # a graph of 16 bytes in 1
        (b"\x08\xff\xff", "past the end"),  # a varint cut short
        (b"\x0b\x00", "wire type 3"),  # groups are not ONNX
        (b"\x3a\x03\x0a\x01\x22", "past the end"),  # a node cut short inside the graph
    ],
)
@pytest.mark.parametrize("rewrite", REWRITES)
def test_damaged_model_bytes_are_refused_with_the_reason(model: bytes, reason: str, rewrite: str) -> None:
    with pytest.raises(GraphNotRecognized, match=reason):
        REWRITES[rewrite](model)


def test_a_graph_without_quantized_tables_comes_back_unchanged() -> None:
    node = b"\x0a\x01x" + b"\x12\x01y" + b"\x22\x08Identity"  # Identity(x) -> y
    model = b"\x08\x07" + b"\x3a" + bytes([len(node) + 2]) + b"\x0a" + bytes([len(node)]) + node
    assert gather_before_dequantizing(model) == (model, 0)
    assert multiply_in_int8(model, {"x": ()}) == (model, 0)
    assert fuse_attention(model, 12) == (model, 0)
    assert fuse_gelu(model) == (model, 0)
