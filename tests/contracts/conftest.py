"""The note store's fixtures, for every contract suite of the store: ``opened`` (each store,
with a way to reopen it), ``store``, and the session's PostgreSQL they need."""

from tests.contracts.test_note_store_contract import opened, store  # noqa: F401  (fixtures)
from tests.postgres_server import postgres, postgres_url  # noqa: F401  (fixtures)
