"""Read-only tools over a FAISS data directory, however damaged: ``verify`` and ``salvage``."""
