"""UTC instants as the contract writes them: ISO 8601, ``2024-01-15T10:30:00Z``."""

from __future__ import annotations

import re
from datetime import datetime, timezone

import attrs

from local_mcp_memory.domain.errors import InvalidValue

_DATE_ONLY = re.compile(r"\d{4}-\d{2}-\d{2}")
_HAS_ZONE = re.compile(r"(Z|[+-]\d{2}:?\d{2})$", re.IGNORECASE)
_LONG_YEAR = re.compile(r"\d{5,}-")  # 10000-01-01T…: a year past 9999, not a malformed instant (nor 20240101T…)
_YEARS_RULE = "must fall within the years 1..9999 once converted to UTC"


def parse_instant(text: str) -> datetime:
    """Read an ISO 8601 instant into an aware UTC datetime.

    Accepted: a date and time with ``Z`` or an offset (converted to UTC), or a bare date
    (midnight UTC), in the years 1..9999 once converted to UTC. A date-time with no zone is
    refused: its meaning would depend on the machine that wrote it.
    """
    if not isinstance(text, str):
        raise InvalidValue("Instant", "must be an ISO 8601 string", text)
    if _DATE_ONLY.fullmatch(text):
        try:
            return datetime.fromisoformat(text).replace(tzinfo=timezone.utc)
        except ValueError:
            raise InvalidValue("Instant", "must be a valid calendar date", text) from None
    if not _HAS_ZONE.search(text):
        raise InvalidValue("Instant", "must end with Z or a UTC offset such as +09:00", text)
    if _LONG_YEAR.match(text):
        raise InvalidValue("Instant", _YEARS_RULE, text)
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise InvalidValue("Instant", "must be ISO 8601 like 2024-01-15T10:30:00Z", text) from None
    try:
        return parsed.astimezone(timezone.utc)
    except OverflowError:
        raise InvalidValue("Instant", _YEARS_RULE, text) from None


def format_instant(moment: datetime) -> str:
    """Write a UTC instant: whole seconds as ``...:00Z``, finer ones with microseconds. The
    year always has four digits (``0999-12-31T00:00:00Z``), so what is written reads back."""
    m = moment.astimezone(timezone.utc)
    text = f"{m.year:04d}-{m.month:02d}-{m.day:02d}T{m.hour:02d}:{m.minute:02d}:{m.second:02d}"
    return f"{text}.{m.microsecond:06d}Z" if m.microsecond else f"{text}Z"


@attrs.frozen
class TimeWindow:
    """``since <= createdAt < until``; either end may be open."""

    since: datetime | None = None
    until: datetime | None = None

    def __attrs_post_init__(self) -> None:
        if self.since is not None and self.until is not None and self.since > self.until:
            raise InvalidValue(
                "TimeWindow",
                "since must not be later than until",
                f"{format_instant(self.since)} > {format_instant(self.until)}",
            )

    def contains(self, moment: datetime) -> bool:
        if self.since is not None and moment < self.since:
            return False
        return self.until is None or moment < self.until
