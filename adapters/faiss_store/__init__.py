"""The durable ``NoteStore``: exact FAISS search over memory-mapped vectors, binary note
columns, a journal.

Modules: ``records`` (on-disk formats, version 4), ``lines`` (checksummed lines),
``disk`` (fsync, atomic replace, file lock), ``journal`` (append-only log), ``columns``
(growable numpy columns, interned names), ``notes`` (the note table: columns, expiry,
dedup hashes), ``space`` (one namespace's vectors), ``partition`` (inverted lists of a
large space), ``links`` (the links in memory), ``state`` (the contents in memory),
``answers`` (a search question), ``damage`` (what is damaged and kept out of answers),
``snapshot`` (compacted state), ``generations`` (following and starting generations),
``checkup`` (``verify``), ``salvage``, ``store`` (``FaissNoteStore``).
"""

from local_mcp_memory.adapters.faiss_store.store import FaissNoteStore

__all__ = ["FaissNoteStore"]
