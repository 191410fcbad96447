"""The FAISS store's bytes on disk: records, checksummed lines, the journal, file primitives.
Imports nothing of the store's other floors."""
