"""Application errors: what a use case can fail with, beyond a domain rule.

    ApplicationError
    ├── InvalidRequest              a request value out of range (field, rule, value)
    │   └── NamespaceStillHome      an older namespace some notes still call home (homes)
    ├── NoteNotFound                no note has this id (id)
    ├── SupersessionCycle           a supersedes link would close a cycle (from_id, to_id)
    ├── EmbedderError               the embedder could not give vectors (provider)
    │   ├── EmbedderNotConfigured   missing key, unknown provider or model (hint)
    │   ├── EmbedderUnavailable     unreachable, timed out, failing after retries (url)
    │   ├── EmbedderRejected        the provider refused the request or the key (status)
    │   └── DimensionChanged        a model answered with another dimension than recorded
    └── StoreError                  the store cannot be read or written (path)
        └── StoreCorrupt            a file on disk is not what its format says

    ImportFileInvalid               a line of an export file broke its format (line, field, rule)

Every message says what to do next, except where that is a method of a transport: the
edge adds those (``InvalidRequest.field`` is a path in the domain's attribute names, such
as ``top_k`` or ``embedder.base_url``; the edge names it as its callers do). No message
carries a secret.
"""

from __future__ import annotations

from typing import Any


class ApplicationError(Exception):
    """Base of every error a use case raises on purpose."""


class InvalidRequest(ApplicationError):
    def __init__(self, field: str, rule: str, value: Any = None) -> None:
        self.field = field
        self.rule = rule
        self.value = value
        super().__init__(f"{field} {rule}")


class NamespaceStillHome(InvalidRequest):
    def __init__(self, namespace: str, homes: int) -> None:
        self.homes = homes
        super().__init__("namespace", f"is still the home of {homes} notes; re-embed them first", namespace)


class NoteNotFound(ApplicationError):
    def __init__(self, note_id: str) -> None:
        self.id = note_id
        super().__init__(f"no note has id {note_id}")


class SupersessionCycle(ApplicationError):
    """A ``supersedes`` link from ``from_id`` to ``to_id`` that the store refused: ``to_id``
    is ``from_id``, or already supersedes it, directly or down a chain. The store decides it
    under the lock of its write, so concurrent links never close a cycle; the use case names
    the request's field."""

    def __init__(self, from_id: str, to_id: str) -> None:
        self.from_id = from_id
        self.to_id = to_id
        super().__init__(f"note {to_id} already supersedes note {from_id}, directly or down a chain")


class EmbedderError(ApplicationError):
    def __init__(self, provider: str, message: str) -> None:
        self.provider = provider
        super().__init__(message)


class EmbedderNotConfigured(EmbedderError):
    def __init__(self, provider: str, message: str) -> None:
        super().__init__(provider, message)


class EmbedderUnavailable(EmbedderError):
    def __init__(self, provider: str, url: str | None, message: str) -> None:
        self.url = url
        super().__init__(provider, message)


class EmbedderRejected(EmbedderError):
    def __init__(self, provider: str, status: int | None, message: str) -> None:
        self.status = status
        super().__init__(provider, message)


class DimensionChanged(EmbedderError):
    def __init__(self, provider: str, model_key: str, expected: int, got: int) -> None:
        self.model_key = model_key
        self.model = model_key.removeprefix(f"{provider}:")
        self.expected = expected
        self.got = got
        super().__init__(
            provider,
            f"{model_key} answered with {got}-dimensional vectors, but {expected} were "
            "recorded for it; nothing was written.",
        )


class StoreError(ApplicationError):
    def __init__(self, message: str, path: str | None = None) -> None:
        self.path = path
        super().__init__(message)


class StoreCorrupt(StoreError):
    pass


class StoreUnavailable(StoreError):
    """The store's server cannot be reached or refused the connection now (unreachable,
    timed out, shutting down, starting up, a login refused): the same request may succeed
    later, without a restart."""


class ImportFileInvalid(Exception):
    """An export file cannot be imported: ``line`` (1-based) broke the format at ``field``
    (a dotted path inside the line's record, None for the line as a whole). Raised before
    anything is written."""

    def __init__(self, line: int, field: str | None, rule: str) -> None:
        self.line = line
        self.field = field
        self.rule = rule
        super().__init__(f"line {line}" + (f", field {field}" if field else "") + f": {rule}")
