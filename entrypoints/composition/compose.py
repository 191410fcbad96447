"""The composition root: the one place that builds the store and the other real adapters
and wires them into the application's services.

Nothing happens at import time. ``compose`` imports the application and the heavy adapters
(FAISS, ONNX, httpx) when it runs, and a server runs it on its first request through
``LazyServices``, so that it answers ``initialize`` before they load. Tests and the command
line get their services from ``compose`` too, passing fakes as keywords; nothing else
constructs the services' adapters.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from local_mcp_memory.entrypoints import logs
from local_mcp_memory.entrypoints.composition.settings import ServerOptions, store_kind, store_location

if TYPE_CHECKING:  # the application is imported by ``compose``, after ``initialize`` is answered
    from local_mcp_memory.application.ports import Clock, ConfigRepository, EmbedderFactory, NoteStore, ProjectResolver
    from local_mcp_memory.application.services import Services

FADING_DELAY = 0.05
"""Seconds after a read of expiring notes before their expiries are moved out in one batch
(``application.fading``): the reads of a burst share one write, made after the answers."""


@attrs.frozen
class OpenedStore:
    """A store and what ``get_config`` tells of it: its kind, its directory and, for a
    database, its URL with the password masked."""

    store: NoteStore
    kind: str
    data_dir: Path
    url: str | None = None


def _faiss_store(location: str | None, options: ServerOptions, serving: bool) -> OpenedStore:
    """The local store in the directory ``location`` names, else in the data directory."""
    from local_mcp_memory.adapters.faiss_store import FaissNoteStore

    data_dir = Path(os.path.expanduser(location)).absolute() if location else options.data_dir
    _make_private(data_dir)
    return OpenedStore(FaissNoteStore(data_dir), "faiss", data_dir)


def _postgres_store(location: str | None, options: ServerOptions, serving: bool) -> OpenedStore:
    """The team store at the database URL ``location``; a server's rebuilds a stale vector
    index on a thread and warms its large projects up on another (a short-lived command's
    leaves both to a server)."""
    from local_mcp_memory.adapters.postgres_store import PostgresNoteStore

    assert location is not None
    store = PostgresNoteStore(location, rebuild_graphs=serving, vector_graphs=serving, warm_up=serving)
    return OpenedStore(store, "postgresql", options.data_dir, store.url.shown)


STORES: dict[str, Callable[[str | None, ServerOptions, bool], OpenedStore]] = {"faiss": _faiss_store, "postgresql": _postgres_store}
"""The stores, by the kind a location names (``settings.store_kind``)."""


def compose(
    options: ServerOptions,
    *,
    embedders: EmbedderFactory | None = None,
    store: NoteStore | None = None,
    clock: Clock | None = None,
    config: ConfigRepository | None = None,
    projects: ProjectResolver | None = None,
    serving: bool = False,
) -> Services:
    """The services of a server with the settings ``options``, built with the production
    adapters; each keyword replaces one part, and None means the real one. ``serving``: for
    ``mcp-memory serve``, which stays up (other commands are short-lived)."""
    logs.ensure_configured()  # before any adapter can log
    from local_mcp_memory.adapters.json_config import JsonFileConfigRepository
    from local_mcp_memory.adapters.system import OsProjectResolver, SystemClock
    from local_mcp_memory.application.embedding import Embedding
    from local_mcp_memory.application.fading import ReadLog
    from local_mcp_memory.application.services import RuntimeInfo, Services

    if config is None:
        _make_private(options.config_path.parent, options.config_path)
    if store is None:
        location = store_location(options)
        opened = STORES[store_kind(location)](location, options, serving)
    else:
        opened = OpenedStore(store, type(store).__name__, options.data_dir)
    config = config or JsonFileConfigRepository(options.config_path)
    if embedders is None:
        from local_mcp_memory.adapters.embedders.factory import DefaultEmbedderFactory

        embedders = DefaultEmbedderFactory(environ=options.environ)
    clock = clock or SystemClock()
    writer = opened.store
    reads = ReadLog(lambda ids: writer.prolong(ids, clock.now()), delay=FADING_DELAY, on_error=_fading_failed)
    return Services(
        store=opened.store,
        embedding=Embedding(embedders, config),
        projects=projects or OsProjectResolver(),
        clock=clock,
        config=config,
        reads=reads,
        runtime=RuntimeInfo(
            config_path=str(options.config_path), data_dir=str(opened.data_dir), store_type=opened.kind, store_url=opened.url
        ),
    )


def embedder_problem(environ: Mapping[str, str]) -> str | None:
    """What is wrong with the embedder's settings in the environment (``serve`` refuses to
    start with it), or None."""
    from local_mcp_memory.adapters.embedders.products import local_products

    try:
        local_products(environ)
    except ValueError as exc:
        return str(exc)
    return None


def _fading_failed(error: Exception, notes: int) -> None:
    """A batch of reads could not move its notes' expiries (``application.fading``): logged,
    never raised (the reads were answered)."""
    logs.get_logger().warning("fading_failed", notes=notes, error=str(error), error_type=type(error).__name__)


def _make_private(directory: Path, file: Path | None = None) -> None:
    """Create ``directory`` (and the parents it lacks) with mode 0700, and make ``file``
    0600 if it exists, from the first start: the config file may hold an API key, the data
    directory holds the notes. A failure is logged only; the adapter that needs the path
    reports it when it is used."""
    from local_mcp_memory.adapters.private_files import keep_private, make_private_dir

    try:
        make_private_dir(directory)
        if file is not None:
            keep_private(file)
    except OSError as exc:
        logs.get_logger().warning("private_path_failed", path=str(exc.filename or directory), error=exc.strerror)


class LazyServices:
    """Builds the services on first use, once, from any thread: the server's start-up does
    not wait for the application, the store or the embedder."""

    def __init__(self, factory: Callable[[], Services]) -> None:
        self._factory = factory
        self._services: Services | None = None
        self._lock = threading.Lock()

    def __call__(self) -> Services:
        services = self._services
        if services is None:
            with self._lock:
                if self._services is None:
                    self._services = self._factory()
                services = self._services
        return services

    def close(self) -> None:
        with self._lock:
            if self._services is not None:
                self._services.close()


def configure_logging(environ: Mapping[str, str]) -> None:
    """structlog, once per process: JSON lines on stderr, never stdout. Applied on the
    first log line or the first ``compose``, so that start-up does not wait for structlog."""
    logs.configure(environ)
