"""Claude Code's session transcript (the JSON Lines file a hook's ``transcript_path`` names)
read as ``session_digest`` events.

Lines of type ``user`` carry the user's prompts (a string, or ``text`` blocks) and tool
results (``tool_result`` blocks with ``tool_use_id``, ``content``, ``is_error``); lines of
type ``assistant`` carry ``text`` and ``tool_use`` blocks (``name``, ``id``, ``input``).
Files changed are the ``file_path``/``notebook_path`` of Edit, Write, MultiEdit and
NotebookEdit; commands are Bash's ``command``, paired with their result to learn the outcome
(``is_error``, and ``Exit code N`` at the head of a failed result). Meta lines, compaction
summaries, slash-command wrappers and interruption markers are not prompts.

The file is streamed, never loaded whole: a line longer than ``MAX_LINE_BYTES`` (a huge tool
result) is skipped unread, a line that is not JSON or not shaped as expected is skipped,
and reading stops after ``MAX_BYTES``, skipped lines included. ``TranscriptStats`` counts
what was skipped. A missing or unreadable file raises ``OSError``, and so does a path that
is no regular file: a FIFO would block the reader until something writes to it, a device
such as ``/dev/zero`` never ends.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import attrs
import msgspec

from local_mcp_memory.adapters.regular_files import open_regular
from local_mcp_memory.application.session_digest import Answer, Command, FileChange, Prompt, SessionEvent

MAX_LINE_BYTES = 2 * 1024 * 1024
MAX_BYTES = 512 * 1024 * 1024
MAX_PENDING = 1000
"""Bash calls waiting for their result; older ones are given up as having none."""

FILE_TOOLS = {"Edit": "file_path", "Write": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}
_decode = msgspec.json.Decoder().decode
_EXIT_CODE = re.compile(r"^Exit code (-?\d+)")
_NOT_PROMPTS = ("<command-", "<local-command-", "[Request interrupted", "Caveat: The messages below", "<bash-")


@attrs.define
class TranscriptStats:
    lines: int = 0
    skipped: int = 0
    truncated: bool = False


def read_transcript(path: str, stats: TranscriptStats | None = None) -> Iterator[SessionEvent]:
    stats = stats if stats is not None else TranscriptStats()
    pending: dict[str, str] = {}
    with open_regular(path) as handle:
        read = 0
        while True:
            if read > MAX_BYTES:  # whatever the lines read were: skipped ones count too
                stats.truncated = True
                break
            line = handle.readline(MAX_LINE_BYTES + 1)
            if not line:
                break
            read += len(line)
            if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                stats.skipped += 1
                read += _skip_rest(handle, MAX_BYTES - read)
                continue
            stats.lines += 1
            try:
                entry = _decode(line)
            except msgspec.DecodeError:
                stats.skipped += 1
                continue
            if isinstance(entry, dict):
                yield from _events(entry, pending)
            else:
                stats.skipped += 1
    for command in pending.values():
        yield Command(command)


def _skip_rest(handle: Any, budget: int) -> int:
    """Reads past the rest of a line, at most a chunk beyond ``budget`` bytes; how many were read."""
    skipped = 0
    while chunk := handle.readline(MAX_LINE_BYTES):
        skipped += len(chunk)
        if chunk.endswith(b"\n") or skipped > budget:
            break
    return skipped


def _events(entry: dict[str, Any], pending: dict[str, str]) -> Iterator[SessionEvent]:
    kind = entry.get("type")
    message = entry.get("message")
    if kind not in ("user", "assistant") or not isinstance(message, dict) or entry.get("isSidechain"):
        return
    content = message.get("content")
    if kind == "user":
        if entry.get("isMeta") or entry.get("isCompactSummary"):
            return
        if isinstance(content, str):
            if _is_prompt(content):
                yield Prompt(content)
            return
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str) and _is_prompt(block["text"]):
                yield Prompt(block["text"])
            elif block.get("type") == "tool_result" and block.get("tool_use_id") in pending:
                yield _outcome(pending.pop(block["tool_use_id"]), block)
        return
    texts = []
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif block.get("type") == "tool_use" and isinstance(block.get("input"), dict):
            name, arguments = block.get("name"), block["input"]
            if name in FILE_TOOLS and isinstance(arguments.get(FILE_TOOLS[name]), str):
                yield FileChange(arguments[FILE_TOOLS[name]])
            elif name == "Bash" and isinstance(arguments.get("command"), str) and isinstance(block.get("id"), str):
                if len(pending) >= MAX_PENDING:
                    yield Command(pending.pop(next(iter(pending))))
                pending[block["id"]] = arguments["command"]
    if texts:
        yield Answer("\n".join(texts))


def _is_prompt(text: str) -> bool:
    stripped = text.lstrip()
    return bool(stripped) and not stripped.startswith(_NOT_PROMPTS)


def _outcome(command: str, block: dict[str, Any]) -> Command:
    output = _text(block.get("content"))
    failed = block.get("is_error") is True
    code = _EXIT_CODE.match(output)
    exit_code = int(code.group(1)) if code else None
    return Command(command, failed, exit_code, output[:20_000])


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""
