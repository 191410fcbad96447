"""Replay every ``memory.*`` method, its error paths and the MCP methods against real servers,
and write the normalized answers, one JSON line per request.

    .venv/bin/python scripts/replay.py OUT.jsonl

``tests/integration/transports/test_replay.py`` compares a run with ``tests/data/replay.jsonl``; after a
change of behaviour that is meant, record it anew with
``.venv/bin/python scripts/replay.py tests/data/replay.jsonl`` and read the diff.

The same script of requests runs over stdio (``mcp-memory serve --transport stdio``) and over
HTTP (``POST /rpc`` and ``POST /mcp`` of ``mcp-memory serve --transport http``), each server
with a fresh home of its own. Note ids, timestamps and the home directory are replaced by
stable placeholders (``<id-1>``, ``<time>``, ``<home>``), in the order they first appear, and
scores are cut to six decimals (another CPU may round the last bits of a cosine otherwise), so
two runs of one build write the same bytes (the local model multiplies in float32 here,
``MCP_MEMORY_LOCAL_PRODUCTS=float``: its int8 products, used where the CPU has int8 dot
products, move scores in the fourth decimal): a change of the code that should not change
behaviour is checked by running it before and after and comparing the files (``cmp``).
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.integration.http_server import HttpServer  # noqa: E402
from tests.integration.serve import StdioServer  # noqa: E402

UNKNOWN = "0b7a4c1e-1111-4222-8333-444455556666"
PROJECT = "/replay/project"
ADD = {"projectId": PROJECT, "groupId": "global", "text": "Webhooks retry with exponential backoff, five times at most."}

Params = Any  # a JSON value, or a function of the ids seen so far returning one
Step = tuple[str, str, Params]


def steps() -> list[Step]:
    """(label, method, params); params may be a function of the ids named so far."""
    return [
        # the MCP lifecycle and listings
        ("initialize", "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "replay", "version": "1"}}),
        ("ping", "ping", {}),
        ("tools/list", "tools/list", {}),
        ("prompts/list", "prompts/list", {}),
        ("resources/templates/list", "resources/templates/list", {}),
        # writes
        ("add_note", "memory.add_note", {**ADD, "title": "Webhook retries", "tags": ["decision", "api"], "source": "user", "importance": 0.9}),
        ("add_note dated", "memory.add_note", {"projectId": PROJECT, "groupId": "feature-billing", "text": "Invoices are generated on the first day of the month.", "createdAt": "2024-01-15T10:30:00Z", "metadata": {"ticket": 12}}),
        ("add_note duplicate", "memory.add_note", ADD),
        ("add_note expiring", "memory.add_note", {"projectId": PROJECT, "groupId": "task-7", "text": "Freeze deploys until the audit ends.", "expiresAt": "2999-01-01T00:00:00Z"}),
        ("add_notes", "memory.add_notes", {"notes": [
            {"projectId": PROJECT, "groupId": "global", "text": "The API speaks JSON only; XML was dropped."},
            {"projectId": PROJECT, "groupId": "global", "text": "Webhooks retry with exponential backoff, five times at most."},
            {"projectId": PROJECT, "groupId": "feature-search", "text": "Search blends BM25 with vector similarity.", "tags": ["search"]},
        ]}),
        # reads
        ("search", "memory.search", {"projectId": PROJECT, "query": "how are webhooks retried"}),
        ("search keyword", "memory.search", {"projectId": PROJECT, "query": "BM25", "mode": "keyword", "topK": 3}),
        ("search semantic tags", "memory.search", {"projectId": PROJECT, "query": "retry", "mode": "semantic", "tags": ["api"]}),
        ("search window", "memory.search", {"projectId": PROJECT, "query": "invoices", "since": "2024-01-01T00:00:00Z", "until": "2024-02-01T00:00:00Z"}),
        ("get", "memory.get", lambda s: {"id": s["note1"]}),
        ("list_recent", "memory.list_recent", {"projectId": PROJECT, "limit": 10}),
        ("list_recent group", "memory.list_recent", {"projectId": PROJECT, "groupId": "global"}),
        ("context", "memory.context", {"projectId": PROJECT}),
        ("context query", "memory.context", {"projectId": PROJECT, "query": "webhooks", "limit": 2}),
        # updates and links
        ("update", "memory.update", lambda s: {"id": s["note1"], "patch": {"title": "Webhook retry policy", "tags": ["decision"]}}),
        ("update supersedes", "memory.update", lambda s: {"id": s["note3"], "patch": {"supersedes": [s["note2"]]}}),
        ("search superseded", "memory.search", {"projectId": PROJECT, "query": "invoices", "includeSuperseded": True}),
        ("link", "memory.link", lambda s: {"fromId": s["note1"], "toId": s["note3"], "relation": "relates_to"}),
        ("related", "memory.related", lambda s: {"id": s["note1"]}),
        ("related relation", "memory.related", lambda s: {"id": s["note3"], "relation": "supersedes"}),
        ("unlink", "memory.unlink", lambda s: {"fromId": s["note1"], "toId": s["note3"], "relation": "relates_to"}),
        # settings and globals
        ("upsert_global", "memory.upsert_global", {"projectId": PROJECT, "key": "global.project.conventions", "value": {"style": "short"}}),
        ("get_global", "memory.get_global", {"projectId": PROJECT, "key": "global.project.conventions"}),
        ("get_global missing", "memory.get_global", {"projectId": PROJECT, "key": "global.nothing"}),
        ("get_config", "memory.get_config", {}),
        ("stats", "memory.stats", {"projectId": PROJECT}),
        ("stats all", "memory.stats", {}),
        # MCP over the same notes
        ("tools/call search", "tools/call", {"name": "memory_search", "arguments": {"projectId": PROJECT, "query": "webhooks"}}),
        ("tools/call get", "tools/call", lambda s: {"name": "memory_get", "arguments": {"id": s["note1"]}}),
        ("tools/call bad", "tools/call", {"name": "memory_search", "arguments": {"projectId": PROJECT}}),
        ("tools/call unknown", "tools/call", {"name": "memory_nope", "arguments": {}}),
        ("tools/call not found", "tools/call", {"name": "memory_get", "arguments": {"id": UNKNOWN}}),
        ("resources/list", "resources/list", {}),
        ("resources/read", "resources/read", lambda s: {"uri": f"memory://notes/{s['note1']}"}),
        ("resources/read bad", "resources/read", {"uri": "memory://nothing"}),
        ("prompts/get", "prompts/get", {"name": "recall", "arguments": {"project": PROJECT, "query": "webhooks"}}),
        ("prompts/get no project", "prompts/get", {"name": "recall", "arguments": {"query": "webhooks"}}),
        ("prompts/get unknown", "prompts/get", {"name": "nope"}),
        # error paths
        ("unknown method", "memory.nope", {}),
        ("positional params", "memory.get", ["x"]),
        ("no params", "memory.search", None),
        ("missing projectId", "memory.search", {"query": "q"}),
        ("missing text", "memory.add_note", {"projectId": PROJECT, "groupId": "g"}),
        ("text wrong type", "memory.add_note", {**ADD, "text": 5}),
        ("blank text", "memory.add_note", {**ADD, "text": "  "}),
        ("unknown field", "memory.add_note", {**ADD, "colour": "red"}),
        ("bad groupId", "memory.add_note", {**ADD, "groupId": "a b"}),
        ("tags not strings", "memory.add_note", {**ADD, "tags": [1]}),
        ("metadata not object", "memory.add_note", {**ADD, "metadata": [1]}),
        ("bad createdAt", "memory.add_note", {**ADD, "createdAt": "yesterday"}),
        ("naive createdAt", "memory.add_note", {**ADD, "createdAt": "2024-01-15T10:30:00"}),
        ("past expiresAt", "memory.add_note", {**ADD, "expiresAt": "2000-01-01T00:00:00Z"}),
        ("importance range", "memory.add_note", {**ADD, "importance": 2}),
        ("supersedes unknown", "memory.add_note", {**ADD, "text": "x", "supersedes": [UNKNOWN]}),
        ("add_notes empty", "memory.add_notes", {"notes": []}),
        ("add_notes bad item", "memory.add_notes", {"notes": [ADD, {**ADD, "groupId": ""}]}),
        ("topK zero", "memory.search", {"projectId": PROJECT, "query": "q", "topK": 0}),
        ("topK too big", "memory.search", {"projectId": PROJECT, "query": "q", "topK": 1000}),
        ("bad mode", "memory.search", {"projectId": PROJECT, "query": "q", "mode": "fuzzy"}),
        ("since after until", "memory.search", {"projectId": PROJECT, "query": "q", "since": "2025-01-01T00:00:00Z", "until": "2024-01-01T00:00:00Z"}),
        ("limit too big", "memory.list_recent", {"projectId": PROJECT, "limit": 100000}),
        ("context limit", "memory.context", {"projectId": PROJECT, "limit": -1}),
        ("upsert key prefix", "memory.upsert_global", {"projectId": PROJECT, "key": "memory.x", "value": 1}),
        ("get_global key prefix", "memory.get_global", {"projectId": PROJECT, "key": "x"}),
        ("get unknown", "memory.get", {"id": UNKNOWN}),
        ("get not a uuid", "memory.get", {"id": "nope"}),
        ("update unknown", "memory.update", {"id": UNKNOWN, "patch": {"title": "x"}}),
        ("update empty patch", "memory.update", {"id": UNKNOWN, "patch": {}}),
        ("link unknown", "memory.link", lambda s: {"fromId": s["note1"], "toId": UNKNOWN, "relation": "relates_to"}),
        ("link self", "memory.link", lambda s: {"fromId": s["note1"], "toId": s["note1"], "relation": "relates_to"}),
        ("link bad relation", "memory.link", lambda s: {"fromId": s["note1"], "toId": s["note3"], "relation": "Bad Relation"}),
        ("related unknown", "memory.related", {"id": UNKNOWN}),
        ("set_config bad provider", "memory.set_config", {"embedder": {"provider": "cohere"}}),
        ("set_config unknown field", "memory.set_config", {"embedder": {"colour": "red"}}),
        ("reembed bad batch", "memory.reembed", {"batchSize": 0}),
        ("drop_namespace bad", "memory.drop_namespace", {"namespace": ""}),
        ("drop_namespace unknown", "memory.drop_namespace", {"namespace": "ollama:nothing:768"}),
        ("project control chars", "memory.search", {"projectId": "a\u0001b", "query": "q"}),
        # maintenance, then deletes
        ("reembed", "memory.reembed", {"batchSize": 2}),
        ("delete", "memory.delete", lambda s: {"id": s["note4"]}),
        ("delete again", "memory.delete", lambda s: {"id": s["note4"]}),
        ("get deleted", "memory.get", lambda s: {"id": s["note4"]}),
        ("stats after", "memory.stats", {"projectId": PROJECT}),
    ]


def run(call: Callable[[str, Any], Any]) -> list[dict[str, Any]]:
    """Send every step through ``call(method, params) -> reply``; the first notes added are
    named note1, note2, ... for the steps that refer to them."""
    state: dict[str, str] = {}
    answers = []
    for label, method, params in steps():
        if callable(params):
            params = params(state)
        reply = call(method, params)
        body = reply.get("body", reply) if isinstance(reply, dict) else None
        result = body.get("result") if isinstance(body, dict) else None
        if isinstance(result, dict):
            for new in [result.get("id")] if method == "memory.add_note" else result.get("ids", []) if method == "memory.add_notes" else []:
                if isinstance(new, str) and new not in state.values():
                    state[f"note{len(state) + 1}"] = new
        answers.append({"step": label, "reply": reply})
    return answers


UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
INSTANT = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})")
DECIMALS = re.compile(r"(\d\.\d{6})\d+")
SERVER_VERSION = re.compile(r'("serverInfo": \{"name": "mcp-memory", "version": )"[^"]*"')
DISK_BYTES = re.compile(r'"diskBytes": \d+')
FIXED = {UNKNOWN, "2024-01-15T10:30:00Z"}  # a read moves an expiry out (fading), when it is written varies


def normalize(lines: list[str], home: Path) -> list[str]:
    names: dict[str, str] = {}

    def name(match: re.Match[str]) -> str:
        found = match.group(0)
        if found == UNKNOWN:
            return found
        return names.setdefault(found, f"<id-{len(names) + 1}>")

    def instant(match: re.Match[str]) -> str:
        found = match.group(0)
        return found if found in FIXED or found.startswith(("2024-", "2025-01-01", "2000-")) else "<time>"

    out = []
    for line in lines:
        line = line.replace(str(home), "<home>").replace(quote(str(home), safe=""), "<home>")
        line = DISK_BYTES.sub(r'"diskBytes": "<bytes>"', line)  # timestamps' lengths vary: so does the size
        line = SERVER_VERSION.sub(r'\1"<version>"', line)
        out.append(DECIMALS.sub(r"\1", INSTANT.sub(instant, UUID.sub(name, line))))
    return out


SAME_ON_EVERY_CPU = {"MCP_MEMORY_LOCAL_PRODUCTS": "float"}


def over_stdio(home: Path) -> list[dict[str, Any]]:
    with StdioServer(home, cwd=home, env=SAME_ON_EVERY_CPU) as server:
        return run(lambda method, params: server.send_line(_request(method, params)))


def over_http(home: Path) -> list[dict[str, Any]]:
    import httpx

    with HttpServer(home, env=SAME_ON_EVERY_CPU) as server, httpx.Client(base_url=server.base_url, timeout=60) as client:
        def call(method: str, params: Any) -> Any:
            path = "/rpc" if method.startswith("memory.") else "/mcp"
            headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
            response = client.post(path, content=_request(method, params), headers=headers)
            return {"status": response.status_code, "body": response.json() if response.content else None}

        return run(call)


def _request(method: str, params: Any) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


def replay(base: Path) -> list[str]:
    """The normalized answers, one JSON text per request: stdio's, then HTTP's; each server
    gets a fresh home under ``base``."""
    lines = []
    for transport, serve in (("stdio", over_stdio), ("http", over_http)):
        home = Path(tempfile.mkdtemp(prefix="replay-", dir=base))
        answers = serve(home)
        text = [json.dumps({"transport": transport, **a}, sort_keys=True, ensure_ascii=False) for a in answers]
        lines += normalize(text, home)
    return lines


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    lines = replay(Path(tempfile.mkdtemp(prefix="replay-")))
    Path(argv[0]).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(lines)} answers written to {argv[0]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
