"""A note: one short piece of knowledge an agent keeps, and the filters that find it."""

from __future__ import annotations

import math
import re
import unicodedata
from datetime import datetime, timedelta, timezone
from typing import Any, ClassVar

import attrs

from local_mcp_memory.domain.errors import InvalidValue
from local_mcp_memory.domain.identifiers import CanonicalProjectId, GlobalKey, GroupId, NoteId
from local_mcp_memory.domain.json_values import json_size_problem, json_value_problem
from local_mcp_memory.domain.time import TimeWindow


def _check_optional_text(type_name: str, field: str, value: Any, limit: int) -> None:
    if value is None:
        return
    if not isinstance(value, str):
        raise InvalidValue(type_name, f"{field} must be a string or null", value, field)
    if len(value) > limit:
        raise InvalidValue(type_name, f"{field} must be at most {limit} characters", value, field)


def _check_json(type_name: str, field: str, value: Any) -> None:
    problem = json_value_problem(value)
    if problem:
        raise InvalidValue(type_name, f"{field} {problem}", "a JSON value", field)


@attrs.frozen
class Tags:
    """A note's labels: case-sensitive, order kept, duplicates dropped."""

    values: tuple[str, ...] = ()

    MAX_COUNT: ClassVar[int] = 64
    MAX_LENGTH: ClassVar[int] = 128

    def __attrs_post_init__(self) -> None:
        for tag in self.values:
            if not isinstance(tag, str) or not tag.strip():
                raise InvalidValue("Tag", "must be a non-blank string", tag)
            if len(tag) > self.MAX_LENGTH:
                raise InvalidValue("Tag", f"must be at most {self.MAX_LENGTH} characters", tag)
        if len(self.values) > self.MAX_COUNT:
            raise InvalidValue("Tags", f"must hold at most {self.MAX_COUNT} tags", len(self.values))

    @classmethod
    def of(cls, values: Any) -> Tags:
        if values is None:
            return cls()
        if isinstance(values, str) or not isinstance(values, (list, tuple)):
            raise InvalidValue("Tags", "must be an array of strings", values)
        return cls(tuple(dict.fromkeys(values)))

    def include(self, required: Tags) -> bool:
        return set(required.values) <= set(self.values)


@attrs.frozen
class SyncOrigin:
    """Where a note synced from a markdown folder came from: the folder (``root``, as the
    sync resolved it), the file's path relative to it (``path``, ``#slug`` added for a
    section) and the SHA-256 of the whole file (``digest``, 64 hex digits). The sync owns
    the notes carrying its root, and only those."""

    root: str
    path: str
    digest: str

    LIMIT: ClassVar[int] = 4_096

    def __attrs_post_init__(self) -> None:
        for field in ("root", "path", "digest"):
            value = getattr(self, field)
            if not isinstance(value, str) or not value or len(value) > self.LIMIT:
                raise InvalidValue("SyncOrigin", f"{field} must be a non-empty string of at most {self.LIMIT} characters", value, field)


_WHITESPACE = re.compile(r"\s+")


def dedup_text(text: str) -> str:
    """A note text as dedup compares it: Unicode NFC, every run of whitespace one space,
    the ends trimmed; case kept."""
    return _WHITESPACE.sub(" ", unicodedata.normalize("NFC", text)).strip()


@attrs.frozen
class DedupKey:
    """What makes two notes the same note for dedup on write (SPEC §11)."""

    project_id: str
    group_id: str
    text: str


@attrs.frozen
class Note:
    """The stored form of a note. Its id and createdAt never change after creation.

    ``expires_at``: from that instant on the note is expired — absent from every answer,
    dropped from disk later. ``expiry_span``: the note's original span, ``expires_at`` less
    when the expiry was set (or ``created_at``, if later; None: derive it from ``created_at``); each read moves the expiry
    out by half of it (``prolonged``). ``importance``: 0..1, a weak prior in ranking; at
    ``LASTING`` or more a note gets no default expiry. ``origin``: set on notes a markdown
    sync wrote (never on the wire; export files carry it)."""

    id: NoteId
    project_id: CanonicalProjectId
    group_id: GroupId
    text: str
    created_at: datetime
    title: str | None = None
    tags: Tags = Tags()
    source: str | None = None
    metadata: dict[str, Any] | None = None
    expires_at: datetime | None = None
    origin: SyncOrigin | None = None
    importance: float = 0.5
    expiry_span: timedelta | None = None

    TEXT_MAX: ClassVar[int] = 100_000
    TITLE_MAX: ClassVar[int] = 1_000
    SOURCE_MAX: ClassVar[int] = 1_000

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.text, str) or not self.text.strip():
            raise InvalidValue("Note", "text must be a non-blank string", self.text, "text")
        if len(self.text) > self.TEXT_MAX:
            raise InvalidValue("Note", f"text must be at most {self.TEXT_MAX} characters", self.text, "text")
        _check_optional_text("Note", "title", self.title, self.TITLE_MAX)
        _check_optional_text("Note", "source", self.source, self.SOURCE_MAX)
        if self.metadata is not None and not isinstance(self.metadata, dict):
            raise InvalidValue("Note", "metadata must be a JSON object or null", self.metadata, "metadata")
        _check_json("Note", "metadata", self.metadata)
        if self.created_at.tzinfo is None:
            raise InvalidValue("Note", "created_at must be timezone-aware", self.created_at, "created_at")
        if self.expires_at is not None and self.expires_at.tzinfo is None:
            raise InvalidValue("Note", "expires_at must be timezone-aware", self.expires_at, "expires_at")
        check_importance("Note", self.importance)
        if self.expiry_span is not None and (self.expires_at is None or self.expiry_span <= timedelta(0)):
            seconds = self.expiry_span.total_seconds()
            raise InvalidValue("Note", "expiry span must be a positive number of seconds, with an expiry", seconds, "expiry_span")

    def expired(self, now: datetime) -> bool:
        """Expired means ``now >= expires_at``, decided at read time."""
        return self.expires_at is not None and now >= self.expires_at

    @property
    def dedup_key(self) -> DedupKey:
        return DedupKey(self.project_id.value, self.group_id.value, dedup_text(self.text))

    @property
    def span(self) -> timedelta | None:
        """The original span of the expiry: as recorded, else ``expires_at - created_at``
        (None without an expiry, or when that is not positive)."""
        if self.expires_at is None:
            return None
        if self.expiry_span is not None:
            return self.expiry_span
        derived = self.expires_at - self.created_at
        return derived if derived > timedelta(0) else None

    def with_expiry(self, expires_at: datetime | None, set_at: datetime | None = None) -> Note:
        """The note with a newly set expiry, its span recorded from it (SPEC §13): from
        ``set_at`` (when the expiry is set), or ``created_at`` when that is later or no
        ``set_at`` is given, so an expiry of one day set on a note written years before (an
        update, a backdated ``createdAt``) fades by half a day a read, not by years. A
        ``createdAt`` later than the expiry (dated ahead) counts from ``set_at``: such a note
        fades as any other, instead of never."""
        if expires_at is None:
            return attrs.evolve(self, expires_at=None, expiry_span=None)
        span = expires_at - (self.created_at if set_at is None else max(self.created_at, set_at))
        if span <= timedelta(0) and set_at is not None:
            span = expires_at - set_at
        return attrs.evolve(self, expires_at=expires_at, expiry_span=span if span > timedelta(0) else None)

    def prolonged(self, now: datetime) -> Note | None:
        """The note after a read at ``now`` (fading, SPEC §13): its expiry moved out by half
        its original span, added to the current expiry and capped at ``LATEST``. None when
        nothing changes (no expiry, already expired, no positive span, at the cap)."""
        span = self.span
        if self.expires_at is None or self.expired(now) or span is None or self.expires_at >= LATEST:
            return None
        later = LATEST if LATEST - self.expires_at <= span / 2 else self.expires_at + span / 2
        return attrs.evolve(self, expires_at=later, expiry_span=span)


LATEST = datetime(9000, 1, 1, tzinfo=timezone.utc)
"""The latest expiry fading moves a note to: far beyond any use, and far from the end of
the calendar (year 9999), so that no arithmetic on it overflows."""

IMPORTANCE_DEFAULT = 0.5
LASTING = 0.8
"""Notes of at least this importance get no default expiry (``default_expiry``)."""


def check_importance(type_name: str, value: Any, field: str = "importance") -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not 0 <= value <= 1:
        raise InvalidValue(type_name, f"{field} must be a number in 0..1", value, field)


def default_expiry(importance: float, created_at: datetime, lifetime: timedelta | None) -> datetime | None:
    """The expiry a note gets when a default lifetime applies (``lifetime``; None: none):
    none for a note of importance ``LASTING`` or more, else ``created_at + lifetime``."""
    if lifetime is None or importance >= LASTING:
        return None
    return created_at + lifetime


def require_future(expires_at: datetime | None, now: datetime) -> None:
    """An ``expiresAt`` a request sets must lie after ``now`` (None clears it)."""
    if expires_at is not None and expires_at <= now:
        raise InvalidValue("Expiry", "must lie in the future", expires_at, "expires_at")


def require_within_size(type_name: str, field: str, value: Any) -> None:
    """A note's metadata or a global value that a request or a file brings in takes at most
    ``json_values.MAX_CHARS`` characters as JSON. Checked where values come in (requests,
    imports, salvage), not on values already stored: a store written before the rule
    reads back whole."""
    problem = json_size_problem(value)
    if problem:
        raise InvalidValue(type_name, f"{field} {problem}", "a JSON value", field)


_UNSET: Any = attrs.make_class("_Unset", [], repr=False)()


@attrs.frozen
class NotePatch:
    """The fields an update changes; a field left unset keeps its value."""

    title: str | None = _UNSET
    text: str = _UNSET
    tags: Tags = _UNSET
    source: str | None = _UNSET
    group_id: GroupId = _UNSET
    metadata: dict[str, Any] | None = _UNSET
    expires_at: datetime | None = _UNSET
    importance: float = _UNSET

    def __attrs_post_init__(self) -> None:
        if not self.changes():
            raise InvalidValue("NotePatch", "must change at least one field", {})
        if self.importance is not _UNSET:
            check_importance("NotePatch", self.importance)
        if self.metadata is not _UNSET:
            require_within_size("Note", "metadata", self.metadata)

    def changes(self) -> dict[str, Any]:
        return {k: v for k, v in attrs.asdict(self, recurse=False).items() if v is not _UNSET}

    def apply(self, note: Note, now: datetime | None = None) -> Note:
        """The patched note; setting ``expires_at`` records its span anew, from ``now``
        (``Note.with_expiry``)."""
        changes = self.changes()
        expiry = changes.pop("expires_at", _UNSET)
        note = attrs.evolve(note, **changes)
        return note if expiry is _UNSET else note.with_expiry(expiry, now)

    @property
    def changes_text(self) -> bool:
        """Only the text is embedded, so only a text change needs a new vector."""
        return self.text is not _UNSET


@attrs.frozen
class NoteFilter:
    """Which notes a search or a listing may return. Tags are ANDed. With ``now``, notes
    expired at that instant are left out (use cases always pass it). Superseded notes —
    the target of a ``supersedes`` link from a note that is stored and not expired at
    ``now`` — are left out unless ``include_superseded``; ``matches`` cannot see links,
    so stores apply that part themselves (``superseded`` gives the rule)."""

    project_id: CanonicalProjectId
    group_id: GroupId | None = None
    tags: Tags = Tags()
    window: TimeWindow = TimeWindow()
    now: datetime | None = None
    include_superseded: bool = False

    def matches(self, note: Note) -> bool:
        return (
            note.project_id == self.project_id
            and (self.group_id is None or note.group_id == self.group_id)
            and note.tags.include(self.tags)
            and self.window.contains(note.created_at)
            and (self.now is None or not note.expired(self.now))
        )


@attrs.frozen
class GlobalEntry:
    """One global setting of a project: any JSON value under a ``global.`` key."""

    project_id: CanonicalProjectId
    key: GlobalKey
    value: Any
    updated_at: datetime

    def __attrs_post_init__(self) -> None:
        _check_json("GlobalEntry", "value", self.value)
        if self.updated_at.tzinfo is None:
            raise InvalidValue("GlobalEntry", "updated_at must be timezone-aware", self.updated_at, "updated_at")

    @property
    def id(self) -> str:
        return self.key.entry_id(self.project_id)
