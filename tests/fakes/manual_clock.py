"""A ``Clock`` for tests: time stands still until told to move."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone


class ManualClock:
    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2024, 1, 15, 10, 30, tzinfo=timezone.utc)

    def now(self) -> datetime:
        return self._now

    def advance(self, **delta: float) -> None:
        self._now += timedelta(**delta)
