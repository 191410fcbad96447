"""``Method``: what the edge knows of one ``memory.*`` method, declared by its module."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from local_mcp_memory.entrypoints.methods.wire import Params, View

if TYPE_CHECKING:
    from local_mcp_memory.application.services import Services


@attrs.frozen(kw_only=True)
class Method:
    """One memory method, served as a JSON-RPC method and as an MCP tool.

    ``run`` takes the decoded ``params`` Struct and the services, calls the use case and
    returns a ``result`` view. ``title`` and ``description`` are what an agent reads of
    the tool; ``left_out`` tells it how to get what a result cut to fit a tool output
    left out (None: the generic advice).

    The hints describe the method for MCP clients: ``read_only`` (changes nothing),
    ``destructive`` (may remove or overwrite data), ``idempotent`` (repeating it with the
    same arguments has no further effect).
    """

    name: str
    params: type[Params]
    result: type[View]
    run: Callable[[Any, Services], View]
    title: str
    description: str
    left_out: str | None = None
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
