"""A session's digest, made without a model: what the user asked, which files changed, which
commands ran and how they ended, the commits made, and how the last answer began.

The events come from a transcript reader (``ports.TranscriptReader``); ``digest`` folds them
into a markdown text of at most ``DigestLimits.chars`` characters. Every piece of text is
scrubbed of secrets (``application.secrets``) *before* it is cut, so a cut never leaves half
a key that no longer looks like one; the whole digest is scrubbed again at the end.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import ClassVar

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
    first: list[str] = attrs.field(factory=list)
    last: list[str] = attrs.field(factory=list)
    count: int = 0

    def add(self, item: str) -> None:
        self.count += 1
        if len(self.first) < self.keep // 3 or self.keep < 3:
            self.first.append(item)
            return
        self.last.append(item)
        if len(self.last) > self.keep - len(self.first):
            self.last.pop(0)

    def items(self) -> list[str]:
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
            text = _cut(_one_line(scrub(event.text[:20_000])), limits.prompt_chars)
            first_prompt = first_prompt or text
            prompts.add(text)
        elif isinstance(event, FileChange):
            path = _relative(event.path, root)
            if path in files or len(files) < limits.kept_files:
                files[path] = files.get(path, 0) + 1
        elif isinstance(event, Command):
            failed += bool(event.failed)
            commands.add(_command_line(event, limits))
            if event.failed is False and _GIT_COMMIT.search(event.command) and len(commits) < limits.kept_commits:
                commits.extend(_cut(scrub(f"{m.group(2)} {m.group(3)}"), limits.command_chars) for m in _COMMIT_LINE.finditer(event.output))
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
        sections.append("Prompts:\n" + "\n".join(f"- {p}" for p in prompts.items()))
    if files:
        sections.append("Files changed: " + ", ".join(p if n == 1 else f"{p} ({n} edits)" for p, n in files.items()))
    if commands.count:
        sections.append("Commands:\n" + "\n".join(f"- {c}" for c in commands.items()))
    if commits:
        sections.append("Commits:\n" + "\n".join(f"- {c}" for c in commits[: limits.kept_commits]))
    if answer:
        sections.append("Last answer: " + _cut(_one_line(scrub(answer[:20_000])), limits.answer_chars))
    text = scrub(_bounded("\n\n".join(sections), max(limits.chars, limits.MIN_CHARS)))
    title = _cut(f"Session: {first_prompt or 'no prompt'}", 120)
    return Digest(text, title, prompts.count, commands.count, failed, len(files), len(commits))


def _command_line(event: Command, limits: DigestLimits) -> str:
    command = _cut(_one_line(scrub(event.command[:20_000])), limits.command_chars)
    if event.failed is None:
        outcome = "no result"
    elif event.failed:
        outcome = f"exit {event.exit_code}" if event.exit_code is not None else "failed"
    else:
        outcome = "ok"
    quoted = command.replace("`", "'")
    return f"`{quoted}` → {outcome}"


def _relative(path: str, root: str | None) -> str:
    if root and path.startswith(root.rstrip("/") + "/"):
        return path[len(root.rstrip("/")) + 1 :]
    return scrub(path)


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
