"""``mcp-memory hook <event>``: what Claude Code's hooks run, and ``mcp-memory service``, the
background process that answers them warm.

A hook reads Claude Code's JSON from stdin, asks the service (``hook_service``) to handle it
(``hook_handlers``), starting the service when none lives, and prints the answer. When the
service cannot start or answer in time, the hook does the work itself. Whatever happens it
exits 0 before its budget is spent (a watchdog ends it), prints nothing but the answer on
stdout, and logs why it printed nothing: JSON lines on stderr and in ``<socket>.log``
beside the service's socket. Logged text is scrubbed of secrets; prompts are never logged.

Settings, from the environment (a bad value is logged and the default used):

  MCP_MEMORY_RECALL_CHARS          most characters a prompt's recall adds (default 2000, min 200)
  MCP_MEMORY_RECALL_FLOOR          hybrid score a note needs to be recalled (default recall.DEFAULT_FLOOR)
  MCP_MEMORY_SESSION_EXPIRY_DAYS   days a session digest lives after its last capture (90; "none": kept)
  MCP_MEMORY_DIGEST_CHARS          longest session digest (default 4000, min 500)
  MCP_MEMORY_SERVICE_IDLE          seconds the service waits for a request before it exits (600);
                                   0 runs every hook in-process, with no service
  MCP_MEMORY_HOOK_TIMEOUT          seconds a hook may take in all (default 8; 25 for the capture events)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

EVENTS = ("session-start", "user-prompt-submit", "stop", "session-end", "pre-compact")
MAX_INPUT_BYTES = 4 * 1024 * 1024
DEFAULT_TIMEOUT = 8.0
CAPTURE_TIMEOUT = 25.0
"""Budgets, in seconds, under the timeouts of the plugin's hooks (10 s and 30 s)."""


def add_parsers(commands: argparse._SubParsersAction, add_path_flags: Callable[[argparse.ArgumentParser], None], epilog: str) -> None:
    hook = commands.add_parser(
        "hook",
        help="run a Claude Code hook: recall for a prompt, capture the session, the session page",
        description=(
            "Read the JSON Claude Code gives a hook on stdin and do what the event calls for:\n"
            "  session-start        print the session page (as `mcp-memory context`), and after a\n"
            "                       compaction or a resume the session's digest so far\n"
            "  user-prompt-submit   print the notes relevant to the prompt, or nothing\n"
            "  stop, session-end, pre-compact\n"
            "                       store the session's digest, made from its transcript\n"
            "Always exits 0, in time; why nothing was printed is logged on stderr.\n"
            "Settings: see docs/claude-code.md (MCP_MEMORY_RECALL_CHARS, MCP_MEMORY_SERVICE_IDLE, ...)."
        ),
        epilog="example:\n  echo '{\"session_id\":\"s1\",\"cwd\":\".\",\"prompt\":\"how do we deploy\"}' | mcp-memory hook user-prompt-submit",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    hook.add_argument("event", choices=EVENTS, help="the hook event")
    add_path_flags(hook)
    hook.set_defaults(handler=hook_main)
    service = commands.add_parser(
        "service",
        help="the background service hooks talk to (hooks start it themselves)",
        description="Answer hooks over a Unix socket beside the data directory until idle for\n"
        "MCP_MEMORY_SERVICE_IDLE seconds (default 600). Hooks start it when they need it; running it\n"
        "by hand while one runs exits at once.",
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    service.add_argument("--lock-fd", type=int, help=argparse.SUPPRESS)
    add_path_flags(service)
    service.set_defaults(handler=service_main)


# ---------------------------------------------------------------- settings


SETTINGS_ENV = {
    "recall_chars": ("MCP_MEMORY_RECALL_CHARS", 200, 100_000, True),
    "recall_floor": ("MCP_MEMORY_RECALL_FLOOR", 0.0, 1.0, False),
    "expiry_days": ("MCP_MEMORY_SESSION_EXPIRY_DAYS", 0.001, 36_500.0, False),
    "digest_chars": ("MCP_MEMORY_DIGEST_CHARS", 500, 100_000, True),
}
"""``HookSettings`` field: (environment variable, least and largest value, whole number). A
score is at most 1; a digest is a note (100,000 characters at most); an expiry lies within a
century, before the year 9999 that dates end at."""

SECONDS_ENV = {"MCP_MEMORY_HOOK_TIMEOUT": 3600.0, "MCP_MEMORY_SERVICE_IDLE": 86_400.0}
"""The largest value of each setting in seconds: an hour for a hook, a day for the service."""


def hook_settings(environ: Mapping[str, str], log: Callable[..., None]) -> dict[str, Any]:
    """The hook settings the environment sets (``HookSettings`` fills in the rest); a bad
    value is logged and left out."""
    settings: dict[str, Any] = {}
    for field, (name, low, high, whole) in SETTINGS_ENV.items():
        raw = (environ.get(name) or "").strip()
        if not raw:
            continue
        if field == "expiry_days" and raw.lower() == "none":
            settings[field] = None
            continue
        rule = f"must be a {'whole ' if whole else ''}number from {low} to {high}"
        value = _in_range(name, raw, low, high, whole, rule, log)
        if value is not None:
            settings[field] = value
    return settings


def _seconds(environ: Mapping[str, str], name: str, default: float, log: Callable[..., None]) -> float:
    """The setting ``name`` in seconds, from 0 to its ``SECONDS_ENV`` bound; ``default`` when
    unset, and when out of range or no number (logged)."""
    raw = (environ.get(name) or "").strip()
    rule = f"must be a number of seconds from 0 to {SECONDS_ENV[name]:g}"
    value = _in_range(name, raw, 0, SECONDS_ENV[name], False, rule, log) if raw else None
    return default if value is None else value


def _in_range(name: str, raw: str, low: float, high: float, whole: bool, rule: str, log: Callable[..., None]) -> float | None:
    """``raw`` as a number (a whole one with ``whole``) from ``low`` to ``high``; None, with
    ``rule`` logged, when it is none or out of range (NaN too)."""
    try:
        value = int(raw) if whole else float(raw)
        if low <= value <= high:
            return value
    except ValueError:
        pass
    log("hook_setting_ignored", setting=name, rule=rule)
    return None


# ---------------------------------------------------------------- the hook


class _Log:
    """Log lines of one hook or service: JSON on stderr (structlog) and appended to a file."""

    def __init__(self) -> None:
        self.file: Path | None = None

    def __call__(self, event: str, level: str = "warning", **fields: Any) -> None:
        from local_mcp_memory.application.secrets import scrub
        from local_mcp_memory.entrypoints.logs import get_logger

        clean = {k: scrub(v) if isinstance(v, str) else v for k, v in fields.items()}
        try:
            getattr(get_logger(), level)(event, **clean)
        except Exception:  # a closed stderr must not fail the hook
            pass
        if self.file is not None:
            line = json.dumps({"event": event, "level": level, "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "pid": os.getpid(), **clean})
            try:
                fd = os.open(self.file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
                try:
                    os.write(fd, line.encode() + b"\n")
                finally:
                    os.close(fd)
            except OSError:
                pass


def hook_main(args: argparse.Namespace) -> int:
    """Never raises, always 0: a hook must not fail the prompt or the session."""
    started = time.monotonic()
    default = CAPTURE_TIMEOUT if args.event in ("stop", "session-end", "pre-compact") else DEFAULT_TIMEOUT
    from local_mcp_memory.entrypoints import logs

    logs.configure({logs.LOG_LEVEL_ENV: "WARNING", **os.environ})  # before the first line: on stderr, never stdout
    log = _Log()
    timeout = max(0.5, _seconds(os.environ, "MCP_MEMORY_HOOK_TIMEOUT", default, log))
    watchdog = threading.Timer(timeout - 0.1, _give_up)
    watchdog.daemon = True
    watchdog.start()
    try:
        text = _run_hook(args, started, timeout, log)
    except BaseException as exc:  # noqa: BLE001 - nothing may escape a hook
        log("hook_failed", hook_event=args.event, error=type(exc).__name__, detail=str(exc)[:300])
        text = ""
    if text:
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
    watchdog.cancel()
    return 0


def _give_up() -> None:
    """The budget is spent: leave now, printing nothing more, exit code 0."""
    try:
        sys.stderr.write('{"event": "hook_timed_out", "level": "warning"}\n')
        sys.stderr.flush()
    finally:
        os._exit(0)


def _run_hook(args: argparse.Namespace, started: float, timeout: float, log: _Log) -> str:
    from local_mcp_memory.entrypoints.cli.hook_service import ServiceUnavailable, ask, socket_path, spawn
    from local_mcp_memory.entrypoints.composition.paths import resolve_paths

    payload = _read_input(log)
    if payload is None:
        return ""
    _, data_dir, _ = resolve_paths(os.environ, args.config, args.data_dir, args.store)
    request = {"event": args.event, "input": payload, "cwd": os.getcwd(), "settings": hook_settings(os.environ, log)}
    idle = _seconds(os.environ, "MCP_MEMORY_SERVICE_IDLE", 600.0, log)
    if idle > 0:
        try:
            sock = socket_path(data_dir, os.environ)
            log.file = Path(f"{sock}.log")
            flags = _path_flags(args)
            start = lambda fd: spawn(fd, flags, Path(f"{sock}.log"), os.environ)  # noqa: E731
            answer = ask(sock, request, started + timeout - 0.3, start)
            if "stdout" in answer and isinstance(answer["stdout"], str):
                return answer["stdout"]
            log("hook_service_error", hook_event=args.event, error=str(answer.get("error")))
            return ""
        except ServiceUnavailable as exc:
            log("hook_service_unavailable", hook_event=args.event, reason=exc.reason)
            if exc.slow:
                return ""
        except OSError as exc:
            log("hook_service_unavailable", hook_event=args.event, reason=exc.strerror or type(exc).__name__)
    return _in_process(request, args, log)


def _path_flags(args: argparse.Namespace) -> list[str]:
    flags = []
    for flag, value in (("--config", args.config), ("--data-dir", args.data_dir), ("--store", args.store)):
        if value:
            flags += [flag, os.path.abspath(value) if flag != "--store" or "://" not in value else value]
    return flags


def _read_input(log: _Log) -> dict[str, Any] | None:
    data = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
    if len(data) > MAX_INPUT_BYTES:
        log("hook_input_refused", reason=f"more than {MAX_INPUT_BYTES} bytes on stdin")
        return None
    try:
        payload = json.loads(data)
    except (ValueError, RecursionError):
        log("hook_input_refused", reason="stdin is not JSON")
        return None
    if not isinstance(payload, dict):
        log("hook_input_refused", reason="stdin is not a JSON object")
        return None
    return payload


def _in_process(request: dict[str, Any], args: argparse.Namespace, log: _Log) -> str:
    from local_mcp_memory.entrypoints.composition.compose import compose
    from local_mcp_memory.entrypoints.composition.settings import ServerOptions
    from local_mcp_memory.entrypoints.cli.hook_handlers import handle

    services = compose(ServerOptions.resolve(os.environ, args.config, args.data_dir, args.store))
    try:
        return handle(request, services, log)
    finally:
        services.close()


# ---------------------------------------------------------------- the service


def service_main(args: argparse.Namespace) -> int:
    from local_mcp_memory.entrypoints import logs
    from local_mcp_memory.entrypoints.composition.compose import compose
    from local_mcp_memory.entrypoints.composition.settings import ServerOptions
    from local_mcp_memory.entrypoints.cli.hook_handlers import handle
    from local_mcp_memory.entrypoints.cli.hook_service import IDLE_ENV, ServiceUnavailable, serve, socket_path

    logs.configure(os.environ)
    log = _Log()
    options = ServerOptions.resolve(os.environ, args.config, args.data_dir, args.store)
    try:
        sock = socket_path(options.data_dir, os.environ)
    except ServiceUnavailable as exc:
        log("service_not_started", reason=exc.reason)
        return 1
    idle = _seconds(os.environ, IDLE_ENV, 600.0, log) or 600.0
    try:
        services = compose(options)
    except Exception as exc:  # the hooks waiting for it see it gone and work in-process
        log("service_not_started", reason=type(exc).__name__, detail=str(exc)[:300])
        return 1
    lock = threading.Lock()

    def answer(request: dict[str, Any]) -> str:
        return handle(request, services, log, turn=lock)

    warm = threading.Thread(target=_warm, args=(services, lock, log), daemon=True)
    warm.start()
    try:
        return serve(sock, args.lock_fd, idle, answer, log)
    finally:
        services.close()


def _warm(services: Any, lock: threading.Lock, log: _Log) -> None:
    """Load the model before the first prompt needs it."""
    with lock:
        try:
            services.embedding.embed(["warm up"], "query")
        except Exception as exc:  # the first request reports the real problem
            log("service_warm_up_failed", error=type(exc).__name__)
