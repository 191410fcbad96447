"""What salvage gets out of a store passes the limits an import applies: a note whose
metadata is over the size limit (written before the limit) is skipped and counted, and
a vector that is not finite or not of length 1 is left out, so the import embeds its note
again instead of refusing the whole file."""

from __future__ import annotations

from pathlib import Path

import attrs
import numpy as np

from local_mcp_memory.adapters.faiss_store import FaissNoteStore
from local_mcp_memory.adapters.faiss_store.recovery.salvage import as_export, salvage
from local_mcp_memory.domain.json_values import MAX_CHARS
from tests.unit.adapters.faiss_store.stores import NS, note, vector


def test_salvage_skips_oversized_metadata_and_drops_vectors_an_import_would_refuse(tmp_path: Path) -> None:
    data = tmp_path / "data"
    fine, long_vector, oversized = note(0), note(1), attrs.evolve(note(2), metadata={"blob": "m" * MAX_CHARS})
    store = FaissNoteStore(data)
    try:
        store.put_many([(fine, vector(0)), (long_vector, vector(1) * 3), (oversized, vector(2))], NS)
    finally:
        store.close()
    (data / "LOCK").unlink()
    export, unusable = as_export(salvage(data))
    notes = {exported.note.id: exported for exported in export.notes}
    assert unusable == 1 and set(notes) == {fine.id, long_vector.id}
    assert np.array_equal(notes[fine.id].vector, vector(0))
    assert notes[long_vector.id].vector is None and notes[long_vector.id].namespace == NS
