"""A large project's vectors held whole in the server process with a FAISS HNSW graph over
them, so that a hybrid or semantic search of the whole project finds its semantic candidates
here instead of walking PostgreSQL's HNSW index (``vector_cache`` holds the smaller projects
whole and scans them exactly).

``ProjectGraph``: the vectors of one project and namespace as of a feed position, in the
spread's sample order (``queries.spread_part``), with a graph (``IndexHNSWFlat``, inner product
of the unit rows, ``GRAPH_M`` links per node) built over them once and never changed after.
What the change feed brings later is laid over it: a changed or removed note's row is marked
dead (the walk passes through it, a bitmap selector keeps it out of the answer), and its current
vector, if any, joins a small ``tail`` scanned exactly. Once the dead rows and the tail pass
``STALE_SHARE`` of the graph, a new graph is built beside it while the old one serves; before
that, a tail past ``TAIL_MAX`` vectors is added to a copy of the graph (``extended``: FAISS
takes new vectors into a graph as it was built with them), so a project that grows by
writes keeps a short tail without being read and built again.

The walk finds the candidates, their cosines are computed from the vectors as pgvector computes
them (``project_vectors.pg_cosines``), and the best ``depth`` of the walk and the tail are ordered as
the exact scan orders them (cosine, newer, smaller id). Measured at 100k notes in one project
against the exact scan (``bench.held_vectors``): recall@10 and @30 above the PostgreSQL walk's.

``GraphBuild``: the first search of a project too large to be held whole starts a build on a
thread of its own, over a connection of its own: it reads every vector of the project in one
snapshot with the feed position of that snapshot, builds the graph (one thread: ``faiss``'s
OpenMP team set to one; the build releases the GIL, so searches go on), and hands it to the
cache, which brings it up to the feed at the next search. Until then the PostgreSQL walk serves.
Closing the store cancels the read or stops the build between two chunks, and joins the thread.
Memory: a graph holds each vector twice (the rows as read, and the graph's unit copy), so it
counts twice against the cache's ``max_vectors``; a project that would not fit is not built.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from datetime import timedelta

import faiss
import numpy as np
import psycopg
import structlog

from local_mcp_memory.adapters.postgres_store.project_vectors import (
    EPOCH,
    ProjectVectors,
    instant,
    larger_than_scan,
    pg_cosines,
    sent_matrix,
)
from local_mcp_memory.adapters.postgres_store.rebuild import Background
from local_mcp_memory.application.ports import NO_SPREAD, Candidate, Spread

log = structlog.get_logger()

GRAPH_M = 32
"""Links per node of the graph (twice FAISS's default)."""
GRAPH_EF_CONSTRUCTION = 64
GRAPH_EF_SEARCH = 320
"""The walk's candidate list. Measured at 100k notes of 384 dimensions against the exact scan,
with questions the model embeds (docs/performance.md): recall@10 0.963 and @30 0.941, where
pgvector's walk gives 0.948 and 0.918; about 1–1.5 ms of one core per walk. M 16 with
efSearch 128 gave 0.857 at 100k; a build of M 32 takes 22–27 s of one core."""

STALE_SHARE = 0.1
"""A graph whose dead rows and tail together pass this share of its rows is built again."""

TAIL_MAX = 2_048
"""Vectors in a graph's tail past which they are added to a copy of the graph
(``ProjectGraph.extended``): the tail is copied at each write and scanned at each search."""

CHUNK = 2_000
"""Vectors read, or added to the graph, between two checks of whether the store is closing."""

RETRY_AFTER = 600.0
"""Seconds before a project whose build failed or did not fit is tried again."""

LOAD_SQL = """SELECT v.note, (extract(epoch FROM v.created) * 1000000)::bigint, vector_send(v.embedding),
    hashtextextended(v.note, 0) FROM vectors v WHERE v.space = %(space)s AND v.project = %(project)s"""
"""Every vector of a project (in no order: sorted here, which the database does not do faster)."""

Key = tuple[str, int]
Connect = Callable[[], AbstractContextManager[psycopg.Connection]]


class ProjectGraph:
    """One project's vectors in one namespace as of feed position ``seen``: ``base`` (every
    vector when the graph ``index`` was built, in sample order, or in the order ``order``
    gives once extended; row i is the graph's id i),
    its rows ``dead`` since, and the ``tail`` of vectors written since. Read-only once built."""

    complete = True

    def __init__(self, base: ProjectVectors, index: faiss.Index, seen: int, dead: np.ndarray | None = None,
                 tail: ProjectVectors | None = None, order: np.ndarray | None = None) -> None:
        self.base = base
        self.order = order  # the rows of ``base`` in sample order; None: ``base`` is in that order
        self.index = index
        self.seen = seen
        self.dead = np.zeros(len(base), dtype=bool) if dead is None else dead
        self.tail = tail if tail is not None else ProjectVectors(
            [], np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32), complete=True, seen=seen)
        self._dead_count = int(np.count_nonzero(self.dead))
        self.count = len(base) - self._dead_count + len(self.tail)  # the project's vectors now
        self.usable = base.usable and self.tail.usable

    def __len__(self) -> int:
        """The vectors this copy counts against the cache's budget: the graph's own copy too."""
        return 2 * len(self.base) + len(self.tail)

    def stale(self) -> bool:
        """Whether enough has changed since the graph was built to build it again."""
        return self._dead_count + len(self.tail) > STALE_SHARE * len(self.base)

    def changed(self, rows: list[tuple], seen: int) -> ProjectGraph:
        """This copy with the feed's ``rows`` since its position applied (as
        ``ProjectVectors.changed`` takes them), as of ``seen``: each changed note's row of the
        graph dead, its current vector, if any, in the tail."""
        if not rows:
            return ProjectGraph(self.base, self.index, seen, self.dead, self.tail, self.order)
        dead = self.dead.copy()
        base_rows = self.base.row_of()
        for key, *_rest in rows:
            row = base_rows.get(key)
            if row is not None:
                dead[row] = True
        return ProjectGraph(self.base, self.index, seen, dead, self.tail.changed(rows, seen), self.order)

    def long_tail(self) -> bool:
        """Whether the tail holds enough vectors to add them to a copy of the graph (not one
        of zero length: such a project is searched in SQL)."""
        return len(self.tail) > TAIL_MAX and self.tail.usable

    def extended(self, stopping: Callable[[], bool]) -> ProjectGraph | None:
        """This copy with its tail's vectors added to a copy of the graph, as of the same feed
        position: the rows appended to ``base`` (so ``order`` gives the sample order), the
        tail empty, the dead rows still dead. A graph takes new vectors as well as it was
        built with them; only removals and replacements, whose rows stay in it, call for a
        build anew (``stale``). None when stopped."""
        tail = self.tail
        index = faiss.clone_index(self.index)
        if not _added(index, tail, stopping):
            return None
        base = ProjectVectors(
            self.base.ids + tail.ids, np.concatenate([self.base.created, tail.created]),
            np.concatenate([self.base.matrix, tail.matrix]), complete=True, seen=self.seen,
            hashes=np.concatenate([self.base.hashes, tail.hashes]), squares=np.concatenate([self.base.squares, tail.squares]),
        )
        base.row_of()  # here, as a build does
        return ProjectGraph(base, index, self.seen, np.concatenate([self.dead, np.zeros(len(tail), dtype=bool)]),
                            order=sample_order(base.hashes, base.ids.__getitem__))

    def large(self, hidden: frozenset[str]) -> bool:
        """As ``ProjectVectors.large``."""
        return larger_than_scan(self.count, hidden)

    def nearest(self, q: np.ndarray, depth: int, hidden: frozenset[str]) -> list[Candidate]:
        """The ``depth`` best the walk and the tail find, by cosine, then newer, then smaller id."""
        left_out = self._left_out(hidden)
        params = faiss.SearchParametersHNSW()
        params.efSearch = max(GRAPH_EF_SEARCH, depth)
        if left_out is not None:
            kept = np.packbits(~left_out, bitorder="little")  # alive while the walk runs
            params.sel = faiss.IDSelectorBitmap(len(left_out), faiss.swig_ptr(kept))
        q32 = np.asarray(q, dtype=np.float32).reshape(1, -1)
        norm = float(np.linalg.norm(q32))
        # one OpenMP thread, set per calling thread (libgomp keeps it per thread): a team of
        # two cost a hybrid search about 3 ms more CPU on two busy cores, though one walk
        # uses only one of them
        faiss.omp_set_num_threads(1)
        _, found = self.index.search(q32 / norm if norm > 0 else q32, depth, params=params)
        rows = found[0][found[0] >= 0]
        cosines = pg_cosines(self.base.matrix[rows], self.base.squares[rows], q) if len(rows) else np.zeros(0)
        best = [(float(c), int(self.base.created[i]), self.base.ids[i]) for c, i in zip(cosines, rows)]
        if len(self.tail):
            best += [(c.score, _microseconds(c), c.id) for c in self.tail.nearest(q, depth, hidden)]
        best.sort(key=lambda c: (-c[0], -c[1], c[2]))
        return [Candidate(key, instant(created), score) for score, created, key in best[:depth]]

    def spread(self, q: np.ndarray, sample: int, hidden: frozenset[str]) -> Spread | None:
        """As ``ProjectVectors.spread`` for a whole project: the first ``sample`` visible
        vectors in sample order, of the graph's rows and the tail's merged."""
        left_out = self._left_out(hidden)
        reach = min(len(self.base), sample + (0 if left_out is None else int(np.count_nonzero(left_out))))
        ordered = np.arange(reach) if self.order is None else self.order[:reach]
        rows = ordered[:sample] if left_out is None else ordered[~left_out[ordered]][:sample]
        tail_rows = np.flatnonzero(self.tail.visible(hidden)) if hidden and len(self.tail) else np.arange(len(self.tail))
        if len(tail_rows):
            rows, tail_rows = self._first_merged(rows, tail_rows, sample)
        if len(rows) + len(tail_rows) == 0:
            return NO_SPREAD
        cosines = [pg_cosines(self.base.matrix[rows], self.base.squares[rows], q)] if len(rows) else []
        if len(tail_rows):
            cosines.append(pg_cosines(self.tail.matrix[tail_rows], self.tail.squares[tail_rows], q))
        joined = np.concatenate(cosines)
        return Spread(len(joined), float(joined.mean()), float(joined.std()))

    def _first_merged(self, rows: np.ndarray, tail_rows: np.ndarray, sample: int) -> tuple[np.ndarray, np.ndarray]:
        """Of the graph's ``rows`` and the tail's ``tail_rows``, the first ``sample`` in sample
        order, as the rows of each. Sorting every key as a tuple was most of a spread once
        the tail held a few hundred vectors."""
        hashes = np.concatenate([self.base.hashes[rows], self.tail.hashes[tail_rows]])
        split = len(rows)
        first = sample_order(hashes, lambda i: self.base.ids[rows[i]] if i < split else self.tail.ids[tail_rows[i - split]])[:sample]
        return rows[first[first < split]], tail_rows[first[first >= split] - split]

    def cosines_of(self, ids: Sequence[str], q: np.ndarray) -> dict[str, float]:
        """The cosines of those of ``ids`` held (the others have no vector here)."""
        base_rows, tail_rows = self.base.row_of(), self.tail.row_of()
        out = self.tail.cosines_of([key for key in ids if key in tail_rows], q)
        keys = [key for key in ids if key not in tail_rows and key in base_rows and not self.dead[base_rows[key]]]
        return {**out, **self.base.cosines_of(keys, q)}

    def vectors_of(self, ids: Sequence[str]) -> np.ndarray | None:
        """The current vectors of ``ids`` (rows in that order), when every one is held."""
        base_rows, tail_rows = self.base.row_of(), self.tail.row_of()
        out = []
        for key in ids:
            if key in tail_rows:
                out.append(self.tail.matrix[tail_rows[key]])
            elif key in base_rows and not self.dead[base_rows[key]]:
                out.append(self.base.matrix[base_rows[key]])
            else:
                return None
        return np.stack(out) if out else np.zeros((0, self.base.matrix.shape[1]), dtype=np.float32)

    def _left_out(self, hidden: frozenset[str]) -> np.ndarray | None:
        """Per row of the graph, whether it is dead or ``hidden``; None when none is."""
        base_rows = self.base.row_of()
        picked = [base_rows[key] for key in hidden if key in base_rows]
        if not picked and not self._dead_count:
            return None
        left_out = self.dead.copy()
        left_out[picked] = True
        return left_out


def sample_order(hashes: np.ndarray, id_of: Callable[[int], str]) -> np.ndarray:
    """The positions of rows in sample order (hash, then id), from their ``hashes`` and the
    id of each position: the hashes sorted alone, the ids read only when two hashes are equal
    (then every key as a tuple)."""
    order = np.argsort(hashes, kind="stable")
    if np.any(np.diff(hashes[order]) == 0):
        order = np.array(sorted(range(len(hashes)), key=lambda i: (int(hashes[i]), id_of(i))), dtype=np.int64)
    return order


def build_graph(conn: psycopg.Connection, project: str, space: int, stopping: Callable[[], bool]) -> ProjectGraph | None:
    """Every vector of ``project`` in ``space`` read in one snapshot, and the graph over them;
    None when stopped, or when a vector has zero length (its searches stay in SQL)."""
    ids: list[str] = []
    created, hashes, blobs = [], [], []
    with conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        found = conn.execute("SELECT seq FROM keyword_totals WHERE project = %s", (project,)).fetchone()
        with conn.cursor(name="vector_graph_load", binary=True) as cursor:
            cursor.itersize = CHUNK
            cursor.execute(LOAD_SQL, {"space": space, "project": project})
            while rows := cursor.fetchmany(CHUNK):
                if stopping():
                    return None
                ids.extend(row[0] for row in rows)
                created.extend(row[1] for row in rows)
                hashes.extend(row[3] for row in rows)
                blobs.append(sent_matrix(row[2] for row in rows))
    order = sample_order(np.array(hashes, dtype=np.int64), ids.__getitem__)
    matrix = np.concatenate(blobs)[order] if blobs else np.zeros((0, 0), dtype=np.float32)
    del blobs
    base = ProjectVectors([ids[i] for i in order], np.array(created, dtype=np.int64)[order], matrix, complete=True,
                          seen=0 if found is None else int(found[0]), hashes=np.array(hashes, dtype=np.int64)[order])
    if not base.usable or not len(base):
        return None
    index = faiss.IndexHNSWFlat(matrix.shape[1], GRAPH_M, faiss.METRIC_INNER_PRODUCT)
    if not _added(index, base, stopping):
        return None
    base.row_of()  # here, not in the first search after (about 50 ms at 100k vectors)
    return ProjectGraph(base, index, base.seen)


def _added(index: faiss.Index, vectors: ProjectVectors, stopping: Callable[[], bool]) -> bool:
    """``vectors`` made unit length and added to the graph ``index`` on this thread, ``CHUNK``
    at a time; False when stopped between two chunks."""
    faiss.omp_set_num_threads(1)
    index.hnsw.efConstruction = GRAPH_EF_CONSTRUCTION
    lengths = np.sqrt(vectors.squares).astype(np.float32)[:, None]
    for start in range(0, len(vectors), CHUNK):
        if stopping():
            return False
        index.add(vectors.matrix[start:start + CHUNK] / lengths[start:start + CHUNK])
    return True


class GraphBuild(Background):
    """A build of one project's graph on a thread started at once, handing the graph to
    ``install`` when done (not when stopped or failed), which says whether it took it;
    ``done`` hears at the end whether a graph was taken."""

    def __init__(self, connect: Connect, key: Key, install: Callable[[ProjectGraph], bool], done: Callable[[bool], None],
                 source: ProjectGraph | None = None) -> None:
        super().__init__("vector-graph", self._run, connect, key, install, done, source)
        self._thread.start()

    def _run(self, connect: Connect, key: Key, install: Callable[[ProjectGraph], bool], done: Callable[[bool], None],
             source: ProjectGraph | None) -> None:
        """``source``: a graph to extend with its tail (``ProjectGraph.extended``), no
        connection needed; None: a graph built from the project's vectors read anew."""
        built = False
        try:
            started = time.monotonic()
            if source is not None:
                graph = source.extended(lambda: self._stopping)
            else:
                with connect() as conn:
                    if not self._attach(conn):
                        return
                    graph = build_graph(conn, key[0], key[1], lambda: self._stopping)
                self._attach(None)
            if graph is not None and not self._stopping:
                built = install(graph)
                log.info("postgres_store.vector_graph_built", project=key[0], vectors=len(graph.base), held=built,
                         extended=source is not None, seconds=round(time.monotonic() - started, 1))
        except (psycopg.Error, RuntimeError, MemoryError) as exc:  # faiss raises RuntimeError
            if not self._stopping:
                log.warning("postgres_store.vector_graph_failed", project=key[0], error=str(exc).strip())
        finally:
            self._attach(None)
            done(built)


def _microseconds(candidate: Candidate) -> int:
    return (candidate.created_at - EPOCH) // timedelta(microseconds=1)

