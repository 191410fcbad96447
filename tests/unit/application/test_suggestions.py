"""add_note's possiblySupersedes (application/suggestions.py): older notes of the project a
new note likely replaces, from one store search and the texts."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from local_mcp_memory.application.services import Services
from local_mcp_memory.application.suggestions import Rule, likely_replaced
from tests.unit.steps import rpc

RULE = Rule(alone=0.5, cued=0.3)


def test_a_close_note_is_named_whatever_the_words() -> None:
    assert likely_replaced("Deploys ship on every merge", [("a", "Release cadence: weekly", 0.55)], RULE) == ["a"]


def test_a_less_close_note_is_named_only_when_the_new_text_speaks_of_a_change() -> None:
    similar = [("a", "The rate limit is 100 per minute", 0.35)]

    assert likely_replaced("We raised the rate limit to 600", similar, RULE) == ["a"]
    assert likely_replaced("The rate limit counts per key", similar, RULE) == []


def test_only_the_closest_note_is_judged() -> None:
    similar = [("a", "Lunch is at noon", 0.2), ("b", "The rate limit is 100", 0.9)]

    assert likely_replaced("The rate limit is now 600", similar, RULE) == []


def test_a_distant_note_or_the_same_text_is_never_named() -> None:
    assert likely_replaced("Rate limit is now 600", [("a", "The rate limit is 100", 0.25)], RULE) == []
    assert likely_replaced("Rate limit 600", [("b", "Rate limit 600", 0.99)], RULE) == []


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


def test_a_close_note_that_does_not_stand_out_among_the_projects_is_not_named() -> None:
    from local_mcp_memory.application.ports import Spread

    similar = [("a", "Release cadence: weekly", 0.85)]

    assert likely_replaced("Deploys ship on every merge", similar, RULE, Spread(50, 0.80, 0.03)) == []  # 1.7 std
    assert likely_replaced("Deploys ship on every merge", similar, RULE, Spread(50, 0.20, 0.10)) == ["a"]


def test_add_notes_answers_per_entry_the_stored_notes_each_likely_replaces(services: Services) -> None:
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)

    def entry(text: str, days: int) -> dict:
        return {"projectId": "proj", "groupId": "g", "text": text, "createdAt": (start + timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")}

    (old,) = rpc(services, "memory.add_notes", {"notes": [entry("The build uses gradle seven", 0)]})["result"]["ids"]
    batch = [entry("The build uses gradle eight", 30), entry("Lunch is at noon on Fridays", 31), entry("The build uses gradle seven", 32)]
    added = rpc(services, "memory.add_notes", {"notes": batch})["result"]

    assert added["possiblySupersedes"] == [[old], [], []]
    assert added["duplicates"] == [2]
