"""A light, read-only view of one Torres observation for the heuristic bot (``bots.py``).

The engine's :class:`~.board.Board` keeps castles, touch tables and caches current move by move, which pays
over a game but not for one decision: rebuilding one from every observation cost the bot a large part of
its time. :class:`Reader` takes the offsets of the fields the bot needs from the game's layout once, and
reads an observation with a few numpy calls into plain Python lists (small data is faster in Python than
through numpy calls of about a microsecond each): the pending decision and context (:class:`Context`), and
on demand the board (:class:`View`): heights, castle ids, each castle's squares and area, and the pieces.

:class:`View` answers the rules' geometric questions the bot asks, on those lists, exactly as ``board.py``
and ``cards.py`` answer them (steps T27, doors T28, tunnels T29, block targets T31, card targets T40–T48),
computing a castle's door exits only when a door is asked about. For the rare MOVE_BLOCK card it builds the
engine's own board (:meth:`View.to_board`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.game import Game
from .board import DIAG, EMPTY, JUMPS, KING, MANY, MAX_CASTLES, NEIGH, NONE, SQUARES, Board
from .cards import DIAGONAL_MOVE, DOOR_CLIMB, EXTRA_BLOCK, JUMP_OVER, JUMP_UP_TWO, RELOCATE_KNIGHT
from .observation import H_SCALE


def _hot(x: list[float], start: int, stop: int) -> int:
    """The index of the 1 in the one-hot ``x[start:stop]``, -1 if it is all 0."""
    part = x[start:stop]
    return part.index(1.0) if 1.0 in part else -1


@dataclass(slots=True)
class Context:
    """The pending decision and what the bot reads besides the board (-1 where nothing is set)."""

    decision: int
    phase: int  # 1–3; 0 during setup
    card: int
    selected: int
    hand: int  # cards in my hand


class Reader:
    """Where a game's observation keeps what the bot reads: offsets taken once from the layout."""

    def __init__(self, game: Game):
        fields = game.layout.fields
        self.n = game.num_players
        self.shape = (game.layout.size,)
        self.height = fields["height"].slice
        self.castle_id = fields["castle_id"].slice
        # the context fields and the pieces are each read as one span, then picked apart in Python
        self.context = self._span(fields, ("phase", "decision", "card", "selected", "hand"))
        self.pieces = self._span(fields, ("king", "knights"))
        for name in ("phase", "decision", "card", "selected", "hand"):
            setattr(self, f"_{name}", (fields[name].start - self.context.start, fields[name].stop - self.context.start))
        self._king = fields["king"].start - self.pieces.start
        self._knights = fields["knights"].start - self.pieces.start

    @staticmethod
    def _span(fields: dict, names: tuple[str, ...]) -> slice:
        return slice(min(fields[f].start for f in names), max(fields[f].stop for f in names))

    def read_context(self, obs: np.ndarray) -> Context:
        if obs.shape != self.shape:
            raise ValueError(f"expected an observation of shape {self.shape}, got {obs.shape}")
        x = obs[self.context].tolist()
        hand_start, hand_stop = self._hand
        return Context(_hot(x, *self._decision), _hot(x, *self._phase) + 1, _hot(x, *self._card),
                       _hot(x, *self._selected), int(sum(x[hand_start:hand_stop])))

    def read_board(self, obs: np.ndarray) -> View:
        """The board and pieces of ``obs`` (whose shape :meth:`read_context` checked)."""
        # heights are multiples of 1/8, exact in float32: the product is an exact integer
        h = (obs[self.height] * H_SCALE).astype(np.int64).tolist()
        cid = [NONE] * SQUARES
        castles: list[list[int]] = [[] for _ in range(MAX_CASTLES)]
        for i in np.flatnonzero(obs[self.castle_id]).tolist():  # one 1 per castle square, squares ascending
            s, c = divmod(i, MAX_CASTLES)
            cid[s] = c
            castles[c].append(s)
        occ = [EMPTY] * SQUARES
        rows: list[list[int]] = [[] for _ in range(self.n)]
        king = -1
        first, stop = self._knights, self._knights + SQUARES * self.n
        for i in np.flatnonzero(obs[self.pieces]).tolist():
            if first <= i < stop:
                row, s = divmod(i - first, SQUARES)
                rows[row].append(s)
                occ[s] = row
            elif self._king <= i < self._king + SQUARES:
                king = i - self._king
        if king >= 0:
            occ[king] = KING
        return View(h, cid, castles, occ, rows, king)


class View:
    """Heights, castle ids (``NONE`` on the ground), castles' squares and areas, occupants and each seat's
    knights (row 0 = me, ascending) of one observation, with the rules' geometry on them.

    The bot may change ``h``, ``cid``, ``area`` and ``occ`` to value a candidate, and must restore them; the
    door exits cached per castle assume the blocks of the observation.
    """

    __slots__ = ("h", "cid", "castles", "area", "occ", "rows", "king", "_exits")

    def __init__(self, h: list[int], cid: list[int], castles: list[list[int]], occ: list[int],
                 rows: list[list[int]], king: int):
        self.h, self.cid, self.castles, self.occ, self.rows, self.king = h, cid, castles, occ, rows, king
        self.area = [len(sq) for sq in castles]
        self._exits: dict[int, list[tuple[int, int]]] = {}

    def touch(self, t: int) -> int:
        """The castle orthogonally next to t: its id, ``NONE`` or ``MANY`` (T31)."""
        cid, found = self.cid, NONE
        for x in NEIGH[t]:
            c = cid[x]
            if c >= 0 and c != found:
                if found != NONE:
                    return MANY
                found = c
        return found

    def block_targets(self) -> list[int]:
        """T31: empty squares where a block may go (raise below the area, or extend one castle), ascending."""
        h, cid, area, occ = self.h, self.cid, self.area, self.occ
        return [t for t in range(SQUARES) if occ[t] == EMPTY
                and (h[t] < area[cid[t]] if cid[t] >= 0 else self.touch(t) >= 0)]

    def under_knight_ok(self, a: int) -> bool:
        """T41: a block may go under the piece on a."""
        c = self.cid[a]
        return self.h[a] < self.area[c] if c >= 0 else self.touch(a) != MANY

    def add_targets(self, knights: list[int]) -> set[int]:
        """T25 (and T47): empty squares next to one of ``knights`` at a level at most theirs."""
        h, occ = self.h, self.occ
        return {t for k in knights for t in NEIGH[k] if occ[t] == EMPTY and h[t] <= h[k]}

    # ----------------------------------------------------------------- knight movement (T26–T29)
    def _exits_of(self, c: int) -> list[tuple[int, int]]:
        """T28(c): (x, h(x)) for every square x next to a square of castle c that is taller than x."""
        e = self._exits.get(c)
        if e is None:
            h, found = self.h, {}
            for d in self.castles[c]:
                hd = h[d]
                for x in NEIGH[d]:
                    if h[x] < hd:
                        found[x] = h[x]
            e = self._exits[c] = list(found.items())
        return e

    def door_targets(self, a: int, climb: bool = False) -> set[int]:
        """T28 (``any_door``): empty exits at most at the knight's level of every castle enterable from a
        (taller than a next to it); with ``climb`` (T43) exits at any level."""
        h, cid, occ, level = self.h, self.cid, self.occ, self.h[a]
        out: set[int] = set()
        seen: list[int] = []
        for b in NEIGH[a]:
            c = cid[b]
            if c >= 0 and h[b] > level and c not in seen:
                seen.append(c)
                out.update(x for x, hx in self._exits_of(c) if (climb or hx <= level) and occ[x] == EMPTY)
        return out

    def tunnel_targets(self, a: int) -> set[int]:
        """T29 (``monotone_tunnel``): as ``Board.tunnel_targets``, a widest-path value per castle square."""
        h, cid, occ = self.h, self.cid, self.occ
        level = h[a]
        out: set[int] = set()
        for c in {cid[b] for b in NEIGH[a] if cid[b] >= 0 and h[b] > level}:
            tunnel: dict[int, int] = {}
            for b in NEIGH[a]:
                if cid[b] == c and h[b] > level:
                    tunnel[b] = max(tunnel.get(b, -1), min(level, h[b] - 1))
            todo = list(tunnel)
            while todo:
                s = todo.pop()
                for x in NEIGH[s]:
                    if cid[x] == c:
                        v = min(tunnel[s], h[x] - 1)
                        if v > tunnel.get(x, -1):
                            tunnel[x] = v
                            todo.append(x)
            for s, t in tunnel.items():
                out.update(x for x in NEIGH[s] if occ[x] == EMPTY and h[x] <= t)
        return out

    def move_targets(self, a: int, tunnel: bool) -> set[int]:
        """T26: the step (T27) and door or tunnel targets of the knight on a."""
        h, occ, top = self.h, self.occ, self.h[a] + 1
        steps = {c for c in NEIGH[a] if occ[c] == EMPTY and h[c] <= top}
        return steps | (self.tunnel_targets(a) if tunnel else self.door_targets(a))

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
        if card == RELOCATE_KNIGHT:  # T47
            return self.add_targets([k for k in self.rows[0] if k != a])
        if card == JUMP_OVER:  # T48: over a knight, never the king
            return [c for mid, c in JUMPS[a] if 0 <= occ[mid] < KING and occ[c] == EMPTY and h[c] <= h[a] + 1]
        if card == EXTRA_BLOCK:  # T42
            return self.block_targets()
        raise ValueError(f"card {card} has no destinations in the bot's view")

    def to_board(self) -> Board:
        """The engine's board of this view (for MOVE_BLOCK, whose rules T46 only the engine's board knows)."""
        return Board.from_arrays(self.h, self.cid, self.occ)
