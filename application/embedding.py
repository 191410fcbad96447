"""The server's live embedder: which one runs, its namespace, and learning its dimension."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

import attrs

from local_mcp_memory.application.errors import DimensionChanged, EmbedderRejected
from local_mcp_memory.application.ports import ConfigRepository, Embedder, EmbedderFactory, EmbedKind, Vector
from local_mcp_memory.application.query_vector import QueryVector, SideThreads
from local_mcp_memory.application.settings import EmbedderSettings, Settings
from local_mcp_memory.application.vectors import vector_problem
from local_mcp_memory.domain.identifiers import Namespace


class Embedding:
    """Owns the current embedder. The dimension of a ``provider:model`` is learned from
    its first answer and recorded in the config; a later answer of another length is an
    error and nothing is written."""

    SIDE_THREADS = 2  # searches whose store work runs beside their embedding at once; more run it after
    QUERIES_KEPT = 256
    """Search queries whose vectors are kept, the most recently asked: an agent asks the same
    query again ("continue", a search retried with another filter or topK), and a vector is
    the same whenever its text is (about 1.5 KB each for 384 dimensions)."""

    def __init__(self, factory: EmbedderFactory, config: ConfigRepository) -> None:
        self._factory = factory
        self._config = config
        self._lock = threading.Lock()
        self._settings = config.load().embedder
        self._embedder: Embedder | None = None
        self._side = SideThreads(self.SIDE_THREADS)
        self._queries: OrderedDict[str, tuple[Namespace, Sequence[Vector]]] = OrderedDict()  # of the current embedder

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
        """The vector of a search query (a ``ports.PendingVector``) by the embedder current
        now, computed when asked for; at once when the dimension is not known yet (the
        namespace needs it)."""
        settings, embedder = self._current()

        def compute() -> tuple[Namespace, Sequence[Vector]]:
            with self._lock:
                kept = self._queries.get(query) if embedder is self._embedder else None
                if kept is not None:
                    self._queries.move_to_end(query)
                    return kept
            embedded = self._embed(settings, embedder, [query], "query")  # stores only read a query's vector
            with self._lock:
                if embedder is self._embedder:
                    self._queries[query] = embedded
                    if len(self._queries) > self.QUERIES_KEPT:
                        self._queries.popitem(last=False)
            return embedded

        if settings.dim is None:
            return QueryVector.computed(compute, self._side)
        return QueryVector(_namespace(settings, settings.dim), compute, self._side)

    def close(self) -> None:
        """End the threads that run a store's work beside a query's embedding."""
        self._side.close()

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
            self._queries.clear()
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


def _with_dim(settings: Settings, model_key: str, dim: int) -> Settings:
    dims = {**settings.embedder.dims, model_key: dim}
    return attrs.evolve(settings, embedder=attrs.evolve(settings.embedder, dims=dims))


def _namespace(settings: EmbedderSettings, dim: int) -> Namespace:
    return Namespace(settings.provider, settings.effective_model, dim)
