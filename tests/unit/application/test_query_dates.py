"""The period a query names (application/query_dates.py)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from hypothesis import given, strategies as st

from local_mcp_memory.application.query_dates import Period, asks_about_past, named_period


def day(y: int, m: int, d: int) -> datetime:
    return datetime(y, m, d, tzinfo=timezone.utc)


@pytest.mark.parametrize(
    ("query", "since", "until"),
    [
        ("What book did Tim finish on 8th December, 2023?", day(2023, 12, 8), day(2023, 12, 9)),
        ("What did Tim say about his injury on 16 November, 2023?", day(2023, 11, 16), day(2023, 11, 17)),
        ("the issue, as mentioned on November 6, 2023", day(2023, 11, 6), day(2023, 11, 7)),
        ("Where was the picture shared on December 1,2023 taken?", day(2023, 12, 1), day(2023, 12, 2)),
        ("decisions of the 3rd of Sept 2024", day(2024, 9, 3), day(2024, 9, 4)),
        ("What did John start learning in August 2023?", day(2023, 8, 1), day(2023, 9, 1)),
        ("deploys in Dec. 2023", day(2023, 12, 1), day(2024, 1, 1)),
        ("What charity event did John organize in 2024?", day(2024, 1, 1), day(2025, 1, 1)),
        ("31 February 2024, or else February 2024", day(2024, 2, 1), day(2024, 3, 1)),  # no such day: the month
        ("0 January 2024", day(2024, 1, 1), day(2024, 2, 1)),
    ],
)
def test_a_day_a_month_or_a_year_is_the_period_named(query: str, since: datetime, until: datetime) -> None:
    assert named_period(query) == Period(since, until)


@pytest.mark.parametrize(
    "query",
    [
        "When did Melanie go camping in June?",  # which year?
        "how do we retry failed webhooks",
        "error 2023 in the logs",  # a number, not a year after in/during/of/since/from
        "may 5 tries be enough",
        "in 0000",
    ],
)
def test_no_period_without_a_full_date_month_with_year_or_year(query: str) -> None:
    assert named_period(query) is None


def test_the_ends_of_the_calendar_name_nothing_they_cannot_bound() -> None:
    assert named_period("on 31 December 9999") is None  # its end is past the last instant
    assert named_period("in December 9999") is None
    assert named_period("30 December 9999") == Period(day(9999, 12, 30), day(9999, 12, 31))
    assert named_period("1 January 0001") == Period(day(1, 1, 1), day(1, 1, 2))


@given(st.text(max_size=300))
def test_any_text_names_a_period_of_one_day_month_or_year_or_none(text: str) -> None:
    period = named_period(text)
    assert period is None or 1 <= (period.until - period.since).days <= 366


@pytest.mark.parametrize(
    "query",
    ["When did Caroline go to the LGBTQ conference?", "What was the rate limit before?", "Which runner were the tests on?",
     "Who joined the team in March?", "What inspired Maria to volunteer?", "What book had Tim read", "Where we used to deploy"],
)
def test_a_question_with_a_past_auxiliary_or_a_past_verb_after_its_question_word_asks_about_the_past(query: str) -> None:
    assert asks_about_past(query)


@pytest.mark.parametrize(
    "query",
    ["What is the API rate limit per key?", "Which test runner do the integration tests use?", "Where are sessions stored?",
     "rate limit", "How many reviewers must approve a PR?", "Who owns the deployed services?", "Is the bedrock wasted"],
)
def test_any_other_question_asks_what_is_true_now(query: str) -> None:
    assert not asks_about_past(query)
