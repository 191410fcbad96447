"""Progress of a long command on stderr, and a Ctrl-C that stops it between batches.

``ProgressBar`` is an ``application.ports.Progress``. On a terminal it rewrites one line
(``\\r``) at most ten times a second; otherwise (a log file, CI) it writes a plain line at
most every ``interval`` seconds, so logs stay short. Either way the last state is written
by ``finish``. Format: ``import  1200/3000  40%  850/s  ETA 0:00:02``.

``StopOnInterrupt`` turns the first SIGINT into a request to stop at the next batch
boundary (``check`` raises ``KeyboardInterrupt`` there); a second SIGINT interrupts at once.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from types import FrameType
from typing import TextIO


class ProgressBar:
    def __init__(
        self,
        label: str,
        stream: TextIO,
        *,
        interval: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label = label
        self.done = 0
        self.total = 0
        self._stream = stream
        self._tty = stream.isatty()
        self._interval = 0.1 if self._tty else interval
        self._clock = clock
        self._started = clock()
        self._shown = float("-inf")
        self._shown_state: tuple[int, int] | None = None

    def __call__(self, done: int, total: int) -> None:
        self.done, self.total = done, total
        now = self._clock()
        if now - self._shown >= self._interval:
            self._show(now)

    def finish(self) -> None:
        """Show the final state; end the terminal line."""
        if self._shown_state != (self.done, self.total):
            self._show(self._clock())
        if self._tty and self._shown_state is not None:
            self._stream.write("\n")
            self._stream.flush()

    def line(self, now: float) -> str:
        elapsed = max(now - self._started, 1e-9)
        rate = self.done / elapsed
        parts = [self.label, f"{self.done}/{self.total}"]
        if self.total:
            parts.append(f"{100 * self.done // self.total}%")
        parts.append(f"{rate:.0f}/s")
        if rate > 0 and self.done < self.total:
            parts.append(f"ETA {timedelta(seconds=round((self.total - self.done) / rate))}")
        return "  ".join(parts)

    def _show(self, now: float) -> None:
        text = self.line(now)
        self._stream.write(f"\r{text}\x1b[K" if self._tty else f"{text}\n")
        self._stream.flush()
        self._shown, self._shown_state = now, (self.done, self.total)


class StopOnInterrupt:
    """Within ``with``: the first SIGINT asks to stop, ``check`` honours it, a second one
    raises at once. Outside the main thread (no signals there) it does nothing."""

    def __init__(self, stream: TextIO) -> None:
        self.requested = False
        self._stream = stream
        self._previous: object = None

    def __enter__(self) -> StopOnInterrupt:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._ask)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)  # type: ignore[arg-type]

    def check(self) -> None:
        if self.requested:
            raise KeyboardInterrupt

    def _ask(self, signum: int, frame: FrameType | None) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        self._stream.write("\nstopping after the current batch (Ctrl-C again to stop at once)\n")
        self._stream.flush()
