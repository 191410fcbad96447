"""What the ``memory.*`` methods share on the wire: the bases of their msgspec Structs,
the note views, and the helpers that turn a request field into a value object.

msgspec checks the *shape* of a message (types, required and unknown fields); the value
objects built here check its *meaning*, each refusal placed at the field it came from.
Field paths are in domain names (``group_id``, ``patch.tags``); the error table
(``entrypoints.errors``) gives them their wire names (``groupId``, ``patch.tags``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from msgspec import Struct

from application.ports import Hit, StoredNote
from application.services import at
from domain.identifiers import GroupId, Namespace, NoteId
from domain.note import Note, Tags
from domain.time import format_instant, parse_instant


class Params(Struct, frozen=True, forbid_unknown_fields=True, kw_only=True, rename="camel"):
    """Base of every request's params: camelCase on the wire, unknown fields refused."""


class View(Struct, frozen=True, kw_only=True, rename="camel"):
    """Base of every result."""


class NoParams(Params):
    pass


class OkResult(View):
    ok: bool = True


# ---------------------------------------------------------------- request fields


def group(raw: str, field: str = "group_id") -> GroupId:
    return at(field, GroupId, raw)


def group_or_none(raw: str | None) -> GroupId | None:
    return None if raw is None else group(raw)


def tags(raw: list[str] | None, field: str = "tags") -> Tags:
    return at(field, Tags.of, raw)


def instant(raw: str | None, field: str) -> datetime | None:
    return None if raw is None else at(field, parse_instant, raw)


def note_id(raw: str) -> NoteId:
    return at("id", NoteId, raw)


def namespace(raw: str, field: str) -> Namespace:
    return at(field, Namespace.parse, raw)


# ---------------------------------------------------------------- notes


class NoteView(View):
    id: str
    project_id: str
    group_id: str
    title: str | None
    text: str
    tags: list[str]
    source: str | None
    created_at: str
    metadata: dict[str, Any] | None


class StoredNoteView(NoteView):
    namespace: str


class HitView(NoteView):
    score: float


def _note_fields(note: Note) -> dict[str, Any]:
    return {
        "id": note.id.value,
        "project_id": note.project_id.value,
        "group_id": note.group_id.value,
        "title": note.title,
        "text": note.text,
        "tags": list(note.tags.values),
        "source": note.source,
        "created_at": format_instant(note.created_at),
        "metadata": note.metadata,
    }


def stored_view(stored: StoredNote) -> StoredNoteView:
    return StoredNoteView(**_note_fields(stored.note), namespace=str(stored.namespace))


def hit_view(hit: Hit) -> HitView:
    return HitView(**_note_fields(hit.stored.note), score=round(hit.score, 6))
