"""memory.list_recent's use case: newest first, in write order within one instant."""

from __future__ import annotations

from local_mcp_memory.application.list_recent import ListRecent, list_recent
from local_mcp_memory.application.services import Services
from local_mcp_memory.domain.identifiers import GroupId
from tests.fakes.manual_clock import ManualClock
from tests.unit.steps import add


def test_list_recent_is_newest_first_with_limit_and_filters(services: Services, clock: ManualClock) -> None:
    ids = []
    for i in range(5):
        ids.append(add(services, f"note {i}", group="g1" if i % 2 else "g2"))
        clock.advance(minutes=1)
    recent = list_recent(ListRecent(project_id="proj", limit=3), services)
    assert [s.note.id for s in recent.items] == ids[::-1][:3]
    only_g1 = list_recent(ListRecent(project_id="proj", group_id=GroupId("g1")), services)
    assert [s.note.id for s in only_g1.items] == [ids[3], ids[1]]


def test_list_recent_keeps_write_order_within_one_instant(services: Services) -> None:
    ids = [add(services, f"same instant {i}") for i in range(3)]
    assert [s.note.id for s in list_recent(ListRecent(project_id="proj"), services).items] == ids[::-1]
