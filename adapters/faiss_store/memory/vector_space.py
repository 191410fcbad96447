"""The vectors of one namespace: float32 rows ("slots") in blocks, owned by note rows.

Block 0 is the snapshot's vector file, memory-mapped copy-on-write (opening reads it once
to check its CRC, then pages stay shared with the page cache and are copied only if a
write changes them). Later blocks are
allocated as the space fills, each half the size so far, so no write ever copies the
vectors already there. A slot belongs to one note row or is free (reused by the next
insert); ``slot_row`` maps slots to note rows and ``row_slot`` note rows to slots, so a
put, a delete or a note moving to a new row (``move``) costs the same at any size.

Search scores, per block, the matching slots (the rows a ``NoteTable.mask`` selects):
where they are a minority, FAISS ``knn_inner_products_by_idx`` computes the inner product
of the query with them only; where they are most of the block, scoring the whole block is
faster (FAISS on this thread for a small block, one BLAS product for a large one:
``BLAS_ROWS``). ``top_k`` are returned whenever that many match.

A space of ``partition.MIN_VECTORS`` or more gets a ``Partition`` when it is snapshotted
(``repartition``): then a search whose filter keeps at least half the space scores only
the matching slots in the lists nearest the query (exactly, and falls back to every
matching slot if those hold fewer than ``top_k``). A snapshot writes the vectors grouped
by list, so those slots lie in runs. Slots written since are given their list in one
batch, by the next search that needs it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import faiss
import numpy as np

from local_mcp_memory.adapters.faiss_store.memory import partition as partitioning
from local_mcp_memory.adapters.faiss_store.memory.columns import Column, runs
from local_mcp_memory.adapters.faiss_store.memory.partition import Partition
from local_mcp_memory.application.errors import StoreError

FREE = -1


class VectorSpace:
    def __init__(
        self,
        dim: int,
        base: np.ndarray | None = None,
        owners: np.ndarray | None = None,
        partition: tuple[Partition, np.ndarray] | None = None,
    ) -> None:
        """An empty space, or one whose slot ``i`` is ``base[i]``, owned by row ``owners[i]``
        and, with a ``partition``, in its list ``lists[i]``."""
        self.dim = dim
        self._blocks: list[np.ndarray] = []
        self._starts: list[int] = []
        self.slot_row = Column("<i4", fill=FREE)
        self.row_slot = Column("<i4", fill=FREE)
        self.free: list[int] = []
        self.count = 0
        self.partition: Partition | None = None
        self.slot_list = Column("<i4", fill=FREE)  # with a partition: each used slot's list
        self._unlisted: list[int] = []  # used slots not yet given their list
        # the last mask searched, its slots and their lists: one filter searched again and
        # again (a session in one project) pays for them once, until the next write
        self._matching: tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray] | None] | None = None
        if partition is not None:
            self.partition = partition[0]
            self.slot_list.extend(partition[1])
        elif base is not None:
            self.slot_list.extend(np.full(base.shape[0], FREE, dtype=np.int32))
        if base is not None and base.shape[0]:
            assert owners is not None
            self._blocks.append(base)
            self._starts.append(0)
            self.slot_row.extend(owners)
            if owners.shape[0]:
                self.row_slot[int(owners.max())] = FREE  # sized to every owner
                self.row_slot.values[owners] = np.arange(owners.shape[0], dtype=np.int32)
            self.count = owners.shape[0]

    def __len__(self) -> int:
        return self.count

    def has(self, row: int) -> bool:
        return self.row_slot[row] != FREE

    @property
    def capacity(self) -> int:
        return self._starts[-1] + self._blocks[-1].shape[0] if self._blocks else 0

    def _where(self, slot: int) -> tuple[np.ndarray, int]:
        for start, block in zip(reversed(self._starts), reversed(self._blocks)):
            if slot >= start:
                return block, slot - start
        raise IndexError(slot)

    def put(self, row: int, vector: np.ndarray) -> None:
        """Give note row ``row`` this vector (float32, shape ``(dim,)``), replacing its old one."""
        self._matching = None
        slot = int(self.row_slot[row])
        if slot == FREE:
            if not self.free:
                self._grow()
            slot = self.free.pop()
            self.slot_row[slot] = row
            self.row_slot[row] = slot
            self.count += 1
        block, at = self._where(slot)
        block[at] = vector
        if self.partition is not None:
            self._unlisted.append(slot)

    def _grow(self) -> None:
        start = self.capacity
        size = max(1024, start // 2)
        self._blocks.append(np.zeros((size, self.dim), dtype=np.float32))
        self._starts.append(start)
        self.slot_row[start + size - 1] = FREE
        self.slot_list[start + size - 1] = FREE
        self.free.extend(range(start + size - 1, start - 1, -1))

    def move(self, old: int, new: int) -> None:
        """Note row ``old`` was superseded by row ``new``: its vector goes with it."""
        self._matching = None
        slot = int(self.row_slot[old])
        if slot != FREE:
            self.row_slot[old] = FREE
            self.row_slot[new] = slot
            self.slot_row[slot] = new

    def remove(self, row: int) -> bool:
        self._matching = None
        slot = int(self.row_slot[row])
        if slot == FREE:
            return False
        self.row_slot[row] = FREE
        self.slot_row[slot] = FREE
        self.free.append(slot)
        self.count -= 1
        return True

    def vector(self, row: int) -> np.ndarray | None:
        slot = int(self.row_slot[row])
        if slot == FREE:
            return None
        block, at = self._where(slot)
        return np.array(block[at])

    def rows(self) -> np.ndarray:
        """The note rows holding a vector here."""
        rows = self.slot_row.values
        return rows[rows != FREE]

    def used(self) -> np.ndarray:
        """The used slots in the order a snapshot writes them: by list with a partition
        (each list's slots in a run), else in slot order."""
        slots = np.flatnonzero(self.slot_row.values != FREE)
        if self.partition is not None:
            self._list_unlisted()
            slots = slots[by_key(self.slot_list.values[slots], self.partition.lists)]
        return slots

    def gather(self, slots: np.ndarray) -> np.ndarray:
        """The vectors of ``slots`` (float32, ``(len(slots), dim)``), in that order."""
        out = np.empty((slots.shape[0], self.dim), dtype=np.float32)
        for start, block, at in self._per_block_positions(slots):
            out[at] = block[slots[at] - start]
        return out

    def repartition(self) -> None:
        """Train a partition when the space has ``MIN_VECTORS`` vectors and none, or twice
        as many as its partition was trained on (``partition``); before a snapshot."""
        if self.count < partitioning.MIN_VECTORS or (self.partition is not None and self.count < 2 * self.partition.trained):
            return
        slots = np.flatnonzero(self.slot_row.values != FREE)
        self.partition, lists = partitioning.train(self.gather(slots))
        self.slot_list.values[slots] = lists
        self._unlisted, self._matching = [], None

    def _list_unlisted(self) -> None:
        """Give the slots written since the last listing their list, in one product."""
        if self._unlisted and self.partition is not None:
            slots = np.asarray(self._unlisted, dtype=np.int64)
            self._unlisted = []
            self.slot_list.values[slots] = self.partition.assign(self.gather(slots))
            if self._matching is not None:
                self._matching = (*self._matching[:2], None)

    def search(
        self, query: Sequence[float], k: int, mask: np.ndarray, order: Callable[[int], tuple]
    ) -> list[tuple[int, float]]:
        """The ``k`` best (note row, inner product) among rows where ``mask`` (indexed by
        note row) is True; ties ordered by ``order(row)``. Every matching row is scanned, but
        where the partition applies (``_nearest_lists``): then those in the nearest lists."""
        q = self._query(query)
        slots = self._slots(mask)
        if slots.shape[0] == 0 or k <= 0:
            return []
        slots = self._nearest_lists(q, slots, k)
        count = slots.shape[0]
        want = min(count, k + 8)
        while True:
            scores, best = self._best(q, slots, want)
            if want >= count or scores[k - 1] > scores[want - 1]:
                break  # every slot tied with the k-th best is in hand
            want = min(count, want * 4)
        rows = self.slot_row.values[best]
        found = [(int(r), float(s)) for r, s in zip(rows.tolist(), scores.tolist())]
        found.sort(key=lambda pair: (-pair[1], *order(pair[0])))
        return found[:k]

    def spread(self, query: Sequence[float], mask: np.ndarray, sample: int) -> tuple[int, float, float]:
        """(count, mean, std) of the inner products of ``query`` with the rows where ``mask``
        is True: every one up to ``sample``, else ``sample`` evenly spaced in row order.
        Each product is read in place by its slot (FAISS, this thread) and summed on its
        own; the mean and deviation in float64. Gathering the sample into a matrix of its
        own cost 0.45 ms for 1,024 rows, paid again after every write (an add's
        suggestions search right after the add before it); this takes 0.05."""
        q = self._query(query)
        slots = self._slots(mask)
        if slots.shape[0] > sample:
            slots = slots[np.linspace(0, slots.shape[0] - 1, sample).astype(np.int64)]
        if slots.shape[0] == 0:
            return 0, 0.0, 0.0
        scores = []
        for _, block, inside in self._per_block(slots):
            found = np.empty(inside.shape[0], dtype=np.float32)
            faiss.fvec_inner_products_by_idx(
                faiss.swig_ptr(found), faiss.swig_ptr(q), faiss.swig_ptr(block), faiss.swig_ptr(inside),
                self.dim, 1, inside.shape[0],
            )  # fmt: skip
            scores.append(found)
        wide = np.concatenate(scores).astype(np.float64)
        return int(wide.shape[0]), float(wide.mean()), float(wide.std())

    def cosines(self, query: Sequence[float], rows: Sequence[int]) -> list[float | None]:
        """The inner product of ``query`` with the vector of each of ``rows``; None for a
        row without one here. Each row's sum is its own (a product's rows summed one by one,
        not a matrix product, whose kernel may sum a row in another order depending on how
        many rows come with it): a note's cosine is the same whichever notes are asked with it."""
        q = self._query(query)
        held, vectors = self.held(rows)
        found: list[float | None] = [None] * len(rows)
        for i, score in zip(held.tolist(), np.multiply(vectors, q).sum(axis=1).tolist()):
            found[i] = score
        return found

    def held(self, rows: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """(the positions in ``rows`` of those with a vector here, their vectors in that order)."""
        rows = np.asarray(rows, dtype=np.int64)
        slots = np.full(rows.shape[0], FREE, dtype=np.int64)
        known = rows < self.row_slot.size
        slots[known] = self.row_slot.values[rows[known]]
        held = np.flatnonzero(slots != FREE)
        return held, self.gather(slots[held])

    def _nearest_lists(self, q: np.ndarray, slots: np.ndarray, k: int) -> np.ndarray:
        """``slots`` restricted to the partition's lists nearest ``q``, when the space has a
        usable partition, ``slots`` are at least half of it and ``MIN_VECTORS``, and at
        least ``k`` remain; else ``slots``."""
        partition = self.partition
        if partition is None or not partition.usable or slots.shape[0] < max(partitioning.MIN_VECTORS, self.count / 2):
            return slots
        self._list_unlisted()
        chosen = np.flatnonzero(partition.chosen(q, slots.shape[0] / self.count))
        by_list, ends = self._by_list(slots)
        starts = np.concatenate(([0], ends[:-1]))[chosen]
        lengths = ends[chosen] - starts
        if int(lengths.sum()) < k:
            return slots
        return by_list[runs(starts, lengths)]

    def _by_list(self, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``slots`` grouped by list (in slot order within one), and where each list's run
        ends; kept with the cached ``slots`` of a mask."""
        cached = self._matching
        if cached is not None and cached[1] is slots and cached[2] is not None:
            return cached[2]
        lists = self.slot_list.values[slots]
        order = by_key(lists, self.partition.lists)
        grouped = (slots[order], np.cumsum(np.bincount(lists, minlength=self.partition.lists)))
        if cached is not None and cached[1] is slots:
            self._matching = (cached[0], slots, grouped)
        return grouped

    def _query(self, query: Sequence[float]) -> np.ndarray:
        q = np.ascontiguousarray(np.asarray(query, dtype=np.float32).reshape(-1))
        if q.shape[0] != self.dim:
            raise StoreError(f"a query of dimension {self.dim} was expected, got {q.shape[0]} floats")
        return q

    def _slots(self, mask: np.ndarray) -> np.ndarray:
        """The slots of the rows where ``mask`` is True, in row order."""
        cached = self._matching
        if cached is not None and cached[0] is mask:
            return cached[1]
        limit = min(mask.shape[0], self.row_slot.size)
        slots = self.row_slot.values[np.flatnonzero(mask[:limit])]
        slots = slots[slots != FREE].astype(np.int64)
        self._matching = (mask, slots, None)
        return slots

    def _per_block(self, slots: np.ndarray) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        """(start, block, the block's own indexes of ``slots``) for each block holding any."""
        for start, block, at in self._per_block_positions(slots):
            yield start, block, slots[at] - start

    def _per_block_positions(self, slots: np.ndarray) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        """(start, block, the positions in ``slots`` of the slots in it) for each block holding any."""
        for start, block in zip(self._starts, self._blocks):
            at = np.flatnonzero((slots >= start) & (slots < start + block.shape[0]))
            if at.shape[0]:
                yield start, block, at

    def _best(self, q: np.ndarray, slots: np.ndarray, want: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``want`` highest (scores, slots) among ``slots``, highest first."""
        all_scores, all_slots = [], []
        for start, block, inside in self._per_block(slots):
            k = min(want, inside.shape[0])
            if inside.shape[0] * DENSE_SHARE >= block.shape[0]:
                scores, local = _dense_best(q, block, inside, k)
            else:
                scores = np.empty(k, dtype=np.float32)
                local = np.empty(k, dtype=np.int64)
                faiss.knn_inner_products_by_idx(
                    faiss.swig_ptr(q), faiss.swig_ptr(block), faiss.swig_ptr(inside),
                    self.dim, 1, block.shape[0], inside.shape[0], k,
                    faiss.swig_ptr(scores), faiss.swig_ptr(local), 0,
                )  # fmt: skip
            all_scores.append(scores)
            all_slots.append(local + start)
        scores, best = np.concatenate(all_scores), np.concatenate(all_slots)
        if len(all_scores) > 1:
            top = np.argsort(-scores, kind="stable")[:want]
            scores, best = scores[top], best[top]
        return scores, best


def by_key(keys: np.ndarray, bound: int) -> np.ndarray:
    """``np.argsort(keys, kind="stable")`` for keys in ``[0, bound)``: as 16-bit keys where they
    fit, which numpy sorts by radix, not by merging (100k keys: 0.9 ms instead of 6). A search
    groups the slots of its scope by list again after every write (``_by_list``), so an add's
    suggestion search in a project of 100k notes paid the longer sort each time."""
    if bound <= 1 << 16:
        keys = keys.astype(np.uint16)
    return np.argsort(keys, kind="stable")


DENSE_SHARE = 2
"""A scan selecting at least 1/DENSE_SHARE of a block's rows scores the whole block, which
beats FAISS's one-thread scan of a long index list."""

BLAS_ROWS = 8192
"""A block of this many rows or more is scored by one BLAS product (numpy, both cores: 0.3 ms
for 10k rows on an idle machine, against 1 ms on one thread); a smaller one by FAISS on this
thread: its scan takes under 0.8 ms, while a multi-threaded product waits on waking its
threads, milliseconds when the machine is busy, and a store written since its last
snapshot holds several such blocks."""


def _dense_best(q: np.ndarray, block: np.ndarray, inside: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` highest (scores, rows) of ``block @ q`` among rows ``inside``, highest first."""
    if block.shape[0] >= BLAS_ROWS:
        every = block @ q
    else:
        every = np.empty(block.shape[0], dtype=np.float32)
        faiss.fvec_inner_products_ny(
            faiss.swig_ptr(every), faiss.swig_ptr(q), faiss.swig_ptr(block), q.shape[0], block.shape[0]
        )
    scores = np.full(block.shape[0], -np.inf, dtype=np.float32)
    scores[inside] = every[inside]
    best = np.argpartition(-scores, k - 1)[:k]
    best = best[np.argsort(-scores[best], kind="stable")]
    return scores[best], best
