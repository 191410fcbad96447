"""The store URL: ``postgresql://user:password@host:port/database`` (``postgres://`` too).

``StoreUrl.parse`` keeps the URL whole for libpq and what the messages may show: host,
port and database, and the URL with its password masked (``postgresql://user:***@host:5432/db``).
No message, log line or reply carries the password.
"""

from __future__ import annotations

from urllib.parse import unquote, urlsplit

import attrs

SCHEMES = ("postgresql", "postgres")


def is_postgres_url(text: str) -> bool:
    """Whether a store setting names a PostgreSQL database rather than a local path."""
    return text.split("://", 1)[0].lower() in SCHEMES and "://" in text


@attrs.frozen
class StoreUrl:
    conninfo: str = attrs.field(repr=False)
    host: str
    port: int
    database: str
    user: str | None
    password: str | None = attrs.field(repr=False)

    @classmethod
    def parse(cls, text: str) -> StoreUrl:
        """``ValueError`` (never naming the password) for a URL that is not a PostgreSQL one."""
        if not is_postgres_url(text):
            raise ValueError("a store URL must start with postgresql://")
        parts = urlsplit(text)
        try:
            port = parts.port or 5432
        except ValueError:
            raise ValueError("the store URL's port must be a number in 1..65535") from None
        database = unquote(parts.path.lstrip("/")) or unquote(parts.username or "") or "postgres"
        return cls(
            conninfo=text,
            host=parts.hostname or "localhost",
            port=port,
            database=database,
            user=unquote(parts.username) if parts.username else None,
            password=unquote(parts.password) if parts.password is not None else None,
        )

    @property
    def shown(self) -> str:
        """The URL as replies and logs show it: the password replaced by ``***``."""
        user = f"{self.user}:***@" if self.password is not None else (f"{self.user}@" if self.user else "")
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"postgresql://{user}{host}:{self.port}/{self.database}"

    @property
    def place(self) -> str:
        """Where the database is, for error messages: ``database db on host:5432``."""
        return f"database {self.database} on {self.host}:{self.port}"
