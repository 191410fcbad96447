"""One MCP session against mcp-memory with the official MCP Python SDK, 1.x or 2.x.

    python sdk_session.py stdio '<json: {"command": ..., "args": [...], "env": {...}}>'
    python sdk_session.py http http://127.0.0.1:PORT/mcp

Runs under whichever interpreter has the SDK (the project's venv: ``mcp`` 2.x; the
``MCP_SDK1_PYTHON`` venv: ``mcp<2``), so it imports nothing of the project. It connects
the way the SDK does by default, lists the tools, calls every listed tool once with good
arguments (``PLAN``; a listed tool missing from it is recorded as an ``sdkError``), reads
the deleted note, calls one tool with bad arguments and an unknown name, lists the
resources and their templates, reads the note and the session context as resources (and
one unknown URI), gets the recall prompt (and an unknown one, and one without its required
argument), and prints a JSON transcript on stdout for the tests to judge. The SDK itself checks each structuredContent against the
tool's outputSchema; a failed check shows up as ``sdkError`` in the transcript.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from contextlib import asynccontextmanager
from importlib.metadata import version
from typing import Any

import anyio

SDK_MAJOR = int(version("mcp").split(".")[0])


def _dump(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def _error_code(exc: BaseException) -> int | None:
    code = getattr(exc, "code", None)
    if code is None:
        code = getattr(getattr(exc, "error", None), "code", None)
    return code


@asynccontextmanager
async def connect(transport: str, target: str):
    """Yields (session-like object with list_tools/call_tool/send_ping, initialize info)."""
    if SDK_MAJOR >= 2:
        from mcp import Client
        from mcp.client.stdio import StdioServerParameters

        server = StdioServerParameters(**json.loads(target)) if transport == "stdio" else target
        async with Client(server) as client:
            info = {
                "protocolVersion": client.protocol_version,
                "serverInfo": _dump(client.server_info) if client.server_info else None,
                "instructions": client.instructions,
                "capabilities": _dump(client.server_capabilities),
            }
            yield client, info
        return
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp.client.streamable_http import streamablehttp_client

    if transport == "stdio":
        opened = stdio_client(StdioServerParameters(**json.loads(target)))
    else:
        opened = streamablehttp_client(target)
    async with opened as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            result = await session.initialize()
            yield session, _dump(result)


async def call(session: Any, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    try:
        result = await session.call_tool(name, arguments)
    except Exception as exc:  # the transcript records what the SDK made of it
        return {"sdkError": f"{type(exc).__name__}: {exc}", "code": _error_code(exc)}
    dumped = _dump(result)
    return {
        "isError": bool(dumped.get("isError")),
        "structuredContent": dumped.get("structuredContent"),
        "text": [block.get("text") for block in dumped.get("content", [])],
    }


async def attempt(action: Callable[[], Any]) -> dict[str, Any]:
    """What the SDK made of one request: ``{"result": ...}`` or the error it raised."""
    try:
        return {"result": _dump(await action())}
    except Exception as exc:  # the transcript records it
        return {"sdkError": f"{type(exc).__name__}: {exc}", "code": _error_code(exc)}


def read_resource(session: Any, uri: str) -> Callable[[], Any]:
    if SDK_MAJOR >= 2:
        return lambda: session.read_resource(uri)
    from pydantic import AnyUrl

    return lambda: session.read_resource(AnyUrl(uri))


async def resources_and_prompts(session: Any, calls: dict[str, Any]) -> dict[str, Any]:
    """Resources and the prompt, once the tool calls have stored a note and a setting."""
    note = calls["memory_get"].get("structuredContent") or {}
    listed = await attempt(session.list_resources)
    uris = [r["uri"] for r in listed.get("result", {}).get("resources", [])]
    context_uri = uris[0] if uris else "memory://context/missing"
    missing = "memory://notes/00000000-0000-4000-8000-000000000000"
    return {
        "listed": listed,
        "templates": await attempt(session.list_resource_templates),
        "readNote": await attempt(read_resource(session, f"memory://notes/{note.get('id', 'missing')}")),
        "readContext": await attempt(read_resource(session, context_uri)),
        "readMissing": await attempt(read_resource(session, missing)),
        "prompts": await attempt(session.list_prompts),
        "recall": await attempt(lambda: session.get_prompt("recall", {"project": note.get("projectId", ""), "query": "linter"})),
        "unknownPrompt": await attempt(lambda: session.get_prompt("remember", {"project": "x"})),
        "recallWithoutProject": await attempt(lambda: session.get_prompt("recall", {})),
    }


def _note_id(calls: dict[str, Any]) -> str:
    return (calls["memory_add_note"].get("structuredContent") or {}).get("id", "missing")


def _batch_id(calls: dict[str, Any], index: int) -> str:
    ids = (calls["memory_add_notes"].get("structuredContent") or {}).get("ids", [])
    return ids[index] if len(ids) > index else "missing"


# Every tool, in an order that gives each one something to work on: (name, arguments
# from the calls made so far). The server keeps the local model, so reembed finds
# nothing to do and drop_namespace drops a namespace that holds nothing.
PLAN: list[tuple[str, Callable[[dict[str, Any]], dict[str, Any]]]] = [
    ("memory_get_config", lambda calls: {}),
    ("memory_set_config", lambda calls: {"embedder": {"provider": "local"}}),
    (
        "memory_add_note",
        lambda calls: {"groupId": "feature-1", "title": "Linting", "text": "We lint with ruff.", "tags": ["tooling"]},
    ),
    (
        "memory_add_notes",
        lambda calls: {
            "notes": [
                {"groupId": "task-7", "text": "The flaky test was a race in the cache warm-up.", "tags": ["bug"]},
                {"groupId": "task-7", "text": "A note to delete.", "metadata": {"draft": True}},
            ]
        },
    ),
    ("memory_search", lambda calls: {"query": "which linter do we use?", "groupId": "feature-1"}),
    ("memory_get", lambda calls: {"id": _note_id(calls)}),
    ("memory_update", lambda calls: {"id": _note_id(calls), "patch": {"tags": ["tooling", "ci"]}}),
    ("memory_list_recent", lambda calls: {"limit": 5, "groupId": "feature-1"}),
    ("memory_upsert_global", lambda calls: {"key": "global.project.conventions", "value": "Small commits, tests first."}),
    ("memory_get_global", lambda calls: {"key": "global.project.conventions"}),
    ("memory_context", lambda calls: {"query": "which linter do we use?"}),
    ("memory_link", lambda calls: {"fromId": _batch_id(calls, 0), "toId": _note_id(calls), "relation": "relates_to"}),
    ("memory_related", lambda calls: {"id": _note_id(calls)}),
    ("memory_unlink", lambda calls: {"fromId": _batch_id(calls, 0), "toId": _note_id(calls), "relation": "relates_to"}),
    ("memory_delete", lambda calls: {"id": _batch_id(calls, 1)}),
    ("memory_stats", lambda calls: {}),
    ("memory_reembed", lambda calls: {}),
    ("memory_drop_namespace", lambda calls: {"namespace": "ollama:nomic-embed-text:768"}),
]


async def session_transcript(transport: str, target: str) -> dict[str, Any]:
    transcript: dict[str, Any] = {"sdk": version("mcp"), "calls": {}}
    async with connect(transport, target) as (session, info):
        transcript["initialize"] = info
        await session.send_ping()
        transcript["ping"] = True
        listed = await session.list_tools()
        transcript["tools"] = [_dump(tool) for tool in listed.tools]
        transcript["resources"] = _dump(await session.list_resources())
        transcript["prompts"] = _dump(await session.list_prompts())
        calls = transcript["calls"]
        listed_names = {t["name"] for t in transcript["tools"]}
        for name, arguments in PLAN:
            if name in listed_names:  # a tool of the plan not listed is caught by the tests' comparison
                calls[name] = await call(session, name, arguments(calls))
        for name in sorted({t["name"] for t in transcript["tools"]} - set(calls)):
            calls[name] = {"sdkError": "listed, but sdk_session.py has no arguments for it"}
        transcript["getDeleted"] = await call(session, "memory_get", {"id": _batch_id(calls, 1)})
        transcript["badArguments"] = await call(session, "memory_add_note", {"groupId": "not valid!", "text": "x"})
        transcript["unknownTool"] = await call(session, "memory_nope", {})
        transcript["features"] = await resources_and_prompts(session, calls)
    return transcript


def main() -> int:
    transport, target = sys.argv[1], sys.argv[2]
    transcript = anyio.run(session_transcript, transport, target)
    sys.stdout.write(json.dumps(transcript) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
