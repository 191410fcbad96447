"""One way to add a command to the ``mcp-memory`` parser: its one-line summary, its description
and examples shown by ``--help``, and the exit codes after them. Imports argparse only."""

from __future__ import annotations

import argparse


def add(commands: argparse._SubParsersAction, name: str, summary: str, description: str, examples: str, epilog: str) -> argparse.ArgumentParser:
    return commands.add_parser(
        name,
        help=summary,
        description=description,
        epilog=f"examples:\n{examples}\n\n{epilog}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
