"""Session context (application/context.py, context_markdown.py): what the page shows, in
which order, and how it stays within its budget."""

from __future__ import annotations

import re
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from local_mcp_memory.application.context import GetContext, context_text, get_context
from local_mcp_memory.application.context_markdown import Budget
from local_mcp_memory.application.errors import EmbedderUnavailable, InvalidRequest
from local_mcp_memory.application.services import Services
from local_mcp_memory.application.settings import EmbedderSettings
from local_mcp_memory.application.upsert_global import UpsertGlobal, upsert_global
from local_mcp_memory.domain.identifiers import GlobalKey, GroupId, NoteId
from local_mcp_memory.domain.note import Note, Tags
from local_mcp_memory.entrypoints.composition.compose import compose
from local_mcp_memory.entrypoints.composition.settings import ServerOptions
from tests.fakes.manual_clock import ManualClock
from tests.fakes.memory_config import InMemoryConfigRepository
from tests.fakes.memory_store import InMemoryNoteStore
from tests.unit.steps import add

ID = re.compile(r"id ([0-9a-f-]{36})")


def setting(services: Services, key: str, value: Any, project: str = "proj") -> None:
    upsert_global(UpsertGlobal(project, GlobalKey(key), value), services)


def shown_ids(text: str) -> list[str]:
    return ID.findall(text)


def notes(services: Services, count: int, clock: ManualClock, **fields: Any) -> list[NoteId]:
    """``count`` notes a minute apart, oldest first."""
    ids = []
    for i in range(count):
        ids.append(add(services, f"note number {i}", **fields))
        clock.advance(minutes=1)
    return ids


def test_a_project_with_nothing_stored_is_the_header_alone(services: Services) -> None:
    context = get_context(GetContext("proj"), services)
    assert context.text == "# Project memory: proj\n"
    assert context.items == []


def test_the_header_names_the_canonical_project_and_the_group(services: Services, tmp_path: Path) -> None:
    text = context_text(GetContext(str(tmp_path / "app" / ".."), GroupId("task-7")), services)
    assert text == f"# Project memory: {tmp_path} (group task-7)\n"


def test_globals_come_first_standard_keys_in_spec_order_then_the_others_by_key(services: Services) -> None:
    setting(services, "global.zeta", "last")
    setting(services, "global.project.conventions", "Small PRs.")
    setting(services, "global.alpha", True)
    setting(services, "global.memory.groupDefaults", {"featurePrefix": "feat-", "taskPrefix": "t-"})
    setting(services, "global.memory.embedder.model", "nomic-embed-text")
    setting(services, "global.memory.embedder.provider", "ollama")
    add(services, "a note")
    text = context_text(GetContext("proj"), services)
    assert text.index("## Global settings") < text.index("## Recent notes")
    keys = re.findall(r"^- (global\.[^:]+):", text, re.MULTILINE)
    assert keys == [
        "global.memory.embedder.provider",
        "global.memory.embedder.model",
        "global.memory.groupDefaults",
        "global.project.conventions",
        "global.alpha",
        "global.zeta",
    ]


def test_object_values_are_compact_json_and_strings_are_written_as_they_are(services: Services) -> None:
    setting(services, "global.memory.groupDefaults", {"featurePrefix": "feat-", "n": [1, 2.5, None]})
    setting(services, "global.project.conventions", "Tabs, not \"spaces\".\nTests first.")
    text = context_text(GetContext("proj"), services)
    assert '- global.memory.groupDefaults: {"featurePrefix":"feat-","n":[1,2.5,null]}\n' in text
    assert '- global.project.conventions: Tabs, not "spaces".\n  Tests first.\n' in text


def test_only_the_projects_own_globals_and_notes_appear(services: Services) -> None:
    setting(services, "global.project.conventions", "theirs", project="other")
    add(services, "their note", project="other")
    assert context_text(GetContext("proj"), services) == "# Project memory: proj\n"


def test_recent_notes_are_newest_first_and_items_follow_the_page(services: Services, clock: ManualClock) -> None:
    ids = notes(services, 5, clock)
    context = get_context(GetContext("proj"), services)
    expected = [i.value for i in reversed(ids)]
    assert [s.note.id.value for s in context.items] == expected
    assert shown_ids(context.text) == expected
    assert "note number 4" in context.text


def test_limit_counts_notes_and_defaults_to_20(services: Services, clock: ManualClock) -> None:
    notes(services, 25, clock)
    assert len(get_context(GetContext("proj"), services).items) == GetContext.DEFAULT_LIMIT == 20
    assert len(get_context(GetContext("proj", limit=3), services).items) == 3


@pytest.mark.parametrize("limit", [0, -1, 101])
def test_a_limit_out_of_range_is_refused_at_limit(limit: int) -> None:
    with pytest.raises(InvalidRequest) as refused:
        GetContext("proj", limit=limit)
    assert refused.value.field == "limit" and "1..100" in refused.value.rule


@pytest.mark.parametrize("query", ["", "   ", "x" * 10_001])
def test_a_blank_or_overlong_query_is_refused_at_query(query: str) -> None:
    with pytest.raises(InvalidRequest) as refused:
        GetContext("proj", query=query)
    assert refused.value.field == "query"


def test_group_filters_the_notes_but_not_the_globals(services: Services, clock: ManualClock) -> None:
    setting(services, "global.project.conventions", "Small PRs.")
    mine = notes(services, 2, clock, group="task-7")
    notes(services, 2, clock, group="task-8")
    context = get_context(GetContext("proj", GroupId("task-7")), services)
    assert "Small PRs." in context.text
    assert [s.note.id for s in context.items] == mine[::-1]


def test_with_a_query_the_relevant_notes_follow_the_recent_ones_without_repeats(
    services: Services, clock: ManualClock
) -> None:
    deploy = add(services, "Deploys go through the blue-green pipeline on Fridays.")
    clock.advance(minutes=1)
    newer = notes(services, 6, clock)
    context = get_context(GetContext("proj", query="blue-green deploys", limit=4), services)
    recent, relevant = context.text.split("## Relevant to: blue-green deploys\n")
    assert shown_ids(recent) == [newer[5].value, newer[4].value]  # the smaller half
    assert shown_ids(relevant)[0] == deploy.value  # the larger half, best first
    assert len(shown_ids(relevant)) == 2
    assert len(set(shown_ids(context.text))) == 4 == len(context.items)
    assert "score " in relevant and "score " not in recent


def test_a_relevant_note_already_listed_as_recent_is_not_repeated_and_its_place_goes_to_the_next(
    services: Services, clock: ManualClock
) -> None:
    older = notes(services, 4, clock)
    deploy = add(services, "Deploys go through the blue-green pipeline on Fridays.")
    context = get_context(GetContext("proj", query="blue-green deploys", limit=4), services)
    ids = shown_ids(context.text)
    assert ids.count(deploy.value) == 1 and ids[0] == deploy.value
    assert len(ids) == 4 and set(ids[2:]) <= {i.value for i in older}


def test_a_limit_of_one_with_a_query_shows_the_most_relevant_note_alone(services: Services, clock: ManualClock) -> None:
    deploy = add(services, "Deploys go through the blue-green pipeline on Fridays.")
    clock.advance(minutes=1)
    notes(services, 3, clock)
    context = get_context(GetContext("proj", query="blue-green deploys", limit=1), services)
    assert [s.note.id for s in context.items] == [deploy]
    assert "## Recent notes" not in context.text and "## Relevant to: blue-green deploys" in context.text


def test_without_a_query_there_is_no_relevant_section_and_the_whole_limit_is_recent(
    services: Services, clock: ManualClock
) -> None:
    notes(services, 6, clock)
    context = get_context(GetContext("proj", limit=6), services)
    assert "Relevant" not in context.text and len(context.items) == 6


def test_expired_notes_never_appear(services: Services, clock: ManualClock) -> None:
    namespace, (vector,) = services.embedding.embed(["Deploys on Fridays, until the freeze."], "passage")
    expiring = Note(
        NoteId.new(),
        services.project("proj"),
        GroupId("feature-1"),
        "Deploys on Fridays, until the freeze.",
        clock.now(),
        expires_at=clock.now() + timedelta(hours=1),
    )
    services.writer.put(expiring, namespace, vector)
    kept = add(services, "Another note about deploys.")
    assert expiring.id in [s.note.id for s in get_context(GetContext("proj", query="Fridays"), services).items]
    clock.advance(hours=1)
    for command in (GetContext("proj"), GetContext("proj", query="Deploys on Fridays")):
        context = get_context(command, services)
        assert [s.note.id for s in context.items] == [kept]
        assert "Fridays" not in context.text


def test_a_long_note_is_cut_with_an_ellipsis_and_the_page_stays_within_8000_characters(
    services: Services, clock: ManualClock
) -> None:
    long_id = add(services, "start " + "lorem ipsum " * 5_000 + "the end")
    context = get_context(GetContext("proj"), services)
    assert len(context.text) <= Budget().total
    assert "start lorem ipsum" in context.text and "the end" not in context.text
    assert f"id {long_id}\n" in context.text and "…\n" in context.text
    assert [s.note.id for s in context.items] == [long_id]


def test_notes_that_no_longer_fit_are_left_out_with_a_closing_line_and_are_not_items(
    services: Services, clock: ManualClock
) -> None:
    for i in range(100):
        add(services, f"note {i} " + "detail " * 300, title="T" * 900, tags=Tags(tuple(f"tag{j}" for j in range(60))))
        clock.advance(minutes=1)
    for i in range(40):
        setting(services, f"global.key{i:02d}", {"v": "x" * 2_000})
    context = get_context(GetContext("proj", query="detail", limit=100), services)
    assert len(context.text) <= Budget().total
    shown = shown_ids(context.text)
    assert shown == [s.note.id.value for s in context.items] and 0 < len(shown) < 100
    assert f"… {100 - len(shown)} more notes left out to stay within 8,000 characters.\n" in context.text
    assert re.search(r"^- … \d+ more global settings left out\.$", context.text, re.MULTILINE)


def test_titles_tags_and_line_breaks_stay_on_their_lines(services: Services) -> None:
    add(services, "first line\r\nsecond line\u2028third", title="A\ntitle", tags=Tags(("db", "api")))
    text = context_text(GetContext("proj"), services)
    assert " · **A title** · tags: db, api · " in text
    assert "\n  first line\n  second line\n  third\n" in text


class UnreachableEmbedders:
    """An EmbedderFactory whose embedders are never reachable, with no dimension recorded."""

    def create(self, settings: EmbedderSettings) -> Any:
        raise EmbedderUnavailable(settings.provider, None, "the embedder is not reachable")


def test_without_a_query_the_text_needs_no_embedder_but_a_query_does(tmp_path: Path, clock: ManualClock) -> None:
    store = InMemoryNoteStore()
    services = compose(
        ServerOptions.resolve({}, tmp_path / "config.json", tmp_path / "data"),
        embedders=UnreachableEmbedders(),
        store=store,
        clock=clock,
        config=InMemoryConfigRepository(),
    )
    setting(services, "global.project.conventions", "Small PRs.")
    assert "Small PRs." in context_text(GetContext("proj"), services)
    with pytest.raises(EmbedderUnavailable):
        context_text(GetContext("proj", query="anything"), services)


_texts = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=3_000).filter(str.strip)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(_texts, min_size=1, max_size=30), limit=st.integers(1, 100), query=st.none() | _texts.map(lambda t: t[:200]))
def test_any_notes_give_a_page_within_budget_whose_items_are_the_ids_it_shows(
    services: Services, texts: list[str], limit: int, query: str | None
) -> None:
    project = f"p-{uuid.uuid4()}"
    for text in texts:
        add(services, text, project=project)
    context = get_context(GetContext(project, query=query, limit=limit), services)
    assert len(context.text) <= Budget().total
    ids = [s.note.id.value for s in context.items]
    assert len(ids) == len(set(ids)) <= limit
    assert all(f"id {i}\n" in context.text for i in ids)
    assert context.text.index("# Project memory") == 0
