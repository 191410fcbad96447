"""The ``memory.*`` methods: one module each, listed in ``table``; the one way in to them.

A method's module holds all the edge knows of it: the msgspec Struct of its params with
the decode to the use case's command, the view of its result, ``run`` (decode, call the
use case in ``application/``, encode), and what an agent reads of it as an MCP tool, all
declared as one ``METHOD`` (``method.Method``). The pieces several methods share are in
``wire`` (the Struct bases, the note views, the request field helpers) and ``texts`` (the
phrases of their descriptions).

``routes(services)`` is what the JSON-RPC dispatcher serves: a route per method, built from
the table on the first request for a ``memory.*`` name. ``method_table()`` is what MCP lists as
tools. Both import the application on first use, not at start-up (an MCP client waits for
``initialize``); this package itself imports nothing more than msgspec and the dispatcher's errors.

To add a method: write its use case in ``application/`` and a module here that declares
its ``METHOD``, then list the module in ``table``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import msgspec

from local_mcp_memory.entrypoints.rpc.errors import INVALID_PARAMS, RpcError

if TYPE_CHECKING:
    from local_mcp_memory.application.services import Services
    from local_mcp_memory.entrypoints.methods.method import Method
    from local_mcp_memory.entrypoints.rpc.dispatcher import Route

PREFIX = "memory."


def method_table() -> Mapping[str, Method]:
    """Every method by name, in the order of ``table._MODULES``; imports the application."""
    from local_mcp_memory.entrypoints.methods.table import METHODS

    return METHODS


def route(method: Method, services: Callable[[], Services]) -> Route:
    """``method`` as a JSON-RPC route: its params decoded to ``method.params`` (named fields
    only), run against the services."""

    def serve(params: Any) -> Any:
        if isinstance(params, list):
            raise RpcError(INVALID_PARAMS, "Invalid params: params must be an object with named fields", {"field": None, "rule": "params must be an object"})
        return method.run(msgspec.convert({} if params is None else params, method.params), services())

    return serve


class Routes(Mapping[str, "Route"]):
    """The route of every method, built on the first lookup of a name with the ``memory.``
    prefix; any other name is answered None without loading them."""

    def __init__(self, services: Callable[[], Services]) -> None:
        self._services = services
        self._routes: dict[str, Route] | None = None

    def _built(self) -> dict[str, Route]:
        if self._routes is None:  # a race builds the same table twice, harmlessly
            self._routes = {name: route(method, self._services) for name, method in method_table().items()}
        return self._routes

    def get(self, name: str, default: Any = None) -> Any:
        return self._built().get(name, default) if name.startswith(PREFIX) else default

    def __getitem__(self, name: str) -> Route:
        found = self.get(name)
        if found is None:
            raise KeyError(name)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._built())

    def __len__(self) -> int:
        return len(self._built())


def routes(services: Callable[[], Services]) -> Routes:
    """The ``memory.*`` routes for the JSON-RPC dispatcher, run against ``services``."""
    return Routes(services)
