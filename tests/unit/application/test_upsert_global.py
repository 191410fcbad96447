"""memory.upsert_global's use case: one stable id, the latest value."""

from __future__ import annotations

from local_mcp_memory.application.get_global import GetGlobal, get_global
from local_mcp_memory.application.services import Services
from local_mcp_memory.application.upsert_global import UpsertGlobal, upsert_global
from local_mcp_memory.domain.identifiers import GlobalKey
from tests.fakes.manual_clock import ManualClock


def test_global_kv_has_a_stable_id_and_the_latest_value(services: Services, clock: ManualClock) -> None:
    key = GlobalKey("global.memory.groupDefaults")
    first = upsert_global(UpsertGlobal("proj", key, {"featurePrefix": "feature-"}), services)
    clock.advance(seconds=5)
    second = upsert_global(UpsertGlobal("proj", key, {"featurePrefix": "feat-"}), services)
    entry = get_global(GetGlobal("proj", key), services)
    assert first.id == second.id == entry.id
    assert entry.value == {"featurePrefix": "feat-"} and entry.updated_at == clock.now()
    assert get_global(GetGlobal("other", key), services) is None
