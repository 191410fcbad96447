"""The vectors of one namespace: a FAISS ``IndexFlatIP`` whose rows are slots.

A slot belongs to one note or is free (zeroed, reused by the next insert), so a delete or
a replace never moves other rows and costs the same at any size. Beside the index, three
numpy arrays hold each slot's project, group (interned codes) and createdAt (µs), so a
filter becomes a boolean mask and then a FAISS ``IDSelectorBitmap``: the scan computes
inner products of matching rows only, and returns ``top_k`` whenever that many match.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import faiss
import numpy as np

from application.errors import StoreError

FREE = -1


class VectorSpace:
    def __init__(self, dim: int, index: faiss.IndexFlatIP | None = None) -> None:
        self.dim = dim
        self.index = index if index is not None else faiss.IndexFlatIP(dim)
        self.ids: list[str | None] = [None] * self.index.ntotal
        self.slot_of: dict[str, int] = {}
        self.free: list[int] = []
        capacity = max(1024, self.index.ntotal)
        self._project = np.full(capacity, FREE, dtype=np.int32)
        self._group = np.full(capacity, FREE, dtype=np.int32)
        self._created = np.zeros(capacity, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.slot_of)

    def __contains__(self, note_id: str) -> bool:
        return note_id in self.slot_of

    def _rows(self) -> np.ndarray:
        total = self.index.ntotal
        return faiss.rev_swig_ptr(self.index.get_xb(), total * self.dim).reshape(total, self.dim)

    def put(self, note_id: str, row: np.ndarray, labels: tuple[int, int, int]) -> None:
        """Give ``note_id`` this vector (float32, shape ``(dim,)``), replacing its old one."""
        slot = self.slot_of.get(note_id)
        if slot is None:
            if not self.free:
                self._grow()
            slot = self.free.pop()
            self.ids[slot] = note_id
            self.slot_of[note_id] = slot
        self._rows()[slot] = row
        self._label(slot, labels)

    def _grow(self) -> None:
        """Add a block of free, zeroed rows: FAISS reallocates its storage on every ``add``,
        so adding one row at a time would copy the whole index per insert."""
        total = self.index.ntotal
        block = max(256, total // 4)
        self.index.add(np.zeros((block, self.dim), dtype=np.float32))
        self.ids.extend([None] * block)
        self.free.extend(range(total + block - 1, total - 1, -1))
        self._label(total + block - 1, (FREE, FREE, 0))

    def adopt(self, ids: Sequence[str | None], labels_of: Callable[[str], tuple[int, int, int]]) -> None:
        """Take ownership of a loaded index whose row ``i`` belongs to ``ids[i]``."""
        self.ids = list(ids)
        self.slot_of = {note_id: slot for slot, note_id in enumerate(self.ids) if note_id is not None}
        self.free = [slot for slot in range(len(self.ids) - 1, -1, -1) if self.ids[slot] is None]
        slots = np.fromiter(self.slot_of.values(), dtype=np.int64, count=len(self.slot_of))
        labels = np.array([labels_of(i) for i in self.slot_of], dtype=np.int64).reshape(-1, 3)
        if self.ids:
            self._label(len(self.ids) - 1, (FREE, FREE, 0))  # grows the arrays to fit every row
        self._project[slots], self._group[slots], self._created[slots] = labels.T

    def relabel(self, note_id: str, labels: tuple[int, int, int]) -> None:
        slot = self.slot_of.get(note_id)
        if slot is not None:
            self._label(slot, labels)

    def _label(self, slot: int, labels: tuple[int, int, int]) -> None:
        if slot >= self._project.shape[0]:
            extra = max(slot + 1, 2 * self._project.shape[0]) - self._project.shape[0]
            self._project = np.concatenate((self._project, np.full(extra, FREE, dtype=np.int32)))
            self._group = np.concatenate((self._group, np.full(extra, FREE, dtype=np.int32)))
            self._created = np.concatenate((self._created, np.zeros(extra, dtype=np.int64)))
        self._project[slot], self._group[slot], self._created[slot] = labels

    def remove(self, note_id: str) -> bool:
        slot = self.slot_of.pop(note_id, None)
        if slot is None:
            return False
        self.ids[slot] = None
        self.free.append(slot)
        self._rows()[slot] = 0.0
        self._project[slot] = FREE
        self._group[slot] = FREE
        return True

    def vector(self, note_id: str) -> np.ndarray | None:
        slot = self.slot_of.get(note_id)
        return None if slot is None else self._rows()[slot].copy()

    def search(
        self,
        query: Sequence[float],
        k: int,
        where: tuple[int, int | None, int | None, int | None],
        accept: Callable[[str], bool] | None,
        order: Callable[[str], tuple],
    ) -> list[tuple[str, float]]:
        """The ``k`` best (note id, inner product) among rows matching ``where``
        (project code, group code or None, since µs or None, until µs or None) and
        ``accept``; ties ordered by ``order``. Exact: a flat scan of the matching rows."""
        q = np.asarray(query, dtype=np.float32).reshape(1, -1)
        if q.shape[1] != self.dim:
            raise StoreError(f"a query of dimension {self.dim} was expected, got {q.shape[1]} floats")
        mask = self._mask(*where)
        if accept is not None:
            for slot in np.flatnonzero(mask):
                mask[slot] = accept(self.ids[slot])
        count = int(np.count_nonzero(mask))
        if count == 0 or k <= 0:
            return []
        bitmap = np.packbits(mask, bitorder="little")
        params = faiss.SearchParameters(sel=faiss.IDSelectorBitmap(bitmap))
        want = min(count, k + 8)
        while True:
            scores, slots = self.index.search(q, want, params=params)
            scores, slots = scores[0], slots[0]
            if want >= count or scores[k - 1] > scores[want - 1]:
                break  # every row tied with the k-th best is in hand
            want = min(count, want * 4)
        found = [(self.ids[s], float(d)) for s, d in zip(slots.tolist(), scores.tolist()) if s >= 0]
        found.sort(key=lambda pair: (-pair[1], *order(pair[0])))
        return found[:k]

    def _mask(self, project: int, group: int | None, since: int | None, until: int | None) -> np.ndarray:
        total = self.index.ntotal
        mask = self._project[:total] == project
        if group is not None:
            mask &= self._group[:total] == group
        if since is not None:
            mask &= self._created[:total] >= since
        if until is not None:
            mask &= self._created[:total] < until
        return mask
