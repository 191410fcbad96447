"""The ``mcp-memory`` command line."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from local_mcp_memory.application import DEFAULT_BATCH, MAX_BATCH
from local_mcp_memory.entrypoints.cli import subcommands
from local_mcp_memory.entrypoints.build_defaults import DEFAULT_TRANSPORT
from local_mcp_memory.entrypoints.version import VERSION

TRANSPORTS = ("stdio", "http")
MAX_TEXT_CHARS_ENV = "MCP_MEMORY_MAX_TEXT_CHARS"
DEFAULT_MAX_TEXT_CHARS = 2000
TOOLS_ENV = "MCP_MEMORY_TOOLS"
TOOL_SETS = ("default", "all")
MAX_PORT = 65535

EXIT_CODES = """\
exit codes:
  0    done
  1    the operation failed; the reason is on stderr (a bad input file changes nothing)
  2    usage error: unknown command or flag, or a bad value
  130  interrupted (Ctrl-C); what was done is kept: run the same command again to resume
"""


SERVE_EXIT_CODES = """\
exit codes:
  0    stopped cleanly: end of input (stdio), SIGINT or SIGTERM, the request in hand answered first
  1    could not start (e.g. the HTTP port is taken); the reason is on stderr
  2    usage error: unknown flag or a bad value
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcp-memory",
        description="A local memory server for AI coding agents (MCP and JSON-RPC 2.0).",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"mcp-memory {VERSION}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    serve = commands.add_parser(
        "serve",
        help="serve JSON-RPC and MCP over stdio or HTTP",
        epilog=SERVE_EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    serve.add_argument(
        "--transport",
        choices=TRANSPORTS,
        default=DEFAULT_TRANSPORT,
        help=f"stdio: NDJSON on stdin/stdout; http: POST /rpc and /mcp (default: {DEFAULT_TRANSPORT})",
    )
    serve.add_argument("--host", default="127.0.0.1", help="HTTP address to bind (default: 127.0.0.1)")
    serve.add_argument("--port", type=subcommands.integer(0, MAX_PORT), default=8765, help=f"HTTP port, 0..{MAX_PORT} (default: 8765)")
    serve.add_argument(
        "--project",
        type=subcommands.project_id,
        metavar="PATH",
        help="the project tool calls use when they leave projectId out (default: the main worktree of the git "
        "repository holding the working directory, else the working directory)",
    )
    serve.add_argument(
        "--max-text-chars",
        type=_max_text_chars,
        metavar="N",
        help=f"longest note text in a tool's search or list result; longer ones are cut with a pointer "
        f"to memory_get (env {MAX_TEXT_CHARS_ENV}; default {DEFAULT_MAX_TEXT_CHARS})",
    )
    serve.add_argument(
        "--tools",
        choices=TOOL_SETS,
        help="the MCP tools listed: default, those an agent needs while it works (search, add_note, get, update, "
        f"delete, list_recent, related, link); all, every memory method (env {TOOLS_ENV}; default: default)",
    )
    _add_path_flags(serve)
    _add_data_commands(commands)
    from local_mcp_memory.entrypoints.cli.sync import add_parser as add_sync

    add_sync(commands, _add_path_flags, EXIT_CODES)
    from local_mcp_memory.entrypoints.cli.context import add_session_commands

    add_session_commands(commands, _add_path_flags, EXIT_CODES)
    from local_mcp_memory.entrypoints.cli.claude import add_claude_commands

    add_claude_commands(commands, EXIT_CODES)
    from local_mcp_memory.entrypoints.cli.hooks import add_parsers as add_hook_commands

    add_hook_commands(commands, _add_path_flags, EXIT_CODES)
    return parser


def _hook_parser() -> argparse.ArgumentParser:
    from local_mcp_memory.entrypoints.cli.hooks import add_parsers as add_hook_commands

    parser = argparse.ArgumentParser(prog="mcp-memory", epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_hook_commands(parser.add_subparsers(dest="command", required=True, metavar="COMMAND"), _add_path_flags, EXIT_CODES)
    return parser


def _add_data_commands(commands: argparse._SubParsersAction) -> None:
    def command(name: str, summary: str, description: str, examples: str) -> argparse.ArgumentParser:
        return subcommands.add(commands, name, summary, description, examples, EXIT_CODES)

    export = command(
        "export",
        "write notes and global settings as JSON Lines",
        "Write every note (of one project with --project) and every global setting as JSON Lines:\n"
        "a header line, then one line per note, then one per global setting. Every field is kept;\n"
        "`mcp-memory import` reads the file back.",
        "  mcp-memory export --out memory.jsonl\n"
        "  mcp-memory export --project ~/code/app --vectors > app.jsonl",
    )
    export.add_argument("--project", type=subcommands.project_id, metavar="P", help="only this project (a path or an opaque id, as the methods take it)")
    export.add_argument("--out", metavar="FILE", help="write FILE, whole or not at all (default: stdout)")
    export.add_argument(
        "--vectors",
        action="store_true",
        help="include each note's vector, so an import into the same namespace need not embed again",
    )
    _add_path_flags(export)

    restore = command(
        "import",
        "restore notes and global settings from an export file",
        "Restore the notes and global settings of an export file, keeping every field and id.\n"
        "The whole file is checked first: a bad line changes nothing. Notes already stored as\n"
        "in the file are skipped, so importing twice adds nothing and an interrupted import\n"
        "finishes when run again. Vectors of the current namespace are reused; other notes\n"
        "are embedded with the current embedder.",
        "  mcp-memory import memory.jsonl\n"
        "  mcp-memory export --data-dir old-data | mcp-memory import --data-dir new-data -",
    )
    restore.add_argument("file", metavar="FILE", help="an export file (- for stdin)")
    _add_batch_flag(restore)
    _add_path_flags(restore)

    reembed = command(
        "reembed",
        "re-embed notes of older namespaces into the current one",
        "After switching provider or model (memory.set_config), give every note whose home is an\n"
        "older namespace a vector of the current one. Batches are written as they finish: an\n"
        "interrupted run resumes when run again. Old vectors stay until --drop removes them.",
        "  mcp-memory reembed\n"
        "  mcp-memory reembed --from local:all-MiniLM-L6-v2:384 --batch 32\n"
        "  mcp-memory reembed --drop local:all-MiniLM-L6-v2:384",
    )
    which = reembed.add_mutually_exclusive_group()
    which.add_argument(
        "--from", dest="from_namespace", type=_namespace, metavar="NAMESPACE", help="only notes whose home is NAMESPACE"
    )
    which.add_argument(
        "--drop", type=_namespace, metavar="NAMESPACE", help="instead: remove the vectors of NAMESPACE once no note calls it home"
    )
    _add_batch_flag(reembed)
    _add_path_flags(reembed)

    stats = command(
        "stats",
        "count notes by namespace, project, group and tag; bytes on disk",
        "Print counts as JSON: notes by home namespace, project, group and tag, vectors per\n"
        "namespace and bytes on disk (the last two for the whole store).",
        "  mcp-memory stats\n  mcp-memory stats --project ~/code/app",
    )
    stats.add_argument("--project", type=subcommands.project_id, metavar="P", help="count only this project's notes")
    _add_path_flags(stats)

    verify = command(
        "verify",
        "check every checksum of the data directory, writing nothing",
        "Read every file of the live generation and check every checksum, shape and cross-reference,\n"
        "without writing anything (not even LOCK); servers may keep running. Prints \"ok\" and a summary,\n"
        "or, with exit code 1, what is damaged in each file and how many records it affects. Files of\n"
        "older generations and of crashed compactions are listed, not counted as damage.",
        "  mcp-memory verify\n  mcp-memory verify --data-dir /mnt/backup/data",
    )
    verify.add_argument("--data-dir", metavar="PATH", help="data directory (env MCP_MEMORY_DATA_DIR; default ~/.local-mcp-memory/data)")
    _add_store_flag(verify, local_only=True)

    salvage = command(
        "salvage",
        "write every note and global setting that verifies as an export file",
        "Get what can be verified out of a damaged data directory, as an export file that\n"
        "`mcp-memory import OUT --data-dir NEW` restores. Works without a manifest, with a damaged\n"
        "sidecar or journal: every record whose checksum holds is kept, every other is skipped (never\n"
        "guessed). Vectors are kept where their files verify; import embeds the other notes again.\n"
        "Reads only: nothing in the data directory is written, locked or truncated.",
        "  mcp-memory salvage rescued.jsonl\n"
        "  mcp-memory salvage rescued.jsonl --data-dir ~/.local-mcp-memory/data && \\\n"
        "    mcp-memory import rescued.jsonl --data-dir ~/.local-mcp-memory/data-new",
    )
    salvage.add_argument("out", metavar="OUT", help="the export file to write (written whole or not at all)")
    salvage.add_argument("--data-dir", metavar="PATH", help="data directory (env MCP_MEMORY_DATA_DIR; default ~/.local-mcp-memory/data)")
    _add_store_flag(salvage, local_only=True)


_max_text_chars = subcommands.integer(1)


def _add_batch_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--batch",
        type=subcommands.integer(1, MAX_BATCH),
        default=DEFAULT_BATCH,
        metavar="N",
        help=f"notes embedded per call, 1..{MAX_BATCH} (default: {DEFAULT_BATCH})",
    )




def _namespace(text: str) -> object:
    from local_mcp_memory.domain.identifiers import Namespace

    return subcommands.domain_value(lambda: Namespace.parse(text), text)


def _add_path_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config", metavar="PATH", help="config file (env MCP_MEMORY_CONFIG; default ~/.local-mcp-memory/config.json)"
    )
    parser.add_argument(
        "--data-dir", metavar="PATH", help="data directory (env MCP_MEMORY_DATA_DIR; default ~/.local-mcp-memory/data)"
    )
    _add_store_flag(parser)


def _add_store_flag(parser: argparse.ArgumentParser, local_only: bool = False) -> None:
    where = " (this command checks the local store only)" if local_only else ""
    parser.add_argument(
        "--store",
        metavar="URL",
        help="where the notes are kept: postgresql://user:password@host:5432/db for a team's PostgreSQL, "
        "or a directory for the local store (env MCP_MEMORY_STORE; config file store.url; default: the "
        f"local store in the data directory){where}",
    )


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["hook"]:  # on every prompt: only the parser it needs; never exit 2, which
        try:  # Claude Code reads as "block this prompt": a usage error is reported and ignored
            hook_args = _hook_parser().parse_args(argv)
        except SystemExit:
            return 0
        return hook_args.handler(hook_args)
    if argv[:1] == ["service"]:
        service_args = _hook_parser().parse_args(argv)
        return service_args.handler(service_args)
    args = _parser().parse_args(argv)
    if args.command == "serve":
        return _serve(args)
    if args.command == "sync":
        from local_mcp_memory.entrypoints.cli.sync import run as sync

        return sync(args)
    if args.command in ("context", "install-claude", "uninstall-claude", "hook", "service"):
        return args.handler(args)
    from local_mcp_memory.entrypoints.cli.lifecycle import run

    return run(args)


def _serve(args: argparse.Namespace) -> int:
    from local_mcp_memory.entrypoints.composition.adapters import default_project
    from local_mcp_memory.entrypoints.composition.compose import LazyServices, compose, configure_logging, embedder_problem
    from local_mcp_memory.entrypoints.composition.settings import ServerOptions
    from local_mcp_memory.entrypoints.mcp import McpOptions, TextBounds
    from local_mcp_memory.entrypoints.mcp.tools import DEFAULT_TOOLS
    from local_mcp_memory.entrypoints.server import build_dispatcher

    configure_logging(os.environ)
    options = ServerOptions.resolve(os.environ, args.config, args.data_dir, args.store)
    if (problem := _store_problem(options)) is not None:
        print(f"mcp-memory: {problem}", file=sys.stderr)
        return 2
    try:
        max_text_chars = args.max_text_chars or _max_text_chars(os.environ.get(MAX_TEXT_CHARS_ENV) or str(DEFAULT_MAX_TEXT_CHARS))
    except argparse.ArgumentTypeError as exc:
        print(f"mcp-memory: {MAX_TEXT_CHARS_ENV} {exc}", file=sys.stderr)
        return 2
    if (problem := embedder_problem(os.environ)) is not None:
        print(f"mcp-memory: {problem}", file=sys.stderr)
        return 2
    tools = args.tools or os.environ.get(TOOLS_ENV) or "default"
    if tools not in TOOL_SETS:
        print(f"mcp-memory: {TOOLS_ENV} must be one of {', '.join(TOOL_SETS)} (got {tools!r})", file=sys.stderr)
        return 2
    project = os.path.abspath(os.path.expanduser(args.project)) if args.project else default_project(os.getcwd())
    listed = None if tools == "all" else DEFAULT_TOOLS
    mcp = McpOptions(project=project, bounds=TextBounds(note_chars=max_text_chars), tools=listed)
    services = LazyServices(lambda: compose(options, serving=True))
    dispatcher = build_dispatcher(services, mcp)
    if args.transport == "stdio":
        from local_mcp_memory.entrypoints.rpc.stdio import run_stdio

        run_stdio(dispatcher, sys.stdin.buffer, sys.stdout.buffer, services.close)
        return 0
    from local_mcp_memory.entrypoints import logs
    from local_mcp_memory.entrypoints.http import run_http

    logs.ensure_configured()  # uvicorn and the HTTP app log through structlog from the start
    return run_http(dispatcher, services, options, host=args.host, port=args.port)


def _store_problem(options: object) -> str | None:
    """A store setting that cannot work at all (bad URL, the postgres extra missing), from
    the flag, the environment or the config file, found before the first request without
    loading the application (start-up is on the clock)."""
    from local_mcp_memory.entrypoints.composition.settings import store_problem, store_setting_at_start

    return store_problem(store_setting_at_start(options))
