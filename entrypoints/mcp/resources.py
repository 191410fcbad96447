"""Notes and session contexts as MCP resources: ``resources/list``,
``resources/templates/list`` and ``resources/read``.

    memory://notes/{id}          one note, ``application/json``: the object ``memory.get`` answers
    memory://context/{project}   a project's session context, ``text/markdown``: the ``text``
                                 ``memory.context`` answers (globals, recent notes)

URIs. ``{id}`` is a note's id (a lower-case hyphenated UUID). ``{project}`` is a projectId,
an opaque id or a path, percent-encoded as RFC 6570 expands ``{project}``: every UTF-8 byte
but the unreserved characters ``A-Z a-z 0-9 - . _ ~`` is written ``%XX``, so a path's ``/``
is ``%2F`` (``/home/ann/app`` is ``memory://context/%2Fhome%2Fann%2Fapp``, ``~/app`` is
``memory://context/~%2Fapp``). Reading decodes it (lower-case hex digits and unencoded
characters other than ``/ ? #`` are accepted too) and canonicalizes it like any projectId;
the contents carry the URI as it was asked for.

``resources/list`` lists the session context of the server's own project (the one tool
calls default to), then that project's most recent live notes, newest first (at most the
``memory.list_recent`` limit), in pages of ``PAGE_SIZE`` with an opaque ``nextCursor``.
The pages are positions in a listing read anew for each page: a note added or removed
between two pages shifts the rest by one. Other notes and projects are read by URI
(``resources/templates/list`` gives both templates).

Failure modes of ``resources/read``:

* ``params`` without a string ``uri``: -32602 naming ``uri``;
* a URI that names no resource (another scheme or kind, a malformed id or percent-encoding,
  a projectId the server refuses, a note that does not exist, was deleted or has expired):
  -32002 (``RESOURCE_NOT_FOUND``) with ``data.uri`` and ``data.reason``;
* the store's and unexpected failures as the error table maps them
  (``entrypoints.rpc.errors.to_rpc_error``: -32006, -32603, ...).

An unknown ``cursor`` is -32602 naming ``cursor``. A project with nothing stored has a
session context all the same (it says so): only a refused projectId is unknown.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

import attrs
import msgspec

from local_mcp_memory.entrypoints.rpc.errors import INVALID_PARAMS, NOT_FOUND, RpcError, cut, to_rpc_error

if TYPE_CHECKING:  # imported on the first read, not at start-up
    from local_mcp_memory.application.services import Services
    from local_mcp_memory.entrypoints.methods.method import Method

RESOURCE_NOT_FOUND = -32002
"""MCP's code for a ``resources/read`` of a URI that names no resource (``data.uri``).
Only ``resources/read`` answers it; the ``memory.*`` methods use -32002 for an
unreachable embedder (``entrypoints.rpc.errors``)."""

NOTES = "memory://notes/"
CONTEXT = "memory://context/"
NOTE_TEMPLATE = NOTES + "{id}"
CONTEXT_TEMPLATE = CONTEXT + "{project}"
NOTE_MIME = "application/json"
CONTEXT_MIME = "text/markdown"
PAGE_SIZE = 50
"""Entries of one ``resources/list`` page."""
TITLE_CHARS = 80
DESCRIPTION_CHARS = 300
"""Characters of a listed note's title (its title, else its text) and description."""

_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
_encode = msgspec.json.Encoder().encode

TEMPLATES = [
    {
        "uriTemplate": NOTE_TEMPLATE,
        "name": "note",
        "title": "A note",
        "description": "One note by its id, whole, as JSON: the object memory_get returns.",
        "mimeType": NOTE_MIME,
    },
    {
        "uriTemplate": CONTEXT_TEMPLATE,
        "name": "context",
        "title": "Session context of a project",
        "description": (
            "What memory holds for a project as markdown: its global settings, then its most recent "
            "notes. {project} is a projectId (an opaque id or a path) percent-encoded, '/' as %2F: "
            "memory://context/%2Fhome%2Fann%2Fapp."
        ),
        "mimeType": CONTEXT_MIME,
    },
]


class ReadParams(msgspec.Struct, frozen=True):
    """``resources/read`` params; other members (``_meta``) are ignored."""

    uri: str


class ListParams(msgspec.Struct, frozen=True):
    """The params of a paginated listing; other members (``_meta``) are ignored."""

    cursor: str | None = None


def project_uri(project: str) -> str:
    """The context resource of ``project`` (a projectId as it is, not yet encoded)."""
    return CONTEXT + quote(project, safe="")


def note_uri(note_id: str) -> str:
    return NOTES + note_id


def not_found(uri: str, reason: str) -> RpcError:
    return RpcError(RESOURCE_NOT_FOUND, f"Resource not found: {reason}", {"uri": cut(uri), "reason": reason})


@attrs.frozen
class NoteTarget:
    id: str


@attrs.frozen
class ContextTarget:
    project: str


def parse(uri: str) -> NoteTarget | ContextTarget:
    """What ``uri`` names; ``not_found`` when it names nothing we serve."""
    for prefix, kind in ((NOTES, NoteTarget), (CONTEXT, ContextTarget)):
        if uri.startswith(prefix):
            return kind(_segment(uri, uri.removeprefix(prefix)))
    raise not_found(uri, f"the URI must match {NOTE_TEMPLATE} or {CONTEXT_TEMPLATE}")


def _segment(uri: str, raw: str) -> str:
    if not raw:
        raise not_found(uri, "the URI ends where the id or project belongs")
    if any(c in raw for c in "/?#"):
        raise not_found(uri, "the id or project must be one path segment: percent-encode '/' as %2F, '?' as %3F, '#' as %23")
    if _BAD_ESCAPE.search(raw):
        raise not_found(uri, "a '%' must start a percent-encoded byte (%XX, two hex digits)")
    try:
        return unquote(raw, errors="strict")
    except UnicodeDecodeError:
        raise not_found(uri, "the percent-encoded bytes are not UTF-8") from None


def encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"offset:{offset}".encode()).decode()


def decode_cursor(cursor: str | None) -> int:
    """The position a cursor of ours points at (0 for none); -32602 for any other string."""
    if cursor is None:
        return 0
    try:
        kind, _, number = base64.urlsafe_b64decode(cursor.encode("ascii")).decode("ascii").partition(":")
        offset = int(number)
    except (UnicodeError, binascii.Error, ValueError):
        offset = -1
        kind = ""
    if kind != "offset" or offset < 1 or encode_cursor(offset) != cursor:
        raise unknown_cursor()
    return offset


def unknown_cursor() -> RpcError:
    return RpcError(
        INVALID_PARAMS,
        "Invalid params: unknown cursor",
        {"field": "cursor", "rule": "must be a nextCursor from an earlier answer to this listing"},
    )


def one_page(params: Any) -> None:
    """Checks the params of a listing that has one page: any cursor is unknown, since
    none was given out."""
    request = msgspec.convert({} if params is None else params, ListParams)
    if request.cursor is not None:
        raise unknown_cursor()


class ResourceSet:
    """The resources of the method table ``methods()`` returns (``memory.get`` and
    ``memory.list_recent``; the session context through its use case), run against
    ``services``; ``project`` is the server's own project, whose context and notes are listed."""

    def __init__(self, methods: Callable[[], Mapping[str, Method]], services: Callable[[], Services], project: str) -> None:
        self._methods = methods
        self._services = services
        self._project = project

    def list_templates(self, params: Any) -> dict[str, Any]:
        one_page(params)
        return {"resourceTemplates": TEMPLATES}

    def list_resources(self, params: Any) -> dict[str, Any]:
        request = msgspec.convert({} if params is None else params, ListParams)
        offset = decode_cursor(request.cursor)
        entries = self._listing(offset + PAGE_SIZE)  # the context and the notes up to this page, and one more
        page = entries[offset : offset + PAGE_SIZE]
        result: dict[str, Any] = {"resources": page}
        if offset + PAGE_SIZE < len(entries):
            result["nextCursor"] = encode_cursor(offset + PAGE_SIZE)
        return result

    def read(self, params: Any) -> dict[str, Any]:
        request = msgspec.convert({} if params is None else params, ReadParams)
        target = parse(request.uri)
        if isinstance(target, NoteTarget):
            text, mime = self._note(request.uri, target.id), NOTE_MIME
        else:
            text, mime = self._context(request.uri, target.project), CONTEXT_MIME
        return {"contents": [{"uri": request.uri, "mimeType": mime, "text": text}]}

    def _run(self, name: str, arguments: dict[str, Any]) -> Any:
        method = self._methods()[name]
        return msgspec.to_builtins(method.run(msgspec.convert(arguments, method.params), self._services()))

    def _note(self, uri: str, note_id: str) -> str:
        try:
            return _encode(self._run("memory.get", {"id": note_id})).decode()
        except Exception as exc:  # the boundary: a missing or malformed id is an unknown resource
            error = to_rpc_error(exc, "resources/read")
            if error.code == NOT_FOUND:
                raise not_found(uri, "no note has this id (it may have been deleted or have expired)") from None
            if error.code == INVALID_PARAMS:
                raise not_found(uri, f"malformed note id: {(error.data or {}).get('rule')}") from None
            raise error from None

    def _context(self, uri: str, project: str) -> str:
        from local_mcp_memory.application.context import GetContext, context_text

        try:
            return context_text(GetContext(project_id=project), self._services())
        except Exception as exc:  # the boundary: a refused projectId names no resource
            error = to_rpc_error(exc, "resources/read")
            if error.code == INVALID_PARAMS:
                raise not_found(uri, f"refused projectId: {(error.data or {}).get('rule')}") from None
            raise error from None

    def _listing(self, notes: int) -> list[dict[str, Any]]:
        """The context entry, then at most ``notes`` recent notes (never beyond list_recent's limit)."""
        from local_mcp_memory.application.list_recent import ListRecent

        services = self._services()
        project = str(services.project(self._project))
        recent = self._run("memory.list_recent", {"projectId": project, "limit": min(notes, ListRecent.MAX_LIMIT)})
        context = {
            "uri": project_uri(project),
            "name": "Session context of this project",
            "title": "Session context of this project",
            "description": f"Global settings and recent notes of {project}, as markdown.",
            "mimeType": CONTEXT_MIME,
        }
        return [context, *(_note_entry(note) for note in recent["items"])]


def _note_entry(note: dict[str, Any]) -> dict[str, Any]:
    title = cut(note["title"] or " ".join(note["text"].split()), TITLE_CHARS)
    tags = f", tags {', '.join(note['tags'])}" if note["tags"] else ""
    return {
        "uri": note_uri(note["id"]),
        "name": title,  # the display name of clients of 2025-03-26, which know no title
        "title": title,
        "description": cut(f"Note in group {note['groupId']}{tags}", DESCRIPTION_CHARS),
        "mimeType": NOTE_MIME,
    }
