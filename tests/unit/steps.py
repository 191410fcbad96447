"""Steps the unit tests share: writing a note, switching the embedder, calling a method."""

from __future__ import annotations

import json

from local_mcp_memory.application.add_note import AddNote, add_note
from local_mcp_memory.application.services import Services
from local_mcp_memory.application.set_config import SetConfig, SetEmbedder, set_config
from local_mcp_memory.domain.identifiers import GroupId, Namespace, NoteId
from local_mcp_memory.entrypoints.server import build_dispatcher

LOCAL = Namespace("local", "all-MiniLM-L6-v2", 64)
OLLAMA = Namespace("ollama", "nomic-embed-text", 64)


def add(services: Services, text: str, group: str = "feature-1", project: str = "proj", **fields: object) -> NoteId:
    return add_note(AddNote(project_id=project, group_id=GroupId(group), text=text, **fields), services).id


def switch_to_ollama(services: Services) -> Namespace:
    return set_config(SetConfig(SetEmbedder(provider="ollama")), services)


def homes(services: Services) -> dict[str, str]:
    return {s.note.id.value: str(s.namespace) for s in services.store.iter_notes()}


def rpc(services: Services, method: str, params: dict[str, object]) -> dict[str, object]:
    reply = build_dispatcher(lambda: services).handle(
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    )
    assert reply is not None
    return json.loads(reply)
