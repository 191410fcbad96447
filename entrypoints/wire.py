"""The wire format of the ``memory.*`` methods: msgspec Structs for every request's params
and every result, and their translation to and from the use cases' commands.

msgspec checks the *shape* of a message (types, required and unknown fields); the value
objects built here check its *meaning*, each reported at the request field it came from.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec
from msgspec import UNSET, Struct, UnsetType

from application.add_note import AddNote, NoteAdded
from application.add_notes import AddNotes, NotesAdded
from application.delete_note import DeleteNote
from application.drop_namespace import DropNamespace
from application.get_config import ConfigView
from application.get_global import GetGlobal
from application.get_note import GetNote
from application.list_recent import ListRecent, RecentNotes
from application.ports import Hit, StoredNote
from application.reembed import Reembed, Reembedded
from application.search import Mode, SearchNotes, SearchResults
from application.services import at
from application.set_config import UNCHANGED, SetConfig, SetEmbedder
from application.stats import GetStats, StoreStats
from application.update_note import UpdateNote
from application.upsert_global import KV_NAMESPACE, UpsertGlobal
from domain.errors import InvalidValue
from domain.identifiers import GlobalKey, GroupId, Namespace, NoteId
from domain.note import GlobalEntry, Note, NotePatch, Tags
from domain.time import TimeWindow, format_instant, parse_instant


class Params(Struct, frozen=True, forbid_unknown_fields=True, kw_only=True, rename="camel"):
    """Base of every request's params: camelCase on the wire, unknown fields refused."""


class View(Struct, frozen=True, kw_only=True, rename="camel"):
    """Base of every result."""


# ---------------------------------------------------------------- shared pieces


def _group(raw: str, field: str = "groupId") -> GroupId:
    return at(field, GroupId, raw)


def _group_or_none(raw: str | None) -> GroupId | None:
    return None if raw is None else _group(raw)


def _tags(raw: list[str] | None, field: str = "tags") -> Tags:
    return at(field, Tags.of, raw)


def _instant(raw: str | None, field: str) -> datetime | None:
    return None if raw is None else at(field, parse_instant, raw)


def _note_id(raw: str) -> NoteId:
    return at("id", NoteId, raw)


class NoteView(View):
    id: str
    project_id: str
    group_id: str
    title: str | None
    text: str
    tags: list[str]
    source: str | None
    created_at: str
    metadata: dict[str, Any] | None


class StoredNoteView(NoteView):
    namespace: str


class HitView(NoteView):
    score: float


def _note_fields(note: Note) -> dict[str, Any]:
    return {
        "id": note.id.value,
        "project_id": note.project_id.value,
        "group_id": note.group_id.value,
        "title": note.title,
        "text": note.text,
        "tags": list(note.tags.values),
        "source": note.source,
        "created_at": format_instant(note.created_at),
        "metadata": note.metadata,
    }


def stored_view(stored: StoredNote) -> StoredNoteView:
    return StoredNoteView(**_note_fields(stored.note), namespace=str(stored.namespace))


def hit_view(hit: Hit) -> HitView:
    return HitView(**_note_fields(hit.stored.note), score=round(hit.score, 6))


# ---------------------------------------------------------------- memory.add_note


class AddNoteParams(Params):
    project_id: str
    group_id: str
    text: str
    title: str | None = None
    tags: list[str] | None = None
    source: str | None = None
    created_at: str | None = None
    metadata: dict[str, Any] | None = None

    def command(self) -> AddNote:
        return AddNote(
            project_id=self.project_id,
            group_id=_group(self.group_id),
            text=self.text,
            title=self.title,
            tags=_tags(self.tags),
            source=self.source,
            created_at=_instant(self.created_at, "createdAt"),
            metadata=self.metadata,
        )


class AddNoteResult(View):
    id: str
    namespace: str


def added_view(added: NoteAdded) -> AddNoteResult:
    return AddNoteResult(id=added.id.value, namespace=str(added.namespace))


# ---------------------------------------------------------------- memory.add_notes


class AddNotesParams(Params):
    """Up to ``AddNotes.MAX_NOTES`` notes, each shaped like ``memory.add_note``'s params."""

    notes: list[AddNoteParams]

    def command(self) -> AddNotes:
        return AddNotes(tuple(_item(i, note) for i, note in enumerate(self.notes)))


def _item(index: int, note: AddNoteParams) -> AddNote:
    try:
        return note.command()
    except InvalidValue as exc:
        raise exc.at(f"notes[{index}]") from None


class AddNotesResult(View):
    ids: list[str]
    namespace: str


def added_many_view(added: NotesAdded) -> AddNotesResult:
    return AddNotesResult(ids=[i.value for i in added.ids], namespace=str(added.namespace))


# ---------------------------------------------------------------- memory.search


class SearchParams(Params):
    """``mode``: "hybrid" (the default: keyword and meaning blended), "semantic" (meaning
    only) or "keyword" (BM25 only); null or absent means the default."""

    project_id: str
    query: str
    group_id: str | None = None
    top_k: int | None = None
    tags: list[str] | None = None
    since: str | None = None
    until: str | None = None
    mode: Mode | None = None

    def command(self) -> SearchNotes:
        window = at("since", TimeWindow, _instant(self.since, "since"), _instant(self.until, "until"))
        optional = {"top_k": self.top_k, "mode": self.mode}
        return SearchNotes(
            project_id=self.project_id,
            query=self.query,
            group_id=_group_or_none(self.group_id),
            tags=_tags(self.tags),
            window=window,
            **{k: v for k, v in optional.items() if v is not None},
        )


class SearchResult(View):
    namespace: str
    results: list[HitView]


def search_view(found: SearchResults) -> SearchResult:
    return SearchResult(namespace=str(found.namespace), results=[hit_view(h) for h in found.hits])


# ---------------------------------------------------------------- memory.get


class GetParams(Params):
    id: str

    def command(self) -> GetNote:
        return GetNote(_note_id(self.id))


# ---------------------------------------------------------------- memory.update


class PatchParams(Params):
    title: str | None | UnsetType = UNSET
    text: str | UnsetType = UNSET
    tags: list[str] | UnsetType = UNSET
    source: str | None | UnsetType = UNSET
    group_id: str | UnsetType = UNSET
    metadata: dict[str, Any] | None | UnsetType = UNSET

    def patch(self) -> NotePatch:
        given = {f: getattr(self, f) for f in self.__struct_fields__ if getattr(self, f) is not UNSET}
        if "tags" in given:
            given["tags"] = _tags(given["tags"], "patch.tags")
        if "group_id" in given:
            given["group_id"] = _group(given["group_id"], "patch.groupId")
        return at("patch", lambda: NotePatch(**given))


class UpdateParams(Params):
    id: str
    patch: PatchParams

    def command(self) -> UpdateNote:
        return UpdateNote(_note_id(self.id), self.patch.patch())


class OkResult(View):
    ok: bool = True


# ---------------------------------------------------------------- memory.list_recent


class ListRecentParams(Params):
    project_id: str
    group_id: str | None = None
    limit: int | None = None
    tags: list[str] | None = None

    def command(self) -> ListRecent:
        return ListRecent(
            project_id=self.project_id,
            group_id=_group_or_none(self.group_id),
            limit=self.limit,
            tags=_tags(self.tags),
        )


class ListRecentResult(View):
    namespace: str
    items: list[StoredNoteView]


def recent_view(recent: RecentNotes) -> ListRecentResult:
    return ListRecentResult(namespace=str(recent.namespace), items=[stored_view(s) for s in recent.items])


# ---------------------------------------------------------------- memory.get_config / set_config


class NoParams(Params):
    pass


class TransportDefaultsView(View):
    default_transport: str


class EmbedderView(View):
    provider: str
    model: str
    dim: int | None
    base_url: str | UnsetType = UNSET


class StoreView(View):
    type: str
    path: str | UnsetType = UNSET
    url: str | UnsetType = UNSET


class PathsView(View):
    config_path: str
    data_dir: str


class ConfigResult(View):
    transport_defaults: TransportDefaultsView
    embedder: EmbedderView
    store: StoreView
    paths: PathsView


def config_view(config: ConfigView) -> ConfigResult:
    return ConfigResult(
        transport_defaults=TransportDefaultsView(default_transport=config.default_transport),
        embedder=EmbedderView(
            provider=config.provider,
            model=config.model,
            dim=config.dim,
            base_url=config.base_url if config.base_url is not None else UNSET,
        ),
        store=StoreView(type=config.store_type, path=config.store_path),
        paths=PathsView(config_path=config.config_path, data_dir=config.data_dir),
    )


class EmbedderParams(Params):
    provider: str | UnsetType = UNSET
    model: str | None | UnsetType = UNSET
    base_url: str | None | UnsetType = UNSET
    api_key: str | None | UnsetType = UNSET


class SetConfigParams(Params):
    embedder: EmbedderParams | None = None

    def command(self) -> SetConfig:
        if self.embedder is None:
            return SetConfig()
        given = {f: getattr(self.embedder, f) for f in EmbedderParams.__struct_fields__}
        return SetConfig(SetEmbedder(**{k: UNCHANGED if v is UNSET else v for k, v in given.items()}))


class SetConfigResult(View):
    ok: bool
    effective_namespace: str


# ---------------------------------------------------------------- memory.upsert_global / get_global


class UpsertGlobalParams(Params):
    project_id: str
    key: str
    value: Any
    updated_at: str | None = None

    def command(self) -> UpsertGlobal:
        return UpsertGlobal(
            project_id=self.project_id,
            key=at("key", GlobalKey, self.key),
            value=self.value,
            updated_at=_instant(self.updated_at, "updatedAt"),
        )


class UpsertGlobalResult(View):
    ok: bool
    id: str
    namespace: str


def upserted_view(entry: GlobalEntry) -> UpsertGlobalResult:
    return UpsertGlobalResult(ok=True, id=entry.id, namespace=KV_NAMESPACE)


class GetGlobalParams(Params):
    project_id: str
    key: str

    def command(self) -> GetGlobal:
        return GetGlobal(self.project_id, at("key", GlobalKey, self.key))


class GetGlobalResult(View):
    namespace: str
    found: bool
    id: str | None
    value: Any
    updated_at: str | None


def global_view(entry: GlobalEntry | None) -> GetGlobalResult:
    if entry is None:
        return GetGlobalResult(namespace=KV_NAMESPACE, found=False, id=None, value=None, updated_at=None)
    return GetGlobalResult(
        namespace=KV_NAMESPACE,
        found=True,
        id=entry.id,
        value=entry.value,
        updated_at=format_instant(entry.updated_at),
    )


def _namespace(raw: str, field: str) -> Namespace:
    return at(field, Namespace.parse, raw)


# ---------------------------------------------------------------- memory.delete


class DeleteParams(Params):
    id: str

    def command(self) -> DeleteNote:
        return DeleteNote(_note_id(self.id))


# ---------------------------------------------------------------- memory.stats


class StatsParams(Params):
    project_id: str | None = None

    def command(self) -> GetStats:
        return GetStats(self.project_id)


class StatsResult(View):
    """Note counts (of ``projectId``, or of every project when it is null) by home
    namespace, project, group and tag; ``vectors`` and ``diskBytes`` cover the whole store."""

    project_id: str | None
    current_namespace: str | None
    notes: int
    globals: int
    by_namespace: dict[str, int]
    by_project: dict[str, int]
    by_group: dict[str, int]
    by_tag: dict[str, int]
    vectors: dict[str, int]
    disk_bytes: int


def stats_view(stats: StoreStats) -> StatsResult:
    return StatsResult(
        project_id=None if stats.project_id is None else stats.project_id.value,
        current_namespace=None if stats.current_namespace is None else str(stats.current_namespace),
        notes=stats.notes,
        globals=stats.globals,
        by_namespace=stats.by_namespace,
        by_project=stats.by_project,
        by_group=stats.by_group,
        by_tag=stats.by_tag,
        vectors=stats.vectors,
        disk_bytes=stats.disk_bytes,
    )


# ---------------------------------------------------------------- memory.reembed / drop_namespace


class ReembedParams(Params):
    from_namespace: str | None = None
    batch_size: int | None = None
    limit: int | None = None

    def command(self) -> Reembed:
        return Reembed(
            from_namespace=None if self.from_namespace is None else _namespace(self.from_namespace, "fromNamespace"),
            batch_size=Reembed.DEFAULT_BATCH if self.batch_size is None else self.batch_size,
            limit=Reembed.CALL_LIMIT if self.limit is None else self.limit,
        )


class ReembedResult(View):
    ok: bool
    namespace: str
    reembedded: int
    remaining: int


def reembedded_view(done: Reembedded) -> ReembedResult:
    return ReembedResult(ok=True, namespace=str(done.namespace), reembedded=done.reembedded, remaining=done.remaining)


class DropNamespaceParams(Params):
    namespace: str

    def command(self) -> DropNamespace:
        return DropNamespace(_namespace(self.namespace, "namespace"))


class DropNamespaceResult(View):
    ok: bool
    namespace: str
    dropped: int
