"""Identifiers: groups, projects, global keys, note ids and embedding namespaces."""

from __future__ import annotations

import re
import uuid
from typing import ClassVar

import attrs

from local_mcp_memory.domain.errors import InvalidValue

_CANONICAL_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _has_control(text: str) -> bool:
    return any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in text)


@attrs.frozen
class GroupId:
    """A topic inside a project: ``global``, ``feature-1``, ``task-1``. Never normalized."""

    value: str

    PATTERN: ClassVar[re.Pattern[str]] = re.compile(r"[A-Za-z0-9_-]+")
    MAX_LENGTH: ClassVar[int] = 128

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.value, str) or not self.PATTERN.fullmatch(self.value):
            raise InvalidValue("GroupId", "must match [A-Za-z0-9_-]+", self.value)
        if len(self.value) > self.MAX_LENGTH:
            raise InvalidValue("GroupId", f"must be at most {self.MAX_LENGTH} characters", self.value)

    def __str__(self) -> str:
        return self.value


def is_path_like(raw: str) -> bool:
    """Whether a raw projectId names a filesystem path rather than an opaque id.

    Paths are exactly the strings that start with ``/``, ``~``, ``./`` or ``../``, and the
    strings ``.`` and ``..``. Everything else (``my-app``, ``github.com/acme/api``,
    ``src/app``) is an opaque id and is kept as given.
    """
    return raw.startswith(("/", "~", "./", "../")) or raw in (".", "..")


@attrs.frozen
class CanonicalProjectId:
    """The internal key of a project: an opaque id, or an absolute, normalized path."""

    value: str

    MAX_LENGTH: ClassVar[int] = 1024

    def __attrs_post_init__(self) -> None:
        value = self.value
        if not isinstance(value, str) or not value:
            raise InvalidValue("CanonicalProjectId", "must be a non-empty string", value)
        if len(value) > self.MAX_LENGTH:
            raise InvalidValue(
                "CanonicalProjectId", f"must be at most {self.MAX_LENGTH} characters", value
            )
        if _has_control(value):
            raise InvalidValue("CanonicalProjectId", "must not contain control characters", value)
        if value != value.strip():
            raise InvalidValue(
                "CanonicalProjectId", "must not start or end with white space", value
            )
        if is_path_like(value) and not value.startswith("/"):
            raise InvalidValue("CanonicalProjectId", "a path must be absolute once canonical", value)

    def __str__(self) -> str:
        return self.value


@attrs.frozen(cache_hash=True)  # ids are dictionary keys by the hundred in a search
class NoteId:
    """A note's id: a UUID assigned by the server, in its canonical lower-case form."""

    value: str

    def __attrs_post_init__(self) -> None:
        # the form ``str(uuid.UUID(value))`` gives, checked without building a UUID (ids are made by the thousand)
        if not isinstance(self.value, str) or _CANONICAL_UUID.fullmatch(self.value) is None:
            raise InvalidValue("NoteId", "must be a lower-case hyphenated UUID", self.value)

    @classmethod
    def new(cls) -> NoteId:
        return cls(str(uuid.uuid4()))

    def __str__(self) -> str:
        return self.value


@attrs.frozen
class GlobalKey:
    """A key of the global settings store: ``global.`` then dot-separated words."""

    value: str

    PATTERN: ClassVar[re.Pattern[str]] = re.compile(r"global(\.[A-Za-z0-9_-]+)+")
    MAX_LENGTH: ClassVar[int] = 256

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.value, str) or not self.value.startswith("global."):
            raise InvalidValue("GlobalKey", "must start with 'global.'", self.value)
        if not self.PATTERN.fullmatch(self.value):
            raise InvalidValue(
                "GlobalKey", "must be 'global.' then words of [A-Za-z0-9_-] joined by dots", self.value
            )
        if len(self.value) > self.MAX_LENGTH:
            raise InvalidValue("GlobalKey", f"must be at most {self.MAX_LENGTH} characters", self.value)

    def entry_id(self, project: CanonicalProjectId) -> str:
        """The stable id of this key's entry in a project: the same across every upsert."""
        return str(uuid.uuid5(_GLOBAL_KV_NAMESPACE, f"{project.value}\x00{self.value}"))

    def __str__(self) -> str:
        return self.value


_GLOBAL_KV_NAMESPACE = uuid.UUID("6f1d2c8e-3b7a-5e41-9a0c-2d4b8e1f7a53")


@attrs.frozen
class Namespace:
    """Where a note's vector lives: ``{provider}:{model}:{dim}``.

    Vectors of different namespaces are never compared: a change of provider, model or
    dimension starts a new namespace and leaves the old one as it was.
    """

    provider: str
    model: str
    dim: int

    PROVIDER_PATTERN: ClassVar[re.Pattern[str]] = re.compile(r"[a-z][a-z0-9_-]*")
    MAX_DIM: ClassVar[int] = 65536

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.provider, str) or not self.PROVIDER_PATTERN.fullmatch(self.provider):
            raise InvalidValue("Namespace", "provider must match [a-z][a-z0-9_-]*", self.provider)
        if not isinstance(self.model, str) or not self.model or _has_control(self.model):
            raise InvalidValue("Namespace", "model must be a non-empty printable string", self.model)
        if type(self.dim) is not int or not 1 <= self.dim <= self.MAX_DIM:
            raise InvalidValue("Namespace", f"dim must be an integer in 1..{self.MAX_DIM}", self.dim)

    @classmethod
    def parse(cls, text: str) -> Namespace:
        """Read ``provider:model:dim``; the model itself may contain colons (``llama3:8b``)."""
        provider, sep, rest = text.partition(":")
        model, sep2, dim = rest.rpartition(":")
        if not sep or not sep2 or not dim.isdigit():
            raise InvalidValue("Namespace", "must read provider:model:dim", text)
        return cls(provider, model, int(dim))

    def __str__(self) -> str:
        return f"{self.provider}:{self.model}:{self.dim}"
