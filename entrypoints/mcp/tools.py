"""The ``memory.*`` methods as MCP tools: ``tools/list`` and ``tools/call``.

One tool per entry of ``entrypoints.methods.METHODS``, named after it with ``_`` for
``.`` (``memory.add_note`` -> ``memory_add_note``), with the title, description and hints
its method declares, the common fields described by ``texts``, and input and output
schemas generated from the method's msgspec Structs, compacted (built on the first
``tools/list``, then kept).

A client reads the whole listing into every session, so by default the server offers
``DEFAULT_TOOLS``, what an agent needs while it works (at most ten tools and 15 KB of
listing JSON, a test keeps it so); the other methods (settings, embedder changes,
maintenance) stay JSON-RPC methods and commands, and ``serve --tools all`` lists every one.
A tool not listed is unknown to ``tools/call`` too.

``tools/call`` failure modes:

* malformed call params (no ``name``, ``arguments`` not an object) and an unknown tool
  name: a JSON-RPC error -32602, as the MCP specification asks;
* everything the method itself fails with (bad arguments, note not found, embedder or
  store errors): a result with ``isError: true`` and a text block the model can act on,
  naming the field and the rule. Errors are mapped by ``entrypoints.rpc.errors.to_rpc_error``,
  which logs unexpected ones and answers them with a fixed message.

A successful result carries the result as ``structuredContent`` (valid against
``outputSchema``) and the same JSON in a text block, together within the bounds of
``bounds.TextBounds``: long texts cut, and what is still too much left out, as the
``truncated`` member every ``outputSchema`` declares says. An error's text is bounded
too. Arguments may leave out ``projectId``; the server's own project is filled in
wherever the input schema has that field.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs
import msgspec

from local_mcp_memory.entrypoints.rpc.errors import INVALID_PARAMS, NOT_FOUND, RpcError, cut, to_rpc_error
from local_mcp_memory.entrypoints.mcp import schemas, texts
from local_mcp_memory.entrypoints.mcp.bounds import TextBounds
from local_mcp_memory.entrypoints.mcp.fit import Shape, with_truncated

if TYPE_CHECKING:  # imported on the first listing or call, not at start-up
    from local_mcp_memory.application.services import Services
    from local_mcp_memory.entrypoints.methods.method import Method

NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

DEFAULT_TOOLS = frozenset({
    "memory_search", "memory_add_note", "memory_get", "memory_update", "memory_delete",
    "memory_list_recent", "memory_related", "memory_link",
})  # fmt: skip
"""The tools listed without ``--tools all``."""

_encode = msgspec.json.Encoder().encode

_HINTS = {
    INVALID_PARAMS: "Correct that argument and call the tool again.",
    NOT_FOUND: "Check the id: memory_search and memory_list_recent return the ids of existing notes.",
}


class CallParams(msgspec.Struct, frozen=True, kw_only=True):
    """``tools/call`` params; other members (``_meta``) are ignored."""

    name: str
    arguments: dict[str, Any] | None = None


def tool_name(method_name: str) -> str:
    name = method_name.replace(".", "_")
    if not NAME_PATTERN.match(name):
        raise ValueError(f"tool name {name!r} (from {method_name}) must match {NAME_PATTERN.pattern}")
    return name


@attrs.frozen
class Tool:
    name: str
    method: Method
    input_schema: schemas.Schema
    output_schema: schemas.Schema
    shape: Shape

    @classmethod
    def of(cls, method: Method) -> Tool:
        result = schemas.self_contained(method.result)
        return cls(
            name=tool_name(method.name),
            method=method,
            input_schema=schemas.compact(schemas.self_contained(method.params)),
            output_schema=with_truncated(schemas.compact(result)),
            shape=Shape.of(result, method.left_out or texts.LEFT_OUT_ELSEWHERE),
        )

    def listing(self) -> dict[str, Any]:
        title = self.method.title
        return {
            "name": self.name,
            "title": title,
            "description": self.method.description,
            "inputSchema": schemas.describe_fields(schemas.with_optional_project(self.input_schema), texts.FIELDS),
            "outputSchema": schemas.describe_fields(self.output_schema, texts.RESULT_FIELDS),
            "annotations": {
                "readOnlyHint": self.method.read_only,
                "destructiveHint": self.method.destructive and not self.method.read_only,
                "idempotentHint": self.method.idempotent,
                "openWorldHint": False,
            },
        }


class ToolSet:
    """The tools of the method table ``methods()`` returns (called on the first listing or
    call) named in ``names`` (None: all of them), run against ``services``, for ``project``
    when a call leaves projectId out."""

    def __init__(
        self,
        methods: Callable[[], Mapping[str, Method]],
        services: Callable[[], Services],
        project: str,
        bounds: TextBounds,
        names: frozenset[str] | None = DEFAULT_TOOLS,
    ) -> None:
        self._methods = methods
        self._names = names
        self._services = services
        self._project = project
        self._bounds = bounds
        self._tools: dict[str, Tool] | None = None
        self._listing: dict[str, Any] | None = None

    def tools(self) -> dict[str, Tool]:
        if self._tools is None:
            chosen = (m for m in self._methods().values() if self._names is None or tool_name(m.name) in self._names)
            built = (Tool.of(m) for m in chosen)
            self._tools = {t.name: t for t in built}
        return self._tools

    def list_tools(self, params: Any) -> dict[str, Any]:
        if self._listing is None:
            self._listing = {"tools": [t.listing() for t in self.tools().values()]}
        return self._listing

    def call_tool(self, params: Any) -> dict[str, Any]:
        request = msgspec.convert({} if params is None else params, CallParams)
        tool = self.tools().get(request.name)
        if tool is None:
            known = ", ".join(self.tools())
            raise RpcError(
                INVALID_PARAMS,
                f"Unknown tool: {cut(request.name)}",
                {"field": "name", "rule": f"must be one of {known}"},
            )
        try:
            arguments = schemas.fill_project(request.arguments or {}, tool.input_schema, self._project)
            view = tool.method.run(msgspec.convert(arguments, tool.method.params), self._services())
        except Exception as exc:  # the boundary: every failure of the tool is told to the model
            return error_result(to_rpc_error(exc, tool.method.name, request.arguments), self._bounds)
        structured = self._bounds.apply(msgspec.to_builtins(view), tool.shape)
        return {
            "content": [{"type": "text", "text": _encode(structured).decode()}],
            "structuredContent": structured,
            "isError": False,
        }


def error_result(error: RpcError, bounds: TextBounds) -> dict[str, Any]:
    lines = [error.message]
    if error.data is not None:
        lines.append(f"details: {_encode(error.data).decode()}")
    if error.code in _HINTS:
        lines.append(_HINTS[error.code])
    return {"content": [{"type": "text", "text": bounds.message("\n".join(lines))}], "isError": True}
