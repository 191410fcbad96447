"""Steps the hook tests and ``bench.hooks`` share: a home with notes, running ``mcp-memory hook``
as Claude Code does, and finding the background services of a data directory."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.integration.serve import MCP_MEMORY, server_env


def add_notes(home: Path, project: str, notes: list[dict[str, Any]]) -> list[str]:
    """Store ``notes`` (``text``, optional ``title``/``group``) with the real local model."""
    from local_mcp_memory.application.add_note import AddNote, add_note
    from local_mcp_memory.domain.identifiers import GroupId
    from local_mcp_memory.entrypoints.bootstrap import compose

    services = compose(config_path=home / "config.json", data_dir=home / "data", environ={})
    try:
        return [
            add_note(AddNote(project, GroupId(n.get("group", "kb")), n["text"], title=n.get("title")), services).id.value
            for n in notes
        ]
    finally:
        services.store.close()


def hook(
    home: Path, event: str, payload: Any, env: dict[str, str] | None = None, timeout: float = 60, cwd: Path | None = None
) -> subprocess.CompletedProcess[bytes]:
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return subprocess.run(
        [MCP_MEMORY, "hook", event, "--data-dir", str(home / "data"), "--config", str(home / "config.json")],
        input=data,
        capture_output=True,
        env=server_env(home, **(env or {})),
        cwd=cwd or home,
        timeout=timeout,
    )


def services_of(data_dir: Path) -> list[int]:
    """Pids of the ``mcp-memory service`` processes serving ``data_dir``."""
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
    for pid in services_of(data_dir):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 5
    while services_of(data_dir) and time.monotonic() < deadline:
        time.sleep(0.05)


def wait_for(condition: Any, seconds: float = 30) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False
