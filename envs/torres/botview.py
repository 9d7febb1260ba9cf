"""A light, read-only view of one Torres observation for the heuristic bot (``bots.py``).

The engine's :class:`~.board.Board` keeps castles, touch tables and caches current move by move, which pays
over a game but not for one decision: rebuilding one from every observation cost the bot much of its time.
:class:`Reader` takes the offsets of the fields the bot needs from the game's layout once, and reads an
observation with a few numpy calls into plain Python lists (small data is faster in Python than through
numpy calls of about a microsecond each): the pending decision and phase (:class:`Context`, the other
context fields on request), and the board (:class:`View`): heights, castle ids, each castle's squares and
area, and the pieces.

:class:`View` answers the rules' geometric questions the bot asks, on those lists, as ``board.py`` and
``cards.py`` answer them (steps T27, doors T28, tunnels T29, block targets T31, card targets T40–T48).
Castles never touch (T31), so a castle's door exits depend on the castle alone: :func:`castle_exits` keeps
them across calls, keyed by the castle's squares and heights. For the rare MOVE_BLOCK card the view builds
the engine's own board (:meth:`View.to_board`).
"""

from __future__ import annotations

from bisect import bisect_left
from functools import lru_cache

import numpy as np

from ..core.game import Game
from .board import (
    DIAG,
    EMPTY,
    JUMPS,
    KING,
    MANY,
    MAX_CASTLES,
    NEIGH,
    NONE,
    SQUARES,
    Board,
    touching_castle,
    tunnel_exits,
)
from .cards import DIAGONAL_MOVE, DOOR_CLIMB, EXTRA_BLOCK, JUMP_OVER, JUMP_UP_TWO, NUM_CARD_TYPES, RELOCATE_KNIGHT
from .observation import H_SCALE

ID_BITS = MAX_CASTLES.bit_length() - 1  # the castle one-hot of square s, id c is at 16·s + c: s = i >> 4
SQUARE_BITS = SQUARES.bit_length() - 1  # a knight of row r on s is at 64·r + s
if MAX_CASTLES != 1 << ID_BITS or SQUARES != 1 << SQUARE_BITS:
    raise ValueError("botview reads castle ids and knights with bit shifts: 16 ids and 64 squares are needed")


def _hot(x: list[float], start: int, stop: int) -> int:
    """The index of the 1 in the one-hot ``x[start:stop]``, -1 if it is all 0."""
    try:
        return x.index(1.0, start, stop) - start
    except ValueError:
        return -1


class Context:
    """The pending decision and phase (1–3; 0 during setup) of an observation, and on request the other
    context fields."""

    __slots__ = ("_obs", "_reader", "decision", "phase")

    def __init__(self, obs: np.ndarray, reader: Reader):
        self._obs, self._reader = obs, reader
        x = obs[reader.context].tolist()
        self.decision = _hot(x, *reader.decision)
        self.phase = _hot(x, *reader.phase) + 1

    def card(self) -> int:
        """The card being resolved, -1 if none."""
        return _hot(self._obs[self._reader.card].tolist(), 0, NUM_CARD_TYPES)

    def selected(self) -> int:
        """The square chosen earlier in this decision sequence, -1 if none."""
        return _hot(self._obs[self._reader.selected].tolist(), 0, SQUARES)

    def hand(self) -> int:
        """How many cards I hold."""
        return int(sum(self._obs[self._reader.hand].tolist()))


class Reader:
    """Where a game's observation keeps what the bot reads: offsets taken once from the layout."""

    def __init__(self, game: Game):
        fields = game.layout.fields
        self.n = game.num_players
        self.shape = (game.layout.size,)
        self.height = fields["height"].slice
        self.castle_id = fields["castle_id"].slice
        # the phase and the decision are read as one span, then picked apart in Python
        self.context = self._span(fields, ("phase", "decision"))
        self.phase, self.decision = ((fields[f].start - self.context.start, fields[f].stop - self.context.start)
                                     for f in ("phase", "decision"))
        self.card, self.selected, self.hand = (fields[f].slice for f in ("card", "selected", "hand"))
        self.king = fields["king"].slice
        self.knights = fields["knights"].slice
        self.others_best = slice(fields["best_level"].start + MAX_CASTLES, fields["best_level"].stop)
        # castles are the groups of squares with blocks (they never touch, T31, and stay connected, T46), so
        # the heights and the pieces make the whole position the action phase depends on
        self.position = (fields["height"].slice, self._span(fields, ("king", "knights")))

    @staticmethod
    def _span(fields: dict, names: tuple[str, ...]) -> slice:
        return slice(min(fields[f].start for f in names), max(fields[f].stop for f in names))

    def read_context(self, obs: np.ndarray) -> Context:
        if obs.shape != self.shape:
            raise ValueError(f"expected an observation of shape {self.shape}, got {obs.shape}")
        return Context(obs, self)

    def board_bytes(self, obs: np.ndarray) -> bytes:
        """The heights and the pieces of ``obs`` as bytes, to recognise a position seen before."""
        heights, pieces = self.position
        return obs[heights].tobytes() + obs[pieces].tobytes()

    def read_board(self, obs: np.ndarray) -> View:
        """The board and pieces of ``obs`` (whose shape :meth:`read_context` checked)."""
        # heights are multiples of 1/8, exact in float32: the product is an exact integer
        h = (obs[self.height] * H_SCALE).astype(np.int64).tolist()
        cid = [NONE] * SQUARES
        castles: list[list[int]] = [[] for _ in range(MAX_CASTLES)]
        id_mask = MAX_CASTLES - 1
        for i in obs[self.castle_id].nonzero()[0].tolist():  # one per castle square, squares ascending
            c = i & id_mask
            cid[i >> ID_BITS] = c
            castles[c].append(i >> ID_BITS)
        occ = [EMPTY] * SQUARES
        knights = obs[self.knights].nonzero()[0].tolist()
        square_mask = SQUARES - 1
        for i in knights:
            occ[i & square_mask] = i >> SQUARE_BITS
        king = obs[self.king].nonzero()[0].tolist()
        if king:
            occ[king[0]] = KING
        return View(h, cid, castles, occ, knights, king[0] if king else -1, obs[self.others_best].copy())


@lru_cache(maxsize=4096)
def castle_exits(squares: tuple[int, ...], heights: tuple[int, ...]) -> tuple[tuple[int, ...],
                                                                             tuple[tuple[int, int], ...]]:
    """T28(c): the squares next to a square of a castle and lower than it, where its doors open — the ground
    squares next to it, and (height, square) for its own squares lower than a neighbour, by height. Castles
    never touch (T31), so a neighbour outside the castle is ground, and the exits depend on the castle alone:
    remembered across calls (castles change by a block at a time)."""
    level = dict(zip(squares, heights, strict=True))
    found: dict[int, int] = {}
    for d, hd in level.items():
        for x in NEIGH[d]:
            hx = level.get(x, 0)
            if hx < hd:
                found[x] = hx
    return (tuple(x for x, hx in found.items() if not hx),
            tuple(sorted((hx, x) for x, hx in found.items() if hx)))


class View:
    """Heights, castle ids (``NONE`` on the ground), each castle's squares and area, occupants, my knights
    (ascending) and the king of one observation, with the rules' geometry on them; every seat's knights
    and the opponents' best levels on request. It holds no reference to the observation, so that it may be
    kept (the bot remembers positions).

    The bot may change ``h``, ``cid``, ``area`` and ``occ`` to value a candidate, and must restore them; the
    door exits and knight spots kept for the view assume the observed position.
    """

    __slots__ = ("h", "cid", "castles", "area", "occ", "_knights", "mine", "king", "_best", "_exits", "_rows",
                 "_spots")

    def __init__(self, h: list[int], cid: list[int], castles: list[list[int]], occ: list[int], knights: list[int],
                 king: int, others_best: np.ndarray):
        self.h, self.cid, self.castles, self.occ, self.king = h, cid, castles, occ, king
        self.area = list(map(len, castles))
        self._knights = knights  # 64·row + square, ascending
        self.mine = knights[:bisect_left(knights, SQUARES)]
        self._best: np.ndarray | list[int] = others_best  # read when first asked for
        self._exits: dict[int, tuple] = {}
        self._rows: list[list[int]] | None = None
        self._spots: dict[int, list[int]] | None = None

    def rows(self, n: int) -> list[list[int]]:
        """Each of the n seats' knights, ascending (row 0 = me)."""
        if self._rows is None:
            self._rows = [[] for _ in range(n)]
            for i in self._knights:
                self._rows[i >> SQUARE_BITS].append(i & SQUARES - 1)
        return self._rows

    def others_best(self) -> list[int]:
        """Per castle, the sum of the other seats' highest levels on it (T51, the observation's
        ``best_level`` rows; multiples of 1/8, so their sum times 8 is exact)."""
        if not isinstance(self._best, list):
            self._best = (self._best.reshape(-1, MAX_CASTLES).sum(axis=0) * H_SCALE).astype(np.int64).tolist()
        return self._best

    def touch(self, t: int) -> int:
        """The castle orthogonally next to t: its id, ``NONE`` or ``MANY`` (T31)."""
        return touching_castle(self.cid, t)

    def block_targets(self) -> list[int]:
        """T31: empty squares where a block may go (raise below the area, or extend one castle), ascending."""
        h, cid, area, occ = self.h, self.cid, self.area, self.occ
        return [t for t in range(SQUARES) if occ[t] == EMPTY
                and (h[t] < area[cid[t]] if cid[t] >= 0 else self.touch(t) >= 0)]

    def under_knight_ok(self, a: int) -> bool:
        """T41: a block may go under the piece on a."""
        c = self.cid[a]
        return self.h[a] < self.area[c] if c >= 0 else self.touch(a) != MANY

    def spots(self) -> dict[int, list[int]]:
        """Per knight of mine, the empty squares next to it at a level at most its own (T25), kept."""
        if self._spots is None:
            h, occ = self.h, self.occ
            self._spots = {k: [t for t in NEIGH[k] if occ[t] == EMPTY and h[t] <= h[k]] for k in self.mine}
        return self._spots

    # ----------------------------------------------------------------- knight movement (T26–T29)
    def exits(self, c: int) -> tuple[tuple[int, ...], tuple[tuple[int, int], ...]]:
        """T28(c): castle c's door exits (:func:`castle_exits`), kept for the call."""
        e = self._exits.get(c)
        if e is None:
            squares, h = self.castles[c], self.h
            e = self._exits[c] = castle_exits(tuple(squares), tuple([h[s] for s in squares]))
        return e

    def door_parts(self, a: int, climb: bool = False) -> tuple[list[int], list[int]]:
        """T28 (``any_door``): the castles enterable from a (taller than a next to it), all of whose empty
        ground exits are door targets, and the other door targets: their own squares at most at the knight's
        level (any level with ``climb``, T43), empty. A square may be listed twice."""
        h, cid, occ, level = self.h, self.cid, self.occ, self.h[a]
        castles: list[int] = []
        raised: list[int] = []
        for b in NEIGH[a]:
            c = cid[b]
            if c >= 0 and h[b] > level and c not in castles:
                castles.append(c)
                for hx, x in self.exits(c)[1]:
                    if hx > level and not climb:
                        break
                    if occ[x] == EMPTY:
                        raised.append(x)
        return castles, raised

    def door_targets(self, a: int, climb: bool = False) -> set[int]:
        """T28 / T43: every door target of the knight on a."""
        castles, raised = self.door_parts(a, climb)
        occ = self.occ
        return {x for c in castles for x in self.exits(c)[0] if occ[x] == EMPTY}.union(raised)

    def steps(self, a: int) -> list[int]:
        """T27: orthogonal, empty, at most one level up."""
        h, occ, top = self.h, self.occ, self.h[a] + 1
        return [c for c in NEIGH[a] if occ[c] == EMPTY and h[c] <= top]

    def tunnel_targets(self, a: int) -> set[int]:
        """T29 (``monotone_tunnel``): as ``Board.tunnel_targets``."""
        return tunnel_exits(self.h, self.cid, self.occ, a)

    def card_targets(self, card: int, a: int, exact_jump: bool) -> set[int] | list[int]:
        """D8 as ``cards.card_targets`` for the knight cards and EXTRA_BLOCK: the destinations of ``card``
        played from my knight a (unused for EXTRA_BLOCK)."""
        h, occ = self.h, self.occ
        if card == JUMP_UP_TWO:  # T40
            top = h[a] + 2
            return [c for c in NEIGH[a] if occ[c] == EMPTY and (h[c] == top if exact_jump else h[c] <= top)]
        if card == DOOR_CLIMB:  # T43
            return self.door_targets(a, climb=True)
        if card == DIAGONAL_MOVE:  # T44
            return [c for c in DIAG[a] if occ[c] == EMPTY and h[c] <= h[a] + 1]
        if card == RELOCATE_KNIGHT:  # T47: next to another of my knights, as if added there
            spots = self.spots()
            return {t for k in self.mine if k != a for t in spots[k]}
        if card == JUMP_OVER:  # T48: over a knight, never the king
            return [c for mid, c in JUMPS[a] if 0 <= occ[mid] < KING and occ[c] == EMPTY and h[c] <= h[a] + 1]
        if card == EXTRA_BLOCK:  # T42
            return self.block_targets()
        raise ValueError(f"card {card} has no destinations in the bot's view")

    def to_board(self) -> Board:
        """The engine's board of this view (for MOVE_BLOCK, whose rules T46 only the engine's board knows)."""
        return Board.from_arrays(self.h, self.cid, self.occ)
