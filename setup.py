"""Build hook: bake the default transport into the package (see entrypoints/build_defaults.py).

Everything else about the package lives in pyproject.toml.
"""

import os
import pathlib

from setuptools import setup
from setuptools.command.build_py import build_py

TRANSPORTS = ("stdio", "http")


class BuildWithDefaults(build_py):
    def run(self) -> None:
        super().run()
        transport = os.environ.get("MCP_MEMORY_DEFAULT_TRANSPORT")
        if not transport:
            return
        if transport not in TRANSPORTS:
            raise SystemExit(f"MCP_MEMORY_DEFAULT_TRANSPORT must be one of {TRANSPORTS}, got {transport!r}")
        target = pathlib.Path(self.build_lib, "entrypoints", "build_defaults.py")
        source = target.read_text(encoding="utf-8")
        baked = source.replace('DEFAULT_TRANSPORT = "stdio"', f"DEFAULT_TRANSPORT = {transport!r}")
        target.write_text(baked, encoding="utf-8")


setup(cmdclass={"build_py": BuildWithDefaults})
