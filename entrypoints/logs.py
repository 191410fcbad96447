"""Structured logs on stderr, with structlog loaded on first use rather than at start-up.

Importing structlog costs ~70 ms (more where ``rich`` is installed), which is half of the
budget for answering ``initialize``. So entrypoints log through ``get_logger()``, a proxy
that imports structlog the first time a line is logged, and the composition root calls
``configure`` (which only records the settings) at start-up; ``ensure_configured`` applies
them, once, before the first line or before the adapters load (``composition.compose.compose``).

Output is unchanged: JSON lines on stderr with ``level`` and an ISO ``timestamp`` (UTC).
Nothing is ever written to stdout. When ``configure`` was never called (tests), structlog
keeps whatever configuration it has, so ``structlog.testing.capture_logs()`` works.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Mapping
from typing import Any

LOG_LEVEL_ENV = "MCP_MEMORY_LOG_LEVEL"
LEVELS = {"DEBUG": 10, "INFO": 20, "WARNING": 30, "ERROR": 40, "CRITICAL": 50}

_lock = threading.Lock()
_pending: int | None = None
_unknown: str | None = None  # a level the environment named that is none of LEVELS


def configure(environ: Mapping[str, str]) -> None:
    """Record the log level (``MCP_MEMORY_LOG_LEVEL``, default INFO) to apply on first use;
    a value that names no level is INFO, said in a warning then."""
    global _pending, _unknown
    named = environ.get(LOG_LEVEL_ENV, "INFO")
    level = named.strip().upper() or "INFO"
    with _lock:
        _pending = LEVELS.get(level, LEVELS["INFO"])
        _unknown = None if level in LEVELS else named[:40]


def ensure_configured() -> None:
    """Apply the recorded configuration, if any and not yet applied; cheap afterwards."""
    global _pending
    if _pending is None:
        return
    with _lock:
        level, _pending = _pending, None
        if level is None:
            return
        import structlog

        structlog.configure(
            processors=[
                structlog.processors.add_log_level,
                structlog.processors.TimeStamper(fmt="iso", utc=True),
                structlog.processors.format_exc_info,
                structlog.processors.JSONRenderer(),
            ],
            wrapper_class=structlog.make_filtering_bound_logger(level),
            logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
            cache_logger_on_first_use=True,
        )
        if _unknown is not None:
            structlog.get_logger().warning("setting_ignored", setting=LOG_LEVEL_ENV, got=_unknown,
                                           rule="one of " + ", ".join(LEVELS) + "; INFO meanwhile")


class LazyLogger:
    """Stands in for ``structlog.get_logger()``: ``log.info("event", key=value)`` and the
    rest of the bound-logger API, with structlog imported on the first call."""

    __slots__ = ("_logger",)

    def __init__(self) -> None:
        self._logger: Any = None

    def __getattr__(self, name: str) -> Any:
        logger = self._logger
        if logger is None:
            ensure_configured()
            import structlog

            logger = self._logger = structlog.get_logger()
        return getattr(logger, name)


def get_logger() -> LazyLogger:
    return LazyLogger()
