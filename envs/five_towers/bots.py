"""A heuristic Five Towers player that sees only what the env gives its seat: (observation, action_mask).

It values its own position as the score (F27) plus a bonus for the room left on each tower (a high top
takes many later cards, an 8 takes anything, a sealed or blocked tower takes nothing), and picks the
action whose best continuation this round maximises that value: it bids for the number of display cards
it can build well, tears down only when that pays for the rubble, takes the cards of its best plan and
places each type in the order that leaves the roomiest top.
"""

from __future__ import annotations

from functools import cache
from itertools import combinations

import numpy as np

from ..core.agents import legal_actions
from ..core.game import Game
from .game import BLOCKED, NO_TOWER, NUM_SLOTS, NUM_TYPES, PLACE, TAKE, TEAR_NONE, can_place, tower_score

ROOM = [float(v) for v in range(16)] + [8.0, 0.0]  # by top code: the value, NO_TOWER 8, BLOCKED 0
ROOM[8] = 14.0  # an 8 accepts every value
ROOM_WEIGHT = 0.4  # points per unit of room


@cache
def best_final_top(top: int, values: tuple[int, ...], zero_starts_tower: bool) -> int:
    """The roomiest top after placing all ``values`` (sorted, one type) on ``top``; −1 if they don't fit."""
    if not values:
        return top
    best = -1
    for i, v in enumerate(values):
        if (i and values[i - 1] == v) or not can_place(top, v, zero_starts_tower):
            continue
        end = best_final_top(v, values[:i] + values[i + 1:], zero_starts_tower)
        if end >= 0 and (best < 0 or ROOM[end] > ROOM[best]):
            best = end
    return best


class HeuristicAgent:
    """Greedy one-round planner over the decoded observation (see the module docstring)."""

    def __init__(self, game: Game, seed: int | None = None):
        """``seed`` is accepted like every built-in agent's; this one is deterministic and ignores it."""
        self.game = game
        self.zero_starts = game.options["zero_starts_tower"]
        self.rebuild = game.options["rebuild_removed_tower"]

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = legal_actions(action_mask, "HeuristicAgent")
        if len(legal) == 1:
            return legal[0]
        f = self.game.layout.unpack(observation)
        towers, rubble = self._my_towers(f)
        cards = {}  # slot -> (type, value, status)
        for s in range(NUM_SLOTS):
            if f["display_status"][s].any():
                cards[s] = (int(f["display_type"][s].argmax()), int(f["display_value"][s].argmax()),
                            int(f["display_status"][s].argmax()))
        now = self._value(towers, rubble)
        phase = int(f["phase"].argmax())
        free = [s for s, c in cards.items() if c[2] == 0]
        if phase == 0:  # BID: the bid whose best take gains most, or PASS if none gains
            gains = {0: 0.5}  # a bid must beat passing by a margin: it may be outbid anyway
            for b in legal[1:]:
                gains[b] = max(self._best_plan(cards, t, towers, rubble, (), free, b)
                               for t in self._tear_options(towers)) - now
            return max(legal, key=lambda a: (gains[a], -a))
        n = int(f["take_count"].argmax())
        if phase == 1:  # TEARDOWN
            return max(legal, key=lambda a: self._best_plan(cards, a - TEAR_NONE, towers, rubble, (), free,
                                                            n))
        taken = tuple(s for s, c in cards.items() if c[2] == 1)
        if phase == 2:  # TAKE: the slot that keeps the best plan open
            return max(legal, key=lambda a: self._best_plan(
                cards, 0, towers, rubble, (*taken, a - TAKE), [s for s in free if s != a - TAKE], n))
        # PLACE: the card after which its type can end on the roomiest top
        def room_after(a: int) -> float:
            t, v, _ = cards[a - PLACE]
            rest = tuple(sorted(cards[s][1] for s in taken if s != a - PLACE and cards[s][0] == t))
            return ROOM[best_final_top(v, rest, self.zero_starts)]
        return max(legal, key=room_after)

    # ----------------------------------------------------------------- planning
    def _my_towers(self, f: dict[str, np.ndarray]) -> tuple[list[tuple[int, int, int]], int]:
        """(height, top code, code after a tear-down) per type, and the rubble size, for row 0 (me)."""
        per_type = self.game.deck_size // NUM_TYPES
        towers = []
        for t in range(NUM_TYPES):
            height = round(float(f["tower_height"][0, t]) * per_type)
            if height:
                top = int(f["tower_top"][0, t].argmax())
                below = int(f["tower_below"][0, t].argmax()) if height > 1 else \
                    (NO_TOWER if self.rebuild else BLOCKED)
            else:
                top = below = BLOCKED if f["tower_blocked"][0, t] else NO_TOWER
            towers.append((height, top, below))
        return towers, round(float(f["rubble"][0]) * 10)

    @staticmethod
    def _tear_options(towers: list[tuple[int, int, int]]) -> list[int]:
        """0 for NONE, 1 + t for each tower whose top may be torn down (F22)."""
        return [0] + [1 + t for t, (h, top, _) in enumerate(towers) if h and top != 0]

    def _value(self, towers: list[tuple[int, int, int]], rubble: int) -> float:
        score = tower_score([(h, top) for h, top, _ in towers if h], rubble)
        return score + ROOM_WEIGHT * sum(ROOM[top] for _, top, _ in towers)

    def _best_plan(self, cards: dict[int, tuple[int, int, int]], tear: int,
                   towers: list[tuple[int, int, int]], rubble: int, must: tuple[int, ...], free: list[int],
                   n: int) -> float:
        """Best value after tear-down option ``tear`` (0 none, 1 + t) and placing the cards of ``must`` plus
        n − len(must) of ``free``; −inf if no such set fits."""
        if tear:
            t = tear - 1
            h, _, below = towers[t]
            towers = list(towers)
            towers[t] = (h - 1, below, below)
            rubble += 1
        best = -np.inf
        for extra in combinations(free, n - len(must)):
            by_type: list[list[int]] = [[] for _ in range(NUM_TYPES)]
            for s in (*must, *extra):
                t, v, _ = cards[s]
                by_type[t].append(v)
            after = []
            for t, (h, top, below) in enumerate(towers):
                if by_type[t]:
                    end = best_final_top(top, tuple(sorted(by_type[t])), self.zero_starts)
                    if end < 0:
                        break
                    after.append((h + len(by_type[t]), end, below))
                else:
                    after.append((h, top, below))
            else:
                best = max(best, self._value(after, rubble))
        return best
