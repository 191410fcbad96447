"""Claude Code's settings files, as far as ``mcp-memory install-claude`` and
``uninstall-claude`` touch them.

What is installed: one hook per event of ``HOOKS`` in a settings file's ``hooks`` (Claude
Code's schema: event → matcher groups → ``{"type": "command", "command": ...}``), each
running ``mcp-memory hook <event>``, and the MCP server ``mcp-memory`` (``mcp-memory serve``)
under ``mcpServers`` of the matching MCP file (the project's ``.mcp.json``, or the user's
``.claude.json``). The plugin in ``plugins/mcp-memory`` declares the same (a test keeps
them equal).

Ownership is by exact marker, never by what a command runs: a hook is ours when its
command ends with `` # mcp-memory install-claude`` (a shell comment), the server entry when
its ``env`` holds ``MCP_MEMORY_INSTALLED_BY=install-claude``. A user's own hook running
``mcp-memory``, or a server of theirs named ``mcp-memory``, is never changed or removed.

Strict reading: a file that is not UTF-8 JSON, that holds ``NaN``/``Infinity``, a key
twice in one object, or whose containers and hook entries are not shaped as Claude Code
reads them (``_groups_problem``), is reported (``SettingsUnreadable``) and nothing is
written, in any file. An empty file is read as ``{}``, as Claude Code reads it. Numbers are kept as
written (``1e400`` stays ``1e400``), so what was not ours reads back exactly as before;
the file is written in Claude Code's own layout (two-space indentation). A read-only file
is refused. A file is written whole or not at all (a temporary file renamed over it),
keeping its mode; a symlinked file is written through the link. Running either command
twice writes nothing the second time. A file that uninstalling leaves an empty object is
deleted (``apply``).
"""

from __future__ import annotations

import json
import math
import os
import shlex
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs

MARKER = "# mcp-memory install-claude"
SERVER_NAME = "mcp-memory"
SERVER_MARKER = ("MCP_MEMORY_INSTALLED_BY", "install-claude")
BOM = "\ufeff"
MAX_BYTES = 64 * 2**20
"""A larger settings file is refused (Claude Code's own ``.claude.json`` stays far below)."""


@attrs.frozen
class HookSpec:
    """``event`` in Claude Code's settings runs ``mcp-memory hook <argument>``."""

    event: str
    argument: str
    matcher: str | None
    timeout: int

    def hook_arguments(self) -> str:
        return f"hook {self.argument}"

    def group(self, command: str) -> dict[str, Any]:
        hook = {"type": "command", "command": command, "timeout": self.timeout}
        return {"hooks": [hook]} if self.matcher is None else {"matcher": self.matcher, "hooks": [hook]}


HOOKS = (
    HookSpec("SessionStart", "session-start", "startup|resume|clear|compact", 30),
    HookSpec("UserPromptSubmit", "user-prompt-submit", None, 10),
    HookSpec("Stop", "stop", None, 30),
    HookSpec("SessionEnd", "session-end", None, 30),
    HookSpec("PreCompact", "pre-compact", None, 30),
)


class SettingsUnreadable(Exception):
    """A settings file that cannot be changed safely (path, reason)."""

    def __init__(self, path: Path, reason: str, written: tuple[Path, ...] = ()) -> None:
        self.path = path
        self.reason = reason
        self.written = written
        super().__init__(f"{path}: {reason}")


# ---------------------------------------------------------------- where


def project_settings(project_dir: Path) -> Path:
    return project_dir / ".claude" / "settings.json"


def project_servers(project_dir: Path) -> Path:
    return project_dir / ".mcp.json"


def user_settings(environ: Mapping[str, str]) -> Path:
    """``$CLAUDE_CONFIG_DIR/settings.json``, else ``~/.claude/settings.json``."""
    return _config_dir(environ, os.path.join(os.path.expanduser("~"), ".claude")) / "settings.json"


def user_servers(environ: Mapping[str, str]) -> Path:
    """Where ``claude mcp add --scope user`` writes: ``$CLAUDE_CONFIG_DIR/.claude.json``, else ``~/.claude.json``."""
    return _config_dir(environ, os.path.expanduser("~")) / ".claude.json"


def _config_dir(environ: Mapping[str, str], default: str) -> Path:
    return Path(os.path.expanduser(environ.get("CLAUDE_CONFIG_DIR") or default)).absolute()


# ---------------------------------------------------------------- what


def executable() -> str:
    """How the entries name ``mcp-memory``: plainly when the one on PATH is the one running,
    else by the running one's absolute path (a virtualenv not on PATH)."""
    running = Path(sys.argv[0]).absolute()
    on_path = shutil.which("mcp-memory")
    if running.name != "mcp-memory" or not running.is_file():
        return "mcp-memory" if on_path is None else on_path
    if on_path is not None and Path(on_path).absolute() == running:
        return "mcp-memory"
    return str(running)


def paths_env(config: str | None, data_dir: str | None) -> dict[str, str]:
    """The environment passing ``--config`` / ``--data-dir`` on to every command installed."""
    named = {"MCP_MEMORY_CONFIG": config, "MCP_MEMORY_DATA_DIR": data_dir}
    return {k: str(Path(os.path.expanduser(v)).absolute()) for k, v in named.items() if v is not None}


def hook_command(program: str, spec: HookSpec, env: Mapping[str, str]) -> str:
    words = [f"{k}={shlex.quote(v)}" for k, v in env.items()] + [shlex.quote(program), spec.hook_arguments()]
    return " ".join(words) + " " + MARKER


def server_entry(program: str, env: Mapping[str, str]) -> dict[str, Any]:
    return {"type": "stdio", "command": program, "args": ["serve"], "env": {**env, SERVER_MARKER[0]: SERVER_MARKER[1]}}


def is_our_hook(hook: Any) -> bool:
    return isinstance(hook, dict) and isinstance(hook.get("command"), str) and hook["command"].endswith(" " + MARKER)


def runs_context(hook: Any) -> bool:
    """A hook, not ours, running ``mcp-memory context``: an older install-claude's, or the
    user's own; left alone, but it shows the session page a second time."""
    if is_our_hook(hook) or not isinstance(hook, dict) or not isinstance(hook.get("command"), str):
        return False
    try:
        words = shlex.split(hook["command"], comments=True)
    except ValueError:
        return False
    return len(words) >= 2 and os.path.basename(words[0]) == "mcp-memory" and words[1] == "context"


def session_pages(settings: dict[str, Any]) -> int:
    """How many SessionStart hooks not ours run ``mcp-memory context`` (see ``runs_context``)."""
    groups = settings.get("hooks", {}).get("SessionStart", [])
    return sum(runs_context(h) for g in groups for h in g.get("hooks", []))


def is_our_server(entry: Any) -> bool:
    env = entry.get("env") if isinstance(entry, dict) else None
    return isinstance(env, dict) and env.get(SERVER_MARKER[0]) == SERVER_MARKER[1]


# ---------------------------------------------------------------- changes (None: nothing to change)


def with_hooks(settings: dict[str, Any], commands: Mapping[str, str], path: Path) -> dict[str, Any] | None:
    """``settings`` holding exactly one hook of ours per event of ``HOOKS`` (running
    ``commands[event]``); a hook of ours that differs is removed and the new one added last."""
    hooks = _hooks(settings, path)
    changed = dict(hooks)
    for spec in HOOKS:
        groups = hooks.get(spec.event, [])
        wanted = spec.group(commands[spec.event])
        ours = [g for g in groups if any(is_our_hook(h) for h in g.get("hooks", []))]
        if ours == [wanted]:
            continue
        changed[spec.event] = _without_ours(groups) + [wanted]
    return None if changed == hooks else {**settings, "hooks": changed}


def without_hooks(settings: dict[str, Any], path: Path) -> dict[str, Any] | None:
    """``settings`` without any hook of ours; an event (and ``hooks``) left empty by that goes too."""
    hooks = _hooks(settings, path)
    changed = {}
    for event, groups in hooks.items():
        kept = _without_ours(groups)
        if kept or not groups:
            changed[event] = kept
    if changed == hooks:
        return None
    if changed:
        return {**settings, "hooks": changed}
    return {k: v for k, v in settings.items() if k != "hooks"}


def with_server(config: dict[str, Any], entry: dict[str, Any], path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """``config`` with our server entry, and a note when a server of the user's holds the name."""
    servers = _servers(config, path)
    current = servers.get(SERVER_NAME)
    if current is not None and not is_our_server(current):
        return None, f"an MCP server named {SERVER_NAME!r} that this command did not write is in {path}: left as it is"
    if current == entry:
        return None, None
    return {**config, "mcpServers": {**servers, SERVER_NAME: entry}}, None


def without_server(config: dict[str, Any], path: Path) -> dict[str, Any] | None:
    servers = _servers(config, path)
    if not is_our_server(servers.get(SERVER_NAME)):
        return None
    rest = {k: v for k, v in servers.items() if k != SERVER_NAME}
    if rest:
        return {**config, "mcpServers": rest}
    return {k: v for k, v in config.items() if k != "mcpServers"}


def _hooks(settings: dict[str, Any], path: Path) -> dict[str, Any]:
    hooks = settings.get("hooks", {})
    if not isinstance(hooks, dict):
        raise SettingsUnreadable(path, '"hooks" is not a JSON object')
    for event, groups in hooks.items():
        if (problem := _groups_problem(groups)) is not None:
            raise SettingsUnreadable(path, f'"hooks.{event}{problem[0]}" {problem[1]}')
    return hooks


def _groups_problem(groups: Any) -> tuple[str, str] | None:
    """Where, below an event of ``hooks``, the first entry lies that Claude Code would not
    read, and why; None when every one is read. The rules are the ones Claude Code itself
    applies (2.1.330 reports such an entry as an invalid setting and ignores it): a list of
    objects, each with a string ``matcher`` if it has one and a ``hooks`` list of objects,
    each with a string ``type`` (a command hook a string ``command``) and, if it has one, a
    positive ``timeout``. Other keys, and types and events this module does not know, are
    accepted as Claude Code accepts them."""
    if not isinstance(groups, list):
        return "", "is not a list"
    for i, group in enumerate(groups):
        if not isinstance(group, dict):
            return f"[{i}]", "is not a JSON object"
        if "matcher" in group and not isinstance(group["matcher"], str):
            return f"[{i}].matcher", "is not a string"
        if not isinstance(group.get("hooks"), list):
            return f"[{i}].hooks", "is not a list"
        for j, hook in enumerate(group["hooks"]):
            at = f"[{i}].hooks[{j}]"
            if not isinstance(hook, dict):
                return at, "is not a JSON object"
            if not isinstance(hook.get("type"), str):
                return f"{at}.type", "is not a string"
            if hook["type"] == "command" and not isinstance(hook.get("command"), str):
                return f"{at}.command", "is not a string"
            if "timeout" in hook and not _positive(hook["timeout"]):
                return f"{at}.timeout", "is not a positive number"
    return None


def _positive(value: Any) -> bool:
    number = json.loads(value.text) if isinstance(value, Number) else value
    return isinstance(number, (int, float)) and not isinstance(number, bool) and 0 < number < math.inf


def _without_ours(groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``groups`` without our hooks; a group that held only ours goes with them."""
    kept = []
    for group in groups:
        hooks = group.get("hooks", [])
        rest = [h for h in hooks if not is_our_hook(h)]
        if len(rest) == len(hooks):
            kept.append(group)
        elif rest:
            kept.append({**group, "hooks": rest})
    return kept


def _servers(config: dict[str, Any], path: Path) -> dict[str, Any]:
    servers = config.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise SettingsUnreadable(path, '"mcpServers" is not a JSON object')
    return servers


# ---------------------------------------------------------------- strict JSON that keeps numbers as written


class Number:
    """A JSON number as written in the file (``1e400`` stays ``1e400``)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Number):
            return self.text == other.text
        if isinstance(other, (int, float)) and not isinstance(other, bool):
            return json.loads(self.text) == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return self.text


def parse(text: str, path: Path) -> Any:
    def constant(name: str) -> Any:
        raise SettingsUnreadable(path, f"holds {name}, which is not JSON")

    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for key, value in pairs:
            if key in found:
                raise SettingsUnreadable(path, f"the key {key!r} appears twice in one object")
            found[key] = value
        return found

    try:
        return json.loads(text, parse_float=Number, parse_int=Number, parse_constant=constant, object_pairs_hook=unique)
    except json.JSONDecodeError as exc:
        raise SettingsUnreadable(path, f"not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:
        raise SettingsUnreadable(path, "nested too deeply") from None


def dumps(value: Any, depth: int = 0) -> str:
    """JSON in Claude Code's layout (``JSON.stringify(value, null, 2)``)."""
    inner = "  " * (depth + 1)
    if isinstance(value, dict):
        items = [f"{inner}{_string(k)}: {dumps(v, depth + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + "  " * depth + "}" if items else "{}"
    if isinstance(value, list):
        items = [inner + dumps(v, depth + 1) for v in value]
        return "[\n" + ",\n".join(items) + "\n" + "  " * depth + "]" if items else "[]"
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, Number):
        return value.text
    if value is True or value is False or value is None:
        return json.dumps(value)
    if isinstance(value, int):
        return str(value)
    raise TypeError(f"not a settings value: {value!r}")


def _string(text: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate, written as a \\u escape as it was read
        return json.dumps(text)
    return json.dumps(text, ensure_ascii=False)


# ---------------------------------------------------------------- files


@attrs.define
class SettingsFile:
    """One file as read: its object, and how it was written (to write it back alike)."""

    path: Path
    content: dict[str, Any]
    exists: bool
    bom: bool = False
    final_newline: bool = True
    identity: tuple[int, ...] | None = None

    @classmethod
    def read(cls, path: Path) -> SettingsFile:
        """The file at ``path``; an empty object when there is none, or it is empty. A
        symlink to nothing is refused (``SettingsUnreadable``)."""
        try:
            info = path.stat()
            if not stat.S_ISREG(info.st_mode):  # a FIFO would block the read
                raise SettingsUnreadable(path, "not a regular file")
            if info.st_size > MAX_BYTES:
                raise SettingsUnreadable(path, f"larger than {MAX_BYTES // 2**20} MB")
            if not info.st_mode & stat.S_IWUSR or not os.access(path, os.W_OK):
                raise SettingsUnreadable(path, f"read-only (mode {stat.S_IMODE(info.st_mode):04o})")
            raw = path.read_bytes()
        except FileNotFoundError:
            if path.is_symlink():  # writing would create the link's target, and its folders
                raise SettingsUnreadable(path, f"is a symlink to {os.readlink(path)}, which does not exist") from None
            return cls(path, {}, exists=False)
        except OSError as exc:
            raise SettingsUnreadable(path, exc.strerror or str(exc)) from None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SettingsUnreadable(path, f"not UTF-8 (byte {exc.start})") from None
        bom = text.startswith(BOM)
        text = text.removeprefix(BOM)
        identity = _identity(info)
        if not text.strip():
            return cls(path, {}, exists=True, bom=bom, identity=identity)
        content = parse(text, path)
        if not isinstance(content, dict):
            raise SettingsUnreadable(path, "not a JSON object")
        return cls(path, content, exists=True, bom=bom, final_newline=text.endswith("\n"), identity=identity)

    def text_of(self, content: dict[str, Any]) -> str:
        """``content`` as this file writes it, checked to read back exactly."""
        text = dumps(content) + ("\n" if self.final_newline else "")
        if parse(text, self.path) != content:  # every number and string reads back as it was
            raise SettingsUnreadable(self.path, "cannot be written back exactly")
        return text

    def write(self, text: str) -> None:
        """``text`` (see ``text_of``) into the file, whole or not at all; refused when the file
        changed since it was read."""
        path = self.path.resolve() if self.path.is_symlink() else self.path
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                stream.write((BOM if self.bom else "") + text)
                stream.flush()
                os.fsync(stream.fileno())
            if self.exists:
                info = self._unchanged(path)
                os.chmod(temporary, stat.S_IMODE(info.st_mode))
            elif os.path.lexists(path):
                raise SettingsUnreadable(self.path, "was created while it was being updated; run the command again")
            else:
                os.chmod(temporary, 0o600 if path.name == ".claude.json" else 0o644)
            os.replace(temporary, path)
        finally:
            if os.path.exists(temporary):
                os.unlink(temporary)
        _sync_directory(path.parent)

    def remove(self) -> None:
        """The file deleted, as it holds nothing; refused when it changed since it was read."""
        self._unchanged(self.path)
        self.path.unlink()
        _sync_directory(self.path.parent)

    def _unchanged(self, path: Path) -> os.stat_result:
        info = path.stat()
        if _identity(info) != self.identity:
            raise SettingsUnreadable(self.path, "changed while it was being updated; run the command again")
        return info


def _identity(info: os.stat_result) -> tuple[int, ...]:
    return (info.st_ino, info.st_size, info.st_mtime_ns)


def _sync_directory(directory: Path) -> None:
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


Change = Callable[[dict[str, Any], Path], dict[str, Any] | None]


def apply(changes: list[tuple[Path, Change]]) -> list[Path]:
    """Read every file first (one unreadable: nothing is written anywhere), then write those
    that change; the paths written. A file that a change leaves an empty object (uninstalling
    all it held) is deleted instead, unless it is a symlink: that is written ``{}`` through."""
    planned: list[tuple[SettingsFile, str | None]] = []
    for path, change in changes:
        current = SettingsFile.read(path)
        try:
            new = change(current.content, path)
            if new == {} and current.exists and not path.is_symlink():
                planned.append((current, None))
            elif new is not None:
                planned.append((current, current.text_of(new)))
        except RecursionError:  # read by json's parser, too deep for the code that compares and writes
            raise SettingsUnreadable(path, "nested too deeply") from None
    written: list[Path] = []
    for current, text in planned:
        try:
            current.remove() if text is None else current.write(text)
        except SettingsUnreadable as exc:
            raise SettingsUnreadable(exc.path, exc.reason, tuple(written)) from None
        written.append(current.path)
    return written
