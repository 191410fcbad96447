"""The durable ``NoteStore``: a small storage engine on local disk, in four floors, each
importing only the floors below it (an import-linter contract in ``pyproject.toml``):

``format/``
    the bytes on disk: ``records`` (every record and file structure, format 6; 2 to 5
    still read), ``framing`` (checksummed lines: journal records, the manifest, a
    snapshot's globals and links; the read-back check), ``files`` (removal, sizes, the
    writers' ``flock``), ``journal`` (the append-only log of one generation).
``memory/``
    the contents in memory, knowing no file: ``columns`` (growable numpy columns,
    interned names), ``note_table`` (one row per written note version), ``link_table``,
    ``vector_space`` (one namespace's vectors, scored by FAISS), ``partition`` (the
    inverted lists of a large space), ``damage`` (what was found damaged, kept out of
    answers), ``state`` (``StoreState``: what replaying a snapshot and journal gives),
    ``search`` (one search question answered from the state in one pass).
``persistence/``
    the state kept on disk: ``snapshot`` (written once per generation, loaded memory-mapped),
    ``generations`` (the manifest, following other processes' writes, compaction).
``recovery/``
    read-only: ``verify`` (``mcp-memory verify``) and ``salvage`` (``mcp-memory salvage``).

``store`` (``FaissNoteStore``) is the façade over ``persistence`` and ``memory``.
"""

from local_mcp_memory.adapters.faiss_store.store import FaissNoteStore

__all__ = ["FaissNoteStore"]
