"""The settings file, ``~/.local-mcp-memory/config.json`` by default.

Format (version 1; unknown fields are refused so that a typo is reported, not ignored)::

    {
      "format": 1,
      "embedder": {"provider": "local", "model": null, "baseUrl": null,
                   "apiKey": null, "dims": {"local:all-MiniLM-L6-v2": 384}},
      "http": {"allowedOrigins": [], "token": null},
      "store": {"url": "postgresql://user:password@host:5432/db"}
    }

``store`` is optional (absent: the local FAISS store in the data directory); its ``url`` may
hold a database password, which the file's mode keeps private like the API key.

The file may hold an API key or a token: it is written with mode 0600, in a directory of
mode 0700, atomically (temporary file, fsync, rename, fsync of the directory), so a reader
never sees half of it.

Several servers may share the file. Every write is a read-modify-write under an exclusive
``flock`` on ``.config.json.lock`` beside it: the file is read afresh inside the lock, only
the caller's change is applied, and the result is written, so a dimension learned by one
process and an embedder changed by another both survive. Reads take no lock.

The use cases see ``Settings`` (the embedder); the ``http`` section belongs to the HTTP
transport, which reads it with ``http_section``. An update keeps it as the file holds it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import attrs
import msgspec

from local_mcp_memory.adapters.durable_files import replace_durably
from local_mcp_memory.adapters.private_files import exclusive_lock, make_private_dir
from local_mcp_memory.adapters.regular_files import CONFIG_MAX_BYTES, read_regular
from local_mcp_memory.application.errors import StoreError
from local_mcp_memory.application.settings import EmbedderSettings, Settings

FORMAT = 1


class _Embedder(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, rename="camel"):
    provider: str = "local"
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    dims: dict[str, int] = {}


class _Http(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, rename="camel"):
    allowed_origins: list[str] = []
    token: str | None = None


class _Store(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    url: str | None = None


class _File(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    format: int = FORMAT
    embedder: _Embedder = msgspec.field(default_factory=_Embedder)
    http: _Http = msgspec.field(default_factory=_Http)
    store: _Store | msgspec.UnsetType = msgspec.UNSET  # optional: absent from files that never set it


class ConfigFileError(StoreError):
    """The config file exists but cannot be read as settings."""


@attrs.frozen
class HttpSection:
    """The file's ``http`` section: the CORS origins allowed, and an optional bearer token."""

    allowed_origins: tuple[str, ...] = ()
    token: str | None = attrs.field(default=None, repr=False)


class JsonFileConfigRepository:
    """``ConfigRepository`` on one JSON file. A missing file means the defaults."""

    def __init__(self, path: Path) -> None:
        self._path = path

    def load(self) -> Settings:
        return _settings(self._read())

    def http_section(self) -> HttpSection:
        http = self._read().http
        return HttpSection(tuple(http.allowed_origins), http.token)

    def store_url(self) -> str | None:
        """The file's ``store.url``: where the notes are kept (None: the local store)."""
        store = self._read().store
        return None if store is msgspec.UNSET else store.url

    def update(self, change: Callable[[Settings], Settings]) -> Settings:
        try:
            with exclusive_lock(self._path.with_name(f".{self._path.name}.lock")):
                stored = self._read()
                settings = change(_settings(stored))
                self._write(settings, stored)
        except OSError as exc:  # a full disk, a read-only folder: the file as it was, told as the store's error
            raise ConfigFileError(f"cannot write the config file: {exc.strerror or exc}", str(self._path)) from exc
        return settings

    def _read(self) -> _File:
        try:
            raw = read_regular(self._path, CONFIG_MAX_BYTES)
        except FileNotFoundError:
            return _File()
        except OSError as exc:
            raise ConfigFileError(f"cannot read the config file: {exc.strerror}", str(self._path)) from exc
        try:
            data = msgspec.json.decode(raw, type=_File)
        except msgspec.DecodeError as exc:
            raise ConfigFileError(f"the config file is not valid: {exc}", str(self._path)) from exc
        if data.format != FORMAT:
            raise ConfigFileError(f"the config file has format {data.format}; this server reads {FORMAT}", str(self._path))
        return data

    def _write(self, settings: Settings, stored: _File) -> None:
        e = settings.embedder
        data = _File(
            embedder=_Embedder(
                provider=e.provider, model=e.model, base_url=e.base_url, api_key=e.api_key, dims=dict(e.dims)
            ),
            http=stored.http,
            store=stored.store,
        )
        encoded = msgspec.json.format(msgspec.json.encode(data)) + b"\n"
        if len(encoded) > CONFIG_MAX_BYTES:  # it could not be read back: the file stays as it was
            raise ConfigFileError(f"the config file would be larger than {CONFIG_MAX_BYTES // 2**20} MiB", str(self._path))
        make_private_dir(self._path.parent)
        replace_durably(self._path, encoded)


def _settings(data: _File) -> Settings:
    e = data.embedder
    return Settings(embedder=EmbedderSettings(e.provider, e.model, e.base_url, e.api_key, dict(e.dims)))
