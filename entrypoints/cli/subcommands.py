"""One way to add a command to the ``mcp-memory`` parser: its one-line summary, its description
and examples shown by ``--help``, and the exit codes after them; and one way to read a whole
number from a flag. Imports argparse only."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def add(commands: argparse._SubParsersAction, name: str, summary: str, description: str, examples: str, epilog: str) -> argparse.ArgumentParser:
    return commands.add_parser(
        name,
        help=summary,
        description=description,
        epilog=f"examples:\n{examples}\n\n{epilog}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def integer(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse ``type`` (also called on environment values): a whole number in ASCII
    digits, ``low..high`` (no bound above for None); anything else raises
    ``ArgumentTypeError`` saying the rule, which argparse reports as a usage error."""
    rule = f"an integer in {low}..{high}" if high is not None else "a positive integer" if low == 1 else f"an integer of at least {low}"

    def parse(text: str) -> int:
        digits = text.strip()
        try:
            value = int(digits) if digits.isascii() and digits.isdigit() else None
        except ValueError:  # more digits than int() reads
            value = None
        if value is None or value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"must be {rule} (got {text!r})")
        return value

    return parse
