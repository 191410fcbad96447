"""The team store: ``PostgresNoteStore``, the store ports on PostgreSQL with pgvector.

Modules: ``url`` (the store URL, masked for display), ``schema`` (versioned migrations
under an advisory lock), ``codec`` (exact JSON text for notes and values), ``queries`` (the
filter and the one-statement hybrid question), ``curation`` (dedup locks, the purge,
links), ``connection`` (the pool, errors),
``store`` (``PostgresNoteStore``). Needs the ``postgres`` extra
(``pip install 'local-mcp-memory[postgres]'``): psycopg 3, psycopg-pool, pgvector. Importing this
package does not import them (``url`` works without the extra); ``PostgresNoteStore`` does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from local_mcp_memory.adapters.postgres_store.store import PostgresNoteStore

__all__ = ["PostgresNoteStore"]


def __getattr__(name: str) -> Any:
    if name == "PostgresNoteStore":
        from local_mcp_memory.adapters.postgres_store.store import PostgresNoteStore

        return PostgresNoteStore
    raise AttributeError(name)
