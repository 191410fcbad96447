"""The MCP lifecycle and listing methods, as routes of the shared JSON-RPC dispatcher.

    initialize                  protocol version, capabilities, server info, instructions
    notifications/initialized   accepted, never required before other calls
    ping                        {}
    tools/list, tools/call      ``entrypoints.mcp.tools``
    resources/list, resources/templates/list, resources/read
                                ``entrypoints.mcp.resources``
    prompts/list, prompts/get   ``entrypoints.mcp.prompts``

The capabilities declare these three features and nothing more: no ``listChanged`` (the
lists never change while the server runs, except the recent notes that ``resources/list``
reads anew on each call) and no ``subscribe``; nor ``logging`` or ``completions``.

The server keeps no session state: any request may come first, on any transport.
``server/discover`` (newer clients probe it first) and every other method not listed
here are unknown to the dispatcher, which answers -32601 at once; clients then fall
back to ``initialize``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs
import msgspec

from local_mcp_memory.entrypoints import methods as memory_methods
from local_mcp_memory.entrypoints.rpc.dispatcher import Route
from local_mcp_memory.entrypoints.mcp import texts
from local_mcp_memory.entrypoints.version import VERSION
from local_mcp_memory.entrypoints.mcp_revisions import LATEST_PROTOCOL_VERSION, PROTOCOL_VERSIONS
from local_mcp_memory.entrypoints.mcp.bounds import TextBounds
from local_mcp_memory.entrypoints.mcp.prompts import PromptSet
from local_mcp_memory.entrypoints.mcp.resources import ResourceSet
from local_mcp_memory.entrypoints.mcp.tools import DEFAULT_TOOLS, ToolSet

if TYPE_CHECKING:
    from local_mcp_memory.application.services import Services
    from local_mcp_memory.entrypoints.methods.method import Method

SERVER_NAME = "mcp-memory"
SERVER_VERSION = VERSION  # importlib.metadata would cost ~30 ms at start-up (a test pins them equal)

CAPABILITIES: dict[str, dict[str, Any]] = {"tools": {}, "resources": {}, "prompts": {}}


@attrs.frozen
class McpOptions:
    """``project``: the projectId used when a tool call leaves it out (the directory the
    server was started in, or ``--project``); canonicalized like any other projectId.
    ``tools``: the tools listed (``tools.DEFAULT_TOOLS``; None: every method)."""

    project: str
    bounds: TextBounds = TextBounds()
    tools: frozenset[str] | None = DEFAULT_TOOLS


class InitializeParams(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """What we read of ``initialize`` params; other members are ignored."""

    protocol_version: str
    capabilities: dict[str, Any] = {}
    client_info: dict[str, Any] | None = None


def negotiate(requested: str) -> str:
    """The client's version when we speak it, otherwise our latest (the client decides
    whether it can go on)."""
    return requested if requested in PROTOCOL_VERSIONS else LATEST_PROTOCOL_VERSION


def initialize(params: Any) -> dict[str, Any]:
    request = msgspec.convert({} if params is None else params, InitializeParams)
    return {
        "protocolVersion": negotiate(request.protocol_version),
        "capabilities": CAPABILITIES,
        "serverInfo": {"name": SERVER_NAME, "version": SERVER_VERSION},
        "instructions": texts.INSTRUCTIONS,
    }


def _empty(params: Any) -> dict[str, Any]:
    return {}


def mcp_routes(
    services: Callable[[], Services],
    options: McpOptions,
    methods: Callable[[], Mapping[str, Method]] = memory_methods.method_table,
) -> dict[str, Route]:
    """The MCP methods; tools and resources serve the method table ``methods()`` returns
    (called on the first listing or call: it imports the application)."""
    tools = ToolSet(methods, services, options.project, options.bounds, options.tools)
    resources = ResourceSet(methods, services, options.project)
    prompts = PromptSet(services)
    return {
        "initialize": initialize,
        "notifications/initialized": _empty,
        "ping": _empty,
        "tools/list": tools.list_tools,
        "tools/call": tools.call_tool,
        "resources/list": resources.list_resources,
        "resources/templates/list": resources.list_templates,
        "resources/read": resources.read,
        "prompts/list": prompts.list_prompts,
        "prompts/get": prompts.get_prompt,
    }
