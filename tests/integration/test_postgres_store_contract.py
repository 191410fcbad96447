"""The store contract (``tests/contracts/test_note_store_contract.py``, every test of it) run
against ``PostgresNoteStore`` on a real PostgreSQL 18 with pgvector."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from adapters.postgres_store import PostgresNoteStore
from application.ports import NoteStore
from tests.contracts.test_note_store_contract import *  # noqa: F403  (every contract test, run here)
from tests.contracts.test_note_store_contract import Reopen
from tests.postgres_server import postgres, postgres_url  # noqa: F401  (fixtures)


@pytest.fixture
def opened(postgres_url: str) -> Iterator[tuple[NoteStore, Reopen]]:  # overrides the contract's adapters
    stores = [PostgresNoteStore(postgres_url)]

    def reopen() -> NoteStore:
        stores[-1].close()
        stores.append(PostgresNoteStore(postgres_url))
        return stores[-1]

    yield stores[0], reopen
    stores[-1].close()
