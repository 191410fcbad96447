"""The durable ``NoteStore``: FAISS flat indexes per namespace, a JSON sidecar, a journal.

Modules: ``records`` (on-disk formats, version 1), ``disk`` (fsync, atomic replace, file
lock), ``journal`` (append-only log), ``space`` (one namespace's vectors), ``state`` (the
contents in memory), ``snapshot`` (compacted state), ``store`` (``FaissNoteStore``).
"""

from adapters.faiss_store.store import FaissNoteStore

__all__ = ["FaissNoteStore"]
