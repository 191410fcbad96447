"""The composition root: the one place that builds real adapters and wires them in.

Nothing happens at import time. Heavy adapters (FAISS, ONNX, httpx) are imported inside
``compose`` so that a server answers ``initialize`` before they load. Tests and the
command line get their services from ``compose`` too, passing fakes or settings as
keywords; nothing else constructs adapters.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from local_mcp_memory.entrypoints import logs
from local_mcp_memory.entrypoints.logs import LOG_LEVEL_ENV  # noqa: F401  (re-exported: the CLI sets it)

from local_mcp_memory.entrypoints.paths import CONFIG_ENV, DATA_DIR_ENV, HOME_DIR, STORE_ENV, resolve_paths  # noqa: F401

POSTGRES_EXTRA = "pip install 'local-mcp-memory[postgres]'"

if TYPE_CHECKING:  # the application is imported by ``compose``, after ``initialize`` is answered
    from local_mcp_memory.adapters.json_config import HttpSection
    from local_mcp_memory.adapters.markdown_folder import FolderWatch
    from local_mcp_memory.application.ports import Clock, ConfigRepository, EmbedderFactory, MarkdownFolder, NoteStore, ProjectResolver
    from local_mcp_memory.application.services import Services


@attrs.frozen
class ServerOptions:
    """Where the server keeps its files."""

    config_path: Path
    data_dir: Path
    environ: Mapping[str, str] = attrs.field(factory=lambda: dict(os.environ), repr=False)
    store: str | None = attrs.field(default=None, repr=False)  # --store or MCP_MEMORY_STORE; may hold a password

    @classmethod
    def resolve(
        cls,
        environ: Mapping[str, str],
        config_path: str | Path | None = None,
        data_dir: str | Path | None = None,
        store: str | None = None,
    ) -> ServerOptions:
        """Flags win over the environment, which wins over ``~/.local-mcp-memory``. The
        store's last resort, the config file's ``store.url``, is read by ``store_location``."""
        config, data, store = resolve_paths(environ, config_path, data_dir, store)
        return cls(config_path=config, data_dir=data, environ=dict(environ), store=store)


def store_location(options: ServerOptions) -> str | None:
    """Where the notes are kept: ``--store``, else ``MCP_MEMORY_STORE``, else the config file's
    ``store.url``. A ``postgresql://`` URL is the team store; a path, the local FAISS store in
    that directory; None, the local FAISS store in ``options.data_dir``. ``StoreError`` if the
    config file cannot be read."""
    if options.store:
        return options.store
    from local_mcp_memory.adapters.json_config import JsonFileConfigRepository

    return JsonFileConfigRepository(options.config_path).store_url() or None


def store_setting_at_start(options: ServerOptions) -> str | None:
    """``store_location`` read with the standard library only, for the checks a command makes
    before it loads the application; None when the config file cannot be read (``compose``
    reports that)."""
    if options.store:
        return options.store
    import json

    try:
        data = json.loads(options.config_path.read_bytes())
        url = data.get("store", {}).get("url")
    except (OSError, ValueError, AttributeError):
        return None
    return url if isinstance(url, str) else None


def store_problem(location: str | None) -> str | None:
    """Why the store at ``location`` cannot be used at all (a usage error), or None: a URL
    of another scheme than PostgreSQL's (a mistyped URL must not become a local directory
    named after it), a PostgreSQL URL that does not parse, or the ``postgres`` extra not
    installed."""
    import importlib.util
    import re

    from local_mcp_memory.adapters.postgres_store.url import StoreUrl, is_postgres_url

    if location is None:
        return None
    if not is_postgres_url(location):
        scheme = re.match(r"([A-Za-z][A-Za-z0-9+.-]*)://", location)
        if scheme:
            return f"--store: {scheme.group(1)}:// is not a store this server knows; use postgresql://user:password@host:5432/db or a directory"
        return None
    try:
        StoreUrl.parse(location)
    except ValueError as exc:
        return f"--store: {exc}"
    missing = [m for m in ("psycopg", "psycopg_pool", "pgvector") if importlib.util.find_spec(m) is None]
    if missing:
        return f"a PostgreSQL store needs the postgres extra ({', '.join(missing)} missing): {POSTGRES_EXTRA}"
    return None


FADING_DELAY = 0.05
"""Seconds after a read of expiring notes before their expiries are moved out in one batch
(``application.fading``): the reads of a burst share one write, made after the answers."""


def compose(
    *,
    options: ServerOptions | None = None,
    config_path: str | Path | None = None,
    data_dir: str | Path | None = None,
    store_url: str | None = None,
    environ: Mapping[str, str] | None = None,
    embedders: EmbedderFactory | None = None,
    store: NoteStore | None = None,
    clock: Clock | None = None,
    config: ConfigRepository | None = None,
    projects: ProjectResolver | None = None,
) -> Services:
    """The server's services, built with the production defaults; each keyword replaces one
    part, and None means the real one. The settings are ``options`` when given, else
    resolved as the command line resolves its flags (``ServerOptions.resolve``) from
    ``config_path``, ``data_dir``, ``store_url`` and ``environ`` (default ``os.environ``)."""
    if options is None:
        options = ServerOptions.resolve(
            os.environ if environ is None else environ, config_path=config_path, data_dir=data_dir, store=store_url
        )
    logs.ensure_configured()  # before any adapter can log
    from local_mcp_memory.adapters.json_config import JsonFileConfigRepository
    from local_mcp_memory.adapters.system import OsProjectResolver, SystemClock
    from local_mcp_memory.application.embedding import Embedding
    from local_mcp_memory.application.services import RuntimeInfo, Services

    if config is None:
        _make_private(options.config_path.parent, options.config_path)
    location = store_location(options) if store is None else None
    team_store = location is not None and _is_postgres(location)
    data_dir = Path(os.path.expanduser(location)).absolute() if location and not team_store else options.data_dir
    if store is None and not team_store:
        _make_private(data_dir)
    config = config or JsonFileConfigRepository(options.config_path)
    if embedders is None:
        from local_mcp_memory.adapters.embedders.factory import DefaultEmbedderFactory

        embedders = DefaultEmbedderFactory(environ=options.environ)
    store_type = "faiss" if store is None else type(store).__name__
    store_url = None
    if team_store:
        from local_mcp_memory.adapters.postgres_store import PostgresNoteStore

        store = PostgresNoteStore(location)
        store_type, store_url = "postgresql", store.url.shown
    elif store is None:
        from local_mcp_memory.adapters.faiss_store import FaissNoteStore

        store = FaissNoteStore(data_dir)
    from local_mcp_memory.application.fading import ReadLog

    clock = clock or SystemClock()
    writer = store
    reads = ReadLog(lambda ids: writer.prolong(ids, clock.now()), delay=FADING_DELAY, on_error=_fading_failed)
    return Services(
        store=store,
        embedding=Embedding(embedders, config),
        projects=projects or OsProjectResolver(),
        clock=clock,
        config=config,
        reads=reads,
        runtime=RuntimeInfo(
            config_path=str(options.config_path),
            data_dir=str(data_dir),
            store_type=store_type,
            store_url=store_url,
        ),
    )


def _fading_failed(error: Exception, notes: int) -> None:
    """A batch of reads could not move its notes' expiries (``application.fading``): logged,
    never raised (the reads were answered)."""
    logs.get_logger().warning("fading_failed", notes=notes, error=str(error), error_type=type(error).__name__)


def markdown_folder(path: str) -> tuple[MarkdownFolder, FolderWatch]:
    """The folder ``mcp-memory sync`` reads (``adapters.markdown_folder``), and its watch.
    ``OSError`` (``NotADirectoryError``, ``FileNotFoundError``) when ``path`` is no folder."""
    from local_mcp_memory.adapters.markdown_folder import FolderWatch, OsMarkdownFolder

    folder = OsMarkdownFolder(path)
    return folder, FolderWatch(folder)


def default_project(directory: str) -> str:
    """The projectId used where none is given (SPEC §12): the main worktree of the git
    repository holding ``directory``, else ``directory`` (``adapters.git_worktree``)."""
    from local_mcp_memory.adapters.git_worktree import project_root

    return project_root(directory)


def transcript_events(path: str, stats: object | None = None):
    """The events of a Claude Code transcript, streamed (``adapters.claude_transcript``);
    ``OSError`` when the file cannot be opened."""
    from local_mcp_memory.adapters.claude_transcript import TranscriptStats, read_transcript

    return read_transcript(path, stats if isinstance(stats, TranscriptStats) else None)


def transcript_stats() -> object:
    """A fresh counter of what ``transcript_events`` skipped."""
    from local_mcp_memory.adapters.claude_transcript import TranscriptStats

    return TranscriptStats()


def http_section(options: ServerOptions) -> HttpSection:
    """The config file's ``http`` section, which only the HTTP transport reads. Raises
    ``StoreError`` when the file cannot be read as settings."""
    from local_mcp_memory.adapters.json_config import JsonFileConfigRepository

    return JsonFileConfigRepository(options.config_path).http_section()


def _is_postgres(location: str) -> bool:
    from local_mcp_memory.adapters.postgres_store.url import is_postgres_url

    return is_postgres_url(location)


def is_database_store(location: str | None) -> bool:
    """Whether a store setting names a database server rather than a local directory."""
    return bool(location) and _is_postgres(location)


def check_local_store(data_dir: Path):
    """The local store's ``Checkup`` (``adapters.faiss_store.recovery.verify``): every file of its
    live generation checked, nothing written."""
    from local_mcp_memory.adapters.faiss_store.recovery.verify import verify

    return verify(data_dir)


def salvage_local_store(data_dir: Path):
    """Every record of the local store that verifies (``adapters.faiss_store.recovery.salvage``),
    as ``(found, export, unusable)``; nothing written into ``data_dir``."""
    from local_mcp_memory.adapters.faiss_store.recovery.salvage import as_export, salvage

    found = salvage(data_dir)
    export, unusable = as_export(found)
    return found, export, unusable


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
    """Builds the services on first use, once, from any thread."""

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
