"""Notes, vectors and files for the FAISS store's own tests (real stores on disk)."""

from __future__ import annotations

import io
import json
import uuid
import zlib
from datetime import datetime, timedelta, timezone
from pathlib import Path

import msgspec
import numpy as np

from local_mcp_memory.adapters.faiss_store.format.framing import encode_line, encode_manifest, read_line
from local_mcp_memory.adapters.faiss_store.format.records import NOTE_ROW_V3, Header, Manifest, decode_sidecar, encode
from local_mcp_memory.domain.identifiers import CanonicalProjectId, GroupId, Namespace, NoteId
from local_mcp_memory.domain.link import Link, LinkKey, Relation
from local_mcp_memory.domain.note import Note

NS = Namespace("local", "unit-model", 8)
PROJECT = CanonicalProjectId("/work/app")
T0 = datetime(2024, 3, 1, 9, 0, tzinfo=timezone.utc)


def vector(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(NS.dim).astype(np.float32)
    return v / np.linalg.norm(v)


def note(index: int, text: str | None = None, *, expires: datetime | None = None, group: str = "g") -> Note:
    return Note(
        id=NoteId(str(uuid.uuid5(uuid.NAMESPACE_URL, f"faiss-unit/{index}"))),
        project_id=PROJECT,
        group_id=GroupId(group),
        text=text or f"note {index} about the release train",
        created_at=T0 + timedelta(minutes=index),
        expires_at=expires,
    )


def link(a: Note, b: Note, relation: str = "relates_to", minutes: int = 0) -> Link:
    return Link(LinkKey(a.id, b.id, Relation(relation)), T0 + timedelta(minutes=minutes))


def snapshot_of(data: Path) -> Path:
    (snapshot,) = data.glob("snapshot-*")
    return snapshot


def journal_of(data: Path) -> Path:
    (journal,) = data.glob("journal-*.jsonl")
    return journal


def flip_byte(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0x40
    path.write_bytes(bytes(data))


def as_format_3(data: Path) -> None:
    """Rewrite a compacted format 4 store without links as format 3 wrote it: notes.npy
    without the expiresAt and hash columns, no links.jsonl, format 3 in the sidecar, the
    manifest and the journal's header (the journal must hold nothing else)."""
    snapshot = snapshot_of(data)
    rows = np.load(snapshot / "notes.npy")
    old = np.zeros(rows.shape[0], dtype=NOTE_ROW_V3)
    for name in NOTE_ROW_V3.names:
        old[name] = rows[name]
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, old, allow_pickle=False)
    (snapshot / "notes.npy").write_bytes(buffer.getvalue())
    sidecar = decode_sidecar((snapshot / "sidecar.json").read_bytes(), "sidecar.json")
    assert sidecar.link_count == 0
    (snapshot / "links.jsonl").unlink()
    checksums = {**sidecar.checksums, "notes.npy": zlib.crc32(buffer.getvalue())}
    _relabel(data, msgspec.structs.replace(sidecar, format=3, checksums=checksums))


def as_format_4(data: Path) -> None:
    """Rewrite a compacted format 5 store whose notes have the default importance and no
    recorded span as format 4 wrote it: the same files, format 4 in the sidecar, the
    manifest and the journal's header (the journal must hold nothing else)."""
    snapshot = snapshot_of(data)
    sidecar = decode_sidecar((snapshot / "sidecar.json").read_bytes(), "sidecar.json")
    bodies = (snapshot / "notes.bin").read_bytes()
    assert b'"importance"' not in bodies and b'"span"' not in bodies
    _relabel(data, msgspec.structs.replace(sidecar, format=4))


def as_format_5(data: Path) -> None:
    """Label a compacted store as format 5 (format 6 only adds a journal record)."""
    sidecar = decode_sidecar((snapshot_of(data) / "sidecar.json").read_bytes(), "sidecar.json")
    _relabel(data, msgspec.structs.replace(sidecar, format=5))


def _relabel(data: Path, sidecar) -> None:
    """Write ``sidecar`` and give the manifest and the journal's header its format."""
    sidecar_bytes = encode(sidecar)
    (snapshot_of(data) / "sidecar.json").write_bytes(sidecar_bytes)
    body, _about = read_line((data / "MANIFEST.json").read_bytes()[:-1])
    manifest = Manifest(**{**json.loads(body), "format": sidecar.format, "sidecar_crc": zlib.crc32(sidecar_bytes)})
    (data / "MANIFEST.json").write_bytes(encode_manifest(manifest))
    journal = journal_of(data)
    lines = journal.read_bytes().split(b"\n")
    assert lines[1:] == [b""], "the journal holds records"
    header = json.loads(read_line(lines[0])[0])
    journal.write_bytes(encode_line(Header(format=sidecar.format, generation=header["generation"])))
