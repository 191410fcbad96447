"""The markdown sync's planner: which notes a sync writes, keeps and deletes (SPEC §11)."""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import pytest

from local_mcp_memory.application.folder_documents import Part
from local_mcp_memory.application.ports import StoredNote, Vector
from local_mcp_memory.application.services import Services
from local_mcp_memory.application.sync_folder import EMPTY, FolderSynced, SyncFolder, SyncMemo, sync_folder
from local_mcp_memory.domain.errors import InvalidValue
from local_mcp_memory.domain.identifiers import Namespace, NoteId
from local_mcp_memory.domain.note import Note, SyncOrigin
from tests.fakes.memory_folder import InMemoryMarkdownFolder
from tests.unit.steps import add

PROJECT = "proj"


class BatchRecordingStore:
    """Wraps a store, recording the size of every ``put_many``."""

    def __init__(self, store: object) -> None:
        self._store = store
        self.batches: list[int] = []

    def put_many(self, notes: Sequence[tuple[Note, Vector]], namespace: Namespace) -> None:
        self.batches.append(len(notes))
        self._store.put_many(notes, namespace)

    def __getattr__(self, name: str) -> object:
        return getattr(self._store, name)


@pytest.fixture
def folder() -> InMemoryMarkdownFolder:
    return InMemoryMarkdownFolder("/notes")


def sync(services: Services, folder: InMemoryMarkdownFolder, **options: object) -> FolderSynced:
    memo = options.pop("memo", None)
    progress = options.pop("progress", None)
    command = SyncFolder(project_id=PROJECT, **options)
    if progress is None:
        return sync_folder(command, folder, services, memo=memo)
    return sync_folder(command, folder, services, progress, memo=memo)


def notes(services: Services) -> list[Note]:
    return [s.note for s in services.store.iter_notes()]


def synced(services: Services, root: str = "/notes") -> dict[str, Note]:
    return {n.source: n for n in notes(services) if n.origin is not None and n.origin.root == root}


def counts(done: FolderSynced) -> tuple[int, int, int, int, int]:
    return len(done.added), len(done.updated), len(done.removed), done.unchanged, len(done.skipped)


def test_a_first_sync_writes_one_note_per_part_with_its_source_title_tags_and_origin(services, folder) -> None:
    folder.write("a.md", Part(None, "A", "# A\nalpha", ("x", "y")))
    folder.write("docs/b.md", Part(None, "Intro", "# B\nintro"), Part("setup", "Setup", "## Setup\nsteps"))
    done = sync(services, folder)
    assert counts(done) == (2, 0, 0, 0, 0)
    assert done.added == ("a.md", "docs/b.md") and str(done.group_id) == "kb"
    by_source = synced(services)
    assert set(by_source) == {"a.md", "docs/b.md", "docs/b.md#setup"}
    a = by_source["a.md"]
    assert (a.title, a.text, a.tags.values, a.group_id.value, a.project_id.value) == ("A", "# A\nalpha", ("x", "y"), "kb", "proj")
    assert by_source["docs/b.md#setup"].origin == SyncOrigin("/notes", "docs/b.md#setup", by_source["docs/b.md"].origin.digest)


def test_running_again_changes_nothing(services, folder) -> None:
    folder.write("a.md", "alpha")
    folder.write("b.md", Part(None, None, "intro"), Part("s", "S", "## S"))
    sync(services, folder)
    before = notes(services)
    done = sync(services, folder)
    assert counts(done) == (0, 0, 0, 2, 0) and not done.changed
    assert notes(services) == before


def test_an_edited_file_has_its_notes_replaced_and_counts_as_updated(services, folder) -> None:
    folder.write("a.md", "alpha")
    folder.write("b.md", "beta")
    sync(services, folder)
    old = synced(services)["a.md"]
    folder.write("a.md", Part(None, None, "alpha two"), Part("more", "More", "## More"))
    done = sync(services, folder)
    assert counts(done) == (0, 1, 0, 1, 0) and done.updated == ("a.md",)
    now = synced(services)
    assert set(now) == {"a.md", "a.md#more", "b.md"}
    assert now["a.md"].text == "alpha two" and now["a.md"].id != old.id
    assert services.store.get(old.id) is None


def test_a_deleted_file_has_its_notes_removed(services, folder) -> None:
    folder.write("a.md", Part(None, None, "intro"), Part("s", "S", "## S"))
    folder.write("b.md", "beta")
    sync(services, folder)
    folder.remove("a.md")
    done = sync(services, folder)
    assert counts(done) == (0, 0, 1, 1, 0) and done.removed == ("a.md",)
    assert set(synced(services)) == {"b.md"}


def test_a_hand_written_note_with_the_same_source_and_text_is_never_touched(services, folder) -> None:
    hand = add(services, "alpha", group="kb", project=PROJECT, source="a.md")
    folder.write("a.md", "alpha")
    sync(services, folder)
    folder.write("a.md", "alpha edited")
    sync(services, folder)
    folder.remove("a.md")
    sync(services, folder)
    assert [n.id for n in notes(services)] == [hand]


def test_dedup_does_not_apply_to_synced_notes(services, folder) -> None:
    add(services, "same text", group="kb", project=PROJECT)
    folder.write("a.md", "same text")
    folder.write("b.md", "same text")
    sync(services, folder)
    assert len(notes(services)) == 3


def test_two_folders_never_collide(services) -> None:
    one, two = InMemoryMarkdownFolder("/one"), InMemoryMarkdownFolder("/two")
    one.write("a.md", "from one")
    two.write("a.md", "from two")
    sync(services, one)
    sync(services, two)
    one.remove("a.md")
    assert counts(sync(services, one)) == (0, 0, 1, 0, 0)
    assert counts(sync(services, two)) == (0, 0, 0, 1, 0)
    assert [n.text for n in notes(services)] == ["from two"]


def test_a_sync_into_another_project_leaves_the_first_projects_notes_alone(services, folder) -> None:
    folder.write("a.md", "alpha")
    sync(services, folder)
    sync_folder(SyncFolder(project_id="other"), folder, services)
    folder.remove("a.md")
    sync_folder(SyncFolder(project_id="other"), folder, services)
    assert [n.project_id.value for n in notes(services)] == ["proj"]


def test_another_group_moves_the_folders_notes_to_it(services, folder) -> None:
    folder.write("a.md", "alpha")
    sync(services, folder)
    done = sync(services, folder, group_id="docs")
    assert counts(done) == (0, 1, 0, 0, 0)
    assert [n.group_id.value for n in notes(services)] == ["docs"]


def test_an_empty_file_gets_no_note_and_loses_the_ones_it_had(services, folder) -> None:
    folder.write("a.md", "alpha")
    sync(services, folder)
    folder.write("a.md")
    done = sync(services, folder)
    assert [(s.path, s.reason) for s in done.skipped] == [("a.md", EMPTY)]
    assert notes(services) == []


def test_a_file_that_cannot_be_read_keeps_the_notes_of_its_last_good_sync(services, folder) -> None:
    folder.write("a.md", "alpha")
    folder.exclude("link.md", "symlink leads outside the folder")
    sync(services, folder)
    folder.make_unreadable("a.md", "not valid UTF-8")
    done = sync(services, folder)
    assert counts(done) == (0, 0, 0, 0, 2)
    assert [n.text for n in notes(services)] == ["alpha"]


def test_a_file_whose_notes_the_domain_refuses_is_skipped_whole_with_the_rule(services, folder) -> None:
    folder.write("a.md", Part(None, None, "fine"), Part("s", None, "too many tags", tuple(f"t{i}" for i in range(65))))
    done = sync(services, folder)
    assert [s.path for s in done.skipped] == ["a.md"] and "at most 64 tags" in done.skipped[0].reason
    assert notes(services) == []


def test_a_file_gone_between_listing_and_reading_counts_as_removed(services, folder) -> None:
    folder.write("a.md", "alpha")
    sync(services, folder)
    folder.write("a.md", "alpha edited")
    folder.vanish_when_read("a.md")
    done = sync(services, folder)
    assert counts(done) == (0, 0, 1, 0, 0)
    assert notes(services) == []


def test_writes_go_in_batches_of_at_most_batch_size(services, folder) -> None:
    recording = BatchRecordingStore(services.store)
    services = attrs.evolve(services, store=recording)
    folder.write("big.md", *[Part(f"s{i}", None, f"section {i}") for i in range(7)])
    folder.write("small.md", "small")
    sync(services, folder, batch_size=3)
    assert recording.batches == [3, 3, 2]
    assert len(notes(services)) == 8


def test_an_interrupted_sync_leaves_old_notes_or_new_and_the_next_run_repairs_it(services, folder) -> None:
    folder.write("a.md", *[Part(f"s{i}", None, f"old {i}") for i in range(5)])
    sync(services, folder)
    folder.write("a.md", *[Part(f"s{i}", None, f"new {i}") for i in range(5)])

    def interrupt_after_a_batch(done: int, total: int) -> None:
        if len(notes(services)) > 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        sync(services, folder, batch_size=2, progress=interrupt_after_a_batch)
    texts = sorted(n.text for n in notes(services))
    assert [t for t in texts if t.startswith("old")] == [f"old {i}" for i in range(5)]  # nothing old lost yet
    done = sync(services, folder)
    assert counts(done) == (0, 1, 0, 0, 0)
    assert sorted(n.text for n in notes(services)) == [f"new {i}" for i in range(5)]


def test_new_notes_written_but_old_ones_not_yet_deleted_are_cleaned_up_without_writing_again(services, folder) -> None:
    folder.write("a.md", "alpha")
    sync(services, folder)
    stale = synced(services)["a.md"]
    folder.write("a.md", "alpha edited")
    sync(services, folder)
    current = [n.id for n in notes(services)]
    namespace, vectors = services.embedding.embed([stale.text], "passage")
    services.store.put_many([(stale, vectors[0])], namespace)  # as if the delete after the write never happened
    done = sync(services, folder)
    assert counts(done) == (0, 1, 0, 0, 0)
    assert [n.id for n in notes(services)] == current


def test_a_memo_spares_reading_unchanged_files_but_not_repairing_them(services, folder) -> None:
    memo = SyncMemo()
    folder.write("a.md", "alpha")
    folder.write("b.md", "beta")
    sync(services, folder, memo=memo)
    assert counts(sync(services, folder, memo=memo)) == (0, 0, 0, 2, 0)
    assert folder.reads == {"a.md": 1, "b.md": 1}
    services.store.delete(synced(services)["b.md"].id)  # someone deleted a synced note by hand
    done = sync(services, folder, memo=memo)
    assert done.added == ("b.md",) and set(synced(services)) == {"a.md", "b.md"}


def test_the_group_must_be_a_valid_group_id(services, folder) -> None:
    with pytest.raises(InvalidValue) as refused:
        sync(services, folder, group_id="no spaces")
    assert refused.value.field == "group_id"


def test_progress_counts_files(services, folder) -> None:
    for i in range(3):
        folder.write(f"{i}.md", f"note {i}")
    seen: list[tuple[int, int]] = []
    sync(services, folder, progress=lambda done, total: seen.append((done, total)))
    assert seen[0] == (0, 3) and seen[-1] == (3, 3)


def test_stored_notes_keep_their_origin_in_the_store(services, folder) -> None:
    folder.write("a.md", "alpha")
    sync(services, folder)
    stored: StoredNote = next(iter(services.store.iter_notes()))
    assert stored.note.origin is not None and stored.note.origin.path == "a.md"


def test_a_path_longer_than_a_source_may_be_is_skipped_with_the_rule(services, folder) -> None:
    long_path = "/".join(["d" * 200] * 5) + "/a.md"
    folder.write(long_path, "alpha")
    folder.write("b.md", "beta")
    done = sync(services, folder)
    assert [s.path for s in done.skipped] == [long_path] and "source must be at most 1000 characters" in done.skipped[0].reason
    assert [n.source for n in notes(services)] == ["b.md"]


def test_a_file_written_twice_by_two_syncs_at_once_loses_the_extra_copy_without_embedding_again(services, folder) -> None:
    folder.write("a.md", Part(None, None, "intro"), Part("s", "S", "## S"))
    sync(services, folder)
    first = notes(services)
    namespace, vectors = services.embedding.embed([n.text for n in first], "passage")
    copies = [attrs.evolve(n, id=NoteId.new()) for n in first]
    services.store.put_many(list(zip(copies, vectors)), namespace)  # what a second sync at the same time wrote
    recording = BatchRecordingStore(services.store)
    done = sync(attrs.evolve(services, store=recording), folder)
    assert counts(done) == (0, 1, 0, 0, 0) and recording.batches == []
    assert notes(services) == first


def test_a_folder_left_alone_keeps_the_notes_of_its_files(services, folder) -> None:
    folder.write("docs/a.md", "alpha")
    folder.write("docs/deep/b.md", "beta")
    folder.write("other.md", "other")
    sync(services, folder)
    for path in ("docs/a.md", "docs/deep/b.md", "other.md"):
        folder.remove(path)
    folder.exclude("docs/", "its .gitignore cannot be read, so the folder is left out: Permission denied")
    done = sync(services, folder)
    assert counts(done) == (0, 0, 1, 0, 1) and done.removed == ("other.md",)
    assert set(synced(services)) == {"docs/a.md", "docs/deep/b.md"}
    folder.exclude("./", "folder cannot be read: Permission denied")
    assert counts(sync(services, folder)) == (0, 0, 0, 0, 2)
    assert len(notes(services)) == 2
