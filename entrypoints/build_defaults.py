"""Defaults baked in when the package is built.

Packagers change them without editing source: ``MCP_MEMORY_DEFAULT_TRANSPORT=http`` in the
environment of a wheel build (``pip wheel .``, ``python -m build``) rewrites this module in
the built package (see ``setup.py``). ``memory.get_config`` reports the value in force.
"""

DEFAULT_TRANSPORT = "stdio"
