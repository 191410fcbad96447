"""memory.stats's use case: counts by namespace, project, group and tag."""

from __future__ import annotations

from local_mcp_memory.application.services import Services
from local_mcp_memory.application.stats import GetStats, get_stats
from local_mcp_memory.domain.note import Tags
from tests.unit.steps import LOCAL, add


def test_stats_count_notes_by_namespace_project_group_and_tag(services: Services) -> None:
    add(services, "a", group="global", tags=Tags(("db", "ops")))
    add(services, "b", tags=Tags(("db",)))
    add(services, "c", project="other")
    stats = get_stats(GetStats(), services)
    assert (stats.notes, stats.current_namespace) == (3, LOCAL)
    assert stats.by_namespace == {str(LOCAL): 3}
    assert stats.by_project == {"proj": 2, "other": 1}
    assert stats.by_group == {"feature-1": 2, "global": 1}
    assert stats.by_tag == {"db": 2, "ops": 1}
    assert stats.vectors == {str(LOCAL): 3}
    assert stats.disk_bytes == 0


def test_stats_of_one_project_count_only_its_notes(services: Services) -> None:
    add(services, "a")
    add(services, "b", project="other")
    stats = get_stats(GetStats("other"), services)
    assert (stats.project_id.value, stats.notes, stats.by_project) == ("other", 1, {"other": 1})
