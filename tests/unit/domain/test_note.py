from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from local_mcp_memory.domain.errors import InvalidValue
from local_mcp_memory.domain.identifiers import CanonicalProjectId, GlobalKey, GroupId, NoteId
from local_mcp_memory.domain.note import GlobalEntry, Note, NoteFilter, NotePatch, Tags
from local_mcp_memory.domain.time import TimeWindow, format_instant, parse_instant

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


@given(st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59, 999999), timezones=st.just(timezone.utc)))
def test_instant_text_round_trips_for_every_year_1_to_9999(moment: datetime) -> None:
    assert parse_instant(format_instant(moment)) == moment


@pytest.mark.parametrize("text", ["0001-01-01T00:00:00+00:01", "9999-12-31T23:59:59-00:01", "0000-12-31T00:00:00Z"])
def test_instants_outside_years_1_to_9999_in_utc_are_refused(text: str) -> None:
    with pytest.raises(InvalidValue, match="Instant"):
        parse_instant(text)


def test_early_years_are_written_with_four_digits() -> None:
    assert format_instant(datetime(999, 12, 31, tzinfo=timezone.utc)) == "0999-12-31T00:00:00Z"


def nested(depth: int) -> list:
    value: list = []
    for _ in range(depth - 1):
        value = [value]
    return value


def test_metadata_may_nest_64_levels_but_not_65() -> None:
    assert a_note(metadata={"a": nested(63)}).metadata == {"a": nested(63)}
    with pytest.raises(InvalidValue, match="64 levels") as caught:
        a_note(metadata={"a": nested(64)})
    assert caught.value.field == "metadata"


def test_a_value_nested_far_too_deep_is_judged_without_recursion() -> None:
    with pytest.raises(InvalidValue, match="64 levels"):
        a_note(metadata={"a": nested(100_000)})


@pytest.mark.parametrize(
    "value, rule",
    [(float("nan"), "finite"), (float("inf"), "finite"), ({1: "a"}, "string keys"), ({"s": {1, 2}}, "JSON values"), (b"x", "JSON values")],
)
def test_metadata_holds_json_values_only(value: object, rule: str) -> None:
    with pytest.raises(InvalidValue, match=rule) as caught:
        a_note(metadata={"v": value})
    assert caught.value.field == "metadata"


def test_a_global_value_follows_the_same_rule() -> None:
    with pytest.raises(InvalidValue) as caught:
        GlobalEntry(CanonicalProjectId("p"), GlobalKey("global.k"), nested(65), T0)
    assert caught.value.field == "value"


def test_a_field_error_is_placed_inside_the_request_path() -> None:
    error = InvalidValue("Note", "text must be a non-blank string", "", "text")
    assert error.at("patch").field == "patch.text"
    assert InvalidValue("GroupId", "rule", "a b").at("groupId").at("notes[0]").field == "notes[0].groupId"


def test_an_expiry_fades_by_half_its_span_from_when_it_was_set() -> None:
    written_long_ago = Note(NoteId.new(), CanonicalProjectId("p"), GroupId("g"), "t", datetime(2001, 1, 1, tzinfo=timezone.utc))
    faded = written_long_ago.with_expiry(T0 + timedelta(days=2), T0).prolonged(T0)
    assert faded is not None and faded.expires_at == T0 + timedelta(days=3)


def test_a_note_dated_after_its_expiry_fades_from_when_the_expiry_was_set() -> None:
    dated_ahead = Note(NoteId.new(), CanonicalProjectId("p"), GroupId("g"), "t", T0 + timedelta(days=365))
    note = dated_ahead.with_expiry(T0 + timedelta(days=10), T0)
    assert note.span == timedelta(days=10)
    faded = note.prolonged(T0 + timedelta(days=1))
    assert faded is not None and faded.expires_at == T0 + timedelta(days=15)
