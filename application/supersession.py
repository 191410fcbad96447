"""Explicit supersession (SPEC §13): a newer note replaces older ones of its project.

A ``supersedes`` link goes from the newer note to each older one. A note that is the target
of such a link from a live note is superseded: the stores leave it out of default reads
(``NoteFilter.include_superseded``); ``get`` still returns it, naming its newer notes.
Deleting the newer note removes its links, and so restores the older one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from local_mcp_memory.application.errors import InvalidRequest, NoteNotFound
from local_mcp_memory.application.get_note import live_note
from local_mcp_memory.application.services import Services
from local_mcp_memory.domain.identifiers import CanonicalProjectId, NoteId
from local_mcp_memory.domain.link import SUPERSEDES, Link, LinkKey

CHAIN_LIMIT = 10_000
"""How many notes a cycle check walks at most (a chain longer than this is refused)."""


def check_superseded(
    targets: Sequence[NoteId], project: CanonicalProjectId, services: Services, field: str, newer: NoteId | None = None
) -> None:
    """Every target a live note (``NoteNotFound`` naming it) of ``project``, none of them
    ``newer`` itself, none superseding ``newer`` already (a cycle): ``InvalidRequest`` at ``field``."""
    for target in targets:
        if target == newer:
            raise InvalidRequest(field, "a note cannot supersede itself", target.value)
        stored = live_note(target, services)
        if stored.note.project_id != project:
            raise InvalidRequest(field, "must name notes of the same project", target.value)
        if newer is not None and _reaches(target, newer, services):
            raise InvalidRequest(field, "would make a cycle: the note supersedes this one already", target.value)


def supersede(newer: NoteId, targets: Iterable[NoteId], services: Services) -> None:
    """Link ``newer`` to each target (checked by ``check_superseded``); a note deleted
    meanwhile is ``NoteNotFound``."""
    now = services.clock.now()
    for target in targets:
        if target == newer:
            continue  # a duplicate answered by the very note it supersedes
        if not services.writer.link(Link(LinkKey(newer, target, SUPERSEDES), now)):
            missing = newer if services.reader.get(newer) is None else target
            raise NoteNotFound(missing.value)


def _reaches(start: NoteId, goal: NoteId, services: Services) -> bool:
    """Whether ``goal`` is ``start`` or follows it on a chain of ``supersedes`` links."""
    seen, frontier = {start}, [start]
    while frontier:
        current = frontier.pop()
        if current == goal:
            return True
        for link in services.reader.links(current):
            key = link.key
            if key.relation == SUPERSEDES and key.from_id == current and key.to_id not in seen:
                if len(seen) >= CHAIN_LIMIT:
                    raise InvalidRequest("supersedes", f"the chain of superseded notes is longer than {CHAIN_LIMIT}", start.value)
                seen.add(key.to_id)
                frontier.append(key.to_id)
    return False
