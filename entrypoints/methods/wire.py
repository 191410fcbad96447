"""What the ``memory.*`` methods share on the wire: the bases of their msgspec Structs,
the note views, and the helpers that turn a request field into a value object.

msgspec checks the *shape* of a message (types, required and unknown fields); the value
objects built here check its *meaning*, each refusal placed at the field it came from.
Field paths are in domain names (``group_id``, ``patch.tags``); the error table
(``entrypoints.rpc.errors``) gives them their wire names (``groupId``, ``patch.tags``).
"""

from __future__ import annotations

from datetime import datetime
from functools import cache
from typing import TYPE_CHECKING, Any

from msgspec import UNSET, Struct, UnsetType

from local_mcp_memory.application.ports import Hit, StoredNote
from local_mcp_memory.application.services import at
from local_mcp_memory.domain.errors import InvalidValue
from local_mcp_memory.domain.identifiers import GroupId, Namespace, NoteId
from local_mcp_memory.domain.note import Tags
from local_mcp_memory.domain.time import parse_instant

if TYPE_CHECKING:
    from local_mcp_memory.adapters.json_converter import NoteMapping


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


MAX_SUPERSEDES = 100
"""The most notes one ``supersedes`` may name."""


def note_ids(raw: list[str] | None, field: str) -> tuple[NoteId, ...]:
    """A request's list of note ids (``supersedes``), each once."""
    if raw is None:
        return ()
    if len(raw) > MAX_SUPERSEDES:
        raise InvalidValue("NoteIds", f"must name at most {MAX_SUPERSEDES} notes", len(raw), field)
    return tuple(dict.fromkeys(at(f"{field}[{i}]", NoteId, value) for i, value in enumerate(raw)))


def namespace(raw: str, field: str) -> Namespace:
    return at(field, Namespace.parse, raw)


# ---------------------------------------------------------------- notes


class NoteView(View):
    """A note's fields, mapped from ``Note`` by ``adapters.json_converter.CAMEL``."""

    id: str
    project_id: str
    group_id: str
    title: str | None
    text: str
    tags: list[str]
    source: str | None
    created_at: str
    metadata: dict[str, Any] | None
    expires_at: str | None
    importance: float


class StoredNoteView(NoteView, kw_only=True):
    """``superseded_by``: the ids of the live notes superseding this one (SPEC §13), present
    on ``get``'s answer always and on search and list_recent items when they were asked
    ``includeSuperseded``; absent elsewhere."""

    namespace: str
    superseded_by: list[str] | UnsetType = UNSET


class HitView(StoredNoteView, kw_only=True):
    """A search result: the note, its home namespace (where its vector is; another than the
    search's own when it was found by its words alone, before ``reembed`` moved it) and its score."""

    score: float


def stored_view(stored: StoredNote, superseded_by: list[str] | UnsetType = UNSET) -> StoredNoteView:
    return _notes().struct(stored.note, StoredNoteView, namespace=str(stored.namespace), superseded_by=superseded_by)


def hit_view(hit: Hit, superseded_by: list[str] | UnsetType = UNSET) -> HitView:
    return _notes().struct(
        hit.stored.note, HitView, namespace=str(hit.stored.namespace), score=round(hit.score, 6), superseded_by=superseded_by
    )


@cache
def _notes() -> NoteMapping:
    # Imported on the first note answered, not with the tool list: start-up is on the clock.
    from local_mcp_memory.adapters.json_converter import CAMEL

    return CAMEL
