"""One way to add a command to the ``mcp-memory`` parser: its one-line summary, its description
and examples shown by ``--help``, and the exit codes after them; one way to read a whole
number from a flag, and one to read a domain value (``--group``, ``--namespace``). Imports
argparse only; the domain when a value is read."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any


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


def group_id(text: str) -> str:
    """An argparse ``type`` for ``--group``: a groupId, or ``ArgumentTypeError`` saying its rule."""
    from local_mcp_memory.domain.identifiers import GroupId

    return domain_value(lambda: GroupId(text).value, text)


def project_id(text: str) -> str:
    """An argparse ``type`` for ``--project``: the text as given, or ``ArgumentTypeError``
    for what no canonical form mends (empty, over 1,024 characters). The rest is checked once
    the methods have canonicalized it: a relative path is resolved there."""
    from local_mcp_memory.domain.identifiers import CanonicalProjectId
    from local_mcp_memory.entrypoints.rpc.errors import cut

    if not text:
        raise argparse.ArgumentTypeError("must be a non-empty string (got '')")
    if len(text) > CanonicalProjectId.MAX_LENGTH:
        raise argparse.ArgumentTypeError(f"must be at most {CanonicalProjectId.MAX_LENGTH} characters (got {cut(text)!r})")
    return text


def domain_value(build: Callable[[], Any], text: str) -> Any:
    """``build()``, a domain value read from ``text``; its refusal (``InvalidValue``) raised as
    ``ArgumentTypeError`` saying the rule and the text, which argparse reports as a usage error."""
    from local_mcp_memory.domain.errors import InvalidValue
    from local_mcp_memory.entrypoints.rpc.errors import cut

    try:
        return build()
    except InvalidValue as exc:
        raise argparse.ArgumentTypeError(f"{exc.rule} (got {cut(text)!r})") from None
