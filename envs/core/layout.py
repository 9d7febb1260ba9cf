"""Named slices of a flat observation vector.

Every game documents its observation as an ordered list of named fields. The same object gives the
offsets used by the engine, the ``unpack`` used by bots and tests, and the markdown table used in the
docs, so the three can never drift apart.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from math import prod

import numpy as np

FLOAT32_MAX = float(np.finfo(np.float32).max)


def seats_from(seat: int, n: int) -> list[int]:
    """The n seats in the order ``seat`` sees them: itself first, then the others in table order (clockwise)."""
    return [(seat + i) % n for i in range(n)]


@dataclass(frozen=True)
class Field:
    name: str
    shape: tuple[int, ...]
    description: str
    start: int
    low: float
    high: float

    @property
    def size(self) -> int:
        return prod(self.shape)

    @property
    def stop(self) -> int:
        return self.start + self.size

    @property
    def slice(self) -> slice:
        return slice(self.start, self.stop)

    def rows(self, seats: Sequence[int], n: int) -> np.ndarray:
        """Indices of the rows ``seats`` of this field, read as n equal rows (one per seat), in that order."""
        width = self.size // n
        return (self.start + width * np.array(seats)[:, None] + np.arange(width)).ravel()


class Layout:
    """An ordered set of named fields.

    ``Layout([("hand", 50, "cards in hand", 0, 3), ...])``: name, shape, meaning, lowest and highest value.
    """

    def __init__(self, fields: list[tuple[str, tuple[int, ...] | int, str, float, float]]):
        self.fields: dict[str, Field] = {}
        start = 0
        for name, shape, description, low, high in fields:
            shape = (shape,) if isinstance(shape, int) else tuple(shape)
            if name in self.fields:
                raise ValueError(f"duplicate observation field {name!r}")
            # a bound beyond float32 would become inf in the Box (NaN fails the comparison too)
            if not -FLOAT32_MAX <= low <= high <= FLOAT32_MAX:
                raise ValueError(f"observation field {name!r} has bounds [{low}, {high}]; they must be finite in "
                                 "float32, low <= high")
            field = Field(name, shape, description, start, low, high)
            self.fields[name] = field
            start = field.stop
        self.size = start
        # unpack() runs on every decision of a bot: build the slices once, not per call
        self._views = [(f.name, f.slice, f.shape) for f in self.fields.values()]

    def __getitem__(self, name: str) -> Field:
        return self.fields[name]

    def __iter__(self):
        return iter(self.fields.values())

    def gather_index(self, parts: Iterable[tuple[str, Sequence[int] | None]], n: int) -> np.ndarray:
        """The indices of ``parts`` in order, each a field of this layout taken whole (``None``) or the given
        seats' rows of a field with one row per seat: ``vector.take(index)`` builds a view (an observation, the
        global state) from a vector of this layout."""
        return np.concatenate([np.arange(self[name].start, self[name].stop) if seats is None
                               else self[name].rows(seats, n) for name, seats in parts])

    def seat_rotations(self, seat_fields: Iterable[str], n: int) -> list[np.ndarray]:
        """Per seat p, the indices that turn a seat-absolute vector of this layout (every field of
        ``seat_fields`` holding one row per seat, in table order) into p's view, whose row 0 is p's and the
        others follow as ``seats_from(p, n)``: ``vector.take(rotations[p])``."""
        seat_fields = set(seat_fields)
        return [self.gather_index([(f.name, seats_from(p, n) if f.name in seat_fields else None) for f in self], n)
                for p in range(n)]

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Per-element lower and upper bounds (float32), for the observation ``Box``."""
        low = np.empty(self.size, np.float32)
        high = np.empty(self.size, np.float32)
        for f in self:
            low[f.slice], high[f.slice] = f.low, f.high
        return low, high

    def unpack(self, vector: np.ndarray) -> dict[str, np.ndarray]:
        """Views of ``vector`` per field, reshaped to the field's shape."""
        if vector.shape != (self.size,):
            raise ValueError(f"expected an observation of shape ({self.size},), got {vector.shape}")
        return {name: vector[where].reshape(shape) for name, where, shape in self._views}

    def to_markdown(self) -> str:
        rows = ["| Slice | Field | Shape | Range | Meaning |", "|---|---|---|---|---|"]
        for f in self:
            shape = "×".join(map(str, f.shape))
            rows.append(f"| `{f.start}:{f.stop}` | `{f.name}` | {shape} | [{f.low:g}, {f.high:g}] | "
                        f"{f.description} |")
        rows.append(f"| | **total** | {self.size} | | |")
        return "\n".join(rows)
