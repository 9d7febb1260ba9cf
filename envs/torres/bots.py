"""A heuristic Torres player that sees only what the env gives its seat: (observation, action_mask).

It values a position as the castle points its knights would score (area × its highest level per castle,
T51) minus half the opponents' average, counted once per scoring still to come, plus the king's bonus in
reach this phase (T52) and a little for every knight with a step up beside it. In the action phase it takes
the legal action that raises that value most per action point — climbing, extending and raising the castles
its knights stand on, adding knights next to castles — plays AP cards at once and other cards when their
best use pays, buys cards in the first two phases, and turns action points it cannot use into score steps
(T35). Between phases it moves the king to the castle where its knights stand on the next bonus level.

How it is fast (the choices are those of the bot it replaces, which rebuilt the engine's board from every
observation and re-valued the whole board for every candidate):

- it reads the observation into flat lists once (``botview.py``) and values each candidate by what it
  changes (:class:`Valuer`): a move, a block or a new knight changes the points of at most two castles, the
  bonus and the steps up of the knights next to the squares it touches. What a knight's leaving changes is
  found once per knight; the share of a far arrival once per square; ground door exits, which differ only
  in the step up beside them, are ranked once per castle; a castle's door exits are kept across calls.
- Values are exact integers, ``D`` × value with D = 2(n − 1), so comparing them is exact. The old bot
  compared floats; its action-phase gains, all multiples of 1/(2D) point, were compared with a tolerance
  far below that, so exact comparison chooses the same, and where its float keys ordered exactly tied
  candidates (D4a, D7, D8) by their last bit, which happens when n − 1 = 3 divides the value, the float is
  computed as it did (:meth:`Valuer.float_value`).
- It remembers (a pure cache, :class:`Gains`, keyed by the heights, the pieces and the phase: the castles
  are the groups of squares with blocks) the valuation of a position and the action-phase gains found on
  it. Within a turn the position stays the same over score steps and card buys, and over the later
  decisions of a move or a card, so most decisions reuse them.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable

import numpy as np

from ..core.agents import legal_actions
from ..core.game import Game
from .actions import (
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
from .board import DIST, EMPTY, MAX_CASTLES, NEIGH, NONE
from .botview import Context, Reader, View
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

OPPONENT_WEIGHT = 0.5  # how much an opponent's castle point costs us
CLIMB_WEIGHT = 0.5  # per area of the castle a knight could step up onto, per scoring to come
ACQUIRE_GAIN = (2.0, 2.0, 1.5, 0.0)  # by phase (index 0: setup): a bought card's worth, with a small hand
ACQUIRE_MORE = 0.5  # a card bought beyond HAND_WANTED
HAND_WANTED = 2  # cards worth holding; more are bought only when nothing better is left
CARD_RESERVE = 1.0  # a card is played only when its best use gains more than keeping it
AP_CARD_GAIN = 10.0  # AP cards are played at once
SCORE_STEP_GAIN = 1.0  # T35: one point for one AP
CARD_PREFERENCE = (AP_7, AP_6, JUMP_UP_TWO, EXTRA_BLOCK, BLOCK_UNDER_KNIGHT, DOOR_CLIMB, RELOCATE_KNIGHT,
                   DIAGONAL_MOVE, JUMP_OVER, MOVE_BLOCK)  # what to keep when buying from a personal deck
KNIGHT_CARDS = (JUMP_UP_TWO, DOOR_CLIMB, DIAGONAL_MOVE, RELOCATE_KNIGHT, JUMP_OVER)
CENTRE = 27  # (3,3)
MEMO_SIZE = 16  # boards whose action-phase gains are remembered (a few per seat: an agent may play several)
MOVE, BLOCK, BLOCK_MOVE = range(3)  # kinds of change: my knight a → t; a block onto t; MOVE_BLOCK a → t
NO_VALUE = float("-inf")  # a card source without targets

Change = tuple[int, int, int]  # (kind, a, t)


class Valuer:
    """The bot's value of the observed position and of positions one change away from it.

    Differences are exact integers, ``D`` × value with D = 2(n − 1): castle points (P, mine; S, the
    opponents' sum) give (D·P − S)·scorings, the bonus D·5·phase and a step up (n − 1)·scorings·area. The
    ``*_delta`` methods change the view's lists in place to look at a candidate and restore them.
    """

    def __init__(self, view: View, phase: int, n: int):
        self.view, self.phase, self.n = view, phase, n
        h, cid, area, occ = view.h, view.cid, view.area, view.occ
        self.scorings = sc = 4 - max(phase, 1)
        d = 2 * (n - 1)
        self.w_points, self.w_others, self.w_bonus, self.w_climb = d * sc, sc, 5 * d * phase, (n - 1) * sc
        self.floats_exact = (n - 1) & (n - 2) == 0  # dividing by n − 1 = 1 or 2 is exact in floats
        self.bonus = phase > 0 and view.king >= 0
        self.home = home = cid[view.king] if self.bonus else NONE
        self.best = best = [0] * MAX_CASTLES  # my highest knight per castle
        self.second = second = [0] * MAX_CASTLES  # and the highest once that one leaves
        self.up = up = {}  # where each of my knights could step up: the first empty square one level up, or -1
        self.terms = terms = {}  # the area of that square's castle (0 for none)
        self.lit = 0  # my knights on the level of the bonus (T52) on the king's castle
        for k in view.mine:
            c, level = cid[k], h[k]
            if c >= 0:
                if level > best[c]:
                    second[c], best[c] = best[c], level
                elif level > second[c]:
                    second[c] = level
                if c == home and level == phase:
                    self.lit += 1
            up[k], terms[k] = -1, 0
            level += 1
            for x in NEIGH[k]:
                if occ[x] == EMPTY and h[x] == level:
                    up[k], terms[k] = x, area[cid[x]]
                    break
        self.stepped = set(up.values())
        self.near = {x for k in view.mine for x in NEIGH[k]}  # the squares next to my knights
        self._leaves: dict[int, tuple] = {}
        self._grown: dict[int, int] = {}
        self._arrivals: dict[int, tuple[int, bool]] = {}
        self._ground: dict[int, list[tuple[int, int]]] = {}
        self._board = None

    # ----------------------------------------------------------------- pieces of the value
    def _step_up(self, k: int) -> int:
        """The first empty square next to k one level above it, -1 if none."""
        h, occ, up = self.view.h, self.view.occ, self.view.h[k] + 1
        for x in NEIGH[k]:
            if occ[x] == EMPTY and h[x] == up:
                return x
        return -1

    def _term(self, x: int) -> int:
        """The area a step up onto x is worth (0 for none)."""
        return self.view.area[self.view.cid[x]] if x >= 0 else 0

    def _climbers(self, c: int) -> int:
        """How many of my knights step up onto castle c."""
        cid = self.view.cid
        return sum(x >= 0 and cid[x] == c for x in self.up.values())

    def _bonus_change(self, lost: bool, gained: bool) -> int:
        """-1, 0 or 1: the bonus once one knight stops (``lost``) or starts (``gained``) standing on it."""
        return (self.lit - lost + gained > 0) - (self.lit > 0)

    # ----------------------------------------------------------------- one change, exactly
    def _leave(self, a: int) -> tuple[int, int, dict[int, int], set[int], int, int]:
        """What my knight leaving a changes, whatever its destination: my best level left on a's castle, the
        value change so far, where my knights step up then (maybe onto a) and those squares, and the bonus
        change if the destination stands on the bonus level of the king's castle or not. Kept per knight."""
        leave = self._leaves.get(a)
        if leave is None:
            v = self.view
            h, cid, occ, up = v.h, v.cid, v.occ, self.up
            ca, ha = cid[a], h[a]
            rest = gain = 0
            if ca >= 0:
                top = self.best[ca]
                rest = top if ha < top else self.second[ca]
                gain = self.w_points * v.area[ca] * (rest - top)
            gain -= self.w_climb * self.terms[a]
            after, stepped = up, self.stepped
            occ[a] = EMPTY
            for k in NEIGH[a]:
                if occ[k] == 0:
                    x = self._step_up(k)
                    if x != up[k]:
                        if after is up:
                            after = dict(up)
                        after[k] = x
                        gain += self.w_climb * (self._term(x) - self.terms[k])
            occ[a] = 0
            if after is not up:
                stepped = set(after.values())
            yes = no = 0
            if self.bonus:
                lost = ca == self.home and ha == self.phase
                yes, no = self.w_bonus * self._bonus_change(lost, True), self.w_bonus * self._bonus_change(lost, False)
            leave = self._leaves[a] = (rest, gain, after, stepped, yes, no)
        return leave

    def move_deltas(self, a: int, targets, leaving: tuple | None = None) -> list[int]:
        """The value change of my knight moving from a to each of ``targets`` (empty squares); ``leaving``
        is ``_leave(a)`` if the caller has it. A target more than two squares from a and off a's castle is
        out of reach of what a's leaving changes: its part of the change is found once (:meth:`_arrive`)."""
        v = self.view
        h, cid, area, occ = v.h, v.cid, v.area, v.occ
        best, phase, home, w_points, w_climb = self.best, self.phase, self.home, self.w_points, self.w_climb
        rest, leave, after, stepped, lit, unlit = leaving or self._leave(a)
        ca, dist, arrivals = cid[a], DIST[a], self._arrivals
        occ[a] = EMPTY
        out = []
        for c in targets:
            cc = cid[c]
            if dist[c] > 2 and (cc != ca or cc < 0):
                arrival = arrivals.get(c)
                if arrival is None:
                    arrival = arrivals[c] = self._arrive(c)
                out.append(leave + arrival[0] + (lit if arrival[1] else unlit))
                continue
            hc = h[c]
            gain = leave + (lit if cc == home and hc == phase else unlit)
            if cc >= 0:
                level = rest if cc == ca else best[cc]
                if hc > level:
                    gain += w_points * area[cc] * (hc - level)
            hc += 1
            for x in NEIGH[c]:  # the moved knight's step up
                if occ[x] == EMPTY and h[x] == hc:
                    gain += w_climb * area[cid[x]]
                    break
            if c in stepped:  # c was the step up of a knight next to it: find that knight another
                occ[c] = 0
                for k in NEIGH[c]:
                    if occ[k] == 0 and after[k] == c:
                        gain += w_climb * (self._term(self._step_up(k)) - area[cc])
                occ[c] = EMPTY
            out.append(gain)
        occ[a] = 0
        return out

    def _arrive(self, c: int) -> tuple[int, bool]:
        """A knight of mine arriving on c from afar: the value change besides its leaving and the bonus
        (points on c's castle, its step up, the knights whose step up c was), and whether c is on the bonus
        level of the king's castle. No square these read is next to where the knight came from."""
        v = self.view
        h, cid, area, occ = v.h, v.cid, v.area, v.occ
        cc, hc = cid[c], h[c]
        gain = 0
        if cc >= 0 and hc > self.best[cc]:
            gain = self.w_points * area[cc] * (hc - self.best[cc])
        up = hc + 1
        for x in NEIGH[c]:
            if occ[x] == EMPTY and h[x] == up:
                gain += self.w_climb * area[cid[x]]
                break
        if c in self.stepped:
            occ[c] = 0
            for k in NEIGH[c]:
                if occ[k] == 0 and self.up[k] == c:
                    gain += self.w_climb * (self._term(self._step_up(k)) - area[cc])
            occ[c] = EMPTY
        return gain, cc == self.home and hc == self.phase

    def best_move(self, a: int, tunnel: bool) -> int:
        """The largest value change of a move of my knight on a (T26)."""
        view = self.view
        if tunnel:  # T29
            return max(self.move_deltas(a, view.steps(a) + list(view.tunnel_targets(a))))
        castles, raised = view.door_parts(a)
        leaving = self._leave(a)
        best = max(self.move_deltas(a, view.steps(a) + raised, leaving), default=NO_VALUE)  # with the exits beside a
        return max(best, self._ground_doors(a, castles, leaving)) if castles else best

    def best_card_move(self, card: int, a: int, exact_jump: bool) -> int:
        """The largest value change of a knight card played on my knight a (-inf without targets)."""
        v = self.view
        if card == DOOR_CLIMB:
            castles, raised = v.door_parts(a, climb=True)
            h, cid, occ = v.h, v.cid, v.occ
            beside = [x for x in NEIGH[a] if occ[x] == EMPTY and h[x] == 0 and any(cid[y] in castles for y in NEIGH[x])]
            leaving = self._leave(a)
            return max(max(self.move_deltas(a, raised + beside, leaving), default=NO_VALUE),
                       self._ground_doors(a, castles, leaving))
        return max(self.move_deltas(a, v.card_targets(card, a, exact_jump)), default=NO_VALUE)

    def _ground_doors(self, a: int, castles: list[int], leaving: tuple) -> int:
        """The largest value change of my knight on a going out of a door of ``castles`` onto a ground square
        not next to a (the caller values those). They all differ only in the step up beside them, which a
        emptied cannot be, so the ground exits are ranked once per castle for the call."""
        best = -1
        around = NEIGH[a]
        for c in castles:
            for step, x in self._ground_steps(c):
                if x not in around:
                    best = max(best, step)
                    break
        if best < 0:
            return NO_VALUE
        return leaving[1] + leaving[5] + self.w_climb * best

    def _ground_steps(self, c: int) -> list[tuple[int, int]]:
        """(area of the step up beside it, square) for the empty ground squares next to castle c, largest
        first (0: no step up)."""
        steps = self._ground.get(c)
        if steps is None:
            v = self.view
            h, cid, area, occ = v.h, v.cid, v.area, v.occ
            steps = []
            for x in v.exits(c)[0]:
                if occ[x] == EMPTY:
                    found = 0
                    for y in NEIGH[x]:
                        if occ[y] == EMPTY and h[y] == 1:
                            found = area[cid[y]]
                            break
                    steps.append((found, x))
            steps.sort(reverse=True)
            self._ground[c] = steps
        return steps

    def block_delta(self, t: int) -> int:
        """The value change of a block onto t, an empty square where T31 allows one: a raise, or an extension
        of the one castle next to t."""
        cid = self.view.cid
        if cid[t] >= 0:
            return self._raise(t) if t in self.near else 0
        for x in NEIGH[t]:
            c = cid[x]
            if c >= 0:
                return self._extend(t, c) if t in self.near else self.grow(c)
        raise ValueError(f"a block on {t} touches no castle")

    def _raise(self, t: int) -> int:
        """Nobody stands on t: no level or area changes, only the steps up of my knights next to t (t one
        level higher is a step up for a knight on its old level, and no longer for one a level below)."""
        h, cid, area, occ, up = self.view.h, self.view.cid, self.view.area, self.view.occ, self.up
        ht, dc = h[t], 0
        for k in NEIGH[t]:
            if occ[k] == 0:
                if up[k] == t:
                    h[t] += 1
                    dc += self._term(self._step_up(k)) - self.terms[k]
                    h[t] -= 1
                elif ht == h[k] and (up[k] < 0 or t < up[k]):  # the first square one level up
                    dc += area[cid[t]] - self.terms[k]
        return self.w_climb * dc

    def grow(self, c: int) -> int:
        """Castle c one square larger, away from my knights: every seat's points on c grow by its best level
        there, and every step up onto c by one."""
        gain = self._grown.get(c)
        if gain is None:
            gain = self._grown[c] = (self.w_points * self.best[c] - self.w_others * self.view.others_best()[c]
                                     + self.w_climb * self._climbers(c))
        return gain

    def _extend(self, t: int, c: int) -> int:
        """Castle c grows by t, next to my knights: as :meth:`grow`, and t, on level 1, becomes the first
        step up of the ground knights next to it that had none before t."""
        v = self.view
        h, cid, area, occ, up = v.h, v.cid, v.area, v.occ, self.up
        dc = 0
        for k in NEIGH[t]:
            if occ[k] == 0 and h[k] == 0:
                x = up[k]
                if x < 0 or t < x:
                    dc += area[c] + 1 - self.terms[k] - (x >= 0 and cid[x] == c)
        return self.grow(c) + self.w_climb * dc

    def add_delta(self, t: int) -> int:
        """The value change of a new knight of mine on the empty square t."""
        v = self.view
        h, cid, area, occ = v.h, v.cid, v.area, v.occ
        ct, ht = cid[t], h[t]
        dp = area[ct] * (ht - self.best[ct]) if ct >= 0 and ht > self.best[ct] else 0
        db = self._bonus_change(False, ct == self.home and ht == self.phase) if self.bonus else 0
        occ[t] = 0
        dc = self._term(self._step_up(t))
        for k in NEIGH[t]:
            if occ[k] == 0 and self.up[k] == t:
                dc += self._term(self._step_up(k)) - self.terms[k]
        occ[t] = EMPTY
        return self.w_points * dp + self.w_bonus * db + self.w_climb * dc

    def under_delta(self, a: int) -> int:
        """The value change of a block under my knight on a (T41): a raise, an extension or a new castle."""
        v = self.view
        h, cid, area = v.h, v.cid, v.area
        ca, ha, best = cid[a], h[a], self.best
        lost = self.bonus and ca == self.home and ha == self.phase
        dp = others = dc = 0
        c = ca if ca >= 0 else v.touch(a)
        if ca >= 0:  # a raise: my knight a level higher
            dp = area[c] * (max(best[c], ha + 1) - best[c])
        elif c >= 0:  # an extension of c, my knight on its level 1
            dp = (area[c] + 1) * max(best[c], 1) - area[c] * best[c]
            others = self.view.others_best()[c]
            dc = self._climbers(c) - (self.up[a] >= 0 and cid[self.up[a]] == c)
        else:  # a new castle of area 1
            dp = 1
        gained = self.bonus and c == self.home and c >= 0 and (ha + 1 if ca >= 0 else 1) == self.phase
        h[a] += 1
        if ca < 0 <= c:
            cid[a] = c
            area[c] += 1
        dc += self._term(self._step_up(a)) - self.terms[a]
        if ca < 0 <= c:
            area[c] -= 1
            cid[a] = NONE
        h[a] -= 1
        db = self._bonus_change(lost, gained) if self.bonus else 0
        return self.w_points * dp - self.w_others * others + self.w_bonus * db + self.w_climb * dc

    # ----------------------------------------------------------------- any change, from scratch
    def after(self, change: Change) -> tuple[list[int], list[int], list[int], list[int], list[list[int]]]:
        """Heights, castle ids, areas, occupants and knights once ``change`` is made (copies)."""
        kind, a, t = change
        v = self.view
        h, cid, area, occ, rows = list(v.h), list(v.cid), list(v.area), list(v.occ), v.rows(self.n)
        if kind == MOVE:
            occ[a], occ[t] = EMPTY, 0
            mine = list(rows[0])
            mine[mine.index(a)] = t  # in place: the float sums the steps up in this order
            rows = [mine, *rows[1:]]
        elif kind == BLOCK:
            c = cid[t]
            if c >= 0:
                h[t] += 1
            else:
                c = v.touch(t)
                if c == NONE:
                    c = len(area)
                    area.append(0)
                cid[t], h[t] = c, 1
                area[c] += 1
        else:  # T46 on the engine's board: the source's castle may shrink or vanish
            board = self.board().copy()
            board.remove_block(a)
            board.add_block(t)
            h, cid = board.h, board.cid
            area = [len(squares) if squares else 0 for squares in board.castles]
        return h, cid, area, occ, rows

    def board(self):
        """The engine's board of the view, built once (MOVE_BLOCK only)."""
        if self._board is None:
            self._board = self.view.to_board()
        return self._board

    def components(self, h, cid, area, occ, rows) -> tuple[int, int, bool, list[int]]:
        """(my castle points, the opponents' sum, my bonus, the areas of my steps up in knight order)."""
        points = []
        for squares in rows:
            best: dict[int, int] = {}
            for s in squares:
                c = cid[s]
                if c >= 0 and h[s] > best.get(c, 0):
                    best[c] = h[s]
            points.append(sum(area[c] * level for c, level in best.items()))
        bonus = False
        if self.bonus:
            home = cid[self.view.king]
            bonus = any(cid[s] == home and h[s] == self.phase for s in rows[0])
        steps = []
        for s in rows[0]:
            up = h[s] + 1
            for x in NEIGH[s]:
                if occ[x] == EMPTY and h[x] == up:
                    steps.append(area[cid[x]])
                    break
        return points[0], sum(points[1:]), bonus, steps

    def exact(self, change: Change | None = None) -> int:
        """D × the value after ``change`` (of the view itself for None), from scratch."""
        v = self.view
        p, s, bonus, steps = self.components(*(self.after(change) if change else (v.h, v.cid, v.area, v.occ,
                                                                                    v.rows(self.n))))
        d = 2 * (self.n - 1)
        return (d * p - s) * self.scorings + 5 * d * self.phase * bonus + (self.n - 1) * self.scorings * sum(steps)

    def float_value(self, change: Change) -> float:
        """The value after ``change`` as the float the bot before this one computed, operation for operation."""
        p, s, bonus, steps = self.components(*self.after(change))
        scorings = self.scorings
        value = (p - OPPONENT_WEIGHT * (s / (self.n - 1))) * scorings
        if bonus:
            value += 5 * self.phase
        for area in steps:
            value += CLIMB_WEIGHT * area * scorings
        return value


class Gains:
    """The action-phase gains of one board and phase, found as they are asked for, and the choice per menu."""

    __slots__ = ("val", "groups", "cards", "choices")

    def __init__(self, val: Valuer):
        self.val = val
        self.groups: dict[tuple[int, ...], tuple[int, int]] = {}  # moves, adds or blocks -> (best gain, action)
        self.cards: dict[int, int] = {}  # PLAY_CARD action -> gain
        self.choices: dict[tuple, int] = {}  # (hand below HAND_WANTED, legal actions) -> action


class HeuristicAgent:
    """Greedy one-action planner over the observation (see the module docstring)."""

    def __init__(self, game: Game, seed: int | None = None):
        """``seed`` is accepted like every built-in agent's; this one is deterministic and ignores it."""
        self.game = game
        self.n = game.num_players
        self.reader = Reader(game)
        # action-phase gains in units of 1/(2D) point: a move's value change counts twice, a new knight's
        # (2 AP) once; the constants are multiples of 1/2, so all are integers
        unit = 4 * (self.n - 1)
        self.acquire_gain = tuple(round(unit * g) for g in ACQUIRE_GAIN)
        self.acquire_more = round(unit * ACQUIRE_MORE)
        self.card_reserve = round(unit * CARD_RESERVE)
        self.ap_card_gain = round(unit * AP_CARD_GAIN)
        self.score_step_gain = round(unit * SCORE_STEP_GAIN)
        self._memo: dict[tuple, Gains] = {}  # a pure cache: action-phase gains by board and phase

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = legal_actions(action_mask, "HeuristicAgent")
        if len(legal) == 1:
            return legal[0]
        ctx = self.reader.read_context(observation)
        d = ctx.decision
        if d == CARD_STACK:  # keep the turn's stack for PLACE_BLOCK
            return legal[0] if legal[0] != STACK_CURRENT else STACK_CURRENT
        if d == KEEP_CARD:
            return min(legal, key=lambda a: CARD_PREFERENCE.index(a - KEEP))
        if d == RETURN_CARD:  # the best card back on top, to find it again
            return min(legal, key=lambda a: (a >= RETURN_TOP + 10, CARD_PREFERENCE.index((a - RETURN_TOP) % 10)))
        if d == SETUP_BLOCK:  # T60: start castles near the middle
            return min(legal, key=lambda a: (DIST[a - SELECT][CENTRE], a))
        if d == ACTION:
            return self._action(observation, ctx, legal)
        if d in (MOVE_TO, CARD_SOURCE, CARD_TARGET):
            return self._follow_up(self._gains(observation, ctx.phase).val, ctx, legal)
        if d not in (KING_MOVE, SETUP_KNIGHT, SETUP_KING):
            return legal[0]  # D3a: the largest stack; D11: the largest stack with room
        view = self.reader.read_board(observation)
        if d == SETUP_KNIGHT:
            return max(legal, key=lambda a: (self._room(view, a - SELECT), -DIST[a - SELECT][CENTRE], -a))
        if d == SETUP_KING:  # next to my own knight, where I can reach its levels
            mine = view.mine
            return min(legal, key=lambda a: (min(DIST[a - SELECT][k] for k in mine), a))
        return self._king_move(view, ctx.phase, legal)

    def _follow_up(self, val: Valuer, ctx: Context, legal: list[int]) -> int:
        """D4a, D7, D8: the rest of a move or a card, on the board of the action that began it."""
        d = ctx.decision
        if d == MOVE_TO:  # D4a: the best destination of the chosen knight
            a = ctx.selected()
            return self._pick(val, legal, val.move_deltas(a, [x - SELECT for x in legal]),
                              lambda x: [(MOVE, a, x - SELECT)])
        if d == CARD_SOURCE:
            return self._card_source(val, ctx.card(), legal)
        a, card = ctx.selected(), ctx.card()  # CARD_TARGET
        kind = BLOCK if card == EXTRA_BLOCK else BLOCK_MOVE if card == MOVE_BLOCK else MOVE
        return self._pick(val, legal, self._card_deltas(val, card, a, [x - SELECT for x in legal]),
                          lambda x: [(kind, a, x - SELECT)])

    def _gains(self, observation: np.ndarray, phase: int) -> Gains:
        """The valuation of this position and what is known of it, remembered (a pure cache): the gains of
        the action phase depend on the board and the phase alone, which stay the same over the decisions of
        a turn that only buy cards or move the score, and through a move's or a card's later decisions."""
        key = (self.reader.board_bytes(observation), phase)
        gains = self._memo.get(key)
        if gains is None:
            gains = self._memo[key] = Gains(Valuer(self.reader.read_board(observation), phase, self.n))
            if len(self._memo) > MEMO_SIZE:
                del self._memo[next(iter(self._memo))]  # the oldest
        return gains

    # ----------------------------------------------------------------- choosing among valued candidates
    @staticmethod
    def _pick(val: Valuer, legal: list[int], exact: list, changes: Callable[[int], list[Change]]) -> int:
        """The legal action of largest value, ties to the smallest action (the old float key (value, -a)).
        Exactly tied values can differ in their floats' last bit when n = 4, so then the floats decide, as
        they did: ``changes(a)`` gives the changes reaching action a's value."""
        top = max(exact)
        tied = [a for a, e in zip(legal, exact, strict=True) if e == top]
        if len(tied) == 1 or val.floats_exact:
            return tied[0]
        return max(tied, key=lambda a: (max(map(val.float_value, changes(a)), default=NO_VALUE), -a))

    def _card_targets(self, val: Valuer, card: int, a: int):
        if card == MOVE_BLOCK:
            return card_targets(val.board(), card, a, val.view.mine, self.game.exact_jump)
        return val.view.card_targets(card, a, self.game.exact_jump)

    @staticmethod
    def _card_deltas(val: Valuer, card: int, a: int, targets) -> list[int]:
        """The value change of ``card`` played from a (my knight or the MOVE_BLOCK source) onto each target."""
        if card == EXTRA_BLOCK:
            return [val.block_delta(t) for t in targets]
        if card == MOVE_BLOCK:
            base = val.exact()
            return [val.exact((BLOCK_MOVE, a, t)) - base for t in targets]
        return val.move_deltas(a, targets)

    def _card_source(self, val: Valuer, card: int, legal: list[int]) -> int:
        """D7: the source whose best target gains most."""
        if card == BLOCK_UNDER_KNIGHT:
            return self._pick(val, legal, [val.under_delta(x - SELECT) for x in legal],
                              lambda x: [(BLOCK, x - SELECT, x - SELECT)])
        kind = BLOCK_MOVE if card == MOVE_BLOCK else MOVE
        options = {}
        for x in legal:
            targets = list(self._card_targets(val, card, x - SELECT))
            options[x] = targets, self._card_deltas(val, card, x - SELECT, targets)
        exact = [max(deltas, default=NO_VALUE) for _, deltas in options.values()]

        def changes(x: int) -> list[Change]:
            targets, deltas = options[x]
            top = max(deltas)
            return [(kind, x - SELECT, t) for t, e in zip(targets, deltas, strict=True) if e == top]
        return self._pick(val, legal, exact, changes)

    def _action(self, observation: np.ndarray, ctx: Context, legal: list[int]) -> int:
        """D4, with the choice remembered per menu of the position."""
        gains = self._gains(observation, ctx.phase)
        small_hand = ctx.hand() < HAND_WANTED
        menu = (small_hand, tuple(legal))
        choice = gains.choices.get(menu)
        if choice is None:
            choice = gains.choices[menu] = self._main_action(gains, ctx.phase, small_hand, legal)
        return choice

    def _main_action(self, gains: Gains, phase: int, small_hand: bool, legal: list[int]) -> int:
        """D4: the action with the largest gain per AP, the first of them in action order; SCORE_STEP is worth
        1, END_TURN 0. Moves, new knights and blocks come grouped in ``legal``: each group's best is
        remembered for the board."""
        best_action, best_gain = END_TURN, 0
        start = 0
        for stop, group_best in ((ADD_KNIGHT, self._best_move), (PLACE_BLOCK, self._best_add),
                                 (SELECT, self._best_block)):
            end = bisect_left(legal, stop, start)
            if end > start:
                group = tuple(legal[start:end])
                found = gains.groups.get(group)
                if found is None:
                    found = gains.groups[group] = group_best(gains.val, group)
                if found[0] > best_gain:
                    best_gain, best_action = found
            start = end
        for a in legal[start:]:
            if a == ACQUIRE:
                gain = self.acquire_gain[phase] if small_hand else self.acquire_more
            elif PLAY_CARD <= a < KEEP:
                gain = gains.cards.get(a)
                if gain is None:
                    gain = gains.cards[a] = self._card_gain(gains.val, a - PLAY_CARD)
            elif a == SCORE_STEP:
                gain = self.score_step_gain
            else:
                continue
            if gain > best_gain:
                best_action, best_gain = a, gain
        return best_action

    def _best_move(self, val: Valuer, actions: tuple[int, ...]) -> tuple[int, int]:
        """(gain, action): the first best MOVE_FROM of ``actions``, (0, END_TURN) if none gains."""
        best = (0, END_TURN)
        for a in actions:
            gain = 2 * val.best_move(a, self.game.tunnel)
            if gain > best[0]:
                best = (gain, a)
        return best

    @staticmethod
    def _best_add(val: Valuer, actions: tuple[int, ...]) -> tuple[int, int]:
        """As :meth:`_best_move` for ADD_KNIGHT: 2 AP, so half the value change."""
        best = (0, END_TURN)
        for a in actions:
            gain = val.add_delta(a - ADD_KNIGHT)
            if gain > best[0]:
                best = (gain, a)
        return best

    @staticmethod
    def _best_block(val: Valuer, actions: tuple[int, ...]) -> tuple[int, int]:
        """As :meth:`_best_move` for PLACE_BLOCK."""
        best = (0, END_TURN)
        cid, near = val.view.cid, val.near
        for a in actions:
            t = a - PLACE_BLOCK
            if t in near:
                gain = 2 * val.block_delta(t)
            elif cid[t] >= 0:
                continue  # a raise away from my knights changes nothing
            else:  # an extension away from my knights: its castle's growth
                for x in NEIGH[t]:
                    if cid[x] >= 0:
                        break
                gain = 2 * val.grow(cid[x])
            if gain > best[0]:
                best = (gain, a)
        return best

    def _card_gain(self, val: Valuer, card: int) -> int:
        """A card's best use minus keeping it (-1: not worth playing)."""
        if card in (AP_6, AP_7):
            return self.ap_card_gain
        view, mine = val.view, val.view.mine
        if card == EXTRA_BLOCK:  # T42
            deltas = [val.block_delta(t) for t in view.block_targets()]
        elif card == BLOCK_UNDER_KNIGHT:
            deltas = [val.under_delta(a) for a in mine if view.under_knight_ok(a)]
        elif card in KNIGHT_CARDS:
            deltas = [val.best_card_move(card, a, self.game.exact_jump) for a in mine]
        else:
            return -1  # MOVE_BLOCK: too many ways to weigh; kept
        return 2 * max(deltas) - self.card_reserve if deltas else -1

    def _king_move(self, view: View, phase: int, legal: list[int]) -> int:
        """T52 for the next phase with the king moved: my bonus minus the opponents' average (PASS on ties)."""
        h, cid, nxt = view.h, view.cid, phase + 1
        lit = [{cid[s] for s in row if h[s] == nxt} for row in view.rows(self.n)]  # castles where each seat is on nxt

        def value(a: int) -> float:
            home = cid[view.king if a == PASS else a - SELECT]
            bonus = [5 * nxt if home in seat else 0 for seat in lit]
            return bonus[0] - sum(bonus[1:]) / (self.n - 1)
        return max(legal, key=lambda a: (value(a), a == PASS))

    @staticmethod
    def _room(view: View, s: int) -> int:
        """Empty ground squares next to s: room to extend a castle there."""
        return sum(view.h[x] == 0 and view.occ[x] == EMPTY for x in NEIGH[s])
