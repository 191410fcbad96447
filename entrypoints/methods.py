"""The ``memory.*`` methods: name, wire types and use case of each, in one table.

The JSON-RPC dispatcher serves this table as methods; the MCP layer serves it as tools.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from application.add_note import add_note
from application.add_notes import add_notes
from application.delete_note import delete_note
from application.drop_namespace import drop_namespace
from application.get_config import get_config
from application.get_global import get_global
from application.get_note import get_note
from application.list_recent import list_recent
from application.reembed import reembed
from application.search import search
from application.services import Services
from application.set_config import set_config
from application.stats import get_stats
from application.update_note import update_note
from application.upsert_global import upsert_global
from entrypoints import wire


@attrs.frozen
class Method:
    """One memory method. ``run`` takes decoded params and returns a result view.

    The hints describe the method for MCP clients: ``read_only`` (changes nothing),
    ``destructive`` (may remove or overwrite data), ``idempotent`` (repeating it with the
    same arguments has no further effect).
    """

    name: str
    params: type[wire.Params]
    result: type[wire.View]
    run: Callable[[Any, Services], wire.View]
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False


def _update(params: wire.UpdateParams, services: Services) -> wire.OkResult:
    update_note(params.command(), services)
    return wire.OkResult(ok=True)


def _delete(params: wire.DeleteParams, services: Services) -> wire.OkResult:
    delete_note(params.command(), services)
    return wire.OkResult(ok=True)


def _drop_namespace(params: wire.DropNamespaceParams, services: Services) -> wire.DropNamespaceResult:
    command = params.command()
    dropped = drop_namespace(command, services)
    return wire.DropNamespaceResult(ok=True, namespace=str(command.namespace), dropped=dropped)


def _set_config(params: wire.SetConfigParams, services: Services) -> wire.SetConfigResult:
    namespace = set_config(params.command(), services)
    return wire.SetConfigResult(ok=True, effective_namespace=str(namespace))


METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method(
            "memory.add_note",
            wire.AddNoteParams,
            wire.AddNoteResult,
            lambda p, s: wire.added_view(add_note(p.command(), s)),
        ),
        Method(
            "memory.add_notes",
            wire.AddNotesParams,
            wire.AddNotesResult,
            lambda p, s: wire.added_many_view(add_notes(p.command(), s)),
        ),
        Method(
            "memory.search",
            wire.SearchParams,
            wire.SearchResult,
            lambda p, s: wire.search_view(search(p.command(), s)),
            read_only=True,
            idempotent=True,
        ),
        Method(
            "memory.get",
            wire.GetParams,
            wire.StoredNoteView,
            lambda p, s: wire.stored_view(get_note(p.command(), s)),
            read_only=True,
            idempotent=True,
        ),
        Method(
            "memory.update",
            wire.UpdateParams,
            wire.OkResult,
            _update,
            destructive=True,
            idempotent=True,
        ),
        Method(
            "memory.list_recent",
            wire.ListRecentParams,
            wire.ListRecentResult,
            lambda p, s: wire.recent_view(list_recent(p.command(), s)),
            read_only=True,
            idempotent=True,
        ),
        Method(
            "memory.get_config",
            wire.NoParams,
            wire.ConfigResult,
            lambda p, s: wire.config_view(get_config(s)),
            read_only=True,
            idempotent=True,
        ),
        Method(
            "memory.set_config",
            wire.SetConfigParams,
            wire.SetConfigResult,
            _set_config,
            destructive=True,
            idempotent=True,
        ),
        Method(
            "memory.upsert_global",
            wire.UpsertGlobalParams,
            wire.UpsertGlobalResult,
            lambda p, s: wire.upserted_view(upsert_global(p.command(), s)),
            destructive=True,
            idempotent=True,
        ),
        Method(
            "memory.get_global",
            wire.GetGlobalParams,
            wire.GetGlobalResult,
            lambda p, s: wire.global_view(get_global(p.command(), s)),
            read_only=True,
            idempotent=True,
        ),
        # A second delete of an id answers -32004 (not found) and changes nothing further,
        # so the call is idempotent in MCP's sense: repeating it has no additional effect.
        Method(
            "memory.delete",
            wire.DeleteParams,
            wire.OkResult,
            _delete,
            destructive=True,
            idempotent=True,
        ),
        Method(
            "memory.stats",
            wire.StatsParams,
            wire.StatsResult,
            lambda p, s: wire.stats_view(get_stats(p.command(), s)),
            read_only=True,
            idempotent=True,
        ),
        # Bounded: at most ``limit`` notes per call (default Reembed.CALL_LIMIT); call again
        # until ``remaining`` is 0.
        Method(
            "memory.reembed",
            wire.ReembedParams,
            wire.ReembedResult,
            lambda p, s: wire.reembedded_view(reembed(p.command(), s)),
        ),
        Method(
            "memory.drop_namespace",
            wire.DropNamespaceParams,
            wire.DropNamespaceResult,
            _drop_namespace,
            destructive=True,
            idempotent=True,
        ),
    )
}
