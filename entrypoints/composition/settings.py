"""The server's settings, resolved: where its files are (``ServerOptions``) and which store it
uses (``store_location``, checked by ``store_problem`` before anything loads). Flags win over
the environment, which wins over the config file and then ``~/.local-mcp-memory``."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from local_mcp_memory.entrypoints.composition.paths import resolve_paths

if TYPE_CHECKING:
    from local_mcp_memory.adapters.json_config import HttpSection

POSTGRES_EXTRA = "pip install 'local-mcp-memory[postgres]'"


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

    from local_mcp_memory.adapters.regular_files import CONFIG_MAX_BYTES, read_regular

    try:
        data = json.loads(read_regular(options.config_path, CONFIG_MAX_BYTES))
        url = data.get("store", {}).get("url")
    except (OSError, ValueError, AttributeError, RecursionError):  # nested past the interpreter's depth: not a config
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


def store_kind(location: str | None) -> str:
    """Which store a location names, a key of ``compose.STORES``: "postgresql" for a
    database URL, else "faiss" (a directory, or None for the data directory)."""
    from local_mcp_memory.adapters.postgres_store.url import is_postgres_url

    return "postgresql" if location is not None and is_postgres_url(location) else "faiss"


def is_database_store(location: str | None) -> bool:
    """Whether a store setting names a database server rather than a local directory."""
    return bool(location) and store_kind(location) == "postgresql"


def http_section(options: ServerOptions) -> HttpSection:
    """The config file's ``http`` section, which only the HTTP transport reads. Raises
    ``StoreError`` when the file cannot be read as settings."""
    from local_mcp_memory.adapters.json_config import JsonFileConfigRepository

    return JsonFileConfigRepository(options.config_path).http_section()
