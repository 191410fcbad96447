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
    instructions), which onnxruntime's uint8 x int8 products need to be fast and exact:
    without them its x86 kernels add pairs of products in 16 bits, which can saturate."""
    import platform
    import sys

    if sys.platform == "darwin":
        return platform.machine().lower() == "arm64"  # every Apple CPU since the M1 has them
    return bool(_flags(cpuinfo) & {"avx512_vnni", "avx_vnni", "amx_int8", "asimddp"})


def wide_int8_products(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Whether this x86 CPU has AVX2, with which onnxruntime's uint8 x uint8 kernels (each
    value widened to 16 bits, exact) still beat the float products where it has no int8 dot
    products: about 1.4x less CPU per text, 1.7x per query (docs/performance.md, "Matrix
    products in int8")."""
    import sys

    return sys.platform != "darwin" and "avx2" in _flags(cpuinfo)


def _flags(cpuinfo: Path) -> set[str]:
    """The CPU's flags (x86) or features (Arm) as ``/proc/cpuinfo`` lists them; none when it cannot be read."""
    try:
        with cpuinfo.open(encoding="utf-8", errors="replace") as info:
            return {word for line in info if line.startswith(("flags", "Features")) for word in line.split()}
    except OSError:
        return set()
