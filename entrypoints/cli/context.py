"""The session command of ``mcp-memory``: ``context`` prints a project's session page.

``context`` runs at the start of every Claude Code session, so it is quick and quiet: the
page alone on stdout (UTF-8), logs on stderr, nothing embedded without ``--query`` (so no
model is loaded). Importing this module costs only argparse: ``entrypoints.cli`` imports
it to build its parser.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any

from local_mcp_memory.entrypoints.cli import subcommands

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def add_session_commands(
    commands: argparse._SubParsersAction, add_path_flags: Callable[[argparse.ArgumentParser], None], epilog: str
) -> None:
    """Add ``context`` to the ``mcp-memory`` parser; it sets ``args.handler``, the function
    that runs it."""
    context = subcommands.add(
        commands,
        "context",
        "print a project's session context: global settings, newest and relevant notes",
        "Print the markdown page memory.context answers: the project's global settings, its newest\n"
        "notes and, with --query, the notes most relevant to it, in at most 8,000 characters. Only the\n"
        "page goes to stdout; a project with nothing stored prints its header line alone. Without\n"
        "--query nothing is embedded. Claude Code's SessionStart hook shows this page (see install-claude).",
        "  mcp-memory context\n"
        "  mcp-memory context --project ~/code/app --group task-142 --limit 10\n"
        "  mcp-memory context --query \"how do we deploy\"",
        epilog,
    )
    context.add_argument(
        "--project",
        type=subcommands.project_id,
        metavar="P",
        help="the project: a path or an opaque id, as the methods take it (default: the main worktree of the "
        "git repository holding the working directory, else the working directory)",
    )
    context.add_argument("--group", type=subcommands.group_id, metavar="G", help="only notes of this groupId (the settings are shown whatever the group)")
    context.add_argument("--query", type=_query, metavar="Q", help="also list the notes most relevant to Q (embeds Q)")
    context.add_argument("--limit", type=_limit, metavar="N", help="notes in total, 1..100 (default: 20)")
    add_path_flags(context)
    context.set_defaults(handler=context_main)


def _query(text: str) -> str:
    from local_mcp_memory.application.context import GetContext
    from local_mcp_memory.application.errors import InvalidRequest

    try:
        GetContext("any", query=text)
    except InvalidRequest as exc:
        raise argparse.ArgumentTypeError(exc.rule) from None
    return text


def _limit(text: str) -> int:
    from local_mcp_memory.application.context import GetContext

    return subcommands.integer(1, GetContext.MAX_LIMIT)(text)


# ---------------------------------------------------------------- context


def context_main(args: argparse.Namespace) -> int:
    from local_mcp_memory.entrypoints.composition.adapters import default_project
    from local_mcp_memory.entrypoints.composition.compose import configure_logging
    from local_mcp_memory.entrypoints.cli.store_directory import local_store_problem
    from local_mcp_memory.entrypoints.composition.settings import ServerOptions, store_problem, store_setting_at_start
    from local_mcp_memory.entrypoints.logs import LOG_LEVEL_ENV

    configure_logging({LOG_LEVEL_ENV: "WARNING", **os.environ})
    options = ServerOptions.resolve(os.environ, args.config, args.data_dir, args.store)
    if (problem := store_problem(store_setting_at_start(options))) is not None:
        sys.stderr.write(f"mcp-memory context: {problem}\n")
        return EXIT_USAGE
    if (problem := local_store_problem(options)) is not None:
        sys.stderr.write(f"mcp-memory context: {problem}\n")
        return EXIT_FAILED
    project = args.project if args.project is not None else default_project(os.getcwd())
    try:
        text = _page(options, project, args.group, args.query, args.limit)
    except KeyboardInterrupt:
        sys.stderr.write("mcp-memory context: interrupted\n")
        return EXIT_INTERRUPTED
    except _Refused as refused:
        sys.stderr.write(f"mcp-memory context: {refused}\n")
        return refused.code
    try:
        sys.stdout.buffer.write(text.encode("utf-8", "replace"))
        sys.stdout.buffer.flush()
    except BrokenPipeError:  # the reader went away; nothing is left to tell it
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.stderr.write("mcp-memory context: stdout was closed before the page was written\n")
        return EXIT_FAILED
    return EXIT_OK


class _Refused(Exception):
    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def _page(options: object, project: str, group: str | None, query: str | None, limit: int | None) -> str:
    from local_mcp_memory.application.context import GetContext, context_text
    from local_mcp_memory.application.errors import ApplicationError, InvalidRequest
    from local_mcp_memory.domain.errors import DomainError, InvalidValue
    from local_mcp_memory.domain.identifiers import GroupId
    from local_mcp_memory.entrypoints.composition.compose import compose
    from local_mcp_memory.entrypoints.rpc.errors import explain

    command = GetContext(project, None if group is None else GroupId(group), query, limit)
    try:
        # without a query nothing is embedded: no embedder code is even imported
        services = compose(options, embedders=None if query is not None else _NoEmbedders())
    except (ApplicationError, DomainError, OSError) as exc:
        raise _Refused(_reason(exc, explain), EXIT_FAILED) from None
    try:
        return context_text(command, services)
    except (InvalidRequest, InvalidValue) as exc:
        raise _Refused(f"--project {project!r}: {getattr(exc, 'rule', exc)}", EXIT_USAGE) from None
    except (ApplicationError, DomainError, OSError) as exc:
        raise _Refused(_reason(exc, explain), EXIT_FAILED) from None
    finally:
        services.close()


class _NoEmbedders:
    """The ``EmbedderFactory`` of a page without a query, which embeds nothing."""

    def create(self, settings: Any) -> Any:
        from local_mcp_memory.application.errors import EmbedderNotConfigured

        raise EmbedderNotConfigured(settings.provider, "mcp-memory context embeds only for --query")


def _reason(exc: BaseException, explain: Callable[[BaseException], str]) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror
    return explain(exc)

