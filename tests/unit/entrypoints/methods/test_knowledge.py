"""Knowledge that changes (SPEC §13) on the wire: supersedes, importance and fading, through
the JSON-RPC methods of one server."""

from __future__ import annotations

from datetime import timedelta

import attrs
import pytest

from local_mcp_memory.application.errors import InvalidRequest
from local_mcp_memory.application.export_notes import ExportNotes, export_notes
from local_mcp_memory.application.import_notes import ImportNotes, import_notes
from local_mcp_memory.application.services import Services
from local_mcp_memory.domain.identifiers import NoteId
from local_mcp_memory.domain.note import LASTING, default_expiry
from local_mcp_memory.domain.time import format_instant, parse_instant
from tests.fakes.manual_clock import ManualClock
from tests.unit.steps import rpc


def add(services: Services, text: str, project: str = "proj", **params: object) -> str:
    reply = rpc(services, "memory.add_note", {"projectId": project, "groupId": "feature-1", "text": text, **params})
    return reply["result"]["id"]


def error(reply: dict) -> tuple[int, str | None]:
    return reply["error"]["code"], reply["error"].get("data", {}).get("field")


def found(services: Services, query: str, **params: object) -> list[str]:
    reply = rpc(services, "memory.search", {"projectId": "proj", "query": query, "topK": 10, **params})
    return [hit["id"] for hit in reply["result"]["results"]]


def recent(services: Services, **params: object) -> list[str]:
    return [item["id"] for item in rpc(services, "memory.list_recent", {"projectId": "proj", **params})["result"]["items"]]


def get(services: Services, note_id: str) -> dict:
    return rpc(services, "memory.get", {"id": note_id})["result"]


# -- supersession -----------------------------------------------------------------------------


def test_a_note_added_with_supersedes_hides_the_older_one_from_default_reads(services: Services) -> None:
    old = add(services, "The API rate limit is 100 requests per minute")
    new = add(services, "The API rate limit is 500 requests per minute", supersedes=[old])
    assert found(services, "API rate limit") == [new]
    assert recent(services) == [new]
    assert set(found(services, "API rate limit", includeSuperseded=True)) == {old, new}
    assert recent(services, includeSuperseded=True) == [new, old]
    assert get(services, old)["supersededBy"] == [new]
    assert get(services, new)["supersededBy"] == []
    context = rpc(services, "memory.context", {"projectId": "proj", "query": "rate limit"})["result"]
    assert [item["id"] for item in context["items"]] == [new]
    assert "100 requests" not in context["text"]


def test_items_carry_superseded_by_only_when_superseded_notes_were_asked_for(services: Services) -> None:
    old = add(services, "Tests run with nose")
    new = add(services, "Tests run with pytest", supersedes=[old])
    hits = rpc(services, "memory.search", {"projectId": "proj", "query": "tests run", "includeSuperseded": True})["result"]
    assert {hit["id"]: hit["supersededBy"] for hit in hits["results"]} == {old: [new], new: []}
    plain = rpc(services, "memory.search", {"projectId": "proj", "query": "tests run"})["result"]["results"]
    assert "supersededBy" not in plain[0]
    items = rpc(services, "memory.list_recent", {"projectId": "proj", "includeSuperseded": True})["result"]["items"]
    assert [item["supersededBy"] for item in items] == [[], [new]]


def test_the_link_is_a_supersedes_relation_that_related_shows(services: Services) -> None:
    old = add(services, "Deploys go through Jenkins")
    new = add(services, "Deploys go through GitHub Actions", supersedes=[old])
    items = rpc(services, "memory.related", {"id": old})["result"]["items"]
    assert [(i["id"], i["relation"], i["direction"]) for i in items] == [(new, "supersedes", "in")]


def test_deleting_the_newer_note_restores_the_older_one(services: Services) -> None:
    old = add(services, "The staging database is db-1")
    new = add(services, "The staging database is db-2", supersedes=[old])
    assert rpc(services, "memory.delete", {"id": new})["result"]["ok"]
    assert found(services, "staging database") == [old]
    assert get(services, old)["supersededBy"] == []


def test_update_and_add_notes_accept_supersedes(services: Services) -> None:
    a, b, c = add(services, "Node 18"), add(services, "Node 20"), add(services, "Yarn 1")
    assert rpc(services, "memory.update", {"id": b, "patch": {"supersedes": [a]}})["result"] == {"ok": True}
    reply = rpc(
        services,
        "memory.add_notes",
        {"notes": [{"projectId": "proj", "groupId": "feature-1", "text": "pnpm 9", "supersedes": [c]}]},
    )
    (d,) = reply["result"]["ids"]
    assert recent(services) == [d, b]
    rpc(services, "memory.update", {"id": b, "patch": {"title": "runtime", "supersedes": []}})
    assert get(services, b)["title"] == "runtime"
    assert error(rpc(services, "memory.update", {"id": b, "patch": {"supersedes": []}})) == (-32602, "patch")


@pytest.mark.parametrize(
    ("params", "code", "field"),
    [
        ({"supersedes": ["00000000-0000-4000-8000-000000000000"]}, -32004, None),
        ({"supersedes": ["not-an-id"]}, -32602, "supersedes[0]"),
        ({"supersedes": "a string"}, -32602, "supersedes"),
        ({"supersedes": ["00000000-0000-4000-8000-000000000000"] * 101}, -32602, "supersedes"),
    ],
)
def test_add_note_refuses_a_bad_supersedes_and_writes_nothing(services: Services, params: dict, code: int, field: str | None) -> None:
    reply = rpc(services, "memory.add_note", {"projectId": "proj", "groupId": "g", "text": "new fact", **params})
    assert error(reply) == (code, field)
    if code == -32004:
        assert "00000000-0000-4000-8000-000000000000" in reply["error"]["message"] + str(reply["error"].get("data"))
    assert recent(services) == []


def test_supersedes_across_projects_itself_or_in_a_cycle_is_refused(services: Services) -> None:
    elsewhere = add(services, "another project's fact", project="other")
    a = add(services, "fact a")
    reply = rpc(services, "memory.add_note", {"projectId": "proj", "groupId": "g", "text": "b", "supersedes": [elsewhere]})
    assert error(reply) == (-32602, "supersedes")
    assert error(rpc(services, "memory.update", {"id": a, "patch": {"supersedes": [a]}})) == (-32602, "patch.supersedes")
    b = add(services, "fact b", supersedes=[a])
    assert error(rpc(services, "memory.update", {"id": a, "patch": {"supersedes": [b]}})) == (-32602, "patch.supersedes")
    cycle = rpc(services, "memory.link", {"fromId": a, "toId": b, "relation": "supersedes"})
    assert error(cycle) == (-32602, "toId")
    entry = {"projectId": "proj", "groupId": "g", "text": "c", "supersedes": [elsewhere]}
    assert error(rpc(services, "memory.add_notes", {"notes": [entry]})) == (-32602, "notes[0].supersedes")
    assert set(recent(services, includeSuperseded=True)) == {a, b}


def test_restating_a_superseded_fact_stores_it_anew_and_never_closes_a_cycle(services: Services) -> None:
    loki = add(services, "Logs go to Loki.")
    datadog = add(services, "Logs go to Datadog now.", supersedes=[loki])
    reply = rpc(services, "memory.add_note", {"projectId": "proj", "groupId": "feature-1", "text": "Logs go to Loki.", "supersedes": [datadog]})
    again = reply["result"]["id"]
    assert again != loki and "duplicate" not in reply["result"]  # the replaced note holds no dedup key
    assert recent(services) == [again]
    assert get(services, datadog)["supersededBy"] == [again]
    assert get(services, loki)["supersededBy"] == [datadog]
    assert found(services, "where do logs go") == [again]
    plain = rpc(services, "memory.add_notes", {"notes": [{"projectId": "proj", "groupId": "feature-1", "text": "Logs go to Datadog now."}]})
    assert plain["result"]["duplicates"] == [] and recent(services)[0] == plain["result"]["ids"][0]


def test_a_refused_cycle_of_duplicates_leaves_none_of_the_calls_links(services: Services) -> None:
    make, bazel, ninja = add(services, "The build uses make."), add(services, "The build uses bazel."), add(services, "Ninja builds it.")
    # each entry restates a stored note (its holder) and names the other's: the second link closes a cycle
    first = {"projectId": "proj", "groupId": "feature-1", "text": "The build uses make.", "supersedes": [ninja, bazel]}
    second = {"projectId": "proj", "groupId": "feature-1", "text": "The build uses bazel.", "supersedes": [make]}
    assert error(rpc(services, "memory.add_notes", {"notes": [first, second]})) == (-32602, "notes[1].supersedes")
    assert set(recent(services)) == {make, bazel, ninja}
    assert [get(services, n)["supersededBy"] for n in (make, bazel, ninja)] == [[], [], []]
    first["supersedes"] = [ninja]
    assert rpc(services, "memory.add_notes", {"notes": [first, second]})["result"]["duplicates"] == [0, 1]
    assert recent(services) == [bazel]
    assert (get(services, make)["supersededBy"], get(services, ninja)["supersededBy"]) == ([bazel], [make])


def test_a_note_cannot_supersede_the_note_holding_its_own_text(services: Services) -> None:
    held = add(services, "Deploy with ansible.")
    reply = rpc(services, "memory.add_note", {"projectId": "proj", "groupId": "feature-1", "text": "Deploy  with ansible.", "supersedes": [held]})
    assert error(reply) == (-32602, "supersedes")
    assert "own text" in reply["error"]["message"]
    entry = {"projectId": "proj", "groupId": "feature-1", "text": "Deploy with ansible.", "supersedes": [held]}
    other = {"projectId": "proj", "groupId": "feature-1", "text": "Deploy on Fridays."}
    assert error(rpc(services, "memory.add_notes", {"notes": [other, entry]})) == (-32602, "notes[1].supersedes")
    assert recent(services) == [held] and get(services, held)["supersededBy"] == []
    elsewhere = rpc(services, "memory.add_note", {"projectId": "proj", "groupId": "g2", "text": "Deploy with ansible.", "supersedes": [held]})
    assert get(services, held)["supersededBy"] == [elsewhere["result"]["id"]]  # another group: another note


def test_import_refuses_a_supersedes_cycle_and_writes_nothing(services: Services, fresh: Services) -> None:
    old = add(services, "The build uses make")
    new = add(services, "The build uses bazel", supersedes=[old])
    export = export_notes(ExportNotes(with_vectors=True), services)
    (forward,) = export.links
    backward = attrs.evolve(forward, key=attrs.evolve(forward.key, from_id=forward.key.to_id, to_id=forward.key.from_id))
    with pytest.raises(InvalidRequest) as refused:
        import_notes(ImportNotes(list(export.notes), export.globals, links=[forward, backward]), fresh)
    assert refused.value.field == "links[1]" and "cycle" in refused.value.rule
    assert recent(fresh, includeSuperseded=True) == []
    with pytest.raises(InvalidRequest) as refused:  # the reverse of a link the store holds
        import_notes(ImportNotes([], (), links=[backward]), services)
    assert refused.value.field == "links[0]"
    assert recent(services) == [new]


def test_a_chain_longer_than_the_walk_limit_passes_the_import_check_in_one_step_a_link(services: Services) -> None:
    from datetime import datetime, timezone

    from local_mcp_memory.application.import_notes import _check_cycles
    from local_mcp_memory.application.supersession import CHAIN_LIMIT
    from local_mcp_memory.domain.link import SUPERSEDES, Link, LinkKey

    at = datetime(2026, 1, 1, tzinfo=timezone.utc)
    chain = [NoteId.new() for _ in range(CHAIN_LIMIT + 50)]
    links = [Link(LinkKey(newer, older, SUPERSEDES), at) for older, newer in zip(chain, chain[1:])]
    _check_cycles(links, set(), services)  # each newer note has nothing above it yet: one step each
    closing = Link(LinkKey(chain[0], chain[-1], SUPERSEDES), at)
    with pytest.raises(InvalidRequest) as refused:
        _check_cycles([*links, closing], set(), services)
    assert refused.value.field == f"links[{len(links)}]"


def test_memory_link_with_supersedes_marks_a_note_superseded(services: Services) -> None:
    old, new = add(services, "logs go to syslog"), add(services, "logs go to journald")
    rpc(services, "memory.link", {"fromId": new, "toId": old, "relation": "supersedes"})
    assert recent(services) == [new]
    rpc(services, "memory.unlink", {"fromId": new, "toId": old, "relation": "supersedes"})
    assert recent(services) == [new, old]


def test_supersession_and_importance_survive_export_and_import(services: Services, fresh: Services) -> None:
    old = add(services, "The build uses make")
    new = add(services, "The build uses bazel", supersedes=[old], importance=0.9)
    export = export_notes(ExportNotes(with_vectors=True), services)
    import_notes(ImportNotes(list(export.notes), export.globals, links=export.links), fresh)
    assert recent(fresh) == [new]
    assert get(fresh, old)["supersededBy"] == [new]
    assert get(fresh, new)["importance"] == 0.9


# -- importance -------------------------------------------------------------------------------


def test_every_note_object_carries_its_importance(services: Services) -> None:
    plain = add(services, "a plain note")
    weighty = add(services, "a weighty note", importance=1)
    assert get(services, plain)["importance"] == 0.5
    assert get(services, weighty)["importance"] == 1.0
    rpc(services, "memory.update", {"id": plain, "patch": {"importance": 0.1}})
    assert get(services, plain)["importance"] == 0.1
    assert {i["importance"] for i in rpc(services, "memory.list_recent", {"projectId": "proj"})["result"]["items"]} == {0.1, 1.0}


@pytest.mark.parametrize("value", [-0.01, 1.5, True, "high", None])
def test_an_importance_outside_0_to_1_is_refused_at_its_field(services: Services, value: object) -> None:
    reply = rpc(services, "memory.add_note", {"projectId": "proj", "groupId": "g", "text": "x", "importance": value})
    if value is None:
        assert reply["result"]["id"]  # null: the default
        return
    assert error(reply) == (-32602, "importance")
    note = add(services, "y")
    assert error(rpc(services, "memory.update", {"id": note, "patch": {"importance": value}})) == (-32602, "patch.importance")
    entry = {"projectId": "proj", "groupId": "g", "text": "z", "importance": value}
    assert error(rpc(services, "memory.add_notes", {"notes": [entry]})) == (-32602, "notes[0].importance")


def test_importance_breaks_a_tie_between_equally_relevant_notes(services: Services, clock: ManualClock) -> None:
    high = add(services, "the cache key includes the locale!", importance=1.0)
    clock.advance(minutes=1)
    low = add(services, "the cache key includes the locale", importance=0.0)  # newer: it would win a tie
    assert found(services, "cache key locale")[:2] == [high, low]


def test_a_lasting_note_gets_no_default_expiry() -> None:
    created = parse_instant("2024-01-15T10:30:00Z")
    assert default_expiry(0.5, created, timedelta(days=90)) == created + timedelta(days=90)
    assert default_expiry(LASTING, created, timedelta(days=90)) is None
    assert default_expiry(0.1, created, None) is None


# -- fading -----------------------------------------------------------------------------------


def expiry(services: Services, note_id: str) -> str:
    return rpc(services, "memory.get", {"id": note_id})["result"]["expiresAt"]


def test_each_read_moves_the_expiry_out_by_half_its_original_span(services: Services, clock: ManualClock) -> None:
    start = clock.now()
    note = add(services, "the release branch is release-7", expiresAt=format_instant(start + timedelta(days=10)))
    untouched = add(services, "an unrelated reminder", expiresAt=format_instant(start + timedelta(days=10)))
    clock.advance(days=1)
    found(services, "release branch")  # a search returning it is a read
    services.reads.flush()
    assert parse_instant(expiry(services, note)) == start + timedelta(days=15)  # this get is a read too
    services.reads.flush()
    assert parse_instant(expiry(services, note)) == start + timedelta(days=20)
    services.reads.flush()  # the get just above: 25 days
    rpc(services, "memory.list_recent", {"projectId": "proj"})  # listing is not a read of a note
    services.reads.flush()
    clock.advance(days=23)  # day 24: the unread note expired on day 10
    assert found(services, "release branch") == [note]
    assert recent(services) == [note]
    assert untouched not in found(services, "unrelated reminder")


def test_a_new_expiry_set_by_update_records_a_new_span(services: Services, clock: ManualClock) -> None:
    start = clock.now()
    note = add(services, "a digest", expiresAt=format_instant(start + timedelta(days=2)))
    rpc(services, "memory.update", {"id": note, "patch": {"expiresAt": format_instant(start + timedelta(days=40))}})
    services.reads.flush()
    get(services, note)
    services.reads.flush()
    assert parse_instant(expiry(services, note)) == start + timedelta(days=60)


def test_the_span_counts_from_when_the_expiry_is_set_not_from_a_backdated_creation(services: Services, clock: ManualClock) -> None:
    start = clock.now()
    old = add(services, "a fact from long ago", createdAt="2001-01-01T00:00:00Z", expiresAt=format_instant(start + timedelta(days=1)))
    get(services, old)
    services.reads.flush()
    assert parse_instant(expiry(services, old)) == start + timedelta(days=1, hours=12)
    services.reads.flush()  # the get just above
    aged = add(services, "a note kept a while")
    clock.advance(days=80)
    rpc(services, "memory.update", {"id": aged, "patch": {"expiresAt": format_instant(clock.now() + timedelta(days=2))}})
    get(services, aged)
    services.reads.flush()
    assert parse_instant(expiry(services, aged)) == clock.now() + timedelta(days=3)


def test_fading_never_brings_back_a_note_deleted_after_it_was_read(services: Services, clock: ManualClock) -> None:
    note = add(services, "short lived", expiresAt=format_instant(clock.now() + timedelta(days=1)))
    found(services, "short lived")
    rpc(services, "memory.delete", {"id": note})
    assert services.reads.flush() == 0
    assert error(rpc(services, "memory.get", {"id": note})) == (-32004, None)
    assert recent(services, includeSuperseded=True) == []


def test_closing_the_server_writes_pending_reads(services: Services, clock: ManualClock) -> None:
    start = clock.now()
    note = add(services, "pending read", expiresAt=format_instant(start + timedelta(days=4)))
    found(services, "pending read")
    services.reads.close()
    assert services.store.get(NoteId(note)).note.expires_at == start + timedelta(days=6)
