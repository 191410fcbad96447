"""The server's live embedder: which one runs, its namespace, and learning its dimension."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from types import TracebackType

import attrs

from local_mcp_memory.application.errors import DimensionChanged, EmbedderRejected
from local_mcp_memory.application.ports import ConfigRepository, Embedder, EmbedderFactory, EmbedKind, Vector
from local_mcp_memory.application.settings import EmbedderSettings, Settings
from local_mcp_memory.application.vectors import vector_problem
from local_mcp_memory.domain.identifiers import Namespace


class Embedding:
    """Owns the current embedder. The dimension of a ``provider:model`` is learned from
    its first answer and recorded in the config; a later answer of another length is an
    error and nothing is written."""

    QUERY_THREADS = 2  # queries embedded beside their searches at once; more wait in their own thread

    def __init__(self, factory: EmbedderFactory, config: ConfigRepository) -> None:
        self._factory = factory
        self._config = config
        self._lock = threading.Lock()
        self._settings = config.load().embedder
        self._embedder: Embedder | None = None
        self._queries: ThreadPoolExecutor | None = None  # created with the first query it embeds
        self._free = threading.Semaphore(self.QUERY_THREADS)

    @property
    def settings(self) -> EmbedderSettings:
        return self._settings

    def known_namespace(self) -> Namespace | None:
        """The current namespace if its dimension is known, without calling the embedder."""
        settings = self._settings
        return None if settings.dim is None else _namespace(settings, settings.dim)

    def namespace(self) -> Namespace:
        """The current namespace, asking the embedder once if the dimension is unknown."""
        return self.known_namespace() or self.embed(["dimension probe"], "passage")[0]

    def embed(self, texts: Sequence[str], kind: EmbedKind) -> tuple[Namespace, Sequence[Vector]]:
        settings, embedder = self._current()
        return self._embed(settings, embedder, texts, kind)

    def query_vector(self, query: str) -> QueryVector:
        """The vector of a search query, being computed on a thread of this object's while
        the caller goes on (a ``ports.PendingVector``), by the embedder current now. In the
        caller's thread, before returning, when the dimension is not known yet (the
        namespace needs it) or every query thread is busy."""
        settings, embedder = self._current()
        if settings.dim is not None and self._free.acquire(blocking=False):
            try:
                future = self._pool().submit(self._embed, settings, embedder, [query], "query")
            except BaseException:
                self._free.release()
                raise
            future.add_done_callback(lambda _: self._free.release())
            return QueryVector(_namespace(settings, settings.dim), future)
        namespace, (vector,) = self._embed(settings, embedder, [query], "query")
        done: Future[tuple[Namespace, Sequence[Vector]]] = Future()
        done.set_result((namespace, [vector]))
        return QueryVector(namespace, done)

    def close(self) -> None:
        """Wait for the queries being embedded, and end the threads that embed them."""
        with self._lock:
            queries, self._queries = self._queries, None
        if queries is not None:
            queries.shutdown(wait=True)

    def _pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._queries is None:
                self._queries = ThreadPoolExecutor(self.QUERY_THREADS, thread_name_prefix="embed-query")
            return self._queries

    def _embed(
        self, settings: EmbedderSettings, embedder: Embedder, texts: Sequence[str], kind: EmbedKind
    ) -> tuple[Namespace, Sequence[Vector]]:
        vectors = embedder.embed(texts, kind)
        if len(vectors) != len(texts):
            raise EmbedderRejected(settings.provider, None, "the embedder returned a wrong number of vectors")
        dims = {len(v) for v in vectors}
        if len(dims) > 1:
            raise EmbedderRejected(settings.provider, None, "the embedder returned vectors of mixed lengths")
        for vector in vectors:
            if (problem := vector_problem(vector)) is not None:
                raise EmbedderRejected(settings.provider, None, f"the embedder returned a vector that {problem}")
        dim = dims.pop() if dims else (settings.dim or 0)
        return self._learn(settings, dim), vectors

    def switch(self, change: Callable[[EmbedderSettings], EmbedderSettings]) -> Namespace:
        """Apply ``change`` to the stored embedder settings (read afresh: another process
        may have written them) and make the result current after one successful probe;
        on failure nothing changes. The dimensions other processes recorded meanwhile are
        kept."""
        wanted = change(self._config.load().embedder)
        embedder = self._factory.create(wanted)
        vectors = embedder.embed(["dimension probe"], "passage")
        dim = len(vectors[0])
        recorded = wanted.dim
        if recorded is not None and recorded != dim:
            raise DimensionChanged(wanted.provider, wanted.model_key, recorded, dim)

        def chosen(current: Settings) -> Settings:
            dims = {**current.embedder.dims, wanted.model_key: dim}
            return attrs.evolve(current, embedder=attrs.evolve(wanted, dims=dims))

        with self._lock:
            learned = self._config.update(chosen).embedder
            self._settings, self._embedder = learned, embedder
        return _namespace(learned, dim)

    def _current(self) -> tuple[EmbedderSettings, Embedder]:
        """The settings and their embedder, created on first use: a setting that cannot
        make an embedder (unknown model, missing extra) fails the requests that need one,
        never the server's start."""
        with self._lock:
            if self._embedder is None:
                self._embedder = self._factory.create(self._settings)
            return self._settings, self._embedder

    def _learn(self, settings: EmbedderSettings, dim: int) -> Namespace:
        recorded = settings.dim
        if recorded is None:
            with self._lock:
                if self._settings.dim is None and self._settings.model_key == settings.model_key:
                    dims = {**self._settings.dims, settings.model_key: dim}
                    self._settings = attrs.evolve(self._settings, dims=dims)
                    self._config.update(lambda current: _with_dim(current, settings.model_key, dim))
        elif recorded != dim:
            raise DimensionChanged(settings.provider, settings.model_key, recorded, dim)
        return _namespace(settings, dim)


class QueryVector:
    """A search query's vector in ``namespace`` (``Embedding.query_vector``), a
    ``ports.PendingVector``. Used as a context manager around the search: leaving it waits
    for the embedding to end, so that no thread works on after the search, and raises what
    the embedding raised, even when the store never asked for the vector or failed first
    (a search embedded its query before anything else, and fails as it did)."""

    def __init__(self, namespace: Namespace, future: Future[tuple[Namespace, Sequence[Vector]]]) -> None:
        self.namespace = namespace
        self._future = future

    def result(self) -> Vector:
        (vector,) = self._future.result()[1]
        return vector

    def __enter__(self) -> QueryVector:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        failure = self._future.exception()  # waits
        if failure is not None and failure is not exc:
            raise failure


def _with_dim(settings: Settings, model_key: str, dim: int) -> Settings:
    dims = {**settings.embedder.dims, model_key: dim}
    return attrs.evolve(settings, embedder=attrs.evolve(settings.embedder, dims=dims))


def _namespace(settings: EmbedderSettings, dim: int) -> Namespace:
    return Namespace(settings.provider, settings.effective_model, dim)
