"""add_note's possiblySupersedes (application/suggestions.py): older notes of the project a
new note likely replaces, from one store search and the texts."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from hypothesis import given, strategies as st

from local_mcp_memory.application import suggestions
from local_mcp_memory.application.ports import Spread
from local_mcp_memory.application.services import Services
from local_mcp_memory.application.suggestions import (
    FEATURES,
    UPDATE_CUE,
    likely_replaced,
    pair_features,
    replacement_chances,
    shared_values,
    values_added,
    value_spans,
    values_changed,
)
from tests.unit.steps import rpc

PROJECT = Spread(40, 0.15, 0.10)
"""A project whose notes lie near cosine 0.15 of the new one (MiniLM-like)."""


def feature(text: str, similar: list[tuple[str, str, float]], name: str, spread: Spread = PROJECT) -> list[float]:
    return [row[FEATURES.index(name)] for row in pair_features(text, similar, spread)]


def test_a_close_note_saying_another_value_of_the_same_thing_is_named() -> None:
    similar = [("a", "The build uses gradle 7.6", 0.75), ("b", "Lunch is at noon", 0.12)]

    assert likely_replaced("The build uses gradle 8.5", similar, PROJECT) == ["a"]


def test_a_distant_note_or_the_same_text_is_never_named() -> None:
    assert likely_replaced("Rate limit is now 600", [("a", "Office hours are nine to five", 0.18)], PROJECT) == []
    assert likely_replaced("Rate limit 600", [("b", "Rate limit 600", 0.99)], PROJECT) == []
    assert likely_replaced("Rate limit 600", [], PROJECT) == []


def test_a_change_word_makes_a_replacement_likelier() -> None:
    similar = [("a", "The nightly batch starts at 01:00 UTC.", 0.45)]

    (plain,) = replacement_chances("The nightly batch starts at 03:00 UTC.", similar, PROJECT)
    (cued,) = replacement_chances("The nightly batch now starts at 03:00 UTC.", similar, PROJECT)

    assert cued > plain


def test_a_note_that_already_names_the_new_value_is_less_likely_replaced_than_one_naming_another() -> None:
    text = "Continuous integration moved to GitHub Actions."
    similar = [("related", "GitHub Actions caches pip downloads.", 0.5), ("old", "Continuous integration runs on Jenkins.", 0.5)]

    assert feature(text, similar, "known") == [1.0, 0.0]
    related, old = replacement_chances(text, similar, PROJECT)
    assert old > related


def test_the_features_read_values_negations_and_shared_subject_words() -> None:
    similar = [("a", "Multiplayer is not planned for 2026.", 0.5), ("b", "The soundtrack is by Ana Ruiz.", 0.2)]
    text = "Multiplayer is planned for 2027."

    assert feature(text, similar, "negation") == [1.0, 0.0]
    assert feature(text, similar, "changed") == [1.0, 1.0]  # 2027 against 2026; against "Ana Ruiz"
    assert feature(text, similar, "head") == [1.0, 0.0]
    overlap = feature(text, similar, "overlap")
    assert overlap[0] > 0.3 and overlap[1] == 0.0
    assert feature(text, similar, "kind") == [1.0, 0.0]  # both name a number; the other only a name


def test_a_close_note_that_does_not_stand_out_among_the_projects_is_not_named() -> None:
    similar = [("a", "Release cadence: weekly", 0.85)]

    assert likely_replaced("Deploys ship on every merge", similar, Spread(50, 0.80, 0.10)) == []  # half a std
    assert likely_replaced("Deploys ship on every merge", similar, Spread(50, 0.20, 0.10)) == ["a"]


def test_at_most_two_notes_are_named() -> None:
    similar = [(str(n), f"The build uses gradle {n}.0", 0.8) for n in range(5)]

    assert len(likely_replaced("The build uses gradle 9.0", similar, PROJECT)) == 2


def test_a_long_note_is_read_only_so_far() -> None:
    similar = [("a", "The build uses gradle 7.6. " + "Padding words here. " * 5000, 0.75)]

    assert likely_replaced("The build uses gradle 8.5", similar, PROJECT) == ["a"]


def test_add_note_answers_the_older_note_it_likely_replaces_and_nothing_for_an_unrelated_one(services: Services) -> None:
    def add(text: str, when: datetime) -> dict:
        params = {"projectId": "proj", "groupId": "g", "text": text, "createdAt": when.strftime("%Y-%m-%dT%H:%M:%SZ")}
        return rpc(services, "memory.add_note", params)["result"]

    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    old = add("The build uses gradle seven", start)
    assert old["possiblySupersedes"] == []
    new = add("The build uses gradle eight", start + timedelta(days=30))
    assert new["possiblySupersedes"] == [old["id"]]
    other = add("Lunch is at noon on Fridays", start + timedelta(days=31))
    assert other["possiblySupersedes"] == []
    again = add("The build uses gradle eight", start + timedelta(days=32))
    assert again["duplicate"] is True and again["possiblySupersedes"] == []


def test_a_note_is_never_said_to_replace_a_newer_one(services: Services) -> None:
    def add(text: str, when: datetime) -> dict:
        params = {"projectId": "proj", "groupId": "g", "text": text, "createdAt": when.strftime("%Y-%m-%dT%H:%M:%SZ")}
        return rpc(services, "memory.add_note", params)["result"]

    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    add("The build uses gradle eight", start + timedelta(days=30))
    assert add("The build uses gradle seven", start)["possiblySupersedes"] == []


def test_recall_shows_an_update_above_the_note_it_updates(services: Services) -> None:
    from local_mcp_memory.application.recall import RecallPrompt, recall
    from tests.unit.steps import add

    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    old = add(services, "The build uses gradle seven with the kotlin plugin", project="/repo", created_at=start)
    for n, text in enumerate(["Lunch is at noon on Fridays", "Invoices are rendered to PDF", "The office closes at six"]):
        add(services, text, project="/repo", created_at=start + timedelta(days=n + 1))
    new = add(services, "The build uses gradle eight now", project="/repo", created_at=start + timedelta(days=30))

    text = recall(RecallPrompt("/repo", "does the build use gradle seven with the kotlin plugin", floor=0.0), services)

    assert text.index(new.value) < text.index(old.value)


def test_add_notes_answers_per_entry_the_stored_notes_each_likely_replaces(services: Services) -> None:
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)

    def entry(text: str, days: int) -> dict:
        return {"projectId": "proj", "groupId": "g", "text": text, "createdAt": (start + timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")}

    (old,) = rpc(services, "memory.add_notes", {"notes": [entry("The build uses gradle seven", 0)]})["result"]["ids"]
    batch = [entry("The build uses gradle eight", 30), entry("Lunch is at noon on Fridays", 31), entry("The build uses gradle seven", 32)]
    added = rpc(services, "memory.add_notes", {"notes": batch})["result"]

    assert added["possiblySupersedes"] == [[old], [], []]
    assert added["duplicates"] == [2]


def test_odd_texts_are_read_without_failing() -> None:
    odd = ["", "   ", "...", "\x00\x01", "🙂🙂 ✓", "データベースは PostgreSQL 16 に移行しました", "the of and a", "A" * 100_000, "é" * 3 + "-/-:" * 50]
    similar = [(str(n), text, 0.9 - n / 100) for n, text in enumerate(odd)]

    for text in odd:
        chances = replacement_chances(text, similar, PROJECT)
        assert len(chances) == len(similar) and all(0.0 <= p <= 1.0 for p in chances)
        assert len(likely_replaced(text, similar, PROJECT)) <= 2
        assert all(0 <= start < end <= len(text) for start, end, _ in value_spans(text))


def test_two_texts_name_other_values_when_each_has_one_the_other_lacks_of_a_kind_both_name() -> None:
    assert values_changed("The API allows 600 calls a minute.", "The rate limit is 100 requests per minute.")
    assert values_changed("Hardware rev C is built around an ESP32-S3.", "The controller board uses an ATmega328P.")
    assert not values_changed("Each key may make 600 calls a minute.", "Deploys need approval from Dana.")  # a number, a name
    assert not values_changed("Retries: 5, then Sentry.", "Retries: 5.")  # nothing of the older's is gone
    assert not values_changed("Lunch is at noon.", "The office closes early on Fridays.")  # no values


def test_a_text_names_values_added_when_it_keeps_every_old_value_and_adds_a_number_version_or_path() -> None:
    old = "The availability endpoint is GET /v1/slots."
    assert values_added("/v1/slots is gone; clients call GET /v2/availability with a date range.", old)
    assert not values_changed("/v1/slots is gone; clients call GET /v2/availability with a date range.", old)
    assert values_added("CI runs on Python 3.11 and 3.12.", "CI runs on Python 3.11.")
    assert not values_added("GET /v2/availability returns free slots.", old)  # the old value is not named: values_changed's case
    assert not values_added("We met Caroline and Melanie at the park.", "We met Caroline at the park.")  # a name alone
    assert not values_added("Lunch is at noon.", "The office closes early.")  # the older names no value
    assert not values_added("The endpoint GET /v1/slots is documented.", old)  # nothing added


def test_values_many_texts_name_are_context_and_count_for_neither_text() -> None:
    turns = [
        "Caroline: Thanks, Melanie! We went to Paris last week.",
        "Melanie: Wow, Caroline, I went to Berlin with my kids.",
        "Caroline: That sounds great, Melanie, really!",
        "Melanie: Yes, Caroline, it was.",
        "Caroline: Glad to hear it, Melanie.",
        "Melanie: And you, Caroline?",
    ]
    shared = shared_values(turns, 3)
    assert shared == {"carol", "melan"}  # not Paris or Berlin, named once each
    assert shared_values(turns, 4) == frozenset()
    newer, older = "Melanie: Thanks, Caroline! Our team moved to Berlin.", "Caroline: Thanks, Melanie! We moved to Paris."
    assert values_changed(newer, older) and values_changed(newer, older, shared)  # a place for a place
    assert values_changed("Thanks, Caroline!", "Thanks, Melanie!")
    assert not values_changed("Thanks, Caroline!", "Thanks, Melanie!", shared)  # only the people talking differ


def test_a_word_that_begins_a_line_or_a_markdown_heading_or_item_is_no_name() -> None:
    assert not values_changed("# New\nfresh", "# Guide\n\nRead me first.\n\n## Rollback\n\nRevert the release tag.")
    assert not values_changed("- Deploys need approval", "> Builds need approval")
    assert values_changed("## Hosting\nWe moved to Azure.", "## Hosting\nWe run on AWS.")  # names inside a line still are
    assert values_changed("The cache - Redis now", "The cache - Memcached")  # a dash inside a line starts nothing


def test_value_spans_say_where_the_values_are_and_of_which_kind() -> None:
    text = "Deploys go to AWS eu-west-1 via Terraform 1.5; the rate limit is 600 a minute."
    assert [(text[start:end], kind) for start, end, kind in value_spans(text)] == [
        ("AWS", "name"), ("eu-west-1", "number"), ("Terraform", "name"), ("1.5", "version"), ("600", "number"),
    ]
    assert value_spans("Deploys need approval.") == []  # a capital at a sentence's start is no name


@given(st.text(alphabet=st.sampled_from(list("aZ3.- /:#\nTheHTTPv2")), max_size=60))
def test_value_spans_find_the_values_the_features_read(text: str) -> None:
    found = {suggestions._stem(text[start:end].lower()) for start, end, _ in value_spans(text)}
    assert found == suggestions._read(text).values


_CUE_WORDS = st.sampled_from(["now", "No Longer", "not anymore", "REPLACED", "ſince", "switching", "took  over", "rewrote", "became"])


@given(st.lists(st.one_of(st.text(max_size=12), _CUE_WORDS), max_size=8).map(" ".join))
def test_the_change_cue_finds_what_its_words_alone_find(text: str) -> None:
    plain = re.compile(rf"\b({suggestions._CHANGE_WORDS})\b", re.IGNORECASE)  # the words without the lookahead
    assert (UPDATE_CUE.search(text) is None) == (plain.search(text) is None)
