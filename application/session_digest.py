"""A session's digest, made without a model: what the user asked, which files changed, which
commands ran and how they ended, the commits made, and how the last answer began.

The events come from a transcript reader (``ports.TranscriptReader``); ``digest`` folds them
into a markdown text of at most ``DigestLimits.chars`` characters. Every piece of text is
scrubbed of secrets (``application.secrets``) *before* it is cut to its share, so a cut never
leaves half a key that no longer looks like one; the whole digest is scrubbed again at the end.
Only what is kept is scrubbed, and only its first ``SCRUB_WINDOW`` characters (far more than
is kept of it: a key cut at the window's end lies beyond what is shown), so a session of
thousands of long prompts costs no more than a short one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, ClassVar

import attrs

from local_mcp_memory.application.secrets import scrub


@attrs.frozen
class Prompt:
    text: str


@attrs.frozen
class FileChange:
    path: str


@attrs.frozen
class Command:
    """A shell command and its outcome: ``failed`` None when no result was seen."""

    command: str
    failed: bool | None = None
    exit_code: int | None = None
    output: str = ""


@attrs.frozen
class Answer:
    text: str


SessionEvent = Prompt | FileChange | Command | Answer

SCRUB_WINDOW = 1000

_COMMIT_LINE = re.compile(r"^\[([^\]\s]+)(?: \(root-commit\))? ([0-9a-f]{7,40})\] (.+)$", re.MULTILINE)
_GIT_COMMIT = re.compile(r"\bgit\b(?:\s+-[Cc]\s+\S+)*\s+commit\b")


@attrs.frozen
class DigestLimits:
    chars: int = 4000
    prompt_chars: int = 240
    command_chars: int = 160
    answer_chars: int = 400
    kept_prompts: int = 12
    kept_commands: int = 16
    kept_files: int = 40
    kept_commits: int = 20

    MIN_CHARS: ClassVar[int] = 500


@attrs.define
class _Ends:
    """The first and last items of a long sequence, and how many there were."""

    keep: int
    first: list[Any] = attrs.field(factory=list)
    last: list[Any] = attrs.field(factory=list)
    count: int = 0

    def add(self, item: Any) -> None:
        self.count += 1
        if len(self.first) < self.keep // 3 or self.keep < 3:
            self.first.append(item)
            return
        self.last.append(item)
        if len(self.last) > self.keep - len(self.first):
            self.last.pop(0)

    def items(self) -> list[Any]:
        skipped = self.count - len(self.first) - len(self.last)
        middle = [f"… {skipped} more …"] if skipped > 0 else []
        return [*self.first, *middle, *self.last]


@attrs.frozen
class Digest:
    text: str
    title: str
    prompts: int
    commands: int
    failed_commands: int
    files: int
    commits: int


def digest(events: Iterable[SessionEvent], limits: DigestLimits = DigestLimits(), root: str | None = None) -> Digest | None:
    """The digest of a session, or None when it holds no prompt, change or command. ``root``:
    paths under it are shown relative to it."""
    prompts, commands = _Ends(limits.kept_prompts), _Ends(limits.kept_commands)
    files: dict[str, int] = {}
    commits: list[str] = []
    failed = 0
    answer = ""
    first_prompt = ""
    for event in events:
        if isinstance(event, Prompt):
            first_prompt = first_prompt or event.text
            prompts.add(event.text[:SCRUB_WINDOW])
        elif isinstance(event, FileChange):
            path = _relative(event.path, root)
            if path in files or len(files) < limits.kept_files:
                files[path] = files.get(path, 0) + 1
        elif isinstance(event, Command):
            failed += bool(event.failed)
            commands.add(_command_line(event))
            committed = event.failed is False and "commit" in event.command and _GIT_COMMIT.search(event.command[:SCRUB_WINDOW])
            if committed and len(commits) < limits.kept_commits:
                commits.extend(f"{m.group(2)} {m.group(3)}"[:SCRUB_WINDOW] for m in _COMMIT_LINE.finditer(event.output))
        elif isinstance(event, Answer) and event.text.strip():
            answer = event.text
    if not (prompts.count or files or commands.count):
        return None
    head = (
        f"{prompts.count} prompts, {len(files)} files changed, {commands.count} commands"
        f" ({failed} failed), {len(commits)} commits."
    )
    sections = [head]
    if prompts.count:
        sections.append("Prompts:\n" + "\n".join(f"- {_shown(p, limits.prompt_chars)}" for p in prompts.items()))
    if files:
        shown_files = (_shown(p, limits.command_chars) + ("" if n == 1 else f" ({n} edits)") for p, n in files.items())
        sections.append("Files changed: " + ", ".join(shown_files))
    if commands.count:
        sections.append("Commands:\n" + "\n".join(f"- {_command_shown(c, limits.command_chars)}" for c in commands.items()))
    if commits:
        sections.append("Commits:\n" + "\n".join(f"- {_shown(c, limits.command_chars)}" for c in commits[: limits.kept_commits]))
    if answer:
        sections.append("Last answer: " + _shown(answer[:SCRUB_WINDOW], limits.answer_chars))
    text = scrub(_bounded("\n\n".join(sections), max(limits.chars, limits.MIN_CHARS)))
    title = _shown(f"Session: {first_prompt[:SCRUB_WINDOW] or 'no prompt'}", 120)
    return Digest(text, title, prompts.count, commands.count, failed, len(files), len(commits))


def _shown(text: str, limit: int) -> str:
    """``text`` scrubbed, on one line, cut to ``limit`` characters."""
    return _cut(_one_line(scrub(text)), limit)


def _command_shown(item: tuple[str, str] | str, limit: int) -> str:
    if isinstance(item, str):  # "… N more …"
        return item
    command, outcome = item
    quoted = _shown(command, limit).replace("`", "'")
    return f"`{quoted}` → {outcome}"


def _command_line(event: Command) -> tuple[str, str]:
    """The command (unscrubbed, up to ``SCRUB_WINDOW``) and its outcome."""
    if event.failed is None:
        outcome = "no result"
    elif event.failed:
        outcome = f"exit {event.exit_code}" if event.exit_code is not None else "failed"
    else:
        outcome = "ok"
    return event.command[:SCRUB_WINDOW], outcome


def _relative(path: str, root: str | None) -> str:
    if root and path.startswith(root.rstrip("/") + "/"):
        return path[len(root.rstrip("/")) + 1 :]
    return path[:SCRUB_WINDOW]


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _bounded(text: str, limit: int) -> str:
    """``text``, or its first and last parts (two thirds, one third) when longer than ``limit``."""
    if len(text) <= limit:
        return text
    marker = "\n… (cut) …\n"
    room = limit - len(marker)
    head = room * 2 // 3
    return text[:head] + marker + text[len(text) - (room - head) :]
