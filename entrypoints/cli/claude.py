"""``mcp-memory install-claude`` and ``uninstall-claude``: Claude Code's MCP registration and
hooks for users who do not install the plugin (``entrypoints.cli.claude_settings`` does the
files). Importing this module costs only argparse: ``entrypoints.cli`` imports it to build
its parser.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path
from typing import Any, TextIO

from local_mcp_memory.entrypoints.cli import subcommands

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2

SCOPES = ("project", "user")


def add_claude_commands(commands: argparse._SubParsersAction, epilog: str) -> None:
    """Add both commands to the ``mcp-memory`` parser; each sets ``args.handler``."""

    def command(name: str, summary: str, description: str, examples: str) -> argparse.ArgumentParser:
        parser = subcommands.add(commands, name, summary, description, examples, epilog)
        parser.add_argument("--project-dir", metavar="DIR", help="the project (--scope project; default: the working directory)")
        parser.add_argument(
            "--scope",
            choices=SCOPES,
            default="project",
            help="project: DIR/.claude/settings.json and DIR/.mcp.json; user: ~/.claude/settings.json and "
            "~/.claude.json (in $CLAUDE_CONFIG_DIR when set), for every project (default: project)",
        )
        return parser

    install = command(
        "install-claude",
        "register mcp-memory with Claude Code: the MCP server and every hook",
        "Write into Claude Code's settings the MCP server (mcp-memory serve) and one hook per event:\n"
        "SessionStart, UserPromptSubmit, Stop, SessionEnd and PreCompact, each running\n"
        "`mcp-memory hook <event>`. Every entry it writes carries a marker; other settings, hooks and\n"
        "servers are never changed. Running it again writes nothing, or updates its own entries.\n"
        "A file that is not strict JSON, or is read-only, is reported and nothing is written.",
        "  mcp-memory install-claude                       # ./.claude/settings.json and ./.mcp.json\n"
        "  mcp-memory install-claude --project-dir ~/code/app\n"
        "  mcp-memory install-claude --scope user          # every project",
    )
    install.add_argument("--config", metavar="PATH", help="config file the installed commands use (MCP_MEMORY_CONFIG)")
    install.add_argument("--data-dir", metavar="PATH", help="data directory the installed commands use (MCP_MEMORY_DATA_DIR)")
    install.set_defaults(handler=install_main)

    uninstall = command(
        "uninstall-claude",
        "remove what install-claude wrote from Claude Code's settings",
        "Remove the hooks and the MCP server that install-claude wrote (recognized by its marker),\n"
        "and nothing else. A file left holding nothing is deleted, and then the .claude folder\n"
        "holding the settings file if nothing else is in it. Running it again writes nothing.",
        "  mcp-memory uninstall-claude\n  mcp-memory uninstall-claude --scope user",
    )
    uninstall.set_defaults(handler=uninstall_main)


def _files(args: argparse.Namespace, err: TextIO) -> tuple[Path, Path] | int:
    """The settings file and the MCP file of the scope, or the exit code of an error told on ``err``."""
    from local_mcp_memory.entrypoints.cli import claude_settings

    if args.scope == "user":
        if args.project_dir is not None:
            err.write(f"mcp-memory {args.command}: --project-dir is for --scope project; --scope user applies to every project\n")
            return EXIT_USAGE
        return claude_settings.user_settings(os.environ), claude_settings.user_servers(os.environ)
    project = Path(os.path.expanduser(args.project_dir or os.getcwd())).absolute()
    if not project.is_dir():
        err.write(f"mcp-memory {args.command}: {project}: no such directory\n")
        return EXIT_FAILED
    return claude_settings.project_settings(project), claude_settings.project_servers(project)


def install_main(args: argparse.Namespace) -> int:
    from local_mcp_memory.entrypoints.cli import claude_settings as cs

    out, err = sys.stdout, sys.stderr
    files = _files(args, err)
    if isinstance(files, int):
        return files
    settings, servers = files
    program, env = cs.executable(), cs.paths_env(args.config, args.data_dir)
    commands = {spec.event: cs.hook_command(program, spec, env) for spec in cs.HOOKS}
    notes: list[str] = []

    def add_server(config: dict[str, Any], path: Path) -> dict[str, Any] | None:
        changed, note = cs.with_server(config, cs.server_entry(program, env), path)
        notes.extend([note] if note else [])
        return changed

    written = _apply(args.command, [(settings, lambda s, p: cs.with_hooks(s, commands, p)), (servers, add_server)], err)
    if written is None:
        return EXIT_FAILED
    if cs.session_pages(cs.SettingsFile.read(settings).content):
        notes.append(
            f"a SessionStart hook in {settings} runs `mcp-memory context` without the marker (an older install-claude's, "
            "or your own): it was left as it is, and shows the session page a second time; remove it if it is not yours"
        )
    for note in notes:
        err.write(f"mcp-memory {args.command}: {note}\n")
    out.write(f"{'wrote' if written else 'already installed, nothing written:'} {', '.join(map(str, written or files))}\n")
    out.writelines(f"  {spec.event}: {commands[spec.event]}\n" for spec in cs.HOOKS)
    if servers in written and args.scope == "project":
        out.write("Claude Code asks once, in the project, to approve the MCP server of .mcp.json.\n")
    return EXIT_OK


def uninstall_main(args: argparse.Namespace) -> int:
    from local_mcp_memory.entrypoints.cli import claude_settings as cs

    files = _files(args, sys.stderr)
    if isinstance(files, int):
        return files
    written = _apply(args.command, [(files[0], cs.without_hooks), (files[1], cs.without_server)], sys.stderr)
    if written is None:
        return EXIT_FAILED
    if not written:
        sys.stdout.write("nothing of install-claude's to remove\n")
        return EXIT_OK
    sys.stdout.write(f"removed install-claude's entries from {', '.join(map(str, written))}\n")
    deleted = [path for path in written if not os.path.lexists(path)]
    folder = files[0].parent
    if files[0] in deleted and folder.name == ".claude":
        with contextlib.suppress(OSError):  # anything else in it keeps it
            folder.rmdir()
            deleted.append(folder)
    if deleted:
        sys.stdout.write(f"deleted {', '.join(map(str, deleted))}: nothing else was in them\n")
    return EXIT_OK


def _apply(command: str, changes: list[Any], err: TextIO) -> list[Path] | None:
    from local_mcp_memory.entrypoints.cli import claude_settings as cs

    try:
        return cs.apply(changes)
    except cs.SettingsUnreadable as exc:
        done = f"only {', '.join(map(str, exc.written))} was written" if exc.written else "nothing was written"
        err.write(f"mcp-memory {command}: {exc}; {done}\n")
    except OSError as exc:
        err.write(f"mcp-memory {command}: {exc.strerror or exc}: {exc.filename}\n")
    return None
