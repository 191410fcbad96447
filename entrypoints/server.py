"""One dispatcher for every transport: the ``memory.*`` methods and the MCP methods."""

from __future__ import annotations

from collections.abc import Callable

from application.services import Services
from entrypoints.jsonrpc import Dispatcher, Route, memory_route
from entrypoints.methods import METHODS


def memory_routes(services: Callable[[], Services]) -> dict[str, Route]:
    return {name: memory_route(method, services) for name, method in METHODS.items()}


def build_dispatcher(services: Callable[[], Services]) -> Dispatcher:
    return Dispatcher(memory_routes(services))
