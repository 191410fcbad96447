"""The HTTP transport: ``POST /rpc`` (JSON-RPC 2.0), ``/mcp`` (MCP Streamable HTTP) and
``GET /health``, on uvicorn, behind one guard (``guard``). ``run_http`` is the entry."""

from local_mcp_memory.entrypoints.http.serve import run_http

__all__ = ["run_http"]
