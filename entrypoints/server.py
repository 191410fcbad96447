"""One dispatcher for every transport: the ``memory.*`` methods and the MCP methods.

Start-up is on the clock (an MCP client waits for ``initialize``), so the route table is
lazy: the ``memory.*`` methods, and the application behind them, are imported on the
first request for one of them or the first tool listing, not before ``initialize``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING

from local_mcp_memory.entrypoints.rpc.dispatcher import Dispatcher, Route, memory_route
from local_mcp_memory.entrypoints.mcp import McpOptions, mcp_routes
from local_mcp_memory.entrypoints.mcp.protocol import load_methods

if TYPE_CHECKING:
    from local_mcp_memory.application.services import Services

MEMORY_PREFIX = "memory."


def memory_routes(services: Callable[[], Services]) -> dict[str, Route]:
    return {name: memory_route(method, services) for name, method in load_methods().items()}


class Routes(Mapping[str, Route]):
    """``others`` at once; the ``memory.*`` routes built on the first lookup of a name
    with that prefix (any other unknown name is answered without loading them)."""

    def __init__(self, services: Callable[[], Services], others: Mapping[str, Route]) -> None:
        self._services = services
        self._others = dict(others)
        self._memory: dict[str, Route] | None = None

    def _memory_routes(self) -> dict[str, Route]:
        if self._memory is None:  # a race builds the same table twice, harmlessly
            self._memory = memory_routes(self._services)
        return self._memory

    def __getitem__(self, name: str) -> Route:
        if name in self._others:
            return self._others[name]
        if name.startswith(MEMORY_PREFIX):
            return self._memory_routes()[name]
        raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        yield from self._others
        yield from self._memory_routes()

    def __len__(self) -> int:
        return len(self._others) + len(self._memory_routes())


def build_dispatcher(services: Callable[[], Services], mcp: McpOptions | None = None) -> Dispatcher:
    """``mcp`` None: tool calls that leave projectId out use the project of the working
    directory (``bootstrap.default_project``)."""
    if mcp is None:
        from local_mcp_memory.entrypoints.composition.adapters import default_project

        mcp = McpOptions(project=default_project(os.getcwd()))
    options = mcp
    return Dispatcher(Routes(services, mcp_routes(services, options)))
