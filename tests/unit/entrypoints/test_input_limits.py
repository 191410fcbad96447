"""Every way in applies the server's limits: a note's metadata and a global value take at
most ``MAX_CHARS`` characters as JSON over JSON-RPC (stdio and HTTP share the dispatcher)
and in an export file; an import's vectors are finite and of length 1."""

from __future__ import annotations

import base64
import io

import numpy as np
import pytest

from local_mcp_memory.application.services import Services
from local_mcp_memory.domain.json_values import MAX_CHARS
from local_mcp_memory.adapters.export_file import read_export
from tests.unit.adapters.test_export_file import HEADER, NOTE, jsonl, refusal
from tests.unit.steps import add, rpc

# {"k":"…"} is 8 characters around the string
AT_LIMIT = {"k": "x" * (MAX_CHARS - 8)}
OVER = {"k": "x" * (MAX_CHARS - 7)}
NOTE_PARAMS = {"projectId": "proj", "groupId": "g", "text": "a note"}


def refused_field(reply: dict) -> str:
    assert "result" not in reply, "stored"
    error = reply["error"]
    assert error["code"] == -32602 and f"{MAX_CHARS:,} characters" in error["data"]["rule"], error
    return error["data"]["field"]


def test_metadata_at_the_limit_is_stored_and_one_character_more_is_refused(services: Services) -> None:
    stored = rpc(services, "memory.add_note", {**NOTE_PARAMS, "metadata": AT_LIMIT})["result"]
    assert rpc(services, "memory.get", {"id": stored["id"]})["result"]["metadata"] == AT_LIMIT
    assert refused_field(rpc(services, "memory.add_note", {**NOTE_PARAMS, "text": "other", "metadata": OVER})) == "metadata"


def test_every_method_that_takes_metadata_or_a_value_refuses_one_too_large(services: Services) -> None:
    note_id = add(services, "kept").value
    batch = {"notes": [NOTE_PARAMS, {**NOTE_PARAMS, "text": "b", "metadata": OVER}]}
    assert refused_field(rpc(services, "memory.add_notes", batch)) == "notes[1].metadata"
    assert refused_field(rpc(services, "memory.update", {"id": note_id, "patch": {"metadata": OVER}})) == "patch.metadata"
    upsert = {"projectId": "proj", "key": "global.project.conventions", "value": OVER}
    assert refused_field(rpc(services, "memory.upsert_global", upsert)) == "value"
    assert rpc(services, "memory.get", {"id": note_id})["result"]["metadata"] is None
    assert rpc(services, "memory.get_global", {"projectId": "proj", "key": "global.project.conventions"})["result"]["found"] is False


def test_an_import_refuses_metadata_and_values_too_large_naming_line_and_field() -> None:
    assert (lambda e: (e.line, e.field))(refusal([HEADER, NOTE | {"metadata": OVER}])) == (2, "metadata")
    line = {"type": "global", "projectId": "/work/app", "key": "global.project.conventions", "value": OVER, "updatedAt": "2024-01-15T10:30:00Z"}
    assert (lambda e: (e.line, e.field))(refusal([HEADER, NOTE, line])) == (3, "value")
    assert read_export(io.BytesIO(jsonl([HEADER, NOTE | {"metadata": AT_LIMIT}]))).notes[0].note.metadata == AT_LIMIT


def vector_line(values: list[float]) -> dict:
    return NOTE | {"vector": base64.b64encode(np.asarray(values, dtype="<f4").tobytes()).decode()}


@pytest.mark.parametrize(
    "values",
    [[1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0], [0.5, 0.5, 0.5, 0.49], [float("nan"), 0, 0, 0], [float("inf"), 0, 0, 0], [3e38, 3e38, 0, 0]],
    ids=["length 2", "zero", "just short", "NaN", "infinity", "huge"],
)
def test_an_import_refuses_a_vector_that_is_not_finite_and_of_length_1(values: list[float]) -> None:
    error = refusal([HEADER, vector_line(values)])
    assert (error.line, error.field) == (2, "vector")
    assert "length 1" in error.rule or "finite" in error.rule


def test_an_import_takes_a_vector_of_length_1_within_the_tolerance() -> None:
    (exported,) = read_export(io.BytesIO(jsonl([HEADER, vector_line([0.5, 0.5, 0.5, 0.5004])]))).notes
    assert exported.vector is not None
