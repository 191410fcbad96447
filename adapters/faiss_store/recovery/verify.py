"""``verify``: every checksum, shape and cross-reference of the live generation, read-only.

Reads the manifest, every file of the snapshot it names (the same checks as opening the
store: sidecar against the manifest's CRC, ``.npy`` files against the sidecar's, every
note's bytes, every vector file, every global and link line) and every line of the live journal,
replaying it over the snapshot. Nothing is written, not even ``LOCK``. Files of older
generations and leftovers of crashed compactions are listed, not counted as damage.
"""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path

import attrs

from local_mcp_memory.adapters.faiss_store.format.framing import Damaged
from local_mcp_memory.adapters.faiss_store.format.journal import Journal, lines_of
from local_mcp_memory.adapters.faiss_store.memory.state import StoreState
from local_mcp_memory.adapters.faiss_store.persistence.generations import LOCK, MANIFEST, read_manifest
from local_mcp_memory.adapters.faiss_store.persistence.snapshot import load_snapshot
from local_mcp_memory.adapters.regular_files import read_regular
from local_mcp_memory.application.errors import StoreError
from local_mcp_memory.domain.errors import DomainError


@attrs.define
class Checkup:
    """``problems``: what is damaged, per file; ``notes``: facts that are not damage."""

    problems: dict[str, list[str]] = attrs.Factory(lambda: defaultdict(list))
    notes: list[str] = attrs.Factory(list)
    summary: str = ""

    @property
    def ok(self) -> bool:
        return not self.problems


def verify(root: Path) -> Checkup:
    found = Checkup()
    try:
        manifest = read_manifest(root)
    except FileNotFoundError:
        found.problems[str(root / MANIFEST)].append("missing: this is not a data directory of mcp-memory")
        return found
    except StoreError as exc:
        found.problems[exc.path or str(root)].append(str(exc))
        return found
    try:
        state = load_snapshot(root, manifest.snapshot, manifest.generation, manifest.sidecar_crc)
    except (StoreError, OSError) as exc:
        found.problems[getattr(exc, "path", None) or str(root / str(manifest.snapshot))].append(
            f"{exc}; no note of the snapshot can be served: `mcp-memory salvage` recovers those that verify"
        )
        state = StoreState()
    journal = root / manifest.journal
    try:  # the header as the server checks it when it opens the store
        Journal.open(journal, manifest.generation, writable=False).close()
    except StoreError as exc:
        found.problems[str(journal)].append(str(exc))
    except OSError:
        pass  # told by the replay below
    records = _replay(journal, state, found)
    for path, what in state.damage.reports:
        found.problems[path].append(what)
    live = {MANIFEST, LOCK, manifest.journal, manifest.snapshot}
    leftovers = sorted(name for name in os.listdir(root) if name not in live)
    if leftovers:
        found.notes.append(f"not part of the live generation (older or unfinished, not damage): {', '.join(leftovers)}")
    found.summary = (
        f"generation {manifest.generation} (format {manifest.format}): {len(state)} notes, "
        f"{len(state.globals)} global settings, {len(state.links)} links, {sum(len(s) for s in state.spaces.values())} vectors "
        f"in {len(state.spaces)} namespaces, {records} journal records"
    )
    return found


def _replay(path: Path, state: StoreState, found: Checkup) -> int:
    """Apply the journal's records to ``state``; how many there were."""
    try:
        data = read_regular(path)
    except OSError as exc:
        found.problems[str(path)].append(f"cannot be read: {exc.strerror}")
        return 0
    records = 0
    for item in lines_of(data, str(path)):
        try:
            state.apply(item)
        except (ValueError, IndexError, DomainError) as exc:
            found.problems[str(path)].append(f"a record that cannot apply: {exc}")
        records += not isinstance(item, Damaged)
    tail = len(data) - (data.rfind(b"\n") + 1)
    if tail:
        found.notes.append(f"{path}: an incomplete last line of {tail} bytes (a write cut by a crash; never applied)")
    return records
