"""MCP (the Model Context Protocol) on the shared JSON-RPC dispatcher: the lifecycle
methods, the ``memory.*`` methods as tools, notes and session contexts as resources, and
the ``recall`` prompt. Transports know nothing of it."""

from local_mcp_memory.entrypoints.mcp.bounds import TextBounds
from local_mcp_memory.entrypoints.mcp.protocol import McpOptions, mcp_routes

__all__ = ["McpOptions", "TextBounds", "mcp_routes"]
