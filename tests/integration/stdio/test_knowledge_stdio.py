"""Knowledge that changes (SPEC §13) through real ``mcp-memory serve`` processes on each real
store, with restarts between the steps: supersession, importance, and reads moving an expiry
out — written by the server's background batch, or on its way out when it stops."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

import pytest

from tests.integration.serve import StdioServer
from tests.postgres_server import postgres, postgres_url  # noqa: F401  (fixtures)

PROJECT = "knowledge-project"


@pytest.fixture(params=["faiss", "postgresql"])
def store_args(request: pytest.FixtureRequest) -> tuple[str, ...]:
    if request.param == "postgresql":
        return ("--store", request.getfixturevalue("postgres_url"))
    return ()


def add(server: StdioServer, text: str, **fields: object) -> str:
    return server.result("memory.add_note", {"projectId": PROJECT, "groupId": "g", "text": text, **fields})["id"]


def instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_supersession_and_importance_hold_across_restarts(tmp_path, store_args) -> None:
    with StdioServer(tmp_path, *store_args) as server:
        old = add(server, "The API allows 100 requests per minute.")
        new = add(server, "The API allows 500 requests per minute.", supersedes=[old], importance=0.9)
    with StdioServer(tmp_path, *store_args) as server:
        hits = server.result("memory.search", {"projectId": PROJECT, "query": "API requests per minute"})["results"]
        assert [h["id"] for h in hits] == [new] and hits[0]["importance"] == 0.9
        assert server.result("memory.get", {"id": old})["supersededBy"] == [new]
        assert server.result("memory.delete", {"id": new})["ok"]
    with StdioServer(tmp_path, *store_args) as server:
        assert [h["id"] for h in server.result("memory.search", {"projectId": PROJECT, "query": "API requests"})["results"]] == [old]
        assert server.result("memory.get", {"id": old})["supersededBy"] == []


def test_a_read_moves_the_expiry_out_in_the_background_and_it_survives_a_restart(tmp_path, store_args) -> None:
    expires = datetime.now(timezone.utc).replace(microsecond=0) + timedelta(days=10)
    with StdioServer(tmp_path, *store_args) as server:
        note = add(server, "The release branch is release-7.", expiresAt=expires.strftime("%Y-%m-%dT%H:%M:%SZ"))
        created = instant(server.result("memory.get", {"id": note})["createdAt"])  # a read
        span = expires - created
        deadline = time.monotonic() + 10
        while instant(server.result("memory.list_recent", {"projectId": PROJECT})["items"][0]["expiresAt"]) == expires:
            assert time.monotonic() < deadline, "the read's batch was never written"
            time.sleep(0.05)
        server.result("memory.search", {"projectId": PROJECT, "query": "release branch"})  # pending when the server stops
    with StdioServer(tmp_path, *store_args) as server:
        moved = instant(server.result("memory.list_recent", {"projectId": PROJECT})["items"][0]["expiresAt"])
        assert moved == expires + span / 2 + span / 2  # two reads, half the span each


FACTS = (
    "Deploys run from the main branch every weekday at 10:00.",
    "The staging database is called atlas.",
    "Code review needs one approval from the owning team.",
    "Feature flags live in LaunchDarkly.",
    "The mobile app supports iOS 16 and later.",
    "Backups are kept for 30 days.",
)


@pytest.mark.parametrize(
    ("old_at", "new_at"),
    [(None, None), ("2026-06-01T10:00:00Z", "2026-11-01T10:00:00Z")],
    ids=["one-session", "months-apart"],
)
def test_an_update_written_right_after_its_fact_ranks_above_it_unmarked(tmp_path, store_args, old_at, new_at) -> None:
    """A statement written right after another in its group may be its update: newer wins,
    within one session or months later (a question and its answer: ``ranking._context``)."""
    dated = lambda at: {} if at is None else {"createdAt": at}  # noqa: E731
    with StdioServer(tmp_path, *store_args) as server:
        for text in FACTS:
            add(server, text, createdAt="2026-05-01T10:00:00Z")
        old = add(server, "We use Jenkins for CI.", **dated(old_at))
        new = add(server, "We moved CI to GitHub Actions.", **dated(new_at))
        hits = server.result("memory.search", {"projectId": PROJECT, "query": "which CI do we use?"})["results"]
        assert [h["id"] for h in hits][:2] == [new, old]
