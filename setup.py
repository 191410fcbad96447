"""Build hook: bake the default transport into the package (see entrypoints/build_defaults.py).

Everything else about the package lives in pyproject.toml.
"""

import os
import pathlib

from setuptools import setup
from setuptools.command.build_py import build_py

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
        source = SOURCE.read_text(encoding="utf-8")
        baked = source.replace('DEFAULT_TRANSPORT = "stdio"', f"DEFAULT_TRANSPORT = {transport!r}")
        pathlib.Path(self.build_lib, "entrypoints", "build_defaults.py").write_text(baked, encoding="utf-8")


setup(cmdclass={"build_py": BuildWithDefaults})
