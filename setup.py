"""The package layout and a build hook; everything else about the package lives in pyproject.toml.

The design's four folders stay at the top of the repository (``domain/``, ``application/``,
``adapters/``, ``entrypoints/``) and are installed as subpackages of one package,
``local_mcp_memory``, so the wheel adds a single name to site-packages. The build hook bakes the
default transport into the package (see entrypoints/build_defaults.py).

Every folder of the layers is a package, with or without ``__init__.py`` (data folders such as
``adapters/embedders/minilm`` and the dashboard's assets have none), so ``include-package-data``
puts each file MANIFEST.in ships into the wheel.
"""

import os
import pathlib
import shutil

from setuptools import find_namespace_packages, setup
from setuptools.command.build_py import build_py

PACKAGE = "local_mcp_memory"
LAYERS = ("domain", "application", "adapters", "entrypoints")
TRANSPORTS = ("stdio", "http")
SOURCE = pathlib.Path(__file__).parent / "entrypoints" / "build_defaults.py"


class BuildWithDefaults(build_py):
    """Copies the package into a build directory emptied first, so a reused ``build/`` (pip,
    pipx and uv build a checkout in place) never ships a module deleted since, and writes
    build_defaults.py afresh, so it never keeps the transport of an earlier build."""

    def run(self) -> None:
        shutil.rmtree(pathlib.Path(self.build_lib, PACKAGE), ignore_errors=True)
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
    packages=[f"{PACKAGE}.{name}" for name in find_namespace_packages(include=[f"{layer}*" for layer in LAYERS], exclude=["*__pycache__*"])],
    package_dir={f"{PACKAGE}.{layer}": layer for layer in LAYERS},
    cmdclass={"build_py": BuildWithDefaults},
)
