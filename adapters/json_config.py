"""The settings file, ``~/.local-mcp-memory/config.json`` by default.

Format (version 1; unknown fields are refused so that a typo is reported, not ignored)::

    {
      "format": 1,
      "embedder": {"provider": "local", "model": null, "baseUrl": null,
                   "apiKey": null, "dims": {"local:all-MiniLM-L6-v2": 384}},
      "http": {"allowedOrigins": [], "token": null}
    }

The file may hold an API key or a token: it is written with mode 0600, in a directory of
mode 0700, atomically (temporary file, fsync, rename, fsync of the directory), so a reader
never sees half of it.

Several servers may share the file. Every write is a read-modify-write under an exclusive
``flock`` on ``.config.json.lock`` beside it: the file is read afresh inside the lock, only
the caller's change is applied, and the result is written, so a dimension learned by one
process and an embedder changed by another both survive. Reads take no lock.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import msgspec

from adapters.private_files import exclusive_lock, write_private_file
from application.errors import StoreError
from application.settings import EmbedderSettings, HttpSettings, Settings

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


class _File(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    format: int = FORMAT
    embedder: _Embedder = msgspec.field(default_factory=_Embedder)
    http: _Http = msgspec.field(default_factory=_Http)


class ConfigFileError(StoreError):
    """The config file exists but cannot be read as settings."""


class JsonFileConfigRepository:
    """``ConfigRepository`` on one JSON file. A missing file means the defaults."""

    def __init__(self, path: Path) -> None:
        self._path = path

    @property
    def location(self) -> str:
        return str(self._path)

    def load(self) -> Settings:
        try:
            raw = self._path.read_bytes()
        except FileNotFoundError:
            return Settings()
        except OSError as exc:
            raise ConfigFileError(f"cannot read the config file: {exc.strerror}", str(self._path)) from exc
        try:
            data = msgspec.json.decode(raw, type=_File)
        except msgspec.DecodeError as exc:
            raise ConfigFileError(f"the config file is not valid: {exc}", str(self._path)) from exc
        if data.format != FORMAT:
            raise ConfigFileError(f"the config file has format {data.format}; this server reads {FORMAT}", str(self._path))
        e, h = data.embedder, data.http
        return Settings(
            embedder=EmbedderSettings(e.provider, e.model, e.base_url, e.api_key, dict(e.dims)),
            http=HttpSettings(tuple(h.allowed_origins), h.token),
        )

    def update(self, change: Callable[[Settings], Settings]) -> Settings:
        with exclusive_lock(self._path.with_name(f".{self._path.name}.lock")):
            settings = change(self.load())
            self._write(settings)
        return settings

    def _write(self, settings: Settings) -> None:
        e, h = settings.embedder, settings.http
        data = _File(
            embedder=_Embedder(
                provider=e.provider, model=e.model, base_url=e.base_url, api_key=e.api_key, dims=dict(e.dims)
            ),
            http=_Http(allowed_origins=list(h.allowed_origins), token=h.token),
        )
        write_private_file(self._path, msgspec.json.format(msgspec.json.encode(data)) + b"\n")
