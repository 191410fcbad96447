"""Where the domain's attrs classes meet JSON: one private cattrs ``Converter``.

Every JSON form of a ``Note`` is mapped here, and only here: the store's records (journal
``put`` lines and ``notes.bin``), the export file's note lines and the wire's note views.
msgspec Structs keep checking each format's *shape* (types, required and unknown fields)
and fixing its field order; the converter maps between a Struct's fields and the value
objects, which check the *meaning*.

One converter holds the hooks of the value objects: an identifier is its string
(``NoteId``, ``CanonicalProjectId``, ``GroupId``), ``Tags`` a tuple of strings, an instant
the ISO 8601 text of ``domain.time``. Other strings, optional strings and ``metadata`` pass
through: their Struct checked the type, ``Note`` checks the rules. Each format is the same
mapping with its own field names:

* ``STORED``: the data directory's short names (``project``, ``group``, ``created``), on
  disk since format 2 and never renamed. Tags read back as written (the store wrote them).
* ``CAMEL``: the note's own attribute names, which the export file's and the wire's
  Structs write in camelCase (``projectId``) through msgspec's ``rename="camel"``. Tags
  are read with ``Tags.of``, repeats dropped, as from a request: export files may be
  written by hand.

A refused value is raised as its value object's ``InvalidValue`` placed at the note's
attribute (``group_id``, ``created_at``; the first in attribute order), which the edge
gives its wire name.
"""

from __future__ import annotations

import operator
from functools import cache, lru_cache
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any, TypeVar

import attrs
import cattrs
import msgspec
from cattrs.errors import AttributeValidationNote, ClassValidationError
from cattrs.fns import identity
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override
from msgspec import UNSET, UnsetType

from local_mcp_memory.domain.errors import InvalidValue
from local_mcp_memory.domain.identifiers import CanonicalProjectId, GroupId, NoteId
from local_mcp_memory.domain.note import Note, SyncOrigin, Tags
from local_mcp_memory.domain.time import format_instant, parse_instant

S = TypeVar("S", bound=msgspec.Struct)
T = TypeVar("T")


def _as_is(value: Any, _type: Any) -> Any:
    return value


def _optional_str(type_: Any) -> bool:
    return type_ == (str | None)


def _tags(values: Any, _type: Any) -> Tags:
    return Tags(tuple(values))


def _tags_of(values: Any, _type: Any) -> Tags:
    return Tags.of(values)


def _instant(text: Any, _type: Any) -> datetime:
    return parse_instant(text)


def _named_once(identifier: type[T]) -> Callable[[Any, Any], T]:
    build = lru_cache(maxsize=NAMES_KEPT)(identifier)

    def structure(value: Any, _type: Any) -> T:
        return build(value) if type(value) is str else identifier(value)

    return structure


NAMES_KEPT = 4096
"""How many project or group names ``_named_once`` keeps built."""


def _converter() -> cattrs.Converter:
    converter = cattrs.Converter(detailed_validation=True)
    # An identifier is built by calling its class on the string, the way cattrs builds a
    # str: the generated code then calls the class directly, with no hook in between.
    by_call = converter.get_structure_hook(str)
    converter.register_structure_hook(NoteId, by_call)
    for identifier in (NoteId, CanonicalProjectId, GroupId):
        converter.register_unstructure_hook(identifier, operator.attrgetter("value"))
    # a file or a store holds few projects and groups, each named by many notes: each
    # name is checked once (an identifier is immutable; a refused one raises each time)
    for few in (CanonicalProjectId, GroupId):
        converter.register_structure_hook(few, _named_once(few))
    converter.register_structure_hook(Tags, _tags)
    converter.register_unstructure_hook(Tags, operator.attrgetter("values"))
    converter.register_structure_hook(datetime, _instant)
    converter.register_unstructure_hook(datetime, format_instant)
    converter.register_structure_hook_func(_optional_str, _as_is)
    converter.register_unstructure_hook_func(_optional_str, identity)
    return converter


class NoteFields(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True, gc=False):
    """A note's fields as both stores keep them (the FAISS store's journal records and
    ``notes.bin``, the PostgreSQL store's ``notes.doc``), in ``STORED`` names: ``created``
    and ``expires`` are ISO 8601 UTC (``...Z``); ``expires`` and ``origin`` (a markdown
    sync's root, path and digest) are absent when unset; so are ``importance`` when it is
    the default 0.5 and ``span`` (the expiry's original span in seconds) when not recorded,
    so a note using neither keeps the bytes older versions wrote. ``gc=False``: acyclic,
    and untracked objects make decoding 100k notes far cheaper."""

    id: str
    project: str
    group: str
    text: str
    created: str
    title: str | None = None
    tags: tuple[str, ...] = ()
    source: str | None = None
    metadata: dict[str, Any] | None = None
    expires: str | UnsetType = UNSET
    origin: dict[str, str] | UnsetType = UNSET
    importance: float | UnsetType = UNSET
    span: float | UnsetType = UNSET


_CONVERTER = _converter()
_asdict = msgspec.structs.asdict


@attrs.frozen
class NoteMapping:
    """A ``Note`` and the fields of one format's Struct, both ways."""

    _unstructure: Callable[[Note], dict[str, Any]]
    _structure: Callable[[Mapping[str, Any]], Note]

    def fields(self, note: Note) -> dict[str, Any]:
        """The note's fields under this format's names (those left out absent)."""
        return {k: v for k, v in self._unstructure(note).items() if v is not UNSET}

    def struct(self, note: Note, struct: type[S], **extra: Any) -> S:
        """The note as ``struct``, with ``extra`` fields beside its own; attributes the
        struct does not declare are left out (the wire has no ``origin``)."""
        names = _declared(struct)
        fields = {k: v for k, v in self._unstructure(note).items() if k in names}
        return struct(**fields, **extra)

    def note(self, fields: msgspec.Struct) -> Note:
        """The note of a Struct holding this format's fields (others are the caller's);
        ``InvalidValue`` placed at the attribute it refuses."""
        try:
            return self._structure(_asdict(fields))
        except ClassValidationError as refused:
            raise _first(refused) from None


@cache
def _declared(struct: type[msgspec.Struct]) -> frozenset[str]:
    return frozenset(struct.__struct_fields__)


def _first(refused: ClassValidationError) -> BaseException:
    error = refused.exceptions[0]
    names = [note.name for note in getattr(error, "__notes__", ()) if isinstance(note, AttributeValidationNote)]
    if isinstance(error, InvalidValue) and names:
        return error.at(names[0])
    return error


def _tag_list(tags: Tags) -> list[str]:
    return list(tags.values)


def _expiry_or_unset(moment: datetime | None) -> Any:
    return UNSET if moment is None else format_instant(moment)


def _expiry(text: Any, _type: Any) -> datetime | None:
    return None if text is None or text is UNSET else parse_instant(text)


def _origin_or_unset(origin: SyncOrigin | None) -> Any:
    return UNSET if origin is None else {"root": origin.root, "path": origin.path, "digest": origin.digest}


_ORIGIN_KEYS = {"root", "path", "digest"}


def stored_origin(value: Any) -> SyncOrigin | None:
    """A stored ``origin`` field (or UNSET) as the note's ``SyncOrigin``."""
    return _origin(value, SyncOrigin)


def stored_span(value: Any) -> timedelta | None:
    """A stored ``span`` field (seconds, or UNSET) as the note's ``expiry_span``."""
    return _span(value, timedelta)


def _origin(value: Any, _type: Any) -> SyncOrigin | None:
    if value is None or value is UNSET:
        return None
    if not isinstance(value, dict) or set(value) != _ORIGIN_KEYS:
        raise InvalidValue("SyncOrigin", "must be an object of root, path and digest", value)
    return SyncOrigin(value["root"], value["path"], value["digest"])


def _importance_or_unset(value: float) -> Any:
    return UNSET if value == 0.5 else value


def _importance(value: Any, _type: Any) -> float:
    return 0.5 if value is UNSET or value is None else value


def _span_or_unset(span: timedelta | None) -> Any:
    return UNSET if span is None else span.total_seconds()


def _span_seconds(span: timedelta | None) -> float | None:
    return None if span is None else span.total_seconds()


def _span(value: Any, _type: Any) -> timedelta | None:
    if value is None or value is UNSET:
        return None
    try:
        return timedelta(seconds=value)
    except (OverflowError, TypeError, ValueError):
        raise InvalidValue("Note", "expiry span must be a number of seconds a date can hold", value) from None


def _mapping(tags: Callable[[Any, Any], Tags] | None = None, *, omit_expiry: bool, **names: str) -> NoteMapping:
    """``omit_expiry``: a note without ``expires_at`` leaves the field out (UNSET) rather
    than writing null, and so do a default ``importance`` and an unrecorded ``expiry_span``.
    ``origin`` is always left out when None."""
    overrides = {attribute: override(rename=name) for attribute, name in names.items()}
    overrides["metadata"] = override(struct_hook=_as_is, unstruct_hook=identity)
    overrides["origin"] = override(struct_hook=_origin, unstruct_hook=_origin_or_unset)
    expiry = override(rename=names.get("expires_at"), struct_hook=_expiry, unstruct_hook=_expiry_or_unset)
    overrides["expires_at"] = expiry if omit_expiry else override(rename=names.get("expires_at"), struct_hook=_expiry)
    span_out = _span_or_unset if omit_expiry else _span_seconds
    overrides["expiry_span"] = override(rename=names.get("expiry_span"), struct_hook=_span, unstruct_hook=span_out)
    overrides["importance"] = override(struct_hook=_importance, unstruct_hook=_importance_or_unset if omit_expiry else identity)
    if tags is not None:  # the camelCase forms hold a list, as their Structs declare
        overrides["tags"] = override(struct_hook=tags, unstruct_hook=_tag_list)
    return NoteMapping(
        make_dict_unstructure_fn(Note, _CONVERTER, **overrides),
        make_dict_structure_fn(Note, _CONVERTER, **overrides),
    )


STORED = _mapping(
    project_id="project", group_id="group", created_at="created", expires_at="expires", expiry_span="span", omit_expiry=True
)
CAMEL = _mapping(tags=_tags_of, omit_expiry=False)


READ_BACK_RULE = "must hold only what JSON carries unchanged (no NaN, non-string keys or lone surrogates)"
_DOMAIN_NAMES = {
    "project": "project_id",
    "group": "group_id",
    "created": "created_at",
    "updated": "updated_at",
    "expires": "expires_at",
    "span": "expiry_span",
}


def unreadable_field(fields: msgspec.Struct) -> str | None:
    """The first field of a stored form (``STORED`` names) whose value JSON would not carry
    back unchanged, in the domain's name (``metadata``, ``created_at``); None if none."""
    for name in fields.__struct_fields__:
        if not _reads_back(getattr(fields, name)):
            return _DOMAIN_NAMES.get(name, name)
    return None


def _reads_back(value: object) -> bool:
    try:
        return msgspec.json.decode(msgspec.json.encode(value)) == value or isinstance(value, (tuple, bytes))
    except (msgspec.MsgspecError, TypeError, ValueError, OverflowError):
        return False

