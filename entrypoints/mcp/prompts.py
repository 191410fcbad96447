"""The ``recall`` prompt: ``prompts/list`` and ``prompts/get``.

``recall`` hands the agent what memory holds for a project as one user message of text:
a line saying what follows, then the project's session context (``memory.context``'s
``text``: global settings, recent notes, and with ``query`` the notes most relevant to
it). Arguments, strings as MCP has them:

    project   required   a projectId (an opaque id or a path), canonicalized as everywhere
    query     optional   what the session is about; adds the most relevant notes

Failure modes of ``prompts/get`` (JSON-RPC errors, as the MCP specification asks):

* an unknown prompt name: -32602, ``data.field`` ``name``;
* a missing or empty required argument, an unknown argument or one that is not a string:
  -32602, ``data.field`` ``arguments.<name>``; a refused projectId likewise at
  ``arguments.project``;
* failures of the use case as the error table maps them (embedder not configured or
  unreachable for a query, store unavailable, internal error).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs
import msgspec

from local_mcp_memory.entrypoints.rpc.errors import INVALID_PARAMS, RpcError, to_rpc_error
from local_mcp_memory.entrypoints.mcp.resources import one_page

if TYPE_CHECKING:  # imported on the first prompts/get, not at start-up
    from local_mcp_memory.application.services import Services

RECALL = "recall"

ARGUMENTS = {
    "project": {
        "name": "project",
        "title": "Project",
        "description": "The projectId: an absolute path, a ~ path or an opaque id (e.g. the repository's path).",
        "required": True,
    },
    "query": {
        "name": "query",
        "title": "Topic",
        "description": "Optional: what this session is about, to add the notes most relevant to it.",
        "required": False,
    },
}

LISTING = {
    "prompts": [
        {
            "name": RECALL,
            "title": "Recall project memory",
            "description": (
                "What mcp-memory holds for a project: its global settings and most recent notes, and "
                "with a query the notes most relevant to it, as text to start a session with."
            ),
            "arguments": list(ARGUMENTS.values()),
        }
    ]
}

_WIRE_FIELDS = {"project_id": "arguments.project", "projectId": "arguments.project", "query": "arguments.query"}


class GetParams(msgspec.Struct, frozen=True):
    """``prompts/get`` params; other members (``_meta``) are ignored."""

    name: str
    arguments: dict[str, Any] | None = None


@attrs.frozen
class RecallArguments:
    project: str
    query: str | None


def invalid(field: str, rule: str) -> RpcError:
    return RpcError(INVALID_PARAMS, f"Invalid params: {field} {rule}", {"field": field, "rule": rule})


def recall_arguments(arguments: dict[str, Any]) -> RecallArguments:
    for name, value in arguments.items():
        if name not in ARGUMENTS:
            raise invalid(f"arguments.{name}", f"is not an argument of {RECALL} (its arguments: {', '.join(ARGUMENTS)})")
        if not isinstance(value, str):
            raise invalid(f"arguments.{name}", "must be a string")
    project = arguments.get("project")
    if not project:
        raise invalid("arguments.project", "is required: the projectId whose memory to recall")
    return RecallArguments(project=project, query=arguments.get("query") or None)


class PromptSet:
    """The prompts, run against ``services``."""

    def __init__(self, services: Callable[[], Services]) -> None:
        self._services = services

    def list_prompts(self, params: Any) -> dict[str, Any]:
        one_page(params)
        return LISTING

    def get_prompt(self, params: Any) -> dict[str, Any]:
        request = msgspec.convert({} if params is None else params, GetParams)
        if request.name != RECALL:
            raise invalid("name", f"must name a prompt of prompts/list: {RECALL}")
        arguments = recall_arguments(request.arguments or {})
        try:
            return self._recall(arguments)
        except Exception as exc:  # the boundary: fields named as the prompt's arguments
            error = to_rpc_error(exc, "prompts/get")
            if error.code == INVALID_PARAMS and isinstance(error.data, dict):
                field = _WIRE_FIELDS.get(error.data.get("field"), error.data.get("field"))
                rule = error.data.get("rule")
                raise RpcError(INVALID_PARAMS, f"Invalid params: {field} {rule}", {"field": field, "rule": rule}) from None
            raise error from None

    def _recall(self, arguments: RecallArguments) -> dict[str, Any]:
        from local_mcp_memory.application.context import GetContext, get_context

        services = self._services()
        project = str(services.project(arguments.project))
        context = get_context(GetContext(project_id=project, query=arguments.query), services)
        about = f" Then the notes most relevant to “{arguments.query}” that are not among the recent ones, if any." if arguments.query else ""
        text = (
            f"Here is what mcp-memory remembers of project {project}: its global settings and recent notes."
            f"{about} Use it as background for this session; the memory tools search for more "
            f"(memory_search) and read a whole note by id (memory_get).\n\n{context.text}"
        )
        return {
            "description": f"Memory of project {project}",
            "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
        }
