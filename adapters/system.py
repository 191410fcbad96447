"""The operating system behind small ports: the clock and filesystem project paths."""

from __future__ import annotations

import os
from datetime import datetime, timezone

from local_mcp_memory.domain.errors import InvalidValue
from local_mcp_memory.domain.identifiers import CanonicalProjectId, is_path_like


class SystemClock:
    """``Clock`` on the system's real-time clock."""

    def now(self) -> datetime:
        return datetime.now(timezone.utc)


class OsProjectResolver:
    """``ProjectResolver`` on the local filesystem (macOS and Linux).

    A path is expanded (``~``, ``~user``), made absolute against the process's working
    directory, and resolved through every symlink; when resolution fails (the path does not
    exist, a symlink loop, no permission) the normalized absolute path is used instead.
    """

    def canonical(self, raw: str) -> CanonicalProjectId:
        if not isinstance(raw, str) or not is_path_like(raw):
            return CanonicalProjectId(raw)
        if "\x00" in raw:
            raise InvalidValue("CanonicalProjectId", "must not contain control characters", raw)
        expanded = os.path.expanduser(raw)
        if expanded.startswith("~"):
            raise InvalidValue("ProjectPath", "must name a known user's home after ~", raw)
        absolute = os.path.abspath(expanded)
        try:
            resolved = os.path.realpath(absolute, strict=True)
        except (OSError, RuntimeError):
            resolved = absolute
        return CanonicalProjectId(resolved)
