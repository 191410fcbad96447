"""Use cases of the memory server, one module per method, written against ports only."""

DEFAULT_BATCH = 64
"""Notes a long use case (import, re-embedding) embeds per call and writes per durable batch."""
MAX_BATCH = 1024
"""The largest batch a caller may ask for."""
