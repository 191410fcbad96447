"""Snapshots: the whole state of one generation, written once and never changed.

A snapshot is a directory ``snapshot-<generation>/`` holding ``sidecar.json`` (format 1:
every note's fields and home, the vector files with the owner of each row, the global KV)
and one FAISS ``IndexFlatIP`` file per namespace (``space-<n>.faiss``). It is written
under a temporary name (``snapshot-<g>.tmp-<pid>``), every file fsync'd, then renamed into
place; only the manifest naming it makes it live.
"""

from __future__ import annotations

import gc
import os
from pathlib import Path

import faiss

from adapters.faiss_store.disk import TMP_MARK, fsync_dir, fsync_file, remove_path, write_durably
from adapters.faiss_store.records import decode_sidecar, encode, namespace_dim
from adapters.faiss_store.space import VectorSpace
from adapters.faiss_store.state import StoreState
from application.errors import StoreCorrupt

SIDECAR = "sidecar.json"


def snapshot_name(generation: int) -> str:
    return f"snapshot-{generation:08d}"


def write_snapshot(root: Path, generation: int, state: StoreState) -> str:
    """Write ``state`` as the snapshot of ``generation``; its directory name. Durable on return."""
    name = snapshot_name(generation)
    remove_path(root / name)  # a stale one from a compaction that crashed before the manifest
    tmp = root / f"{name}{TMP_MARK}{os.getpid()}"
    remove_path(tmp)
    tmp.mkdir()
    files: dict[str, str] = {}
    for number, (namespace, space) in enumerate(state.spaces.items()):
        files[namespace] = f"space-{number:04d}.faiss"
        faiss.write_index(space.index, str(tmp / files[namespace]))
        fsync_file(tmp / files[namespace])
    write_durably(tmp / SIDECAR, encode(state.to_sidecar(generation, files)))
    fsync_dir(tmp)
    os.rename(tmp, root / name)
    fsync_dir(root)
    return name


def load_snapshot(root: Path, name: str | None, generation: int) -> StoreState:
    """The state a snapshot holds (empty for None). ``FileNotFoundError`` when a newer
    compaction removed it meanwhile (the caller re-reads the manifest); ``StoreCorrupt``
    when a file is not what its format says."""
    if name is None:
        return StoreState()
    paused = gc.isenabled()
    gc.disable()  # hundreds of thousands of new objects: no collection is worth running meanwhile
    try:
        return _load(root / name, generation)
    finally:
        if paused:
            gc.enable()


def _load(directory: Path, generation: int) -> StoreState:
    state = StoreState()
    path = directory / SIDECAR
    sidecar = decode_sidecar(path.read_bytes(), str(path))
    if sidecar.generation != generation:
        raise StoreCorrupt(f"{path} is of generation {sidecar.generation}, not {generation}", str(path))
    state.load_entries(sidecar.notes)
    for item in sidecar.spaces:
        state.spaces[item.namespace] = _load_space(directory / item.file, item.namespace, item.ids, state)
    for record in sidecar.globals:
        state.globals[(record.project, record.key)] = record
    return state


def _load_space(path: Path, namespace: str, ids: list[str | None], state: StoreState) -> VectorSpace:
    if not path.exists():
        raise FileNotFoundError(str(path))
    dim = namespace_dim(namespace)
    try:
        index = faiss.read_index(str(path))
    except RuntimeError as exc:
        raise StoreCorrupt(f"{path} is not a readable FAISS index: {exc}", str(path)) from exc
    if (
        index.d != dim
        or index.ntotal != len(ids)
        or index.metric_type != faiss.METRIC_INNER_PRODUCT
        or not isinstance(index, faiss.IndexFlat)
    ):
        raise StoreCorrupt(f"{path} does not hold the {len(ids)} {dim}-d flat inner-product rows its sidecar lists", str(path))
    space = VectorSpace(dim, index)
    space.adopt(ids, state.labels)
    return space
