"""Generations: which snapshot and journal are live, following them, starting the next.

``Generations`` holds a ``StoreState`` and keeps it caught up with the data directory:
``sync`` stats the manifest and replays what any process appended to the live journal;
when a compaction moved the manifest one generation on, it reads the old journal to its
end (it holds it open, so its removal does not matter) and follows on to the new one,
swapping its state for the new snapshot (the same contents) so the older snapshot's
memory-mapped files are released; further behind, it reloads. ``compact`` starts the
next generation. Callers hold the store's mutex, and the file lock to write or compact.

Nothing the store did not write in the generation it starts is overwritten: a compaction
names its generation above every ``snapshot-<g>``/``journal-<g>`` present in the directory,
and then removes only older generations and its own temporary files. A directory holding
snapshots or journals but no ``MANIFEST.json`` is refused, never initialized over.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import structlog

from local_mcp_memory.adapters.durable_files import replace_durably
from local_mcp_memory.adapters.faiss_store.format.files import remove_path
from local_mcp_memory.adapters.faiss_store.format.framing import Damaged, about, decode_manifest, encode_manifest
from local_mcp_memory.adapters.faiss_store.format.journal import Journal, JournalCut
from local_mcp_memory.adapters.faiss_store.format.records import FORMAT, Manifest, Record
from local_mcp_memory.adapters.faiss_store.memory.state import StoreState
from local_mcp_memory.adapters.faiss_store.persistence.snapshot import load_snapshot, write_snapshot
from local_mcp_memory.adapters.regular_files import NotRegularFile, read_regular
from local_mcp_memory.application.errors import StoreCorrupt, StoreError
from local_mcp_memory.domain.errors import DomainError

log = structlog.get_logger()

MANIFEST = "MANIFEST.json"
LOCK = "LOCK"
GENERATION_FILE = re.compile(r"(?:snapshot|journal)-(\d{8})(?:\.jsonl)?")
OWN_TEMPORARY = re.compile(r"(?:snapshot-\d{8}|MANIFEST\.json)\.tmp-\d+")


def journal_name(generation: int) -> str:
    return f"journal-{generation:08d}.jsonl"


def generations_present(root: Path) -> list[int]:
    """The generation numbers of every snapshot and journal in ``root``."""
    found = (GENERATION_FILE.fullmatch(name) for name in os.listdir(root))
    return sorted(int(match.group(1)) for match in found if match)


def write_manifest(root: Path, manifest: Manifest) -> None:
    replace_durably(root / MANIFEST, encode_manifest(manifest))


def read_manifest(root: Path) -> Manifest:
    """The manifest; ``StoreCorrupt`` naming it if it is damaged, or missing from a
    directory that holds generations (then nothing may be initialized over them)."""
    path = root / MANIFEST
    try:
        data = read_regular(path)
    except FileNotFoundError:
        present = generations_present(root)
        if not present:
            raise
        raise StoreCorrupt(
            f"{path} is missing, but {root} holds generations {present[0]}..{present[-1]} "
            "(snapshot-*, journal-*): restore MANIFEST.json or run `mcp-memory salvage`",
            str(path),
        ) from None
    except NotRegularFile:
        raise StoreCorrupt(f"{path} is not a regular file: restore MANIFEST.json or run `mcp-memory salvage`", str(path)) from None
    return decode_manifest(data, str(path))


class Generations:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.manifest_path = root / MANIFEST
        self.state = StoreState()
        self.journal: Journal | None = None
        self.generation = -1
        self._manifest_seen: tuple[int, int, int] | None = None
        self.format = FORMAT

    def initialize(self) -> None:
        """Make an empty store, generation 0, no snapshot, in a directory without one; one
        holding generations but no manifest is refused (``read_manifest``). Call with the
        lock held."""
        try:
            read_manifest(self.root)
            return
        except FileNotFoundError:
            pass
        Journal.create(self.root / journal_name(0), 0).close()
        write_manifest(self.root, Manifest(format=FORMAT, generation=0, snapshot=None, journal=journal_name(0)))
        log.info("store.created", path=str(self.root))

    def _read_manifest(self) -> Manifest:
        return read_manifest(self.root)

    def sync(self) -> None:
        """Catch up with every write any process acknowledged so far."""
        stat = os.stat(self.manifest_path)
        seen = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        if seen != self._manifest_seen or (self.journal is not None and self.journal.unlinked()):
            manifest = self._read_manifest()
            if manifest.generation != self.generation:
                self._switch(manifest)
            self._manifest_seen = seen
        self._catch_up()

    def _catch_up(self) -> None:
        assert self.journal is not None
        try:
            records = self.journal.read_new()
        except JournalCut as cut:  # what was applied from the lines gone no longer stands: read the store again
            log.warning("store.journal.cut", path=str(cut.path), size=cut.size, read=cut.read)
            self._reload(self._read_manifest())
            return
        for record in records:
            self._apply(record)

    def _apply(self, record: Record | Damaged) -> None:
        """Apply a record; one that is well formed but cannot apply (a value its format
        cannot hold) is damage like a line failing its checksum."""
        try:
            self.state.apply(record)
        except (ValueError, IndexError, DomainError) as exc:
            assert self.journal is not None and not isinstance(record, Damaged)
            log.warning("store.journal.unusable_record", path=str(self.journal.path), error=str(exc))
            self.state.apply(Damaged(str(self.journal.path), self.journal.offset, about(record)))

    def repair_tail(self) -> None:
        """With the lock held and caught up: complete or cut what follows the last line."""
        assert self.journal is not None
        self.journal.repair_tail()
        self._catch_up()

    def _switch(self, manifest: Manifest) -> None:
        if self.journal is not None and manifest.generation == self.generation + 1:
            try:
                following = Journal.open(self.root / manifest.journal, manifest.generation)
            except FileNotFoundError:
                following = None
            if following is not None:
                self._catch_up()  # final: the manifest moved on
                self.journal.close()
                self.journal, self.generation, self.format = following, manifest.generation, manifest.format
                self._rebase(manifest)
                log.debug("store.generation_followed", generation=manifest.generation)
                return
        self._reload(manifest)

    def _rebase(self, manifest: Manifest) -> None:
        """Swap the state, caught up to the start of the current generation, for the
        snapshot of that generation, which holds the same contents but the notes that had
        expired when it was written: the memory-mapped files of the older snapshot are
        released (their disk space with them). Keyword indexes already built are kept. If a newer compaction removed the snapshot meanwhile, the
        state stays as it is (still right) and a later ``sync`` reloads."""
        if self.state.damage:
            return  # keep what this process knows to be damaged; a later reload finds the rest
        try:
            state = load_snapshot(self.root, manifest.snapshot, self.generation, manifest.sidecar_crc)
        except FileNotFoundError:
            return
        if state.damage:
            self._reload(manifest)
            return
        state.adopt_derived(self.state)
        self.state = state

    def _reload(self, manifest: Manifest) -> None:
        started = time.perf_counter()
        for _attempt in range(10):
            try:
                journal = Journal.open(self.root / manifest.journal, manifest.generation)
            except FileNotFoundError:
                manifest = self._moved_on(manifest, manifest.journal)
                continue
            try:
                state = load_snapshot(self.root, manifest.snapshot, manifest.generation, manifest.sidecar_crc)
            except FileNotFoundError:
                journal.close()
                manifest = self._moved_on(manifest, manifest.snapshot)
                continue
            break
        else:
            raise StoreError("the store kept compacting while it was being loaded; retry", str(self.root))
        if self.journal is not None:
            self.journal.close()
        self.state, self.journal, self.generation, self.format = state, journal, manifest.generation, manifest.format
        for path, what in state.damage.reports:
            log.warning("store.damaged", path=path, damage=what)
        self._catch_up()
        log.info(
            "store.loaded",
            path=str(self.root),
            generation=manifest.generation,
            notes=len(state),
            seconds=round(time.perf_counter() - started, 3),
        )

    def _moved_on(self, manifest: Manifest, missing: str) -> Manifest:
        """The manifest read again after ``missing``, a file ``manifest`` names, was not found: a
        compaction in between removed it (the new manifest names others), or it is gone for
        good, which a retry never mends: then the store is unavailable, naming the file."""
        current = self._read_manifest()
        if current.generation == manifest.generation:
            raise StoreError(
                f"{missing}, which the manifest names, is missing; `mcp-memory verify` tells what is left and "
                "`mcp-memory salvage OUT` exports every note that still reads",
                str(self.root / missing),
            )
        return current

    def compact(self) -> None:
        """Write the state as the next generation's snapshot (large spaces partitioned
        first, see ``partition``; notes expired by the wall clock and their links left
        out), start its journal, switch the manifest (the commit
        point), then remove older generations. Call with the lock held, caught up.
        ``StoreCorrupt`` while damage is known (a new snapshot would hide it); on any
        failure before the switch, nothing of the new generation is left behind."""
        assert self.journal is not None
        if self.state.damage:
            raise StoreCorrupt(f"not compacted: the store holds damage ({self.state.damage.summary()})", str(self.root))
        started = time.perf_counter()
        generation = max([self.generation, *generations_present(self.root)]) + 1
        self.state.repartition()
        snapshot, sidecar_crc = write_snapshot(self.root, generation, self.state)
        journal_path = self.root / journal_name(generation)
        try:
            journal = Journal.create(journal_path, generation)
            manifest = Manifest(
                format=FORMAT, generation=generation, snapshot=snapshot, journal=journal_path.name, sidecar_crc=sidecar_crc
            )
            write_manifest(self.root, manifest)
        except BaseException:
            if not self._names(generation):
                remove_path(journal_path)
                remove_path(self.root / snapshot)
            raise
        self.journal.close()
        self.journal, self.generation, self.format = journal, generation, FORMAT
        self._manifest_seen = None
        self._rebase(manifest)
        self._remove_stale(generation)
        log.info(
            "store.compacted",
            path=str(self.root),
            generation=generation,
            notes=len(self.state),
            seconds=round(time.perf_counter() - started, 3),
        )

    def _names(self, generation: int) -> bool:
        """Whether the manifest on disk names ``generation`` (then its files are live)."""
        try:
            return self._read_manifest().generation == generation
        except (OSError, StoreError):
            return False

    def _remove_stale(self, generation: int) -> None:
        """Older generations and the store's own leftovers of crashed compactions. Called
        with the lock held: a process still reading an older journal holds it open,
        unaffected by unlinking."""
        for path in self.root.iterdir():
            match = GENERATION_FILE.fullmatch(path.name)
            if (match and int(match.group(1)) < generation) or OWN_TEMPORARY.fullmatch(path.name):
                remove_path(path)

    def close(self) -> None:
        if self.journal is not None:
            self.journal.close()
            self.journal = None
