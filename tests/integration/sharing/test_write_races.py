"""Writes of two servers sharing one store (one data directory, one database) never undo each
other: an update applies only its own patch to the note as it is when it writes, and answers
-32004 when the note is gone meanwhile; two marks of supersession never close a cycle; an agent's note is never one a sync will delete. The races are made deterministic by an embedder that
lets the other server act while the update is being embedded (the window the update has no
lock in), on the real FAISS store and the real PostgreSQL store."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from local_mcp_memory.adapters.faiss_store import FaissNoteStore
from local_mcp_memory.adapters.markdown_folder import OsMarkdownFolder
from local_mcp_memory.application.ports import NoteStore
from local_mcp_memory.application.services import Services
from local_mcp_memory.application.settings import EmbedderSettings
from local_mcp_memory.application.sync_folder import SyncFolder, sync_folder
from local_mcp_memory.domain.identifiers import NoteId
from local_mcp_memory.entrypoints.composition.compose import compose
from local_mcp_memory.entrypoints.composition.settings import ServerOptions
from tests.fakes.hashing_embedder import HashingEmbedder
from tests.fakes.memory_config import InMemoryConfigRepository
from tests.postgres_server import postgres, postgres_url  # noqa: F401  (fixtures)
from tests.unit.steps import rpc

RACING = "racing:"
"""Texts starting so run the other server's step while they are embedded."""


class InterleavingEmbedder(HashingEmbedder):
    """A ``HashingEmbedder`` that, embedding a text that starts with ``RACING``, first runs
    ``meanwhile`` (once): what another server does while this one embeds."""

    def __init__(self, meanwhile: list[Callable[[], None]], **kwargs) -> None:
        super().__init__(**kwargs)
        self._meanwhile = meanwhile

    def embed(self, texts: Sequence[str], kind="passage") -> np.ndarray:
        if any(t.startswith(RACING) for t in texts) and self._meanwhile:
            self._meanwhile.pop()()
        return super().embed(texts, kind)


class InterleavingFactory:
    def __init__(self) -> None:
        self.meanwhile: list[Callable[[], None]] = []

    def create(self, settings: EmbedderSettings) -> HashingEmbedder:
        return InterleavingEmbedder(self.meanwhile)


@pytest.fixture(params=["faiss", "postgresql"])
def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], NoteStore]]:
    """Opens the store again on each call, as one more server would."""
    if request.param == "postgresql":
        from local_mcp_memory.adapters.postgres_store import PostgresNoteStore

        url = request.getfixturevalue("postgres_url")
        opener: Callable[[], NoteStore] = lambda: PostgresNoteStore(url)  # noqa: E731
    else:
        opener = lambda: FaissNoteStore(tmp_path / "data")  # noqa: E731
    opened: list[NoteStore] = []

    def open_one() -> NoteStore:
        opened.append(opener())
        return opened[-1]

    yield open_one
    for store in opened:
        store.close()


def server(tmp_path: Path, name: str, store: NoteStore, factory: InterleavingFactory) -> Services:
    return compose(
        ServerOptions.resolve({}, tmp_path / f"{name}.json", tmp_path / "data"),
        embedders=factory,
        store=store,
        config=InMemoryConfigRepository(),
    )


@pytest.fixture
def two_servers(tmp_path: Path, open_store: Callable[[], NoteStore]) -> tuple[Services, Services, InterleavingFactory]:
    """Server A (whose embedder interleaves) and server B, on one store."""
    factory = InterleavingFactory()
    return server(tmp_path, "a", open_store(), factory), server(tmp_path, "b", open_store(), InterleavingFactory()), factory


def added(services: Services, text: str, **fields: object) -> str:
    reply = rpc(services, "memory.add_note", {"projectId": "race-project", "groupId": "g", "text": text, **fields})
    return reply["result"]["id"]


def test_a_text_update_never_brings_back_a_note_deleted_while_it_embedded(two_servers) -> None:
    a, b, factory = two_servers
    note_id = added(a, "the first text")
    factory.meanwhile.append(lambda: rpc(b, "memory.delete", {"id": note_id})["result"])
    reply = rpc(a, "memory.update", {"id": note_id, "patch": {"text": RACING + " a new text"}})
    assert reply["error"]["code"] == -32004
    assert a.reader.get(NoteId(note_id)) is None and b.reader.get(NoteId(note_id)) is None


def test_a_text_update_keeps_the_tags_and_title_another_server_set_while_it_embedded(two_servers) -> None:
    a, b, factory = two_servers
    note_id = added(a, "the first text", tags=["old"], title="old title")
    factory.meanwhile.append(
        lambda: rpc(b, "memory.update", {"id": note_id, "patch": {"tags": ["new"], "title": "new title"}})["result"]
    )
    assert rpc(a, "memory.update", {"id": note_id, "patch": {"text": RACING + " a new text"}})["result"] == {"ok": True}
    for services in (a, b):
        note = rpc(services, "memory.get", {"id": note_id})["result"]
        assert (note["text"], note["tags"], note["title"]) == (RACING + " a new text", ["new"], "new title")


def test_a_text_update_searches_by_its_own_text_after_another_servers_fields_update(two_servers) -> None:
    a, b, factory = two_servers
    note_id = added(a, "apples and pears")
    factory.meanwhile.append(lambda: rpc(b, "memory.update", {"id": note_id, "patch": {"tags": ["fruit"]}})["result"])
    rpc(a, "memory.update", {"id": note_id, "patch": {"text": RACING + " submarine periscope"}})
    found = rpc(b, "memory.search", {"projectId": "race-project", "query": "submarine periscope", "topK": 1})["result"]
    assert [(r["id"], r["tags"]) for r in found["results"]] == [(note_id, ["fruit"])]


def test_two_servers_marking_two_notes_as_superseding_each_other_store_one_mark(two_servers) -> None:
    a, b, factory = two_servers
    x, y = added(a, "Metrics go to Prometheus"), added(a, "Metrics go to Datadog")
    factory.meanwhile.append(lambda: rpc(b, "memory.update", {"id": y, "patch": {"supersedes": [x]}})["result"])
    reply = rpc(a, "memory.update", {"id": x, "patch": {"text": RACING + " Metrics go to Prometheus", "supersedes": [y]}})
    assert (reply["error"]["code"], reply["error"]["data"]["field"]) == (-32602, "patch.supersedes")
    assert "cycle" in reply["error"]["message"]
    for services in (a, b):
        assert rpc(services, "memory.get", {"id": x})["result"]["supersededBy"] == [y]
        assert rpc(services, "memory.get", {"id": y})["result"]["supersededBy"] == []
        listed = rpc(services, "memory.list_recent", {"projectId": "race-project"})["result"]["items"]
        assert [item["id"] for item in listed] == [y]


def test_updates_racing_deletes_answer_ok_or_not_found_and_deleted_notes_stay_deleted(two_servers) -> None:
    a, b, _factory = two_servers
    ids = [added(a, f"note number {i}") for i in range(30)]
    answers: dict[str, list] = {"update": [], "delete": []}

    def run(services: Services, method: str, params: Callable[[str], dict]) -> None:
        for note_id in ids:
            reply = rpc(services, f"memory.{method}", params(note_id))
            answers[method].append(reply.get("result") or reply["error"]["code"])

    threads = [
        threading.Thread(target=run, args=(a, "update", lambda i: {"id": i, "patch": {"tags": ["x"], "title": "t"}})),
        threading.Thread(target=run, args=(b, "delete", lambda i: {"id": i})),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(answer in ({"ok": True}, -32004) for answer in answers["update"]), answers["update"]
    assert answers["delete"] == [{"ok": True}] * len(ids)
    assert [i for i in ids if a.reader.get(NoteId(i)) is not None] == []


def test_an_agents_note_of_a_synced_text_is_its_own_and_outlives_the_next_sync(two_servers, tmp_path: Path) -> None:
    a, b, _factory = two_servers
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "deploy.md").write_text("Deploy with make release.\n")
    command = SyncFolder(project_id="race-project", group_id="g")
    assert sync_folder(command, OsMarkdownFolder(kb), b).added == ("deploy.md",)
    reply = rpc(a, "memory.add_note", {"projectId": "race-project", "groupId": "g", "text": "Deploy  with make release."})
    agents = reply["result"]["id"]
    assert "duplicate" not in reply["result"]
    (kb / "deploy.md").write_text("Deploy with make ship.\n")
    assert sync_folder(command, OsMarkdownFolder(kb), b).updated == ("deploy.md",)
    assert rpc(a, "memory.get", {"id": agents})["result"]["text"] == "Deploy  with make release."
    texts = sorted(n["text"].strip() for n in rpc(a, "memory.list_recent", {"projectId": "race-project"})["result"]["items"])
    assert texts == ["Deploy  with make release.", "Deploy with make ship."]
