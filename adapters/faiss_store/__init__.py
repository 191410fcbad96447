"""The durable ``NoteStore``: exact FAISS search over memory-mapped vectors, binary note
columns, a journal.

Modules: ``records`` (on-disk formats, version 2), ``disk`` (fsync, atomic replace, file
lock), ``journal`` (append-only log), ``columns`` (growable numpy columns, interned
names), ``notes`` (the note table), ``space`` (one namespace's vectors), ``state`` (the
contents in memory), ``snapshot`` (compacted state), ``store`` (``FaissNoteStore``).
"""

from mcp_memory.adapters.faiss_store.store import FaissNoteStore

__all__ = ["FaissNoteStore"]
