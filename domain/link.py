"""A link: a named, directed relation from one note to another of the same project."""

from __future__ import annotations

import re
from datetime import datetime
from typing import ClassVar

import attrs

from local_mcp_memory.domain.errors import InvalidValue
from local_mcp_memory.domain.identifiers import NoteId


@attrs.frozen
class Relation:
    """What a link says, in lower case and underscores: ``supersedes``, ``relates_to``."""

    value: str

    PATTERN: ClassVar[re.Pattern[str]] = re.compile(r"[a-z_]{1,32}")

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.value, str) or not self.PATTERN.fullmatch(self.value):
            raise InvalidValue("Relation", "must match [a-z_]{1,32}", self.value)

    def __str__(self) -> str:
        return self.value


@attrs.frozen
class LinkKey:
    """What identifies a link: linking the same key twice is one link."""

    from_id: NoteId
    to_id: NoteId
    relation: Relation


@attrs.frozen
class Link:
    """A link as stored, with the instant it was first made (the order ``related`` lists)."""

    key: LinkKey
    created_at: datetime

    def __attrs_post_init__(self) -> None:
        if self.created_at.tzinfo is None:
            raise InvalidValue("Link", "created_at must be timezone-aware", self.created_at, "created_at")

    def touches(self, note_id: NoteId) -> bool:
        return note_id in (self.key.from_id, self.key.to_id)


SUPERSEDES = Relation("supersedes")
"""The relation of a newer note to the older one it replaces (SPEC §13): a note that is the
target of such a link from a live note is *superseded* and leaves default answers."""
