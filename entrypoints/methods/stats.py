"""``memory.stats``: note counts by namespace, project, group and tag; vectors and disk use."""

from __future__ import annotations

from local_mcp_memory.application.services import Services
from local_mcp_memory.application.stats import GetStats, StoreStats, get_stats
from local_mcp_memory.entrypoints.methods import wire
from local_mcp_memory.entrypoints.methods.method import Method


class StatsParams(wire.Params):
    project_id: str | None = None

    def command(self) -> GetStats:
        return GetStats(self.project_id)


class StatsResult(wire.View):
    """Note counts (of ``projectId``, or of every project when it is null) by home
    namespace, project, group and tag; ``vectors`` and ``diskBytes`` cover the whole store."""

    project_id: str | None
    current_namespace: str | None
    notes: int
    globals: int
    by_namespace: dict[str, int]
    by_project: dict[str, int]
    by_group: dict[str, int]
    by_tag: dict[str, int]
    vectors: dict[str, int]
    disk_bytes: int
    expired: int
    links: int
    duplicates_refused: int


def stats_view(stats: StoreStats) -> StatsResult:
    return StatsResult(
        project_id=None if stats.project_id is None else stats.project_id.value,
        current_namespace=None if stats.current_namespace is None else str(stats.current_namespace),
        notes=stats.notes,
        globals=stats.globals,
        by_namespace=stats.by_namespace,
        by_project=stats.by_project,
        by_group=stats.by_group,
        by_tag=stats.by_tag,
        vectors=stats.vectors,
        disk_bytes=stats.disk_bytes,
        expired=stats.expired,
        links=stats.links,
        duplicates_refused=stats.duplicates_refused,
    )


def run(params: StatsParams, services: Services) -> StatsResult:
    return stats_view(get_stats(params.command(), services))


METHOD = Method(
    name="memory.stats",
    params=StatsParams,
    result=StatsResult,
    run=run,
    title="Count notes",
    description=(
        "Count notes by namespace, group and tag, with vectors per namespace and bytes on disk, expired "
        "notes not yet removed, links, and duplicates this server refused since it started. "
        "projectId: omit it for this project; null for every project."
    ),
    left_out="counts by namespace, project, group and tag come largest first; `mcp-memory stats` prints them all",
    read_only=True,
    idempotent=True,
)
