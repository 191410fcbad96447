"""What every use case is handed: the ports, wired by the composition root."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import attrs

from local_mcp_memory.application.embedding import Embedding
from local_mcp_memory.application.fading import ReadLog
from local_mcp_memory.application.ports import Clock, ConfigRepository, NoteReader, NoteStore, NoteWriter, ProjectResolver, StoreMaintenance
from local_mcp_memory.domain.errors import InvalidValue
from local_mcp_memory.domain.identifiers import CanonicalProjectId

T = TypeVar("T")


@attrs.frozen
class RuntimeInfo:
    """Facts about this running server that ``get_config`` reports."""

    config_path: str
    data_dir: str
    store_type: str
    store_url: str | None = None  # the team store's URL, its password masked


@attrs.define
class Counters:
    """What this server process counted since it started (``stats`` reports them)."""

    duplicates_refused: int = 0


@attrs.frozen
class Services:
    """The ports of one server. Use cases reach the store through the part they need —
    ``writer``, ``reader`` or ``maintenance`` — and ``store``, the whole of it, is for the
    composition root, which opens and closes it."""

    store: NoteStore
    embedding: Embedding
    projects: ProjectResolver
    clock: Clock
    config: ConfigRepository
    runtime: RuntimeInfo
    counters: Counters = attrs.field(factory=Counters)
    reads: ReadLog = attrs.field(
        default=attrs.Factory(lambda self: ReadLog(lambda ids: self.store.prolong(ids, self.clock.now())), takes_self=True)
    )
    """The notes read with an expiry, to prolong (``fading``); without a delay, written on
    ``close`` (or ``reads.flush()``)."""

    def close(self) -> None:
        """Write the pending reads, end the embedding's query threads, then close the store."""
        try:
            self.reads.close()
            self.embedding.close()
        finally:
            self.store.close()

    @property
    def writer(self) -> NoteWriter:
        return self.store

    @property
    def reader(self) -> NoteReader:
        return self.store

    @property
    def maintenance(self) -> StoreMaintenance:
        return self.store

    def project(self, raw: str, field: str = "project_id") -> CanonicalProjectId:
        return at(field, self.projects.canonical, raw)


def at(field: str, build: Callable[..., T], *args: object) -> T:
    """``build(*args)``, with a refused value reported at request field ``field``."""
    try:
        return build(*args)
    except InvalidValue as exc:
        raise exc.at(field) from None
