from __future__ import annotations

from datetime import datetime, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.errors import InvalidValue
from domain.identifiers import CanonicalProjectId, GroupId, NoteId
from domain.note import Note, NoteFilter, NotePatch, Tags
from domain.time import TimeWindow, format_instant, parse_instant

T0 = datetime(2024, 1, 15, 10, 30, tzinfo=timezone.utc)


def a_note(**fields: object) -> Note:
    base = dict(
        id=NoteId.new(), project_id=CanonicalProjectId("p"), group_id=GroupId("g"), text="t", created_at=T0
    )
    return Note(**{**base, **fields})


def test_text_must_not_be_blank() -> None:
    with pytest.raises(InvalidValue, match="text must be a non-blank string"):
        a_note(text="  \n")


def test_tags_keep_order_and_case_and_drop_duplicates() -> None:
    assert Tags.of(["B", "a", "B", "b"]).values == ("B", "a", "b")


def test_tags_must_be_an_array_of_non_blank_strings() -> None:
    for bad in ("a", ["", "x"], [1]):
        with pytest.raises(InvalidValue):
            Tags.of(bad)


def test_an_empty_patch_is_invalid() -> None:
    with pytest.raises(InvalidValue, match="NotePatch must change at least one field"):
        NotePatch()


def test_a_patch_keeps_id_and_created_at() -> None:
    note = a_note()
    patched = NotePatch(title="new", group_id=GroupId("other")).apply(note)
    assert (patched.id, patched.created_at, patched.title, patched.group_id.value) == (
        note.id, note.created_at, "new", "other"
    )
    assert not NotePatch(title="x").changes_text
    assert NotePatch(text="x").changes_text


def test_the_time_window_is_half_open() -> None:
    window = TimeWindow(T0, datetime(2024, 1, 16, tzinfo=timezone.utc))
    assert window.contains(T0)
    assert not window.contains(datetime(2024, 1, 16, tzinfo=timezone.utc))


def test_since_later_than_until_is_invalid() -> None:
    with pytest.raises(InvalidValue, match="since must not be later than until"):
        TimeWindow(datetime(2025, 1, 1, tzinfo=timezone.utc), T0)


def test_filters_apply_project_group_tags_and_window() -> None:
    note = a_note(tags=Tags(("a", "b")))
    assert NoteFilter(CanonicalProjectId("p"), GroupId("g"), Tags(("a",))).matches(note)
    assert not NoteFilter(CanonicalProjectId("p"), GroupId("G")).matches(note)
    assert not NoteFilter(CanonicalProjectId("p"), tags=Tags(("A",))).matches(note)
    assert not NoteFilter(CanonicalProjectId("q")).matches(note)
    assert not NoteFilter(CanonicalProjectId("p"), window=TimeWindow(until=T0)).matches(note)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-01-15T10:30:00Z", "2024-01-15T10:30:00Z"),
        ("2024-01-15T19:30:00+09:00", "2024-01-15T10:30:00Z"),
        ("2024-01-15", "2024-01-15T00:00:00Z"),
        ("2024-01-15T10:30:00.250Z", "2024-01-15T10:30:00.250000Z"),
    ],
)
def test_instants_are_read_in_utc(text: str, expected: str) -> None:
    assert format_instant(parse_instant(text)) == expected


@pytest.mark.parametrize("text", ["2024-01-15T10:30:00", "yesterday", "2024-13-01", "2024-02-30T00:00:00Z", ""])
def test_instants_need_a_zone_and_a_real_date(text: str) -> None:
    with pytest.raises(InvalidValue):
        parse_instant(text)


@given(st.datetimes(min_value=datetime(1970, 1, 2), max_value=datetime(9999, 1, 1), timezones=st.just(timezone.utc)))
def test_instant_text_round_trips(moment: datetime) -> None:
    assert parse_instant(format_instant(moment)) == moment
