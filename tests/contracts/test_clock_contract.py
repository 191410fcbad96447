"""The ``Clock`` contract, run against ``SystemClock`` and the ``ManualClock`` fake: aware
UTC datetimes that never go backwards; the fake moves only when told."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from local_mcp_memory.adapters.system import SystemClock
from local_mcp_memory.application.ports import Clock
from tests.fakes.manual_clock import ManualClock


@pytest.fixture(params=["system", "manual"])
def clock(request: pytest.FixtureRequest) -> Clock:
    return SystemClock() if request.param == "system" else ManualClock()


def test_now_is_an_aware_datetime_in_utc(clock: Clock) -> None:
    now = clock.now()
    assert isinstance(now, datetime)
    assert now.tzinfo is not None and now.utcoffset() == timedelta(0)


def test_now_never_goes_backwards(clock: Clock) -> None:
    readings = [clock.now() for _ in range(1000)]
    assert readings == sorted(readings)


def test_a_manual_clock_stands_still_until_told() -> None:
    clock = ManualClock(datetime(2024, 1, 15, 10, 30, tzinfo=timezone.utc))
    assert clock.now() == clock.now() == datetime(2024, 1, 15, 10, 30, tzinfo=timezone.utc)


def test_a_manual_clock_advances_by_what_it_is_told() -> None:
    clock = ManualClock(datetime(2024, 1, 15, 10, 30, tzinfo=timezone.utc))
    clock.advance(minutes=5, seconds=2)
    assert clock.now() == datetime(2024, 1, 15, 10, 35, 2, tzinfo=timezone.utc)
