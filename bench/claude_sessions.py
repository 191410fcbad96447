"""Claude Code session transcripts as Claude Code writes them (JSON Lines: ``user`` lines with
prompts and tool results, ``assistant`` lines with text and ``tool_use`` blocks), for the hook
tests and ``bench.hooks``. ``Session`` builds one turn by turn; ``long_session`` makes a
transcript of any number of turns.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any


class Session:
    def __init__(self, session_id: str, cwd: str) -> None:
        self.session_id = session_id
        self.cwd = cwd
        self.lines: list[dict[str, Any]] = []
        self._tools = 0

    def _line(self, kind: str, message: dict[str, Any], **extra: Any) -> None:
        self.lines.append(
            {
                "parentUuid": None,
                "isSidechain": False,
                "userType": "external",
                "cwd": self.cwd,
                "sessionId": self.session_id,
                "version": "2.1.330",
                "type": kind,
                "message": message,
                "uuid": str(uuid.uuid4()),
                "timestamp": "2026-11-25T10:00:00.000Z",
                **extra,
            }
        )

    def prompt(self, text: str) -> Session:
        self._line("user", {"role": "user", "content": text})
        return self

    def answer(self, text: str) -> Session:
        self._line("assistant", {"role": "assistant", "content": [{"type": "text", "text": text}]})
        return self

    def tool(self, name: str, arguments: dict[str, Any], result: str = "", is_error: bool = False) -> Session:
        self._tools += 1
        tool_id = f"toolu_{self._tools:06d}"
        block = {"type": "tool_use", "id": tool_id, "name": name, "input": arguments}
        self._line("assistant", {"role": "assistant", "content": [block]})
        outcome = {"type": "tool_result", "tool_use_id": tool_id, "content": result, "is_error": is_error}
        self._line("user", {"role": "user", "content": [outcome]}, toolUseResult={"stdout": result, "stderr": ""})
        return self

    def bash(self, command: str, output: str = "", exit_code: int = 0) -> Session:
        if exit_code:
            return self.tool("Bash", {"command": command}, f"Exit code {exit_code}\n{output}", is_error=True)
        return self.tool("Bash", {"command": command}, output)

    def edit(self, path: str) -> Session:
        return self.tool("Edit", {"file_path": path, "old_string": "a", "new_string": "b"}, "The file has been updated.")

    def write(self, path: str, content: str = "x = 1\n") -> Session:
        return self.tool("Write", {"file_path": path, "content": content}, f"File created successfully at: {path}")

    def meta(self, text: str) -> Session:
        self._line("user", {"role": "user", "content": text}, isMeta=True)
        return self

    def text(self) -> str:
        return "".join(json.dumps(line) + "\n" for line in self.lines)

    def save(self, path: Path) -> Path:
        path.write_text(self.text(), encoding="utf-8")
        return path


def long_session(turns: int, cwd: str, session_id: str = "bench-long") -> Session:
    """A session of ``turns`` turns: each a prompt, a file edit, a test run (every fifth
    fails), and an answer; a commit every tenth turn."""
    session = Session(session_id, cwd)
    for turn in range(turns):
        session.prompt(f"Step {turn}: make the parser accept trailing commas in section {turn % 37}")
        session.edit(f"{cwd}/src/parser_{turn % 23}.py")
        failed = turn % 5 == 4
        session.bash("pytest tests/test_parser.py -q", "1 failed" if failed else "12 passed", exit_code=1 if failed else 0)
        if turn % 10 == 9:
            sha = uuid.UUID(int=turn).hex[:7]
            session.bash(f"git commit -am 'Parser step {turn}'", f"[main {sha}] Parser step {turn}\n 1 file changed")
        session.answer(f"Done with step {turn}: the parser now accepts trailing commas there. " * 3)
    return session
