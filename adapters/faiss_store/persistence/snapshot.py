"""Snapshots: the whole state of one generation, written once and never changed.

A snapshot is a directory ``snapshot-<generation>/`` (format 4, see ``format.records``)::

    sidecar.json          Sidecar: note ids in row order, interned names, spaces, CRCs
    notes.npy             one records.NOTE_ROW per note: codes, createdAt µs, ends, note CRC,
                          expiresAt µs (NEVER: none), the dedup key's 64-bit hash
    tags.npy              int32 tag codes of every note, in row order
    notes.bin             every note's NoteFields as msgspec JSON, back to back
    globals.jsonl         the global KV, one checksummed line per setting (as in a journal)
    links.jsonl           the links, one checksummed PutLink line each (as in a journal),
                          in write order
    space-<n>.npy         float32 (count, dim): one namespace's vectors
    space-<n>.owners.npy  int32 (count,): the note row owning each vector row
    space-<n>.centroids.npy, space-<n>.lists.npy
                          with a partition: its centroids, and each vector row's list

Only live notes are written, renumbered in write order, and only used vector rows; notes
expired at the instant of the compaction are left out, and so are the links from or to a
note left out; a note whose bytes fail their CRC is never written (``write_snapshot``
refuses). Opening
checks the sidecar against the CRC the manifest holds, reads the small ``.npy`` files whole
(CRC-checked against the sidecar), memory-maps ``notes.bin`` (one CRC pass over the whole
file; each note's own CRC again when it is decoded) and the vector files (copy-on-write;
CRC-checked too), and builds no per-note object but the id strings. What the format lets
stand alone degrades instead of failing the open (``damage``): a damaged note is left
out, a damaged vector file fails only its namespace's vector search, a damaged partition
is dropped (exact search until the next compaction trains it again), a damaged global
line fails only lookups it could answer, a damaged link line only the link answers about
its two notes (every link answer when its key is damaged too, or lines are missing). The
sidecar, ``notes.npy`` and ``tags.npy`` hold every note's place (and its expiresAt and
dedup hash): damage there refuses the snapshot. It is written under a temporary
name (``snapshot-<g>.tmp-<pid>``), every file fsync'd, then renamed into place; only the
manifest naming it makes it live. Format 2 snapshots (globals in the sidecar, no CRC of
``notes.bin`` or of the sidecar) and format 3 ones (no links, no expiresAt or dedup hash
columns: ``NoteTable`` derives them) are still read.
"""

from __future__ import annotations

import gc
import io
import mmap
import os
import time
import zlib
from pathlib import Path
from typing import BinaryIO
from tokenize import TokenError

import msgspec
import numpy as np

import structlog

from local_mcp_memory.adapters.durable_files import TMP_MARK, create_file, fsync_dir, write_durably
from local_mcp_memory.adapters.faiss_store.format.files import remove_path
from local_mcp_memory.adapters.faiss_store.format.framing import Damaged, about, encode_line
from local_mcp_memory.adapters.faiss_store.format.journal import lines_of
from local_mcp_memory.adapters.faiss_store.format.records import (
    FORMAT,
    NOTE_ROW,
    PutGlobal,
    PutLink,
    Sidecar,
    SpaceFile,
    decode_sidecar,
    encode,
    namespace_dim,
    note_row,
)
from local_mcp_memory.adapters.faiss_store.memory.columns import Names, runs
from local_mcp_memory.adapters.faiss_store.memory.note_table import NoteBodies, NoteTable
from local_mcp_memory.adapters.faiss_store.memory.partition import Partition
from local_mcp_memory.adapters.faiss_store.memory.state import StoreState
from local_mcp_memory.adapters.faiss_store.memory.vector_space import VectorSpace
from local_mcp_memory.adapters.regular_files import NotRegularFile, open_regular
from local_mcp_memory.application.errors import StoreCorrupt
from local_mcp_memory.domain.errors import DomainError

log = structlog.get_logger()

SIDECAR = "sidecar.json"
GLOBALS = "globals.jsonl"
LINKS = "links.jsonl"
NPY_ERRORS = (ValueError, SyntaxError, TokenError, TypeError, OverflowError)
"""What numpy raises on a damaged ``.npy`` header (it parses it as a Python literal)."""
CHUNK = 1 << 22  # bytes per write when streaming notes and vectors


def snapshot_name(generation: int) -> str:
    return f"snapshot-{generation:08d}"


def write_snapshot(root: Path, generation: int, state: StoreState, now: int | None = None) -> tuple[str, int]:
    """Write ``state`` as the snapshot of ``generation``, a name no file has yet, leaving
    out the notes expired at ``now`` (µs; None: the wall clock's instant) and their links;
    its directory name and the CRC-32 of its sidecar. Durable on return. On any failure
    its temporary directory is removed and the error raised."""
    name = snapshot_name(generation)
    tmp = root / f"{name}{TMP_MARK}{os.getpid()}"
    remove_path(tmp)
    if now is None:
        now = time.time_ns() // 1000
    try:
        tmp.mkdir(mode=0o700)
        crc = _write(tmp, generation, state, now)
        os.rename(tmp, root / name)
    except BaseException:
        remove_path(tmp)
        raise
    fsync_dir(root)
    return name, crc


def _write(tmp: Path, generation: int, state: StoreState, now: int) -> int:
    notes = state.notes
    live = notes.live_rows()
    expired = notes.expired(now)
    if expired.shape[0]:
        live = np.setdiff1d(live, expired, assume_unique=True)
    renumber = np.full(len(notes.ids), -1, dtype=np.int32)
    renumber[live] = np.arange(live.shape[0], dtype=np.int32)
    checksums: dict[str, int] = {}
    rows = np.zeros(live.shape[0], dtype=NOTE_ROW)
    rows["body_end"], rows["crc"], checksums["notes.bin"] = _write_bodies(tmp / "notes.bin", notes, live)
    for field in ("project", "group", "home", "created", "expires"):
        rows[field] = getattr(notes, field).values[live]
    rows["dedup"] = notes.dedup_values()[live]
    tags, rows["tags_end"] = _live_tags(notes, live)
    checksums["notes.npy"] = _write_npy(tmp / "notes.npy", rows)
    checksums["tags.npy"] = _write_npy(tmp / "tags.npy", tags)
    spaces = []
    for number, (namespace, space) in enumerate(state.spaces.items()):
        slots = space.used() if len(space) else np.empty(0, dtype=np.int64)
        if expired.shape[0]:  # the vectors of the notes left out stay out
            slots = slots[renumber[space.slot_row.values[slots]] >= 0]
        if not slots.shape[0]:
            continue
        stem = f"space-{number:04d}"
        item = SpaceFile(namespace=namespace, vectors=f"{stem}.npy", owners=f"{stem}.owners.npy", count=int(slots.shape[0]))
        checksums[item.owners] = _write_npy(tmp / item.owners, renumber[space.slot_row.values[slots]])
        checksums[item.vectors] = _write_vectors(tmp / item.vectors, space, slots)
        partition = space.partition
        if partition is not None:
            item = msgspec.structs.replace(
                item, centroids=f"{stem}.centroids.npy", lists=f"{stem}.lists.npy",
                probes=partition.probes, trained=partition.trained,
            )  # fmt: skip
            checksums[item.centroids] = _write_npy(tmp / item.centroids, partition.centroids.astype("<f4"))
            checksums[item.lists] = _write_npy(tmp / item.lists, space.slot_list.values[slots].astype("<i4"))
        spaces.append(item)
    write_durably(tmp / GLOBALS, b"".join(encode_line(record) for record in state.globals.values()))
    ids = [notes.ids[row] for row in live.tolist()]
    kept = set(ids)
    links = [record for record in state.links.records() if record.source in kept and record.target in kept]
    write_durably(tmp / LINKS, b"".join(encode_line(record) for record in links))
    sidecar = Sidecar(
        format=FORMAT,
        generation=generation,
        ids=ids,
        names=notes.names.names,
        spaces=spaces,
        checksums=checksums,
        global_count=len(state.globals),
        link_count=len(links),
    )
    data = encode(sidecar)
    write_durably(tmp / SIDECAR, data)
    fsync_dir(tmp)
    return zlib.crc32(data)


def _write_bodies(path: Path, notes: NoteTable, live: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Every live note's bytes, each checked against its CRC (a damaged note is never
    given a new checksum that would hide it); the ends, the CRCs, the file's CRC."""
    ends = np.empty(live.shape[0], dtype=np.int64)
    crcs = np.empty(live.shape[0], dtype=np.uint32)
    whole = 0
    with create_file(path, CHUNK) as f:
        at = 0
        for i, row in enumerate(live.tolist()):
            data, crc = notes.body(row)
            if zlib.crc32(data) != crc:
                raise StoreCorrupt(f"note {notes.ids[row]} fails its checksum; not compacted", str(path))
            at += f.write(data)
            whole = zlib.crc32(data, whole)
            ends[i], crcs[i] = at, crc
        f.flush()
        os.fsync(f.fileno())
    return ends, crcs, whole


def _live_tags(notes: NoteTable, live: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The tag codes of the live rows, back to back, and where each row's end."""
    ends = notes.tag_end.values
    starts = np.concatenate(([0], ends[:-1]))[live]
    lengths = ends[live] - starts
    return notes.tag_code.values[runs(starts, lengths)].astype("<i4"), np.cumsum(lengths)


def _write_npy(path: Path, array: np.ndarray) -> int:
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, np.ascontiguousarray(array), allow_pickle=False)
    data = buffer.getvalue()
    write_durably(path, data)
    return zlib.crc32(data)


def _write_vectors(path: Path, space: VectorSpace, slots: np.ndarray) -> int:
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f4", "fortran_order": False, "shape": (slots.shape[0], space.dim)})
    crc = 0
    step = max(1, CHUNK // (4 * space.dim))
    with create_file(path) as f:
        for data in _chunks(header.getvalue(), space, slots, step):
            f.write(data)
            crc = zlib.crc32(data, crc)
        os.fsync(f.fileno())
    return crc


def _chunks(header: bytes, space: VectorSpace, slots: np.ndarray, step: int):
    yield header
    for start in range(0, slots.shape[0], step):
        yield space.gather(slots[start : start + step]).astype("<f4", copy=False).tobytes()


def load_snapshot(root: Path, name: str | None, generation: int, sidecar_crc: int | None) -> StoreState:
    """The state a snapshot holds (empty for None), its damage recorded in the state's
    ``damage``; ``sidecar_crc`` is the manifest's (None: format 2, not known).
    ``FileNotFoundError`` when a newer compaction removed it meanwhile (the caller re-reads
    the manifest); ``StoreCorrupt`` naming the file when a part every note depends on is
    not what its format says."""
    if name is None:
        return StoreState()
    paused = gc.isenabled()
    gc.disable()  # a hundred thousand id strings: no collection is worth running meanwhile
    try:
        return _load(root / name, generation, sidecar_crc)
    except (ValueError, IndexError, KeyError, TypeError, OverflowError, DomainError) as exc:
        raise StoreCorrupt(f"the snapshot {root / name} cannot be read ({exc}); run `mcp-memory verify`", str(root / name)) from exc
    finally:
        if paused:
            gc.enable()


def _load(directory: Path, generation: int, sidecar_crc: int | None) -> StoreState:
    path = directory / SIDECAR
    data = _bytes(path)
    if sidecar_crc is not None and zlib.crc32(data) != sidecar_crc:
        raise StoreCorrupt(f"{path} fails its checksum; run `mcp-memory salvage` to get the notes out", str(path))
    sidecar = decode_sidecar(data, str(path))
    if sidecar.generation != generation:
        raise StoreCorrupt(f"{path} is of generation {sidecar.generation}, not {generation}", str(path))
    n, names = len(sidecar.ids), len(sidecar.names)
    rows = _read_npy(directory, "notes.npy", sidecar.checksums, note_row(sidecar.format), (n,))
    tags = _read_npy(directory, "tags.npy", sidecar.checksums, np.dtype("<i4"), (int(rows["tags_end"][-1]) if n else 0,))
    _require(
        directory,
        all(_within(rows[field], names) for field in ("project", "group", "home"))
        and _within(tags, names)
        and bool(np.all(np.diff(rows["body_end"], prepend=0) >= 0) and np.all(np.diff(rows["tags_end"], prepend=0) >= 0)),
        "holds note rows that do not agree with its sidecar",
        "notes.npy",
    )
    path = directory / "notes.bin"
    bodies = NoteBodies(_map_bytes(path, int(rows["body_end"][-1]) if n else 0), rows["body_end"], rows["crc"], str(path))
    notes = NoteTable(Names(sidecar.names), sidecar.ids, rows, tags, bodies)
    _require(directory, len(notes) == n, "lists a note id twice")
    state = StoreState(notes)
    for item in sidecar.spaces:
        state.spaces[item.namespace] = _space(directory, item, n, sidecar.checksums, state)
    for row in bodies.damaged_rows(sidecar.checksums.get("notes.bin")):
        state.lose_note(row, str(path))
    if sidecar.format < 4:
        notes.derive_expiry()
    _load_globals(directory, sidecar, state)
    _load_links(directory, sidecar, state)
    state.damage.reports.extend((str(path), f"note {i} fails its checksum") for i in state.damage.notes)
    return state


def _space(directory: Path, item: SpaceFile, n: int, checksums: dict[str, int], state: StoreState) -> VectorSpace:
    """One namespace's vectors; if they or their owners are damaged, an empty space whose
    vector search fails (``damage.spaces``): no score is computed from unverified vectors."""
    dim = namespace_dim(item.namespace)
    try:
        owners = _read_npy(directory, item.owners, checksums, np.dtype("<i4"), (item.count,))
        _require(directory, _within(owners, n) and _distinct(owners, n), f"file {item.owners} names rows that are not notes", item.owners)
        vectors = _map_vectors(directory / item.vectors, (item.count, dim), checksums.get(item.vectors))
    except StoreCorrupt as exc:
        state.damage.spaces[item.namespace] = exc.path or str(directory)
        state.damage.reports.append((state.damage.spaces[item.namespace], f"{exc}"))
        return VectorSpace(dim)
    try:
        partition = _partition(directory, item, dim, checksums)
    except StoreCorrupt as exc:
        log.warning("store.partition.damaged", path=exc.path, error=str(exc))
        state.damage.reports.append((exc.path or str(directory), f"{exc} (search is exact until the next compaction trains it again)"))
        partition = None
    return VectorSpace(dim, vectors, owners, partition)


def _load_globals(directory: Path, sidecar: Sidecar, state: StoreState) -> None:
    """Format 2: from the sidecar. Format 3: one checksummed line each in ``globals.jsonl``;
    a damaged line fails only the lookups it could answer (``damage``)."""
    for record in sidecar.globals:
        state.globals[(record.project, record.key)] = record
    if sidecar.format == 2:
        return
    path = directory / GLOBALS
    found = 0
    for item in lines_of(_lines_file(path), str(path)):
        if isinstance(item, PutGlobal):
            state.globals[(item.project, item.key)] = item
            found += 1
        elif isinstance(item, Damaged) and item.about is not None and item.about.globals:
            state.apply(item)
        elif isinstance(item, Damaged):
            state.damage.all_globals = item.path
            state.damage.reports.append((item.path, f"byte {item.offset}: a damaged global setting of unknown key"))
    if found + len(state.damage.globals) < sidecar.global_count and state.damage.all_globals is None:
        state.damage.all_globals = str(path)
        state.damage.reports.append((str(path), "holds fewer global settings than its sidecar lists"))


def _load_links(directory: Path, sidecar: Sidecar, state: StoreState) -> None:
    """Format 4: one checksummed ``PutLink`` line each in ``links.jsonl``. A damaged line
    fails the link answers about its notes, or every link answer when its key is damaged
    too (``damage``), as do fewer lines than the sidecar lists."""
    if sidecar.format < 4:
        return
    path = directory / LINKS
    found = 0
    for item in lines_of(_lines_file(path), str(path)):
        if isinstance(item, PutLink):
            try:
                state.apply(item)
                found += 1
                continue
            except (ValueError, DomainError):  # well framed, but its instant cannot be read
                item = Damaged(str(path), 0, about(item))
        if isinstance(item, Damaged) and item.about is not None and item.about.links:
            state.apply(item)
        elif state.damage.all_links is None:
            offset = item.offset if isinstance(item, Damaged) else 0
            state.damage.all_links = str(path)
            state.damage.reports.append((str(path), f"byte {offset}: a damaged link of unknown key"))
    if found + len(state.damage.links) < sidecar.link_count and state.damage.all_links is None:
        state.damage.all_links = str(path)
        state.damage.reports.append((str(path), "holds fewer links than its sidecar lists"))


def _lines_file(path: Path) -> bytes:
    """The bytes of a snapshot's lines file; none when it is missing from a snapshot that
    is still there (the count in the sidecar then tells the lines are missing). When the
    whole snapshot is gone (a newer compaction removed it), ``FileNotFoundError``."""
    try:
        return _bytes(path)
    except FileNotFoundError:
        if not (path.parent / SIDECAR).exists():
            raise
        return b""


def _partition(directory: Path, item: SpaceFile, dim: int, checksums: dict[str, int]) -> tuple[Partition, np.ndarray] | None:
    if item.centroids is None or item.lists is None:
        return None
    lists = _read_npy(directory, item.lists, checksums, np.dtype("<i4"), (item.count,))
    centroids = _read_npy(directory, item.centroids, checksums, np.dtype("<f4"), (None, dim))
    _require(
        directory,
        centroids.shape[0] > 0 and _within(lists, centroids.shape[0]) and 0 <= item.probes <= centroids.shape[0],
        f"file {item.lists} names lists that its partition does not have",
        item.lists,
    )
    return Partition(centroids, item.probes, item.trained), lists


def _within(values: np.ndarray, bound: int) -> bool:
    return values.shape[0] == 0 or (int(values.min()) >= 0 and int(values.max()) < bound)


def _distinct(values: np.ndarray, bound: int) -> bool:
    seen = np.zeros(bound, dtype=bool)
    seen[values] = True
    return int(np.count_nonzero(seen)) == values.shape[0]


def _require(directory: Path, holds: bool, problem: str, name: str | None = None) -> None:
    """``StoreCorrupt`` naming file ``name`` of the snapshot (None: the snapshot) unless ``holds``."""
    if not holds:
        path = directory if name is None else directory / name
        raise StoreCorrupt(f"the snapshot {directory} {problem}; run `mcp-memory verify`", str(path))


def _read_npy(
    directory: Path, name: str, checksums: dict[str, int], dtype: np.dtype, shape: tuple[int | None, ...]
) -> np.ndarray:
    """The array in file ``name``, of ``dtype`` and ``shape`` (None: any length there)."""
    path = directory / name
    data = _bytes(path)
    _require(directory, zlib.crc32(data) == checksums.get(name), f"file {name} fails its checksum", name)
    try:
        buffer = io.BytesIO(data)
        version = np.lib.format.read_magic(buffer)
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        found_shape, fortran, found_dtype = read_header(buffer)
    except NPY_ERRORS as exc:
        raise StoreCorrupt(f"{path} is not a .npy file ({exc})", str(path)) from exc
    _require(
        directory,
        len(found_shape) == len(shape)
        and all(want is None or want == found for want, found in zip(shape, found_shape))
        and found_dtype == dtype
        and not fortran,
        f"file {name} has the wrong shape",
        name,
    )
    try:
        return np.frombuffer(data, dtype=dtype, count=int(np.prod(found_shape)), offset=buffer.tell()).reshape(found_shape)
    except ValueError as exc:
        raise StoreCorrupt(f"{path} is shorter than its header says ({exc})", str(path)) from exc


def _map_vectors(path: Path, shape: tuple[int, int], crc: int | None) -> np.ndarray:
    _opened(path).close()  # numpy maps a file by its name: a FIFO is refused before it opens it
    try:
        vectors = np.load(path, mmap_mode="c", allow_pickle=False)
    except NPY_ERRORS as exc:
        raise StoreCorrupt(f"{path} is not a readable vector file ({exc})", str(path)) from exc
    if vectors.shape != shape or vectors.dtype != np.dtype("<f4") or not vectors.flags.c_contiguous:
        raise StoreCorrupt(f"{path} does not hold the {shape[0]} {shape[1]}-d float32 rows its sidecar lists", str(path))
    if zlib.crc32(vectors._mmap) != crc:
        raise StoreCorrupt(f"{path} fails its checksum; restore it from a backup", str(path))
    return vectors


def _opened(path: Path) -> BinaryIO:
    """``path`` opened for reading; ``StoreCorrupt`` naming it when it is no regular file (a
    FIFO in its place would hold the reader until something wrote to it)."""
    try:
        return open_regular(path)
    except NotRegularFile:
        raise StoreCorrupt(f"{path} is not a regular file; run `mcp-memory verify`", str(path)) from None


def _bytes(path: Path) -> bytes:
    with _opened(path) as stream:
        return stream.read()


def _map_bytes(path: Path, size: int):
    with _opened(path) as f:
        if os.fstat(f.fileno()).st_size != size:
            raise StoreCorrupt(f"{path} does not have the {size} bytes its snapshot lists", str(path))
        return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
