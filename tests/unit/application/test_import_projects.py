"""An import never moves a note to another project, so links never join two projects, and a
store's own export always imports again."""

from __future__ import annotations

from datetime import datetime, timezone

import attrs
import pytest

from local_mcp_memory.application.errors import InvalidRequest
from local_mcp_memory.application.export_notes import ExportNotes, export_notes
from local_mcp_memory.application.import_notes import ImportNotes, import_notes
from local_mcp_memory.application.links import GetRelated, LinkNotes, link_notes, related
from local_mcp_memory.application.services import Services
from local_mcp_memory.domain.identifiers import CanonicalProjectId
from local_mcp_memory.domain.link import Link, LinkKey, Relation
from tests.unit.steps import add, rpc


def export_of(services: Services) -> ImportNotes:
    export = export_notes(ExportNotes(with_vectors=True), services)
    return ImportNotes(list(export.notes), export.globals, links=export.links)


def test_an_import_of_a_stored_id_with_another_project_is_refused_before_anything_is_written(services: Services) -> None:
    a, b = add(services, "alpha", project="one"), add(services, "beta", project="one")
    link_notes(LinkNotes(LinkKey(a, b, Relation("relates_to"))), services)
    command = export_of(services)
    moved = attrs.evolve(command.notes[1], note=attrs.evolve(command.notes[1].note, project_id=CanonicalProjectId("two"), text="b2"))
    first = attrs.evolve(command.notes[0], note=attrs.evolve(command.notes[0].note, text="alpha changed"))
    with pytest.raises(InvalidRequest) as refused:
        import_notes(ImportNotes([first, moved], links=[]), services)
    assert refused.value.field == "notes[1].project_id" and refused.value.value == "two"
    assert "one" in refused.value.rule
    assert services.store.get(a).note.text == "alpha" and services.store.get(b).note.project_id.value == "one"
    assert [r.stored.note.id for r in related(GetRelated(a), services)] == [b]


def test_a_stores_own_export_imports_again_into_it_and_into_a_fresh_store(services: Services, fresh: Services) -> None:
    a, b = add(services, "alpha", project="one"), add(services, "beta", project="one")
    c = add(services, "gamma", project="two")
    link_notes(LinkNotes(LinkKey(a, b, Relation("relates_to"))), services)
    services.store.link(Link(LinkKey(a, c, Relation("relates_to")), datetime(2024, 1, 1, tzinfo=timezone.utc)))  # an older version's
    command = export_of(services)
    assert [(link.key.from_id, link.key.to_id) for link in command.links] == [(a, b)]
    assert import_notes(command, services).unchanged == 3
    assert import_notes(command, fresh).links_written == 1
    assert rpc(fresh, "memory.related", {"id": a.value})["result"]["items"][0]["id"] == b.value
