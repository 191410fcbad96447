"""``mcp-memory serve --transport http``: uvicorn around ``HttpApp``.

Why uvicorn with a hand-written ASGI app: uvicorn (h11) is a well-kept server that gives
keep-alive, request parsing limits and a graceful shutdown (stop accepting, finish the
requests in flight, close idle connections). Three routes and one guard do not need a
framework: written directly, the app decides every response header itself, which is what
"no CORS headers unless configured" asks for, and adds no dependency.

Environment (``options.environ``):

    MCP_MEMORY_HTTP_TOKEN         bearer token; wins over ``http.token`` in the config file
    MCP_MEMORY_HTTP_MAX_BODY      largest request body in bytes (default 8 MiB)
    MCP_MEMORY_HTTP_WORKERS       threads running the synchronous core (default: twice the
                                  cores, 4 to 8: ``default_workers``)
    MCP_MEMORY_HTTP_BODY_TIMEOUT  seconds a request body may take to arrive (default 30)
    MCP_MEMORY_HTTP_SESSION_IDLE  seconds an MCP session may stay unused (default 3600)
                                  (each 0.1 to 30 days' worth of seconds)

The token: surrounding whitespace is dropped, and a blank one counts as none (a blank
``MCP_MEMORY_HTTP_TOKEN`` leaves ``http.token`` in force). On a non-loopback address the
token must have at least ``MIN_PUBLIC_TOKEN_CHARS`` characters and no whitespace.

Exit codes: 0 after a shutdown by SIGINT or SIGTERM (requests in flight are answered
first), 1 when the config or the store cannot be opened or the port cannot be bound,
2 for a refused setup (a non-loopback address without a strong token, a bad setting).
A PostgreSQL store that cannot be reached yet (``StoreUnavailable``: refused, timed out,
starting up) is no reason to exit: the server listens, logs a warning, answers -32006
and ``/health`` 503 until the database answers, then serves as usual.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import re
import signal
import sys
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor

import attrs
import uvicorn

from local_mcp_memory.application.errors import StoreError, StoreUnavailable
from local_mcp_memory.entrypoints.composition.compose import LazyServices
from local_mcp_memory.entrypoints.composition.settings import ServerOptions, http_section
from local_mcp_memory.entrypoints.http.app import DEFAULT_BODY_TIMEOUT, DEFAULT_MAX_BODY, HttpApp
from local_mcp_memory.entrypoints.http.guard import Policy, is_loopback
from local_mcp_memory.entrypoints.http.protocol import TimedHeadersProtocol
from local_mcp_memory.entrypoints.http.streamable import DEFAULT_SESSION_IDLE
from local_mcp_memory.entrypoints.rpc.dispatcher import Dispatcher
from local_mcp_memory.entrypoints.logs import get_logger

TOKEN_ENV = "MCP_MEMORY_HTTP_TOKEN"
MAX_BODY_ENV = "MCP_MEMORY_HTTP_MAX_BODY"
WORKERS_ENV = "MCP_MEMORY_HTTP_WORKERS"
BODY_TIMEOUT_ENV = "MCP_MEMORY_HTTP_BODY_TIMEOUT"
SESSION_IDLE_ENV = "MCP_MEMORY_HTTP_SESSION_IDLE"
MIN_WORKERS, MAX_WORKERS = 4, 8
MIN_SECONDS, MAX_SECONDS = 0.1, 30 * 86_400
"""The durations' range: a timeout of less than a tenth of a second refuses every body, and
more than 30 days is no limit anyone means."""


def default_workers(cores: int | None) -> int:
    """Threads running requests when ``MCP_MEMORY_HTTP_WORKERS`` is not set: twice the cores,
    at least ``MIN_WORKERS`` and at most ``MAX_WORKERS``. A request holds the GIL for its
    Python steps and lets it go while it waits on the database or the model, so a thread or
    two per core keeps the cores busy; more threads only hand the GIL back and forth. On two
    cores under 16 clients (``bench.team_scale``) 4 threads answered 12-15 % more searches
    than 8, at 17-20 % lower p95, on PostgreSQL with 1M notes and on the local store."""
    return min(MAX_WORKERS, max(MIN_WORKERS, 2 * (cores or 1)))


DEFAULT_WORKERS = default_workers(os.cpu_count())
MIN_PUBLIC_TOKEN_CHARS = 16
MAX_CONNECTIONS = 256
KEEP_ALIVE_SECONDS = 5
GRACEFUL_SHUTDOWN_SECONDS = 30

log = get_logger()


@attrs.frozen
class Tuning:
    max_body: int = DEFAULT_MAX_BODY
    workers: int = DEFAULT_WORKERS
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    session_idle: float = DEFAULT_SESSION_IDLE

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> Tuning:
        """Raises ValueError naming the variable when a value is not a positive integer
        (or, for the durations, a number of seconds from ``MIN_SECONDS`` to ``MAX_SECONDS``,
        written in ASCII digits with or without a fraction)."""
        return cls(
            max_body=_positive(environ, MAX_BODY_ENV, DEFAULT_MAX_BODY),
            workers=_positive(environ, WORKERS_ENV, DEFAULT_WORKERS),
            body_timeout=_seconds(environ, BODY_TIMEOUT_ENV, DEFAULT_BODY_TIMEOUT),
            session_idle=_seconds(environ, SESSION_IDLE_ENV, DEFAULT_SESSION_IDLE),
        )


def run_http(dispatcher: Dispatcher, services: LazyServices, options: ServerOptions, *, host: str, port: int) -> int:
    try:
        tuning = Tuning.from_environ(options.environ)
    except ValueError as exc:
        return _refuse(str(exc), 2)
    try:
        services()  # the store opens before the server listens
    except StoreUnavailable as exc:  # a database not up yet: serve, and open it on a later request
        log.warning("http_store_unavailable", error=str(exc), serving=True)
    except StoreError as exc:
        return _refuse(f"cannot open {exc.path or 'the store'}: {exc}", 1)
    try:
        settings = http_section(options)
    except StoreError as exc:
        return _refuse(f"cannot open {exc.path or 'the store'}: {exc}", 1)
    raw_token = token_in_force(options.environ.get(TOKEN_ENV), settings.token)
    problem = None if is_loopback(host) else public_token_problem(raw_token)
    if problem:
        return _refuse(
            f"refusing to listen on {host} {problem}: anyone who can reach that address could "
            f"read and write your memory. Set {TOKEN_ENV} (or http.token in {options.config_path}) "
            f"to a random string of {MIN_PUBLIC_TOKEN_CHARS} characters or more, for example "
            "$(openssl rand -hex 32), or bind 127.0.0.1",
            2,
        )
    token = raw_token.strip() if raw_token else None
    policy = Policy.for_bind(host, port, settings.allowed_origins, token)
    pool = ThreadPoolExecutor(max_workers=tuning.workers, thread_name_prefix="mcp-memory-http")
    app = HttpApp(
        dispatcher,
        services,
        policy,
        pool,
        max_body=tuning.max_body,
        body_timeout=tuning.body_timeout,
        session_idle=tuning.session_idle,
    )
    server = uvicorn.Server(uvicorn_config(app, host, port))
    route_uvicorn_logs()
    log.info(
        "http_starting",
        host=host,
        port=port,
        token=token is not None,
        allowed_origins=sorted(policy.allowed_origins),
        workers=tuning.workers,
        max_body=tuning.max_body,
        body_timeout=tuning.body_timeout,
        session_idle=tuning.session_idle,
    )
    try:
        with _stop_on_signals(server):
            server.run()
    except SystemExit:  # uvicorn exits this way when it cannot bind
        return _refuse(f"could not listen on {host}:{port} (see the log above)", 1)
    finally:
        pool.shutdown(wait=True)  # requests cut off by the shutdown timeout still finish
        services.close()
        log.info("http_stopped")
    return 0


def uvicorn_config(app: HttpApp, host: str, port: int) -> uvicorn.Config:
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http=TimedHeadersProtocol,
        loop="asyncio",
        ws="none",
        interface="asgi3",
        lifespan="off",
        access_log=False,
        log_config=None,
        proxy_headers=False,
        server_header=False,
        limit_concurrency=MAX_CONNECTIONS,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
    )


class _StructlogHandler(logging.Handler):
    """uvicorn's own messages (start, bind errors, shutdown) as our JSON lines on stderr."""

    def emit(self, record: logging.LogRecord) -> None:
        log.log(record.levelno, record.getMessage(), logger=record.name)


def route_uvicorn_logs() -> None:
    uvicorn_log = logging.getLogger("uvicorn")
    if not any(isinstance(h, _StructlogHandler) for h in uvicorn_log.handlers):
        uvicorn_log.addHandler(_StructlogHandler())
    uvicorn_log.setLevel(logging.INFO)
    uvicorn_log.propagate = False


@contextlib.contextmanager
def _stop_on_signals(server: uvicorn.Server) -> Iterator[None]:
    """While uvicorn serves, its own handlers shut it down gracefully; afterwards it
    restores the handlers it found and raises the signal again. Ours are those handlers:
    they stop the server (a signal just before or after serving) instead of killing the
    process, so ``run_http`` can close the store and return."""

    def stop(signum: int, frame: object) -> None:
        server.should_exit = True

    previous = {signum: signal.signal(signum, stop) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def token_in_force(from_environ: str | None, from_config: str | None) -> str | None:
    """The token as given (environment first); a blank value counts as none."""
    for value in (from_environ, from_config):
        if value and value.strip():
            return value
    return None


def public_token_problem(token: str | None) -> str | None:
    """Why ``token`` cannot guard a non-loopback address; None when it can."""
    if token is None:
        return "without a token"
    if any(char.isspace() for char in token):
        return "with a token that contains whitespace"
    if len(token) < MIN_PUBLIC_TOKEN_CHARS:
        return f"with a token of {len(token)} characters (at least {MIN_PUBLIC_TOKEN_CHARS} are needed)"
    return None


def _seconds(environ: Mapping[str, str], name: str, default: float) -> float:
    raw = environ.get(name)
    if not raw:
        return default
    # ASCII decimals only: float() also reads '١٢', '1_0', '1e-300' and 'inf'
    written = re.fullmatch(r"[0-9]{1,9}(\.[0-9]{1,9})?", raw.strip())
    value = float(written[0]) if written else math.nan
    if not MIN_SECONDS <= value <= MAX_SECONDS:
        raise ValueError(f"{name} must be a number of seconds from {MIN_SECONDS:g} to {MAX_SECONDS:,} (got {raw!r})")
    return value


def _positive(environ: Mapping[str, str], name: str, default: int) -> int:
    raw = environ.get(name)
    if not raw:
        return default
    digits = raw.strip()
    # ASCII digits only ('²' is a digit to str.isdigit, not to int), and few enough for int to read
    if not (digits.isascii() and digits.isdigit()) or len(digits) > 18 or int(digits) < 1:
        raise ValueError(f"{name} must be a positive integer (got {raw!r})")
    return int(digits)


def _refuse(message: str, code: int) -> int:
    print(f"mcp-memory: {message}", file=sys.stderr)
    return code
