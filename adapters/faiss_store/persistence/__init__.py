"""The FAISS store's state kept on disk: snapshots, and the generations that tie a snapshot
to its journal (the manifest, following other processes, compaction)."""
