"""``query_names.names_known``: whether a query names something the keyword hits name."""

from __future__ import annotations

import pytest

from local_mcp_memory.application.query_names import name_like, names_known


@pytest.mark.parametrize(
    ("word", "first", "expected"),
    [
        ("v2", False, True),
        ("500", True, True),
        ("auth_service", True, True),
        ("node.js", True, True),
        ("C#", True, True),  # capitals only: an acronym, wherever it stands
        ("getUser", True, True),
        ("LGBTQ", True, True),
        ("TLS", False, True),
        ("Caroline", False, True),
        ("Caroline", True, False),  # the start of a sentence: any word is capitalized there
        ("I", False, False),
        ("leader", False, False),
        ("pre-release", False, False),
        ("証明書", False, False),
    ],
)
def test_a_word_is_name_like_by_its_digits_inner_marks_and_capitals(word: str, first: bool, expected: bool) -> None:
    assert name_like(word, first) is expected


def test_a_name_in_the_query_counts_only_when_the_hits_write_it() -> None:
    assert names_known("When did Caroline go to the support group?", ["Caroline: I went to a support group."])
    assert not names_known("When did Caroline go to the support group?", ["Melanie: we went to a support group."])


def test_a_name_typed_in_lower_case_counts_where_the_notes_write_it_as_a_name() -> None:
    assert names_known("when did caroline paint", ["Melanie: Hey Caroline! Good to see you."])
    # written only where any word is capitalized (a sentence's start), it is no name
    assert not names_known("when did leaders meet", ["Leaders meet on Mondays."])


def test_a_word_some_hit_writes_in_lower_case_is_no_name_typed_in_lower_case() -> None:
    hits = ["Builds go through App Review first.", "The app reads crash-free sessions."]
    assert names_known("which metric says the app is stable", hits[:1])
    assert not names_known("which metric says the app is stable", hits)  # "the app": a word
    assert names_known("which metric says the App is stable", hits)  # a name where the query writes it so
    assert not names_known("when do we ask users to review us", ["Servers in the US region.", "Let us know."])


def test_ordinary_words_name_nothing() -> None:
    hits = ["Kafka partition leader election is automatic.", "Postgres primary failover is manual."]
    assert not names_known("how do I make a standby database the leader?", hits)
    assert names_known("how does kafka pick a leader?", ["We moved the queue to Kafka last year.", *hits])


def test_numbers_versions_and_identifiers_count() -> None:
    assert names_known("what changed in 3.2", ["Release 3.2 drops Python 3.8."])
    assert names_known("where is auth_service configured", ["auth_service reads config.toml"])
    assert not names_known("", ["Anything at all"])
    assert not names_known("what changed", [])


def test_a_possessive_is_the_name() -> None:
    assert names_known("What is Caroline's identity?", ["Caroline: thanks, Melanie."])
    assert names_known("What is Caroline\u2019s identity?", ["Caroline: thanks, Melanie."])
