"""``mcp-memory serve --transport http``: uvicorn around ``HttpApp``.

Why uvicorn with a hand-written ASGI app: uvicorn (h11) is a well-kept server that gives
keep-alive, request parsing limits and a graceful shutdown (stop accepting, finish the
requests in flight, close idle connections). Three routes and one guard do not need a
framework: written directly, the app decides every response header itself, which is what
"no CORS headers unless configured" asks for, and adds no dependency.

Environment (``options.environ``):

    MCP_MEMORY_HTTP_TOKEN      bearer token; wins over ``http.token`` in the config file
    MCP_MEMORY_HTTP_MAX_BODY   largest request body in bytes (default 8 MiB)
    MCP_MEMORY_HTTP_WORKERS    threads running the synchronous core (default 8)

Exit codes: 0 after a shutdown by SIGINT or SIGTERM (requests in flight are answered
first), 1 when the config or the store cannot be opened or the port cannot be bound,
2 for a refused setup (a non-loopback address without a token, a bad setting).
"""

from __future__ import annotations

import contextlib
import logging
import signal
import sys
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor

import attrs
import uvicorn

from application.errors import StoreError
from entrypoints.bootstrap import LazyServices, ServerOptions
from entrypoints.http.app import DEFAULT_MAX_BODY, HttpApp
from entrypoints.http.guard import Policy, is_loopback
from entrypoints.jsonrpc import Dispatcher
from entrypoints.logs import get_logger

TOKEN_ENV = "MCP_MEMORY_HTTP_TOKEN"
MAX_BODY_ENV = "MCP_MEMORY_HTTP_MAX_BODY"
WORKERS_ENV = "MCP_MEMORY_HTTP_WORKERS"
DEFAULT_WORKERS = 8
MAX_CONNECTIONS = 256
KEEP_ALIVE_SECONDS = 5
GRACEFUL_SHUTDOWN_SECONDS = 30

log = get_logger()


@attrs.frozen
class Tuning:
    max_body: int = DEFAULT_MAX_BODY
    workers: int = DEFAULT_WORKERS

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> Tuning:
        """Raises ValueError naming the variable when a value is not a positive integer."""
        return cls(
            max_body=_positive(environ, MAX_BODY_ENV, DEFAULT_MAX_BODY),
            workers=_positive(environ, WORKERS_ENV, DEFAULT_WORKERS),
        )


def run_http(dispatcher: Dispatcher, services: LazyServices, options: ServerOptions, *, host: str, port: int) -> int:
    try:
        tuning = Tuning.from_environ(options.environ)
    except ValueError as exc:
        return _refuse(str(exc), 2)
    try:
        settings = services().config.load().http
    except StoreError as exc:
        return _refuse(f"cannot open {exc.path or 'the store'}: {exc}", 1)
    token = options.environ.get(TOKEN_ENV) or settings.token or None
    if token is None and not is_loopback(host):
        return _refuse(
            f"refusing to listen on {host} without a token: anyone who can reach that address could "
            f"read and write your memory. Set {TOKEN_ENV} (or http.token in {options.config_path}), "
            "or bind 127.0.0.1",
            2,
        )
    policy = Policy.for_bind(host, port, settings.allowed_origins, token)
    pool = ThreadPoolExecutor(max_workers=tuning.workers, thread_name_prefix="mcp-memory-http")
    app = HttpApp(dispatcher, services, policy, pool, max_body=tuning.max_body)
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
        http="h11",
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


def _positive(environ: Mapping[str, str], name: str, default: int) -> int:
    raw = environ.get(name)
    if not raw:
        return default
    if not raw.strip().isdigit() or int(raw) < 1:
        raise ValueError(f"{name} must be a positive integer (got {raw!r})")
    return int(raw)


def _refuse(message: str, code: int) -> int:
    print(f"mcp-memory: {message}", file=sys.stderr)
    return code
