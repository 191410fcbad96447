"""Growable numpy columns and the interning of names, the building blocks of ``NoteTable``.

A ``Column`` is a 1-d numpy array with spare capacity: appending is amortized O(1) (the
capacity doubles, copying a few bytes per row), and ``values`` is a view of the used part,
so filters run as numpy expressions over every row. ``Names`` gives each distinct string
(project, group, tag, namespace) a small integer code, so columns hold integers only.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


class Column:
    __slots__ = ("_data", "size", "_fill")

    def __init__(self, dtype: str, initial: np.ndarray | None = None, fill: int = 0) -> None:
        start = np.empty(0, dtype=dtype) if initial is None else np.asarray(initial, dtype=dtype)
        self._data = np.full(max(1024, 2 * start.shape[0]), fill, dtype=dtype)
        self._data[: start.shape[0]] = start
        self.size = start.shape[0]
        self._fill = fill

    @property
    def values(self) -> np.ndarray:
        return self._data[: self.size]

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, index: int):
        return self._data[index] if index < self.size else self._fill

    def __setitem__(self, index: int, value) -> None:
        """Set one cell; past the end, the column first grows to ``index + 1`` (new cells
        hold the fill value)."""
        if index >= self.size:
            self._reserve(index + 1)
            self.size = index + 1
        self._data[index] = value

    def append(self, value) -> int:
        index = self.size
        self[index] = value
        return index

    def extend(self, values: np.ndarray) -> None:
        end = self.size + values.shape[0]
        self._reserve(end)
        self._data[self.size : end] = values
        self.size = end

    def _reserve(self, size: int) -> None:
        if size > self._data.shape[0]:
            grown = np.full(max(size + size // 2, 2 * self._data.shape[0]), self._fill, dtype=self._data.dtype)
            grown[: self.size] = self._data[: self.size]
            self._data = grown


def runs(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The indexes ``starts[i], …, starts[i] + lengths[i] - 1`` of every run, back to back."""
    total = int(lengths.sum())
    return np.repeat(starts - (np.cumsum(lengths) - lengths), lengths) + np.arange(total)


class Names:
    """Strings and their codes (0, 1, 2, … in order of first use)."""

    def __init__(self, names: Iterable[str] = ()) -> None:
        self.names: list[str] = list(names)
        self._codes = {name: code for code, name in enumerate(self.names)}

    def code(self, name: str) -> int:
        """The code of ``name``, given a new one if it has none."""
        code = self._codes.get(name)
        if code is None:
            code = self._codes[name] = len(self.names)
            self.names.append(name)
        return code

    def find(self, name: str) -> int | None:
        """The code of ``name``, None if no note ever used it."""
        return self._codes.get(name)

    def __len__(self) -> int:
        return len(self.names)
