"""The package layout and a build hook; everything else about the package lives in pyproject.toml.

The design's four folders stay at the top of the repository (``domain/``, ``application/``,
``adapters/``, ``entrypoints/``) and are installed as subpackages of one package,
``local_mcp_memory``, so the wheel adds a single name to site-packages. The build hook bakes the
default transport into the package (see entrypoints/build_defaults.py).
"""

import os
import pathlib

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

PACKAGE = "local_mcp_memory"
LAYERS = ("domain", "application", "adapters", "entrypoints")
TRANSPORTS = ("stdio", "http")
SOURCE = pathlib.Path(__file__).parent / "entrypoints" / "build_defaults.py"


class BuildWithDefaults(build_py):
    """Writes build_defaults.py afresh on every build, so a reused build directory never
    keeps the transport of an earlier build."""

    def run(self) -> None:
        super().run()
        transport = os.environ.get("MCP_MEMORY_DEFAULT_TRANSPORT") or "stdio"
        if transport not in TRANSPORTS:
            raise SystemExit(f"MCP_MEMORY_DEFAULT_TRANSPORT must be one of {TRANSPORTS}, got {transport!r}")
        target = pathlib.Path(self.build_lib, PACKAGE, "entrypoints", "build_defaults.py")
        if not target.parent.is_dir():  # an editable install builds no package files: the source is read
            return
        baked = SOURCE.read_text(encoding="utf-8").replace('DEFAULT_TRANSPORT = "stdio"', f"DEFAULT_TRANSPORT = {transport!r}")
        target.write_text(baked, encoding="utf-8")


setup(
    packages=[f"{PACKAGE}.{name}" for name in find_packages(include=[f"{layer}*" for layer in LAYERS])],
    package_dir={f"{PACKAGE}.{layer}": layer for layer in LAYERS},
    cmdclass={"build_py": BuildWithDefaults},
)
