"""The ``memory.*`` methods: one module each, listed here.

A method's module holds all the edge knows of it: the msgspec Struct of its params with
the decode to the use case's command, the view of its result, ``run`` (decode, call the
use case in ``application/``, encode), and what an agent reads of it as an MCP tool, all
declared as one ``METHOD`` (``entrypoints.methods.method.Method``). The pieces several
methods share (the Struct bases, the note views, the request field helpers) are in
``entrypoints.methods.wire``.

The JSON-RPC dispatcher serves ``METHODS`` as routes (``entrypoints.server``); the MCP
layer serves it as tools (``entrypoints.mcp.tools``), in this order. Importing this
package imports the application: both do it on first use, not at start-up.

To add a method: write its use case in ``application/`` and a module here that declares
its ``METHOD``, then import the module below and list it in ``_MODULES``.
"""

from __future__ import annotations

from local_mcp_memory.entrypoints.methods import (
    add_note,
    add_notes,
    context,
    delete,
    drop_namespace,
    get,
    get_config,
    get_global,
    link,
    list_recent,
    reembed,
    related,
    search,
    set_config,
    stats,
    unlink,
    update,
    upsert_global,
)
from local_mcp_memory.entrypoints.methods.method import Method

_MODULES = (
    add_note,
    add_notes,
    search,
    get,
    update,
    list_recent,
    context,
    get_config,
    set_config,
    upsert_global,
    get_global,
    delete,
    link,
    unlink,
    related,
    stats,
    reembed,
    drop_namespace,
)

METHODS: dict[str, Method] = {module.METHOD.name: module.METHOD for module in _MODULES}

__all__ = ["METHODS", "Method"]
