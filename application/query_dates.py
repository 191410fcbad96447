"""The period a search query names, if any: ``on 8 December, 2023``, ``November 6, 2023``,
``in August 2023``, ``in 2023``.

A question that names a date is usually about what was written then ("what did we decide on
3 March 2025?", "which book did Tim finish on 8th December, 2023?"), so hybrid search counts
a note created in that period as weak evidence (``ranking.dated``). English month names
(full, or their first three letters, and ``Sept``) with a four-digit year; a day alone or a
month without a year names nothing (which year?), and neither does an impossible date
(``31 February 2024``). The first date found wins: a day, then a month, then a year.
And whether a query asks about the past at all (``asks_about_past``: "when did…"), which
makes newer-first in search more reserved. Pure: no clock, no locale.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta, timezone

import attrs

_NAMES = "january february march april may june july august september october november december".split()
MONTHS = {name: number for number, name in enumerate(_NAMES, 1)} | {name[:3]: n for n, name in enumerate(_NAMES, 1)}
MONTHS["sept"] = 9

_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
_DAY = r"([0-9]{1,2})(?:st|nd|rd|th)?"
_YEAR = r"([0-9]{4})"
_DAY_MONTH_YEAR = re.compile(rf"\b{_DAY}\s+(?:of\s+)?({_MONTH})\b\.?,?\s*{_YEAR}\b")
_MONTH_DAY_YEAR = re.compile(rf"\b({_MONTH})\b\.?\s+{_DAY},?\s*{_YEAR}\b")
_MONTH_YEAR = re.compile(rf"\b({_MONTH})\b\.?,?\s+{_YEAR}\b")
_IN_YEAR = re.compile(r"\b(?:in|during|of|since|from)\s+((?:1[89]|2[01])[0-9][0-9])\b")


@attrs.frozen
class Period:
    """``since <= instant < until``, UTC."""

    since: datetime
    until: datetime

    def holds(self, instant: datetime) -> bool:
        return self.since <= instant < self.until


_PAST_QUESTION = re.compile(
    r"\b(?:did|was|were|had|used to)\b|^\W*(?:what|who|which|when|where|how|why)\s+\w+ed\b", re.IGNORECASE
)


def asks_about_past(query: str) -> bool:
    """Whether ``query`` asks about the past: a past auxiliary ("when did…", "what was…",
    "had", "used to") or a past-tense verb right after its question word ("who joined…",
    "what inspired…"). Anything else ("which runner do we use?", "where are logs kept?",
    "rate limit") counts as asking what is true now."""
    return _PAST_QUESTION.search(query) is not None


def named_period(query: str) -> Period | None:
    """The day, month or year ``query`` names (see the module), or None."""
    text = query.lower()
    for pattern, order in ((_DAY_MONTH_YEAR, "dmy"), (_MONTH_DAY_YEAR, "mdy")):
        for match in pattern.finditer(text):
            parts = dict(zip(order, match.groups()))
            day = _day(int(parts["y"]), MONTHS[parts["m"]], int(parts["d"]))
            if day is not None and day.date() < date.max:
                return Period(day, day + timedelta(days=1))
    for match in _MONTH_YEAR.finditer(text):
        year, month = int(match.group(2)), MONTHS[match.group(1)]
        start = _day(year, month, 1)
        if start is not None and year < 9999:
            return Period(start, datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=timezone.utc))
    for match in _IN_YEAR.finditer(text):
        year = int(match.group(1))
        return Period(datetime(year, 1, 1, tzinfo=timezone.utc), datetime(year + 1, 1, 1, tzinfo=timezone.utc))
    return None


def _day(year: int, month: int, day: int) -> datetime | None:
    try:
        return datetime(year, month, day, tzinfo=timezone.utc)
    except ValueError:  # 31 February, year 0
        return None
