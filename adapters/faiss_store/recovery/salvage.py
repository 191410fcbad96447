"""Getting every verifiable note, global and link out of a data directory, however damaged.

Read-only: nothing in the directory is written, locked or truncated. The newest snapshot
that can be found (the manifest's, else the highest ``snapshot-<g>/``) gives the base;
then every journal of its generation or later is replayed on top, oldest first (replaying
records a snapshot already holds changes nothing: each one sets or removes a whole note,
vector or setting, and a link already held keeps its first createdAt). Whatever cannot be
verified by a checksum is skipped, never guessed:

* a snapshot that loads (``persistence.snapshot.load_snapshot``) gives its notes with their home
  namespace, and their vectors where that namespace's files verify;
* one whose sidecar or note columns are damaged gives the notes found in ``notes.bin``
  whose bytes match a CRC listed in ``notes.npy``, without namespace or vector (an
  import embeds them again), and the lines of ``globals.jsonl`` and ``links.jsonl`` that
  verify;
* a damaged journal line is skipped, and so is whatever it was about until a later
  record sets it again (an older version is not what was last written).
"""

from __future__ import annotations

import io
import os
import zlib
from pathlib import Path

import attrs
import numpy as np

from local_mcp_memory.adapters.faiss_store.format.framing import Damaged
from local_mcp_memory.adapters.faiss_store.format.journal import lines_of
from local_mcp_memory.adapters.faiss_store.format.records import (
    NOTE_ROW,
    NOTE_ROW_V3,
    Delete,
    DeleteLink,
    NoteFields,
    Put,
    PutGlobal,
    PutLink,
    Record,
    Rehome,
    decode_fields,
    namespace_dim,
    note_of,
    vector_rows,
)
from local_mcp_memory.adapters.faiss_store.persistence.generations import GENERATION_FILE, read_manifest
from local_mcp_memory.adapters.faiss_store.persistence.snapshot import GLOBALS, LINKS, load_snapshot
from local_mcp_memory.adapters.regular_files import read_regular
from local_mcp_memory.application.errors import StoreCorrupt, StoreError
from local_mcp_memory.application.export_notes import Export, ExportedNote
from local_mcp_memory.application.vectors import vector_problem
from local_mcp_memory.domain.errors import DomainError
from local_mcp_memory.domain.identifiers import CanonicalProjectId, GlobalKey, Namespace, NoteId
from local_mcp_memory.domain.link import Link, LinkKey, Relation
from local_mcp_memory.domain.note import GlobalEntry, require_within_size
from local_mcp_memory.domain.time import parse_instant

NOTE_START = b'{"id":"'
ROW_TYPES = (NOTE_ROW, NOTE_ROW_V3)
LONGEST_SPLIT = 8  # parts of a note's bytes split by ``{"id":"`` inside its metadata


@attrs.define
class Salvaged:
    """Notes by id (fields, home namespace or None, vector there or None), globals by
    (project, key), links by (source, target, relation) in write order, how many records
    were skipped, and what was found damaged."""

    notes: dict[str, tuple[NoteFields, str | None, np.ndarray | None]] = attrs.Factory(dict)
    globals: dict[tuple[str, str], PutGlobal] = attrs.Factory(dict)
    links: dict[tuple[str, str, str], PutLink] = attrs.Factory(dict)
    skipped: int = 0
    problems: list[str] = attrs.Factory(list)


def salvage(root: Path) -> Salvaged:
    found = Salvaged()
    base = _base_generation(root, found)
    if base is not None:
        _from_snapshot(root, base, found)
    journals = sorted(
        (int(m.group(1)), m.group(0)) for m in map(GENERATION_FILE.fullmatch, os.listdir(root)) if m and m.group(0).startswith("journal-")
    )
    for generation, name in journals:
        if base is None or generation >= base[3]:
            _from_journal(root / name, found)
    return found


def _base_generation(root: Path, found: Salvaged) -> tuple[int, str, int | None, int] | None:
    """(generation, snapshot name, sidecar CRC or None, first journal to replay) of the
    snapshot to start from. Without a manifest the newest snapshot may be a compaction's
    that never became live, so the journal before it is replayed too."""
    try:
        manifest = read_manifest(root)
        if manifest.snapshot is None:
            return None
        return manifest.generation, manifest.snapshot, manifest.sidecar_crc, manifest.generation
    except (StoreError, OSError) as exc:
        found.problems.append(f"{root / 'MANIFEST.json'}: {exc}; looking for the newest snapshot instead")
    snapshots = sorted(
        int(m.group(1)) for m in map(GENERATION_FILE.fullmatch, os.listdir(root)) if m and m.group(0).startswith("snapshot-")
    )
    return (snapshots[-1], f"snapshot-{snapshots[-1]:08d}", None, snapshots[-1] - 1) if snapshots else None


def _from_snapshot(root: Path, base: tuple[int, str, int | None, int], found: Salvaged) -> None:
    generation, name, sidecar_crc, _first_journal = base
    try:
        state = load_snapshot(root, name, generation, sidecar_crc)
    except (StoreError, OSError) as exc:
        found.problems.append(f"{exc}; taking each note that verifies from notes.bin")
        _scan_snapshot(root / name, found)
        return
    notes, damage = state.notes, state.damage
    found.problems.extend(f"{path}: {what}" for path, what in damage.reports)
    found.skipped += len(damage.notes) + len(damage.globals) + len(damage.links)
    for row in notes.live_rows().tolist():
        home = notes.home_name(row)
        space = None if home in damage.spaces else state.spaces.get(home)
        found.notes[notes.ids[row]] = (notes.fields(row), home, None if space is None else space.vector(row))
    found.globals.update(state.globals)
    found.links.update((record.key, record) for record in state.links.records())


def _scan_snapshot(directory: Path, found: Salvaged) -> None:
    """Notes whose bytes in ``notes.bin`` match a CRC of ``notes.npy``; verified globals
    and links."""
    crcs = _row_crcs(directory / "notes.npy")
    try:
        data = read_regular(directory / "notes.bin")
    except OSError:
        data = b""
    starts = [*_occurrences(data, NOTE_START), len(data)]
    number, kept = 0, 0
    while number < len(starts) - 1:
        step = 1
        for end in range(number + 1, min(len(starts), number + 1 + LONGEST_SPLIT)):
            part = data[starts[number] : starts[end]]
            fields = _fields(part, directory) if zlib.crc32(part) in crcs else None
            if fields is not None:
                found.notes[fields.id] = (fields, None, None)
                step, kept = end - number, kept + 1
                break
        number += step
    found.skipped += max(0, len(crcs) - kept)
    for path in (directory / GLOBALS, directory / LINKS):
        if path.exists():
            _replay(lines_of(read_regular(path), str(path)), found)


def _row_crcs(path: Path) -> set[int]:
    """The note CRCs listed in ``notes.npy`` (of any format). If its header is damaged, or
    does not describe exactly the bytes after it, the rows are read at every place they
    can start (numpy pads headers to 64 bytes): a CRC too many only costs a lookup, each
    note's bytes must still match one."""
    try:
        data = read_regular(path)
    except OSError:
        return set()
    try:
        buffer = io.BytesIO(data)
        version = np.lib.format.read_magic(buffer)
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, _fortran, dtype = read_header(buffer)
        if dtype in ROW_TYPES and len(shape) == 1 and buffer.tell() + shape[0] * dtype.itemsize == len(data):
            return set(np.frombuffer(data, dtype, offset=buffer.tell())["crc"].tolist())
    except Exception:  # a damaged header makes numpy raise ValueError, SyntaxError, TokenError...
        pass
    found: set[int] = set()
    for dtype in ROW_TYPES:
        starts = (at for at in range(64, len(data), 64) if (len(data) - at) % dtype.itemsize == 0)
        found.update(crc for at in starts for crc in np.frombuffer(data, dtype, offset=at)["crc"].tolist())
    return found


def _fields(part: bytes, directory: Path) -> NoteFields | None:
    try:
        return decode_fields(part, str(directory))
    except StoreCorrupt:
        return None


def _from_journal(path: Path, found: Salvaged) -> None:
    """Every line that verifies, header or not (a bad header costs no record)."""
    try:
        data = read_regular(path)
    except OSError as exc:
        found.problems.append(f"{path}: {exc.strerror}")
        return
    _replay(lines_of(data, str(path)), found)


def _replay(items, found: Salvaged) -> None:
    for item in items:
        if isinstance(item, Damaged):
            _lose(item, found)
            continue
        try:
            _apply(item, found)
        except (ValueError, IndexError) as exc:
            found.problems.append(f"{item.__class__.__name__} record skipped: {exc}")
            found.skipped += 1


def _lose(damaged: Damaged, found: Salvaged) -> None:
    about = damaged.about
    if about is not None and not (about.notes or about.globals or about.namespace or about.links):
        return  # a damaged header: no record lost
    found.skipped += 1
    if about is None:
        found.problems.append(f"{damaged.path} at byte {damaged.offset}: a damaged record of unknown subject (skipped)")
        return
    found.problems.append(f"{damaged.path} at byte {damaged.offset}: a damaged record (skipped, with what it was about)")
    for note_id in about.notes:
        found.notes.pop(note_id, None)
    for key in about.globals:
        found.globals.pop(key, None)
    for key in about.links:
        found.links.pop(key, None)


def _apply(record: Record, found: Salvaged) -> None:
    if isinstance(record, Put):
        vector = None
        if record.vector is not None:
            vector = vector_rows(record.vector, namespace_dim(record.namespace))[0]
        elif record.note.id in found.notes:
            _fields_, home, old = found.notes[record.note.id]
            vector = old if home == record.namespace else None
        found.notes[record.note.id] = (record.note, record.namespace, vector)
    elif isinstance(record, Delete):
        found.notes.pop(record.id, None)
        for key in [key for key in found.links if record.id in key[:2]]:
            del found.links[key]
    elif isinstance(record, Rehome):
        rows = vector_rows(record.vectors, namespace_dim(record.namespace))
        for note_id, vector in zip(record.ids, rows):
            if note_id in found.notes:
                found.notes[note_id] = (found.notes[note_id][0], record.namespace, vector)
    elif isinstance(record, PutGlobal):
        found.globals[(record.project, record.key)] = record
    elif isinstance(record, PutLink):
        found.links.setdefault(record.key, record)
    elif isinstance(record, DeleteLink):
        found.links.pop(record.key, None)


def _occurrences(data: bytes, marker: bytes):
    at = data.find(marker)
    while at >= 0:
        yield at
        at = data.find(marker, at + 1)


def as_export(found: Salvaged) -> tuple[Export, int]:
    """The salvaged notes, globals and links between salvaged notes as an export (notes
    in write order as found, links oldest first), and how many more were skipped because
    their stored values break a rule of today's domain or a limit an import applies (a
    metadata or global value too large). A vector an import would refuse (not finite, not
    of length 1) is left out: the import embeds its note again."""
    notes: list[ExportedNote] = []
    entries: list[GlobalEntry] = []
    skipped = 0
    for fields, home, vector in found.notes.values():
        try:
            namespace = None if home is None else Namespace.parse(home)
            note = note_of(fields)
            require_within_size("Note", "metadata", note.metadata)
            usable = None if namespace is None or vector is None or vector_problem(vector) else vector
            notes.append(ExportedNote(note, namespace, usable))
        except (DomainError, ValueError):
            skipped += 1
    for record in found.globals.values():
        try:
            require_within_size("GlobalEntry", "value", record.value)
            entries.append(
                GlobalEntry(CanonicalProjectId(record.project), GlobalKey(record.key), record.value, parse_instant(record.updated))
            )
        except (DomainError, ValueError):
            skipped += 1
    kept = {exported.note.id.value for exported in notes}
    links: list[Link] = []
    for record in found.links.values():
        if record.source in kept and record.target in kept:
            try:
                key = LinkKey(NoteId(record.source), NoteId(record.target), Relation(record.relation))
                links.append(Link(key, parse_instant(record.created)))
            except (DomainError, ValueError):
                skipped += 1
    links.sort(key=lambda link: link.created_at)  # stable: ties stay in write order
    export = Export(project_id=None, namespace=None, note_count=len(notes), notes=iter(notes), globals=entries, links=links)
    return export, skipped
