"""How many of the project's files a ``memory.search`` passes before it reaches the store.

    .venv/bin/python scripts/trace_search.py

Serves one search warm (after a first add and search built the routes, the services and the
keyword index), over stdio and over HTTP (the ASGI app called in-process), with a profiler
recording each project file whose code runs, in order, until the first call into a store
adapter. The embedder is the test suite's hashing fake, which lives under tests/ and is not
counted: in production the embedder adapter (``adapters/embedders/local.py``) is one more.
"""

from __future__ import annotations

import asyncio
import io
import json
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from local_mcp_memory.entrypoints.composition.compose import LazyServices, compose, configure_logging  # noqa: E402
from local_mcp_memory.entrypoints.composition.settings import ServerOptions  # noqa: E402
from local_mcp_memory.entrypoints.http.app import HttpApp  # noqa: E402
from local_mcp_memory.entrypoints.http.guard import Policy  # noqa: E402
from local_mcp_memory.entrypoints.server import build_dispatcher  # noqa: E402
from local_mcp_memory.entrypoints.rpc.stdio import StdioServer  # noqa: E402
from tests.fakes.hashing_embedder_factory import HashingEmbedderFactory  # noqa: E402

STORES = ("adapters/faiss_store/", "adapters/postgres_store/")


def main() -> int:
    configure_logging({"MCP_MEMORY_LOG_LEVEL": "WARNING"})  # JSON lines on stderr
    home = Path(tempfile.mkdtemp())
    services = LazyServices(
        lambda: compose(
            ServerOptions.resolve({}, home / "config.json", home / "data"),
            embedders=HashingEmbedderFactory(),
        )
    )
    dispatcher = build_dispatcher(services)

    def request(id_: int, method: str, params: dict) -> bytes:
        return json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params}).encode()

    add = request(1, "memory.add_note", {"projectId": "p", "groupId": "g", "text": "webhooks retry with backoff"})
    search = request(2, "memory.search", {"projectId": "p", "query": "how are webhooks retried"})

    def stdio(body: bytes) -> None:
        StdioServer(dispatcher, io.BytesIO(body + b"\n"), io.BytesIO()).serve(install_signals=False)

    def http(body: bytes) -> None:
        app = HttpApp(dispatcher, services, Policy.for_bind("127.0.0.1", 8765, [], None), ThreadPoolExecutor(1))
        scope = {
            "type": "http", "method": "POST", "path": "/rpc", "client": ("127.0.0.1", 1),
            "headers": [(b"host", b"127.0.0.1:8765"), (b"content-type", b"application/json")],
        }

        async def receive() -> dict:
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: dict) -> None:
            pass

        asyncio.run(app(scope, receive, send))

    stdio(add)
    stdio(search)
    http(search)
    for name, run in (("stdio", stdio), ("http", http)):
        files, store = passed(lambda: run(search))
        print(f"{name}: {len(files)} files before the store ({store or 'not reached'}), {len(files) + 1} with the embedder adapter")
        for file in files:
            print(f"    {file}")
    return 0


def passed(run) -> tuple[list[str], str | None]:
    files: list[str] = []
    reached: list[str] = []

    def profile(frame, event, arg) -> None:
        if event != "call" or reached:
            return
        path = Path(frame.f_code.co_filename)
        if not path.is_absolute() or not path.is_relative_to(ROOT):
            return
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith(("tests/", "scripts/", ".venv")) or not relative.endswith(".py"):
            return
        if relative.startswith(STORES):
            reached.append(relative)
        elif relative not in files:
            files.append(relative)

    sys.setprofile(profile)
    threading.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    return files, reached[0] if reached else None


if __name__ == "__main__":
    raise SystemExit(main())
