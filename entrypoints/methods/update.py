"""``memory.update``: change some fields of a note; only a new text re-embeds it."""

from __future__ import annotations

from typing import Any

from msgspec import UNSET, UnsetType

from local_mcp_memory.application.services import Services, at
from local_mcp_memory.application.update_note import UpdateNote, update_note
from local_mcp_memory.domain.note import NotePatch
from local_mcp_memory.entrypoints.methods import wire
from local_mcp_memory.entrypoints.methods.method import Method


class PatchParams(wire.Params):
    title: str | None | UnsetType = UNSET
    text: str | UnsetType = UNSET
    tags: list[str] | UnsetType = UNSET
    source: str | None | UnsetType = UNSET
    group_id: str | UnsetType = UNSET
    metadata: dict[str, Any] | None | UnsetType = UNSET
    expires_at: str | None | UnsetType = UNSET
    importance: float | UnsetType = UNSET
    supersedes: list[str] | UnsetType = UNSET

    def patch(self) -> NotePatch | None:
        """The fields to change; None when the patch only marks superseded notes."""
        given = {f: getattr(self, f) for f in self.__struct_fields__ if getattr(self, f) is not UNSET}
        if given.pop("supersedes", UNSET) is not UNSET and not given:
            return None
        if "tags" in given:
            given["tags"] = wire.tags(given["tags"], "patch.tags")
        if "group_id" in given:
            given["group_id"] = wire.group(given["group_id"], "patch.group_id")
        if "expires_at" in given:
            given["expires_at"] = wire.instant(given["expires_at"], "patch.expires_at")
        return at("patch", lambda: NotePatch(**given))


class UpdateParams(wire.Params):
    id: str
    patch: PatchParams

    def command(self) -> UpdateNote:
        supersedes = wire.note_ids(None if self.patch.supersedes is UNSET else self.patch.supersedes, "patch.supersedes")
        patch = self.patch.patch()
        if patch is None and not supersedes:
            at("patch", NotePatch)  # refused: a patch must change something
        return UpdateNote(wire.note_id(self.id), patch, supersedes)


def run(params: UpdateParams, services: Services) -> wire.OkResult:
    update_note(params.command(), services)
    return wire.OkResult(ok=True)


METHOD = Method(
    name="memory.update",
    params=UpdateParams,
    result=wire.OkResult,
    run=run,
    title="Change a note",
    description=(
        "Change a note by id: patch holds only the fields to change (title, text, tags, source, groupId, "
        "metadata, expiresAt, importance; null clears one; supersedes: ids of notes it replaces). Prefer it to adding a near-duplicate. A new text is embedded again."
    ),
    destructive=True,
    idempotent=True,
)
