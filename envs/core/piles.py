"""Encoding a face-down pile's order for the global state (``State.global_state``, centralized critics).

A pile is a list of card kinds whose last element is the top. Its order is encoded per *physical card*: one
entry per card of the deck, kinds in order and the copies of a kind side by side, holding how deep the card
lies (1 = the next card drawn) or 0 when it is not in the pile. That is one number per card instead of one
one-hot per pile position, it keeps a card's entry in the same place whatever the pile holds, and "how soon
does this card come" is read off directly.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def first_copies(multiplicity: Sequence[int]) -> list[int]:
    """Index of each kind's first copy in the per-card listing (kinds in order, copies side by side)."""
    return np.concatenate(([0], np.cumsum(multiplicity)[:-1])).astype(int).tolist()


def card_depths(pile: Sequence[int], first_copy: Sequence[int], out: np.ndarray, scale: float) -> np.ndarray:
    """Write each card's depth in ``pile`` / ``scale`` into ``out`` (zeroed first), one entry per card of the deck.

    Copies of a kind are interchangeable, so the one nearer the top takes the kind's lower entry: the result
    depends only on the sequence of kinds."""
    out[:] = 0
    slot = list(first_copy)
    for depth, kind in enumerate(reversed(pile), 1):
        out[slot[kind]] = depth / scale
        slot[kind] += 1
    return out
