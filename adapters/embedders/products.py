"""How the local MiniLM model multiplies its matrices (``LocalOnnxEmbedder``'s ``products``),
and the environment variable that chooses it. Nothing heavy is imported here: ``serve``
checks the setting before it answers anything."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal

Products = Literal["auto", "int8", "float"]
LOCAL_PRODUCTS: tuple[Products, ...] = ("auto", "int8", "float")
LOCAL_PRODUCTS_VARIABLE = "MCP_MEMORY_LOCAL_PRODUCTS"


def local_products(environ: Mapping[str, str]) -> Products:
    """``MCP_MEMORY_LOCAL_PRODUCTS`` of ``environ`` (unset or empty: ``auto``); ``ValueError``
    naming the variable and its choices for any other value."""
    value = environ.get(LOCAL_PRODUCTS_VARIABLE) or "auto"
    for choice in LOCAL_PRODUCTS:
        if value == choice:
            return choice
    raise ValueError(f"{LOCAL_PRODUCTS_VARIABLE} must be one of {', '.join(LOCAL_PRODUCTS)} (got {value!r})")


def int8_dot_products(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Whether this CPU multiplies int8 vectors natively (x86 VNNI, Arm's dot product
    instructions), which onnxruntime's int8 products need to be fast and exact: without
    them its x86 kernels add pairs of products in 16 bits, which can saturate."""
    import platform
    import sys

    if sys.platform == "darwin":
        return platform.machine().lower() == "arm64"  # every Apple CPU since the M1 has them
    try:
        with cpuinfo.open(encoding="utf-8", errors="replace") as info:
            flags = {word for line in info if line.startswith(("flags", "Features")) for word in line.split()}
    except OSError:
        return False
    return bool(flags & {"avx512_vnni", "avx_vnni", "amx_int8", "asimddp"})
