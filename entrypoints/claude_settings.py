"""Claude Code's settings file, as far as ``mcp-memory install-claude`` touches it.

The hook it installs, in Claude Code's hooks schema (``hooks`` → event → matcher groups →
``{"type": "command", "command": ...}``)::

    {"hooks": {"SessionStart": [{"matcher": "startup|clear|compact", "hooks": [
        {"type": "command", "command": "mcp-memory context --project \\"${CLAUDE_PROJECT_DIR:-$PWD}\\"",
         "timeout": 30}]}]}}

Claude Code runs a SessionStart command when a session starts (``startup``), after
``/clear`` and after a compaction (the matcher; a resumed session already holds the page),
and adds what the command prints on stdout, exit code 0, to the session's context.

``install`` merges that into the file: every other key, event, matcher group and hook stays
as it was, in its order. A hook this command wrote before (a command that runs
``mcp-memory context``) is replaced: removed wherever it is (with its matcher group when
nothing else is left in it) and the new one added last, so running it again never adds a
second one; when it is already exactly there the file is not written at all. A file that is not a JSON
object, or whose ``hooks`` are not shaped as Claude Code reads them, is reported
(``SettingsUnreadable``) and never overwritten. The new file is written whole or not at all
(a temporary file renamed over it), keeping the old file's permissions; a settings file
that is a symlink (dotfiles) is written through the link.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

EVENT = "SessionStart"
MATCHER = "startup|clear|compact"
TIMEOUT_SECONDS = 30
PROJECT_DIR = '"${CLAUDE_PROJECT_DIR:-$PWD}"'
"""Claude Code sets CLAUDE_PROJECT_DIR for hook commands; the working directory otherwise."""


class SettingsUnreadable(Exception):
    """The settings file exists but is not what Claude Code reads (path, reason)."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")


def project_settings(project_dir: str) -> Path:
    return Path(os.path.expanduser(project_dir)).absolute() / ".claude" / "settings.json"


def user_settings(environ: Mapping[str, str]) -> Path:
    """Claude Code's user settings: ``$CLAUDE_CONFIG_DIR/settings.json``, else ``~/.claude/settings.json``."""
    base = environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    return Path(os.path.expanduser(base)).absolute() / "settings.json"


def executable() -> str:
    """How the hook names ``mcp-memory``: plainly when the one on PATH is the one running,
    else by the running one's absolute path (a virtualenv not on PATH)."""
    running = Path(sys.argv[0]).absolute()
    on_path = shutil.which("mcp-memory")
    if running.name != "mcp-memory" or not running.is_file():
        return "mcp-memory" if on_path is None else on_path
    if on_path is not None and Path(on_path).absolute() == running:
        return "mcp-memory"
    return str(running)


def hook_command(program: str, config: str | None = None, data_dir: str | None = None) -> str:
    words = [shlex.quote(program), "context", "--project", PROJECT_DIR]
    for flag, value in (("--config", config), ("--data-dir", data_dir)):
        if value is not None:
            words += [flag, shlex.quote(str(Path(os.path.expanduser(value)).absolute()))]
    return " ".join(words)


def is_ours(hook: Any) -> bool:
    """A hook this command wrote: a command running ``mcp-memory context``."""
    if not isinstance(hook, dict) or not isinstance(hook.get("command"), str):
        return False
    try:
        words = shlex.split(hook["command"])
    except ValueError:
        return False
    return len(words) >= 2 and os.path.basename(words[0]) == "mcp-memory" and words[1] == "context"


def merged(settings: dict[str, Any], command: str, path: Path) -> dict[str, Any] | None:
    """``settings`` with the hook running ``command``; None when it is already exactly there."""
    hooks = settings.get("hooks", {})
    if not isinstance(hooks, dict):
        raise SettingsUnreadable(path, '"hooks" is not a JSON object')
    groups = hooks.get(EVENT, [])
    if not isinstance(groups, list) or not all(isinstance(g, dict) and isinstance(g.get("hooks", []), list) for g in groups):
        raise SettingsUnreadable(path, f'"hooks.{EVENT}" is not a list of {{"matcher", "hooks": [...]}} objects')
    wanted = {"type": "command", "command": command, "timeout": TIMEOUT_SECONDS}
    found = [(g, i) for g in groups for i, h in enumerate(g.get("hooks", [])) if is_ours(h)]
    if len(found) == 1 and found[0][0].get("matcher") == MATCHER and found[0][0]["hooks"][found[0][1]] == wanted:
        return None
    kept = []
    for group in groups:
        rest = [h for h in group.get("hooks", []) if not is_ours(h)]
        if rest or not any(is_ours(h) for h in group.get("hooks", [])):
            kept.append({**group, "hooks": rest} if "hooks" in group else group)
    kept.append({"matcher": MATCHER, "hooks": [wanted]})
    return {**settings, "hooks": {**hooks, EVENT: kept}}


def read(path: Path) -> dict[str, Any]:
    """The settings in ``path``; ``{}`` when there is no file or it is empty."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SettingsUnreadable(path, f"not UTF-8 (byte {exc.start})") from None
    if not text.strip():
        return {}
    try:
        settings = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SettingsUnreadable(path, f"not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    if not isinstance(settings, dict):
        raise SettingsUnreadable(path, "not a JSON object")
    return settings


def install(path: Path, command: str) -> bool:
    """Merge the hook running ``command`` into the settings file ``path``; False when it was
    already there (nothing written)."""
    settings = merged(read(path), command, path)
    if settings is None:
        return False
    path = path.resolve() if path.is_symlink() else path
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if path.exists() else None
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(json.dumps(settings, indent=2, ensure_ascii=False) + "\n")
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, 0o644 if mode is None else mode)
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    return True
