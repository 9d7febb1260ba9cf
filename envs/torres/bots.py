"""A heuristic Torres player that sees only what the env gives its seat: (observation, action_mask).

It rebuilds the board from the observation and values a position as the castle points its knights would
score (area × its highest level per castle, T51) minus half the opponents' average, counted once per
scoring still to come, plus the king's bonus in reach this phase (T52) and a little for every knight
with a step up beside it. In the action phase it takes the legal action that raises that value most per
action point — climbing, extending and raising the castles its knights stand on, adding knights next to
castles — plays AP cards at once and other cards when their best use pays, buys cards in the first two
phases, and turns action points it cannot use into score steps (T35). Between phases it moves the king
to the castle where its knights stand on the next bonus level.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.agents import legal_actions
from ..core.game import Game
from .board import DIST, EMPTY, KING, NEIGH, SQUARES, Board
from .cards import (
    AP_6,
    AP_7,
    BLOCK_UNDER_KNIGHT,
    DIAGONAL_MOVE,
    DOOR_CLIMB,
    EXTRA_BLOCK,
    JUMP_OVER,
    JUMP_UP_TWO,
    MOVE_BLOCK,
    RELOCATE_KNIGHT,
    card_targets,
)
from .game import (
    ACQUIRE,
    ACTION,
    ADD_KNIGHT,
    CARD_SOURCE,
    CARD_STACK,
    CARD_TARGET,
    END_TURN,
    KEEP,
    KEEP_CARD,
    KING_MOVE,
    MOVE_TO,
    PASS,
    PLACE_BLOCK,
    PLAY_CARD,
    RETURN_CARD,
    RETURN_TOP,
    SCORE_STEP,
    SELECT,
    SETUP_BLOCK,
    SETUP_KING,
    SETUP_KNIGHT,
    STACK_CURRENT,
)

OPPONENT_WEIGHT = 0.5  # how much an opponent's castle point costs us
CLIMB_WEIGHT = 0.5  # per area of the castle a knight could step up onto, per scoring to come
ACQUIRE_GAIN = (2.0, 2.0, 1.5, 0.0)  # by phase (index 0: setup): a bought card's worth, with a small hand
HAND_WANTED = 2  # cards worth holding; more are bought only when nothing better is left
CARD_RESERVE = 1.0  # a card is played only when its best use gains more than keeping it
CARD_PREFERENCE = (AP_7, AP_6, JUMP_UP_TWO, EXTRA_BLOCK, BLOCK_UNDER_KNIGHT, DOOR_CLIMB, RELOCATE_KNIGHT,
                   DIAGONAL_MOVE, JUMP_OVER, MOVE_BLOCK)  # what to keep when buying from a personal deck
KNIGHT_CARDS = (JUMP_UP_TWO, DOOR_CLIMB, DIAGONAL_MOVE, RELOCATE_KNIGHT, JUMP_OVER)
CENTRE = 27  # (3,3)


@dataclass
class View:
    """What the bot reads from one observation; seats are rows (0 = me)."""

    board: Board
    knights: list[list[int]]
    king: int
    decision: int
    phase: int
    ap: int
    card: int
    selected: int
    hand: int


class HeuristicAgent:
    """Greedy one-action planner over the decoded observation (see the module docstring)."""

    def __init__(self, game: Game, seed: int | None = None):
        """``seed`` is accepted like every built-in agent's; this one is deterministic and ignores it."""
        self.game = game
        self.n = game.num_players

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = legal_actions(action_mask, "HeuristicAgent")
        if len(legal) == 1:
            return legal[0]
        v = self._read(observation)
        d = v.decision
        if d == MOVE_TO:  # D4a: the best destination of the chosen knight
            return max(legal, key=lambda a: (self._after_move(v, v.selected, a - SELECT), -a))
        if d == CARD_SOURCE:
            return max(legal, key=lambda a: (self._best_card_use(v, v.card, a - SELECT), -a))
        if d == CARD_TARGET:
            return max(legal, key=lambda a: (self._after_card(v, v.card, v.selected, a - SELECT), -a))
        if d == CARD_STACK:  # keep the turn's stack for PLACE_BLOCK
            return legal[0] if legal[0] != STACK_CURRENT else STACK_CURRENT
        if d == KEEP_CARD:
            return min(legal, key=lambda a: CARD_PREFERENCE.index(a - KEEP))
        if d == RETURN_CARD:  # the best card back on top, to find it again
            return min(legal, key=lambda a: (a >= RETURN_TOP + 10, CARD_PREFERENCE.index((a - RETURN_TOP) % 10)))
        if d == KING_MOVE:
            return max(legal, key=lambda a: (self._king_value(v, v.king if a == PASS else a - SELECT), a == PASS))
        if d == SETUP_BLOCK:  # T60: start castles near the middle
            return min(legal, key=lambda a: (DIST[a - SELECT][CENTRE], a))
        if d == SETUP_KNIGHT:
            return max(legal, key=lambda a: (self._room(v.board, a - SELECT), -DIST[a - SELECT][CENTRE], -a))
        if d == SETUP_KING:  # next to my own knight, where I can reach its levels
            mine = v.knights[0]
            return min(legal, key=lambda a: (min(DIST[a - SELECT][k] for k in mine), a))
        if d == ACTION:
            return self._main_action(v, legal)
        return legal[0]  # D3a: the largest stack; D11: the largest stack with room

    # ----------------------------------------------------------------- reading the observation
    def _read(self, observation: np.ndarray) -> View:
        f = self.game.layout.unpack(observation)
        h = np.rint(f["height"].ravel() * 8).astype(int).tolist()
        ids = f["castle_id"].reshape(SQUARES, -1)
        cid = np.where(ids.any(axis=1), ids.argmax(axis=1), -1).tolist()
        occ = [EMPTY] * SQUARES
        knights = []
        for row in range(self.n):
            squares = np.flatnonzero(f["knights"][row].ravel()).tolist()
            knights.append(squares)
            for s in squares:
                occ[s] = row
        king = int(f["king"].argmax()) if f["king"].any() else -1
        if king >= 0:
            occ[king] = KING
        return View(Board.from_arrays(h, cid, occ), knights, king, int(f["decision"].argmax()),
                    int(f["phase"].argmax()) + 1 if f["phase"].any() else 0, round(float(f["ap"][0]) * 7),
                    int(f["card"].argmax()) if f["card"].any() else -1,
                    int(f["selected"].argmax()) if f["selected"].any() else -1, int(f["hand"].sum()))

    # ----------------------------------------------------------------- valuing positions
    def _value(self, v: View, board: Board, knights: list[list[int]]) -> float:
        h, cid, castles, occ = board.h, board.cid, board.castles, board.occ
        points = []
        for squares in knights:
            best: dict[int, int] = {}
            for s in squares:
                c = cid[s]
                if c >= 0 and h[s] > best.get(c, 0):
                    best[c] = h[s]
            points.append(sum(len(castles[c]) * level for c, level in best.items()))
        others = sum(points[1:]) / (self.n - 1)
        scorings = 4 - max(v.phase, 1)
        value = (points[0] - OPPONENT_WEIGHT * others) * scorings
        if v.phase and v.king >= 0:  # T52: the bonus of this phase's scoring
            home = cid[v.king]
            if any(cid[s] == home and h[s] == v.phase for s in knights[0]):
                value += 5 * v.phase
        for s in knights[0]:
            up = h[s] + 1
            for x in NEIGH[s]:
                if occ[x] == EMPTY and h[x] == up:
                    value += CLIMB_WEIGHT * len(castles[cid[x]]) * scorings
                    break
        return value

    def _after_move(self, v: View, a: int, c: int) -> float:
        """Value with my knight moved from a to c (done and undone in place)."""
        board, mine = v.board, v.knights[0]
        board.set_occupant(a, EMPTY)
        board.set_occupant(c, 0)
        mine[mine.index(a)] = c
        value = self._value(v, board, v.knights)
        mine[mine.index(c)] = a
        board.set_occupant(c, EMPTY)
        board.set_occupant(a, 0)
        return value

    def _after_block(self, v: View, t: int) -> float:
        board = v.board.copy()
        board.add_block(t)
        return self._value(v, board, v.knights)

    def _after_card(self, v: View, card: int, a: int, t: int) -> float:
        if card == EXTRA_BLOCK:
            return self._after_block(v, t)
        if card == MOVE_BLOCK:
            board = v.board.copy()
            board.remove_block(a)
            board.add_block(t)
            return self._value(v, board, v.knights)
        return self._after_move(v, a, t)

    def _best_card_use(self, v: View, card: int, a: int) -> float:
        """The best value reachable by the card from knight (or source) a."""
        if card == BLOCK_UNDER_KNIGHT:
            return self._after_block(v, a)
        targets = card_targets(v.board, card, a, v.knights[0], self.game.exact_jump)
        return max((self._after_card(v, card, a, t) for t in targets), default=-np.inf)

    def _card_gain(self, v: View, card: int, base: float) -> float:
        if card in (AP_6, AP_7):
            return 10.0
        if card == EXTRA_BLOCK:
            best = max((self._after_block(v, t) for t in card_targets(v.board, card, -1, v.knights[0])),
                       default=base)
        elif card == BLOCK_UNDER_KNIGHT:
            best = max((self._after_block(v, a) for a in v.knights[0] if v.board.under_knight_ok(a)), default=base)
        elif card in KNIGHT_CARDS:
            best = max((self._best_card_use(v, card, a) for a in v.knights[0]), default=base)
        else:
            return -1.0  # MOVE_BLOCK: too many ways to weigh; kept
        return best - base - CARD_RESERVE

    # ----------------------------------------------------------------- decisions
    def _main_action(self, v: View, legal: list[int]) -> int:
        """D4: the action with the largest gain per AP; SCORE_STEP is worth 1, END_TURN 0."""
        base = self._value(v, v.board, v.knights)
        tunnel = self.game.tunnel
        best_action, best_gain = END_TURN, 0.0
        for a in legal:
            if a < ADD_KNIGHT:
                gain = max(self._after_move(v, a, c) for c in v.board.move_targets(a, tunnel)) - base
            elif a < PLACE_BLOCK:
                v.knights[0].append(a - ADD_KNIGHT)
                v.board.set_occupant(a - ADD_KNIGHT, 0)
                gain = (self._value(v, v.board, v.knights) - base) / 2
                v.board.set_occupant(a - ADD_KNIGHT, EMPTY)
                v.knights[0].pop()
            elif a < SELECT:
                gain = self._after_block(v, a - PLACE_BLOCK) - base
            elif a == ACQUIRE:
                gain = ACQUIRE_GAIN[v.phase] if v.hand < HAND_WANTED else 0.5
            elif PLAY_CARD <= a < KEEP:
                gain = self._card_gain(v, a - PLAY_CARD, base)
            elif a == SCORE_STEP:
                gain = 1.0
            else:
                continue
            if gain > best_gain + 1e-9:
                best_action, best_gain = a, gain
        return best_action

    def _king_value(self, v: View, square: int) -> float:
        """T52 for the next phase with the king on ``square``: my bonus minus the opponents' average."""
        board, nxt = v.board, v.phase + 1
        home = board.cid[square]
        bonus = [5 * nxt if any(board.cid[s] == home and board.h[s] == nxt for s in squares) else 0
                 for squares in v.knights]
        return bonus[0] - sum(bonus[1:]) / (self.n - 1)

    @staticmethod
    def _room(board: Board, s: int) -> int:
        """Empty ground squares next to s: room to extend a castle there."""
        return sum(board.h[x] == 0 and board.occ[x] == EMPTY for x in NEIGH[s])

