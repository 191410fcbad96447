"""The method table: every ``memory.*`` method's module, in the order MCP lists them as
tools. Importing it imports the application (``entrypoints.methods.method_table()`` does, on first
use). To add a method, import its module below and list it in ``_MODULES``."""

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
