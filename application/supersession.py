"""Explicit supersession (SPEC §13): a newer note replaces older ones of its project.

A ``supersedes`` link goes from the newer note to each older one. A note that is the target
of such a link from a live note is superseded: the stores leave it out of default reads
(``NoteFilter.include_superseded``); ``get`` still returns it, naming its newer notes.
Deleting the newer note removes its links, and so restores the older one.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence

from local_mcp_memory.application.errors import InvalidRequest, NoteNotFound, SupersessionCycle
from local_mcp_memory.application.get_note import live_note
from local_mcp_memory.application.services import Services
from local_mcp_memory.domain.identifiers import CanonicalProjectId, NoteId
from local_mcp_memory.domain.link import SUPERSEDES, Link, LinkKey
from local_mcp_memory.domain.note import DedupKey

CHAIN_LIMIT = 10_000
"""How many notes a cycle check walks at most: a link whose newer note has more notes above
it (superseding it, and those superseding them) is refused. Walking up from the newer note,
the usual link — a new note on top of a chain of any length — walks one note."""


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
        if newer is not None and reaches(newer, target, superseding_notes(services), field):
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
    planned = PlannedLinks(services)
    for newer, wanted, field in links:
        for target in wanted:
            if target == newer:
                raise InvalidRequest(field, SELF_DUPLICATE, target.value)
            if planned.closes_cycle(newer, target, field):
                raise InvalidRequest(field, CYCLE, target.value)
    for newer, wanted, field in links:
        supersede(newer, wanted, services, field)


class PlannedLinks:
    """``supersedes`` links checked one by one before any is written (one call's, one import's):
    each against the stored links and the ones accepted before it."""

    def __init__(self, services: Services) -> None:
        self._stored = functools.cache(superseding_notes(services))
        self._planned: dict[NoteId, list[NoteId]] = {}  # per older note, the newer ones planned

    def closes_cycle(self, newer: NoteId, older: NoteId, field: str) -> bool:
        """Whether a link from ``newer`` to ``older`` would close a cycle; if not, it is
        planned. ``InvalidRequest`` at ``field`` past ``CHAIN_LIMIT`` notes."""
        if reaches(newer, older, self._above, field):
            return True
        self._planned.setdefault(older, []).append(newer)
        return False

    def _above(self, note_id: NoteId) -> list[NoteId]:
        return [*self._planned.get(note_id, ()), *self._stored(note_id)]


CYCLE = "would make a cycle: the note supersedes this one already"
SELF_DUPLICATE = "names the note that holds this text: a note cannot supersede itself"
SAME_TEXT = "names a note of this very text in this group: a note cannot supersede its own text"


def superseding_notes(services: Services) -> Callable[[NoteId], list[NoteId]]:
    """The notes that supersede a stored note, as the store holds its links."""

    def newer(note_id: NoteId) -> list[NoteId]:
        return [
            link.key.from_id
            for link in services.reader.links(note_id)
            if link.key.relation == SUPERSEDES and link.key.to_id == note_id
        ]

    return newer


def reaches(start: NoteId, goal: NoteId, step: Callable[[NoteId], Iterable[NoteId]], field: str) -> bool:
    """Whether ``goal`` is ``start`` or follows it on a chain of ``supersedes`` links, the
    notes next to each being ``step(note)``. A link from ``newer`` to ``older`` closes a cycle
    when ``reaches(newer, older, <the notes superseding a note>)``: ``older`` supersedes
    ``newer`` already. ``InvalidRequest`` at ``field`` past ``CHAIN_LIMIT`` notes."""
    seen, frontier = {start}, [start]
    while frontier:
        current = frontier.pop()
        if current == goal:
            return True
        for following in step(current):
            if following not in seen:
                if len(seen) >= CHAIN_LIMIT:
                    raise InvalidRequest(field, f"the chain of supersedes links from this note is longer than {CHAIN_LIMIT:,} notes", start.value)
                seen.add(following)
                frontier.append(following)
    return False
