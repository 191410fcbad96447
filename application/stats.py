from __future__ import annotations

from collections import Counter

import attrs

from local_mcp_memory.application.services import Services
from local_mcp_memory.domain.identifiers import CanonicalProjectId, Namespace


@attrs.frozen
class GetStats:
    project_id: str | None = None


@attrs.frozen
class StoreStats:
    """Counts of live notes (of one project, or all), by the namespace that is their home,
    project, group and tag; ``expired`` notes not yet removed from disk, ``links`` between
    the notes, and ``duplicates_refused``: notes this server process did not write since
    it started because a live note held the same text. ``vectors`` and ``disk_bytes`` are
    always store-wide."""

    project_id: CanonicalProjectId | None
    current_namespace: Namespace | None
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


def get_stats(command: GetStats, services: Services) -> StoreStats:
    project = None if command.project_id is None else services.project(command.project_id)
    homes, projects, groups, tags = Counter(), Counter(), Counter(), Counter()
    now, expired = services.clock.now(), 0
    for stored in services.maintenance.iter_notes(project):
        note = stored.note
        if note.expired(now):
            expired += 1
            continue
        homes[str(stored.namespace)] += 1
        projects[note.project_id.value] += 1
        groups[note.group_id.value] += 1
        tags.update(note.tags.values)
    return StoreStats(
        project_id=project,
        current_namespace=services.embedding.known_namespace(),
        notes=sum(projects.values()),
        globals=sum(1 for _ in services.maintenance.iter_globals(project)),
        by_namespace=_ranked(homes),
        by_project=_ranked(projects),
        by_group=_ranked(groups),
        by_tag=_ranked(tags),
        vectors={str(ns): n for ns, n in sorted(services.maintenance.namespaces().items(), key=lambda i: str(i[0]))},
        disk_bytes=services.maintenance.disk_bytes(),
        expired=expired,
        links=sum(1 for _ in services.maintenance.iter_links(project)),
        duplicates_refused=services.counters.duplicates_refused,
    )


def _ranked(counts: Counter[str]) -> dict[str, int]:
    """Largest count first, ties by name: the order a reader scans for."""
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))
