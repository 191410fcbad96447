"""``memory.upsert_global``: create or replace a project's global setting."""

from __future__ import annotations

from typing import Any

from local_mcp_memory.application.services import Services, at
from local_mcp_memory.application.upsert_global import KV_NAMESPACE, UpsertGlobal, upsert_global
from local_mcp_memory.domain.identifiers import GlobalKey
from local_mcp_memory.entrypoints.methods import wire
from local_mcp_memory.entrypoints.methods.texts import PROJECT, STANDARD_KEYS
from local_mcp_memory.entrypoints.methods.method import Method


class UpsertGlobalParams(wire.Params):
    project_id: str
    key: str
    value: Any
    updated_at: str | None = None

    def command(self) -> UpsertGlobal:
        return UpsertGlobal(
            project_id=self.project_id,
            key=at("key", GlobalKey, self.key),
            value=self.value,
            updated_at=wire.instant(self.updated_at, "updated_at"),
        )


class UpsertGlobalResult(wire.View):
    ok: bool
    id: str
    namespace: str


def run(params: UpsertGlobalParams, services: Services) -> UpsertGlobalResult:
    entry = upsert_global(params.command(), services)
    return UpsertGlobalResult(ok=True, id=entry.id, namespace=KV_NAMESPACE)


METHOD = Method(
    name="memory.upsert_global",
    params=UpsertGlobalParams,
    result=UpsertGlobalResult,
    run=run,
    title="Set a global setting",
    description=(
        "Create or replace a project-wide setting in the reserved \"global\" group: key must start with "
        f"\"global.\"; value is any JSON value. {STANDARD_KEYS} Use it when the user states a convention "
        f"or preference that should hold for every future session. {PROJECT}"
    ),
    destructive=True,
    idempotent=True,
)
