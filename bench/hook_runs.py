"""Notes stored with the real local model, ``mcp-memory hook`` run as Claude Code runs it, and
the background services of a data directory: shared by the hook tests and ``bench.hooks``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

MCP_MEMORY = str(Path(sys.executable).with_name("mcp-memory"))


def add_notes(home: Path, project: str, notes: list[dict[str, Any]]) -> list[str]:
    """Store ``notes`` (``text``, optional ``title``/``group``) with the real local model."""
    from local_mcp_memory.application.add_note import AddNote, add_note
    from local_mcp_memory.domain.identifiers import GroupId
    from local_mcp_memory.entrypoints.composition.compose import compose
    from local_mcp_memory.entrypoints.composition.settings import ServerOptions

    services = compose(ServerOptions.resolve({}, home / "config.json", home / "data"))
    try:
        return [
            add_note(AddNote(project, GroupId(n.get("group", "kb")), n["text"], title=n.get("title")), services).id.value
            for n in notes
        ]
    finally:
        services.store.close()


def hook_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment without the caller's mcp-memory settings, its files under ``home``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCP_MEMORY_")}
    env.update(HOME=str(home), MCP_MEMORY_CONFIG=str(home / "config.json"), MCP_MEMORY_DATA_DIR=str(home / "data"))
    env.update(extra)
    return env


def run_hook(
    home: Path, event: str, payload: Any, env: Mapping[str, str] | None = None, timeout: float = 60, cwd: Path | None = None
) -> subprocess.CompletedProcess[bytes]:
    """``mcp-memory hook <event>`` with ``payload`` (bytes as they are, else JSON) on stdin."""
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return subprocess.run(
        [MCP_MEMORY, "hook", event, "--data-dir", str(home / "data"), "--config", str(home / "config.json")],
        input=data,
        capture_output=True,
        env=hook_env(home, **(env or {})),
        cwd=cwd or home,
        timeout=timeout,
    )


def services_of(data_dir: Path) -> list[int]:
    """Pids of the ``mcp-memory service`` processes serving ``data_dir`` (started by a hook
    given ``--data-dir``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"service" in argv and b"local_mcp_memory.entrypoints.cli" in argv and os.fsencode(str(data_dir)) in argv:
            found.append(int(entry.name))
    return found


def stop_services(data_dir: Path) -> None:
    """Kill the services of ``data_dir`` and wait until they are gone."""
    for pid in services_of(data_dir):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 5
    while services_of(data_dir) and time.monotonic() < deadline:
        time.sleep(0.05)
