"""The connection pool of one server, and what a database failure becomes: ``StoreError``.

One ``psycopg_pool.ConnectionPool`` per store (and so per server). A connection taken from
the pool is checked (an empty query, one round trip) when it has been idle for more than
``IDLE_CHECK_S`` seconds (since it was last handed out) or when its socket has something to read: a database that shuts
down or restarts tells each connection and closes it, so the socket reads the notice or
its end at once. Connections left broken by a restart are replaced before use, and the
server recovers on its own once the database is back; a connection handed out a moment ago
with nothing waiting on it is used as it is (a hybrid search took two checks, a round
trip each). Pool connections are in autocommit: each read is one statement (one
snapshot); each write opens its own transaction.

Failure modes, each a ``StoreError`` whose message names host, port and database and never
the password: the server cannot be reached or refused the login (``cannot reach …``),
no connection within ``timeout`` seconds, the connection dropped mid-request, any other
database error. The connection failures (unreachable, timed out, dropped, shutting down or
starting up, a login refused: libpq reports all of them without a SQLSTATE, and a database
being set up may refuse a login for a moment) are ``StoreUnavailable``: a later request may
succeed, and an HTTP server starts and serves through them.
"""

from __future__ import annotations

import select
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import psycopg_pool
from pgvector.psycopg import register_vector

from local_mcp_memory.adapters.postgres_store.queries import SESSION_SETTINGS
from local_mcp_memory.adapters.postgres_store.url import StoreUrl
from local_mcp_memory.application.errors import StoreError, StoreUnavailable
from local_mcp_memory.application.redaction import redact

APPLICATION_NAME = "mcp-memory"
IDLE_CHECK_S = 5.0
"""A connection idle for longer is checked with a round trip before use, whatever its socket says."""


def connect(url: StoreUrl, timeout: float) -> psycopg.Connection:
    """One connection outside the pool (for the schema), in autocommit."""
    return psycopg.connect(
        url.conninfo, autocommit=True, connect_timeout=max(1, int(timeout)), application_name=APPLICATION_NAME
    )


def open_pool(url: StoreUrl, *, max_size: int, timeout: float) -> psycopg_pool.ConnectionPool:
    def configure(conn: psycopg.Connection) -> None:
        register_vector(conn)
        for setting in SESSION_SETTINGS:
            conn.execute(setting)

    liveness = _Liveness()
    pool = psycopg_pool.ConnectionPool(
        url.conninfo,
        min_size=1,
        max_size=max_size,
        kwargs={"autocommit": True, "connect_timeout": max(1, int(timeout)), "application_name": APPLICATION_NAME},
        configure=configure,
        check=liveness.check,
        timeout=timeout,
        reconnect_timeout=0,  # keep trying for ever: the database may come back
        name="mcp-memory",
        open=False,
    )
    pool.open(wait=False)
    return pool


class _Liveness:
    """The pool's check of a connection it hands out (module docstring). The idle time
    counts from when the pool last handed the connection out: a ``reset`` callback to note
    its return would make the pool return every connection through a worker thread, which
    cost more CPU than the round trip saved."""

    def __init__(self) -> None:
        self._handed: weakref.WeakKeyDictionary[psycopg.Connection, float] = weakref.WeakKeyDictionary()

    def check(self, conn: psycopg.Connection) -> None:
        now, handed = time.monotonic(), self._handed.get(conn)
        if handed is None or now - handed > IDLE_CHECK_S or _readable(conn):
            psycopg_pool.ConnectionPool.check_connection(conn)
        self._handed[conn] = now


def _readable(conn: psycopg.Connection) -> bool:
    """Whether the server sent something unasked (a shutdown's notice, the socket's end)."""
    try:
        return bool(select.select([conn.fileno()], [], [], 0)[0])
    except (OSError, ValueError, psycopg.Error):  # closed already: the check will say so
        return True


@contextmanager
def failures(url: StoreUrl, action: str) -> Iterator[None]:
    """Re-raise a database failure as ``StoreError`` naming where the database is."""
    try:
        yield
    except psycopg_pool.PoolTimeout as exc:
        raise StoreUnavailable(
            f"cannot {action}: no connection to PostgreSQL ({url.place}) within the timeout; "
            f"{_reachability(url)}"
        ) from exc
    except psycopg.OperationalError as exc:  # libpq gives no SQLSTATE for a failed connection
        raise StoreUnavailable(f"cannot {action}: PostgreSQL ({url.place}) failed: {_said(url, exc)}") from exc
    except psycopg.Error as exc:
        raise StoreError(f"cannot {action}: PostgreSQL ({url.place}) refused: {_said(url, exc)}") from exc


def _reachability(url: StoreUrl) -> str:
    """Why a fresh connection fails now, or that it succeeds (the pool was only busy)."""
    try:
        with connect(url, 3):
            return "the database answers now: try again"
    except psycopg.Error as exc:
        return f"connecting says: {_said(url, exc)}"


def _said(url: StoreUrl, exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return redact(text, [url.password])
