"""The ``mcp-memory`` command line."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from entrypoints.build_defaults import DEFAULT_TRANSPORT

TRANSPORTS = ("stdio", "http")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcp-memory",
        description="A local memory server for AI coding agents (MCP and JSON-RPC 2.0).",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    serve = commands.add_parser("serve", help="serve JSON-RPC and MCP over stdio or HTTP")
    serve.add_argument(
        "--transport",
        choices=TRANSPORTS,
        default=DEFAULT_TRANSPORT,
        help=f"stdio: NDJSON on stdin/stdout; http: POST /rpc and /mcp (default: {DEFAULT_TRANSPORT})",
    )
    serve.add_argument("--host", default="127.0.0.1", help="HTTP address to bind (default: 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8765, help="HTTP port (default: 8765)")
    _add_path_flags(serve)
    return parser


def _add_path_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config", metavar="PATH", help="config file (env MCP_MEMORY_CONFIG; default ~/.local-mcp-memory/config.json)"
    )
    parser.add_argument(
        "--data-dir", metavar="PATH", help="data directory (env MCP_MEMORY_DATA_DIR; default ~/.local-mcp-memory/data)"
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "serve":
        return _serve(args)
    return 2


def _serve(args: argparse.Namespace) -> int:
    from entrypoints.bootstrap import LazyServices, ServerOptions, build, configure_logging
    from entrypoints.server import build_dispatcher

    configure_logging(os.environ)
    options = ServerOptions.resolve(os.environ, DEFAULT_TRANSPORT, args.config, args.data_dir)
    services = LazyServices(lambda: build(options))
    dispatcher = build_dispatcher(services)
    if args.transport == "stdio":
        from entrypoints.stdio import run_stdio

        run_stdio(dispatcher, sys.stdin.buffer, sys.stdout.buffer, services.close)
        return 0
    from entrypoints.http import run_http

    return run_http(dispatcher, services, options, host=args.host, port=args.port)


if __name__ == "__main__":
    sys.exit(main())
