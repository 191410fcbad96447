"""The createdAt instants a note table hands to searches: each row's own, whether kept from
an earlier search or read afresh, and still right once the kept ones are dropped."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from local_mcp_memory.adapters.faiss_store.format.records import NEVER, micros
from local_mcp_memory.adapters.faiss_store.memory.note_table import NoteTable
from local_mcp_memory.adapters.json_converter import NoteFields

START = datetime(2023, 5, 7, 13, 56, 0, 123456, tzinfo=timezone.utc)


def table(n: int) -> tuple[NoteTable, list[datetime]]:
    notes, created = NoteTable(), []
    for i in range(n):
        moment = START + timedelta(days=i, microseconds=7 * i)
        text = moment.isoformat().replace("+00:00", "Z")
        fields = NoteFields(id=f"0b7a4c1e-1111-4222-8333-{i:012d}", project="p", group="g", text=f"note {i}", created=text)
        notes.append(fields, "local:m:2", micros(text), NEVER)
        created.append(moment)
    return notes, created


def test_each_row_gets_its_own_created_at_first_and_again() -> None:
    notes, created = table(40)
    rows = [5, 0, 39, 5, 12]
    for _ in range(2):  # read from the column, then kept
        found = notes.instants(rows)
        assert found == [created[r] for r in rows]
        assert all(at.tzinfo is timezone.utc for at in found)


def test_instants_stay_right_once_the_kept_ones_are_dropped() -> None:
    notes, created = table(40)
    notes.INSTANTS = 8  # a table keeping few: every later read overflows it
    for start in range(0, 40, 3):
        rows = list(range(start, min(start + 6, 40)))
        assert notes.instants(rows) == [created[r] for r in rows]
    assert notes.instants([1, 2]) == [created[1], created[2]]
    assert notes.instants([]) == []
