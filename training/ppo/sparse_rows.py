"""Observations kept as their nonzero entries, for imitation data that would not fit in memory dense.

Observations are mostly zeros (one-hot fields): a 4-player Palazzo observation has 4,746 float32 entries
(19 KB) of which about 180 are nonzero. The warm start records every decision of thousands of teacher
games — 2,000 Palazzo games are about 800,000 decisions, 15 GB dense — so it stores each row's nonzero
columns and values (compressed sparse rows: about 1 KB per Palazzo decision) and makes dense rows only for
the batch being fitted.
"""

from __future__ import annotations

import numpy as np


class SparseRows:
    """A growing list of float32 rows of ``width`` values, stored sparse; ``rows[indices]`` is dense."""

    def __init__(self, width: int):
        self.width = width
        self.index_dtype = np.uint16 if width <= 2**16 else np.uint32
        # one array per extend(), after an empty one: joined once rows are read
        self._columns: list[np.ndarray] = [np.zeros(0, self.index_dtype)]
        self._values: list[np.ndarray] = [np.zeros(0, np.float32)]
        self._counts: list[np.ndarray] = [np.zeros(0, np.int64)]  # nonzeros per row
        self._csr: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    @classmethod
    def join(cls, parts: list[SparseRows]) -> SparseRows:
        """The rows of ``parts`` one after the other (e.g. the chunks of games played by worker processes)."""
        joined = cls(parts[0].width)
        for part in parts:
            if part.width != joined.width:
                raise ValueError(f"cannot join rows of {part.width} values to rows of {joined.width}")
            joined._columns += part._columns
            joined._values += part._values
            joined._counts += part._counts
        return joined

    def extend(self, block: np.ndarray) -> None:
        """Append the rows of the 2-D array ``block`` (e.g. the observations of one game)."""
        block = np.asarray(block, dtype=np.float32)
        if block.ndim != 2 or block.shape[1] != self.width:
            raise ValueError(f"expected rows of {self.width} values, got an array of shape {block.shape}")
        rows, columns = np.nonzero(block)
        self._columns.append(columns.astype(self.index_dtype))
        self._values.append(block[rows, columns])
        self._counts.append(np.bincount(rows, minlength=len(block)))
        self._csr = None

    def __len__(self) -> int:
        return sum(len(c) for c in self._counts)

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for part in (self._columns, self._values, self._counts) for a in part)

    def _compressed(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(row starts, columns, values) of all rows, joined once after the last ``extend``."""
        if self._csr is None:
            self._columns, self._values, self._counts = ([np.concatenate(part)] for part in
                                                         (self._columns, self._values, self._counts))
            starts = np.concatenate([[0], np.cumsum(self._counts[0])])
            self._csr = (starts, self._columns[0], self._values[0])
        return self._csr

    def __getitem__(self, indices: np.ndarray) -> np.ndarray:
        """The rows ``indices`` (1-D integer array), dense: shape ``(len(indices), width)``, float32."""
        starts, columns, values = self._compressed()
        indices = np.asarray(indices, dtype=np.int64)
        if indices.ndim != 1:
            raise ValueError("SparseRows takes a 1-D array of row indices")
        if len(indices) and not 0 <= indices.min() <= indices.max() < len(starts) - 1:
            raise IndexError(f"row index out of range for {len(starts) - 1} rows")
        first, counts = starts[indices], starts[indices + 1] - starts[indices]
        out_rows = np.repeat(np.arange(len(indices)), counts)
        # position of every nonzero of the selected rows in the joined arrays
        offsets = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
        source = np.repeat(first, counts) + offsets
        dense = np.zeros((len(indices), self.width), np.float32)
        dense[out_rows, columns[source]] = values[source]
        return dense
