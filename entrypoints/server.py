"""One dispatcher for every transport: the ``memory.*`` methods and the MCP methods.

Start-up is on the clock (an MCP client waits for ``initialize``), so the method table, and
the application behind it, is imported on the first request for a ``memory.*`` method or
the first tool listing (``entrypoints.methods``), not before ``initialize``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from local_mcp_memory.entrypoints import methods
from local_mcp_memory.entrypoints.mcp import McpOptions, mcp_routes
from local_mcp_memory.entrypoints.rpc.dispatcher import Dispatcher

if TYPE_CHECKING:
    from local_mcp_memory.application.services import Services


def build_dispatcher(services: Callable[[], Services], mcp: McpOptions | None = None) -> Dispatcher:
    """``mcp`` None: tool calls that leave projectId out use the project of the working
    directory (``composition.adapters.default_project``)."""
    if mcp is None:
        from local_mcp_memory.entrypoints.composition.adapters import default_project

        mcp = McpOptions(project=default_project(os.getcwd()))
    return Dispatcher(mcp_routes(services, mcp), methods.routes(services))
