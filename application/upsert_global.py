from __future__ import annotations

from datetime import datetime
from typing import Any

import attrs

from local_mcp_memory.application.services import Services
from local_mcp_memory.domain.identifiers import GlobalKey
from local_mcp_memory.domain.note import GlobalEntry, require_within_size

KV_NAMESPACE = "kv"
"""Global settings are not embedded: they live outside every embedder namespace."""


@attrs.frozen
class UpsertGlobal:
    project_id: str
    key: GlobalKey
    value: Any
    updated_at: datetime | None = None


def upsert_global(command: UpsertGlobal, services: Services) -> GlobalEntry:
    require_within_size("GlobalEntry", "value", command.value)
    entry = GlobalEntry(
        project_id=services.project(command.project_id),
        key=command.key,
        value=command.value,
        updated_at=command.updated_at or services.clock.now(),
    )
    services.writer.put_global(entry)
    return entry
