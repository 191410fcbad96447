"""MCP sessions over HTTP expire when idle, and a live one is never dropped to make room."""

from __future__ import annotations

import structlog

from local_mcp_memory.entrypoints.http.streamable import Sessions


class ManualClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_session_used_within_the_idle_time_stays_open() -> None:
    clock = ManualClock()
    sessions = Sessions(idle=10, clock=clock)
    session = sessions.open()
    for _ in range(5):
        clock.now += 9
        assert session is not None and sessions.touch(session)


def test_a_session_idle_for_the_idle_time_has_expired() -> None:
    clock = ManualClock()
    sessions = Sessions(idle=10, clock=clock)
    session = sessions.open()
    clock.now += 10
    assert session is not None and not sessions.touch(session)
    assert not sessions.close(session)


def test_expiry_counts_from_the_last_use_not_the_opening() -> None:
    clock = ManualClock()
    sessions = Sessions(idle=10, clock=clock)
    early, late = sessions.open(), sessions.open()
    clock.now += 8
    assert late is not None and sessions.touch(late)
    clock.now += 8
    assert early is not None and not sessions.touch(early)
    assert sessions.touch(late)


def test_a_full_table_opens_no_session_and_keeps_every_live_one() -> None:
    clock = ManualClock()
    sessions = Sessions(idle=10, limit=2, clock=clock)
    first, second = sessions.open(), sessions.open()
    with structlog.testing.capture_logs() as logs:
        assert sessions.open() is None
    assert first is not None and second is not None
    assert sessions.touch(first) and sessions.touch(second)
    assert logs[0]["event"] == "mcp_sessions_full"


def test_an_expired_session_makes_room_for_a_new_one() -> None:
    clock = ManualClock()
    sessions = Sessions(idle=10, limit=1, clock=clock)
    old = sessions.open()
    clock.now += 10
    new = sessions.open()
    assert new is not None and new != old
    assert sessions.touch(new)


def test_a_closed_session_is_gone() -> None:
    sessions = Sessions(idle=10)
    session = sessions.open()
    assert session is not None and sessions.close(session)
    assert not sessions.touch(session) and not sessions.close(session)
