"""A short seeded history of concurrent writers on real servers sharing one store, checked by
``bench.history_check``: the final state, before and after a restart, is explained by the
acknowledged operations (``python -m bench.history`` runs longer ones)."""

from __future__ import annotations

import pytest

from bench.history import run_history
from tests.postgres_server import postgres, postgres_url  # noqa: F401  (fixtures)


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_two_servers_on_one_data_directory_never_undo_an_acknowledged_write(transport: str) -> None:
    done = run_history(None, transport, clients=3, servers=2, ops=25, seed=7)
    assert done["anomalies"] == []
    assert done["acknowledged"] > done["ops"] // 2


def test_two_http_servers_on_one_database_never_undo_an_acknowledged_write(postgres_url: str) -> None:
    done = run_history(postgres_url, "http", clients=3, servers=2, ops=25, seed=7)
    assert done["anomalies"] == []
    assert done["acknowledged"] > done["ops"] // 2
