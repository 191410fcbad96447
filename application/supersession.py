"""Explicit supersession (SPEC §13): a newer note replaces older ones of its project.

A ``supersedes`` link goes from the newer note to each older one. A note that is the target
of such a link from a live note is superseded: the stores leave it out of default reads
(``NoteFilter.include_superseded``); ``get`` still returns it, naming its newer notes.
Deleting the newer note removes its links, and so restores the older one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from local_mcp_memory.application.errors import InvalidRequest, NoteNotFound, SupersessionCycle
from local_mcp_memory.application.get_note import live_note
from local_mcp_memory.application.services import Services
from local_mcp_memory.domain.identifiers import CanonicalProjectId, NoteId
from local_mcp_memory.domain.link import SUPERSEDES, Link, LinkKey
from local_mcp_memory.domain.note import DedupKey

CHAIN_LIMIT = 10_000
"""How many notes a cycle check walks at most (a chain longer than this is refused)."""


def check_superseded(
    targets: Sequence[NoteId],
    project: CanonicalProjectId,
    services: Services,
    field: str,
    newer: NoteId | None = None,
    text: DedupKey | None = None,
) -> None:
    """Every target a live note (``NoteNotFound`` naming it) of ``project``, none of them
    ``newer`` itself, none superseding ``newer`` already (a cycle), none holding ``text``
    (the dedup key of a note being added, which dedup on write would answer with that very
    note): ``InvalidRequest`` at ``field``."""
    for target in targets:
        if target == newer:
            raise InvalidRequest(field, "a note cannot supersede itself", target.value)
        stored = live_note(target, services)
        if stored.note.project_id != project:
            raise InvalidRequest(field, "must name notes of the same project", target.value)
        if text is not None and stored.note.dedup_key == text:
            raise InvalidRequest(field, SAME_TEXT, target.value)
        if newer is not None and reaches(target, newer, superseded_notes(services)):
            raise InvalidRequest(field, CYCLE, target.value)


def supersede(newer: NoteId, targets: Iterable[NoteId], services: Services, field: str) -> None:
    """Link ``newer`` to each target (checked by ``check_superseded``); a note deleted
    meanwhile is ``NoteNotFound``. The store refuses a link that would close a cycle as of
    its write (``SupersessionCycle``: another process linked the other way meanwhile, or
    ``newer`` is a duplicate's holder, known only once written): ``InvalidRequest`` at
    ``field``, the links before it kept."""
    now = services.clock.now()
    for target in targets:
        try:
            linked = services.writer.link(Link(LinkKey(newer, target, SUPERSEDES), now))
        except SupersessionCycle:
            if target == newer:
                raise InvalidRequest(field, SELF_DUPLICATE, target.value) from None
            raise InvalidRequest(field, CYCLE, target.value) from None
        if not linked:
            missing = newer if services.reader.get(newer) is None else target
            raise NoteNotFound(missing.value)


def supersede_each(links: Sequence[tuple[NoteId, Sequence[NoteId], str]], services: Services) -> None:
    """``supersede`` each ``(newer, targets, field)`` of one call, in order, once every link of
    it is checked against the stored links and the call's earlier ones: a cycle closed by
    any of them (a duplicate's holder naming a note that, stored or by an earlier entry,
    supersedes it) is ``InvalidRequest`` at its field before a link is written, so a refused
    call leaves none of its links."""
    stored = superseded_notes(services)
    planned: dict[NoteId, list[NoteId]] = {}

    def targets(note_id: NoteId) -> list[NoteId]:
        return [*stored(note_id), *planned.get(note_id, ())]

    for newer, wanted, field in links:
        for target in wanted:
            if target == newer:
                raise InvalidRequest(field, SELF_DUPLICATE, target.value)
            if reaches(target, newer, targets):
                raise InvalidRequest(field, CYCLE, target.value)
            planned.setdefault(newer, []).append(target)
    for newer, wanted, field in links:
        supersede(newer, wanted, services, field)


CYCLE = "would make a cycle: the note supersedes this one already"
SELF_DUPLICATE = "names the note that holds this text: a note cannot supersede itself"
SAME_TEXT = "names a note of this very text in this group: a note cannot supersede its own text"


def superseded_notes(services: Services) -> Callable[[NoteId], list[NoteId]]:
    """The notes a stored note supersedes, as the store holds its links."""

    def targets(note_id: NoteId) -> list[NoteId]:
        return [
            link.key.to_id
            for link in services.reader.links(note_id)
            if link.key.relation == SUPERSEDES and link.key.from_id == note_id
        ]

    return targets


def reaches(start: NoteId, goal: NoteId, targets: Callable[[NoteId], Iterable[NoteId]]) -> bool:
    """Whether ``goal`` is ``start`` or follows it on a chain of ``supersedes`` links, each
    note's being ``targets(note)``; ``InvalidRequest`` past ``CHAIN_LIMIT`` notes."""
    seen, frontier = {start}, [start]
    while frontier:
        current = frontier.pop()
        if current == goal:
            return True
        for target in targets(current):
            if target not in seen:
                if len(seen) >= CHAIN_LIMIT:
                    raise InvalidRequest("supersedes", f"the chain of superseded notes is longer than {CHAIN_LIMIT}", start.value)
                seen.add(target)
                frontier.append(target)
    return False
