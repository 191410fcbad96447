"""Which tools a note names, by kind, and when two notes name rival tools of one kind."""

from __future__ import annotations

import pytest

from local_mcp_memory.application.tool_kinds import KINDS, ORDINARY, rivals, tools


@pytest.mark.parametrize(
    ("new", "old"),
    [
        ("Builds use ESP-IDF 5.1 with CMake; the Arduino sketch was retired.", "The firmware is built with the Arduino IDE."),
        ("Opsgenie handles paging.", "Alerts page the on-call via PagerDuty."),
        ("Analytics tables are in Snowflake.", "The warehouse is Amazon Redshift, 4 nodes."),
        ("The test suite runs on pytest.", "Integration tests use nose as the test runner."),
        ("We host on fly.io now", "the api runs on heroku"),  # any case, for a name that is no ordinary word
    ],
)
def test_two_notes_naming_different_tools_of_one_kind_are_rivals(new: str, old: str) -> None:
    assert rivals(new, old)


@pytest.mark.parametrize(
    ("new", "old"),
    [
        ("Moved the suite from nose to pytest.", "Integration tests use nose."),  # names the old tool too
        ("The blog still uses Jekyll.", "The handbook is built with Jekyll."),  # the same tool
        ("Kubernetes pods have a memory limit of 512 MiB.", "The API rate limit is 500 requests per minute."),
        ("Errors go to Sentry.", "The API is written in Go."),  # tools of two kinds
        ("We go to the vault and react quickly.", "Issues are tracked in Linear."),  # ordinary words
    ],
)
def test_notes_without_rival_tools_are_not_rivals(new: str, old: str) -> None:
    assert not rivals(new, old)


def test_the_longest_name_at_a_word_is_the_tool_and_ordinary_words_match_only_as_written() -> None:
    assert tools("The warehouse is Amazon Redshift.") == {"data warehouse": frozenset({"amazon redshift", "redshift"})}
    assert tools("Services are written in Go and Rust.") == {"language": frozenset({"go", "rust"})}
    assert tools("we go and rust away") == {}
    assert tools("Flask serves the model") == {"backend framework": frozenset({"flask"}), "model serving": frozenset({"flask"})}


def test_every_ordinary_word_is_a_tool_of_some_kind() -> None:
    names = {name.lower() for names in KINDS.values() for name in names.split("|")}
    assert ORDINARY <= names, sorted(ORDINARY - names)
