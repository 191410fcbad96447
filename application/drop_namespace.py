from __future__ import annotations

import attrs

from local_mcp_memory.application.errors import InvalidRequest, NamespaceStillHome
from local_mcp_memory.application.services import Services
from local_mcp_memory.domain.identifiers import Namespace


@attrs.frozen
class DropNamespace:
    namespace: Namespace


def drop_namespace(command: DropNamespace, services: Services) -> int:
    """Remove an older namespace's vectors once no note calls it home; the count removed.
    Dropping a namespace that holds nothing removes nothing and is not an error."""
    namespace = command.namespace
    if namespace == services.embedding.known_namespace():
        raise InvalidRequest("namespace", "is the current namespace; only older namespaces can be dropped", str(namespace))
    homes = sum(1 for stored in services.maintenance.iter_notes() if stored.namespace == namespace)
    if homes:
        raise NamespaceStillHome(str(namespace), homes)
    return services.maintenance.drop_namespace(namespace)
