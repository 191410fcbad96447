"""Generations: which snapshot and journal are live, following them, starting the next.

``Generations`` holds a ``StoreState`` and keeps it caught up with the data directory:
``sync`` stats the manifest and replays what any process appended to the live journal;
when a compaction moved the manifest one generation on, it reads the old journal to its
end (it holds it open, so its removal does not matter) and follows on to the new one,
swapping its state for the new snapshot (the same contents) so the older snapshot's
memory-mapped files are released; further behind, it reloads. ``compact`` starts the
next generation. Callers hold the store's mutex, and the file lock to write or compact.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import structlog

from adapters.faiss_store.disk import TMP_MARK, remove_path, replace_atomically
from adapters.faiss_store.journal import Journal
from adapters.faiss_store.records import FORMAT, Manifest, decode_manifest, encode
from adapters.faiss_store.snapshot import load_snapshot, write_snapshot
from adapters.faiss_store.state import StoreState
from application.errors import StoreError

log = structlog.get_logger()

MANIFEST = "MANIFEST.json"
LOCK = "LOCK"


def journal_name(generation: int) -> str:
    return f"journal-{generation:08d}.jsonl"


class Generations:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.manifest_path = root / MANIFEST
        self.state = StoreState()
        self.journal: Journal | None = None
        self.generation = -1
        self._manifest_seen: tuple[int, int, int] | None = None

    def initialize(self) -> None:
        """Make an empty store: generation 0, no snapshot. Call with the lock held."""
        Journal.create(self.root / journal_name(0), 0).close()
        manifest = Manifest(format=FORMAT, generation=0, snapshot=None, journal=journal_name(0))
        replace_atomically(self.manifest_path, encode(manifest))
        log.info("store.created", path=str(self.root))

    def _read_manifest(self) -> Manifest:
        return decode_manifest(self.manifest_path.read_bytes(), str(self.manifest_path))

    def sync(self) -> None:
        """Catch up with every write any process acknowledged so far."""
        stat = os.stat(self.manifest_path)
        seen = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        if seen != self._manifest_seen or (self.journal is not None and self.journal.unlinked()):
            manifest = self._read_manifest()
            if manifest.generation != self.generation:
                self._switch(manifest)
            self._manifest_seen = seen
        assert self.journal is not None
        for record in self.journal.read_new():
            self.state.apply(record)

    def _switch(self, manifest: Manifest) -> None:
        if self.journal is not None and manifest.generation == self.generation + 1:
            try:
                following = Journal.open(self.root / manifest.journal, manifest.generation)
            except FileNotFoundError:
                following = None
            if following is not None:
                for record in self.journal.read_new():  # final: the manifest moved on
                    self.state.apply(record)
                self.journal.close()
                self.journal, self.generation = following, manifest.generation
                self._rebase(manifest.snapshot)
                log.debug("store.generation_followed", generation=manifest.generation)
                return
        self._reload(manifest)

    def _rebase(self, snapshot: str | None) -> None:
        """Swap the state, caught up to the start of the current generation, for the
        snapshot of that generation, which holds the same contents: the memory-mapped files
        of the older snapshot are released (their disk space with them). Keyword indexes
        already built are kept. If a newer compaction removed the snapshot meanwhile, the
        state stays as it is (still right) and a later ``sync`` reloads."""
        try:
            state = load_snapshot(self.root, snapshot, self.generation)
        except FileNotFoundError:
            return
        state.keywords.adopt(self.state.keywords)
        self.state = state

    def _reload(self, manifest: Manifest) -> None:
        started = time.perf_counter()
        for _attempt in range(10):
            try:
                journal = Journal.open(self.root / manifest.journal, manifest.generation)
            except FileNotFoundError:
                manifest = self._read_manifest()
                continue
            try:
                state = load_snapshot(self.root, manifest.snapshot, manifest.generation)
            except FileNotFoundError:
                journal.close()
                manifest = self._read_manifest()
                continue
            break
        else:
            raise StoreError("the store kept compacting while it was being loaded; retry", str(self.root))
        if self.journal is not None:
            self.journal.close()
        self.state, self.journal, self.generation = state, journal, manifest.generation
        log.info(
            "store.loaded",
            path=str(self.root),
            generation=manifest.generation,
            notes=len(state),
            seconds=round(time.perf_counter() - started, 3),
        )

    def compact(self) -> None:
        """Write the state as the next generation's snapshot (large spaces partitioned
        first, see ``partition``), start its journal, switch the manifest (the commit
        point), then remove older generations. Call with the lock held, caught up."""
        assert self.journal is not None
        started = time.perf_counter()
        generation = self.generation + 1
        self.state.repartition()
        snapshot = write_snapshot(self.root, generation, self.state)
        journal = Journal.create(self.root / journal_name(generation), generation)
        manifest = Manifest(format=FORMAT, generation=generation, snapshot=snapshot, journal=journal.path.name)
        replace_atomically(self.manifest_path, encode(manifest))
        self.journal.close()
        self.journal, self.generation = journal, generation
        self._manifest_seen = None
        self._rebase(snapshot)
        self._remove_stale(keep={snapshot, journal.path.name, MANIFEST, LOCK})
        log.info(
            "store.compacted",
            path=str(self.root),
            generation=generation,
            notes=len(self.state),
            seconds=round(time.perf_counter() - started, 3),
        )

    def _remove_stale(self, keep: set[str]) -> None:
        """Older generations and leftovers of crashed writers. Called with the lock held:
        a process still reading an older journal holds it open, unaffected by unlinking."""
        for path in self.root.iterdir():
            name = path.name
            if name not in keep and (name.startswith(("snapshot-", "journal-")) or TMP_MARK in name):
                remove_path(path)

    def close(self) -> None:
        if self.journal is not None:
            self.journal.close()
            self.journal = None
