"""The ``mcp-memory`` command: the parser and ``serve`` (``main``), one module per group of
subcommands (``lifecycle``, ``sync``, ``context``, ``claude``), and the Claude Code hooks
with the service that keeps them fast (``hooks``, ``hook_handlers``, ``hook_service``)."""

from local_mcp_memory.entrypoints.cli.main import main

__all__ = ["main"]
