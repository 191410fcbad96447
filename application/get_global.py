from __future__ import annotations

import attrs

from local_mcp_memory.application.services import Services
from local_mcp_memory.domain.identifiers import GlobalKey
from local_mcp_memory.domain.note import GlobalEntry


@attrs.frozen
class GetGlobal:
    project_id: str
    key: GlobalKey


def get_global(command: GetGlobal, services: Services) -> GlobalEntry | None:
    return services.reader.get_global(services.project(command.project_id), command.key)
