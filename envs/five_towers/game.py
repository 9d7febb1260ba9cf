"""Five Towers rules engine (``docs/rules/five_towers.md``; rule ids F1…F45 cited inline).

Cards are *kinds* ``16·type + value`` (F3). A tower is the list of its values bottom→top; only its top
(and, for a tear-down, the card below it) matters to the rules (F23), so the masks work on *top codes*:
a value 0…15, ``NO_TOWER`` or ``BLOCKED`` (a type torn away with ``rebuild_removed_tower=False``).

Every feasibility question reduces to one memoised function, :func:`longest_fit` (F23): how many cards of
a multiset of one type's values fit on a top, in the best order. Types are independent, so ``Nmax`` of an
option is a sum over types (F24). After the tear-down the N-slot subsets of the display that fit are
listed once, as unions of each type's fitting parts, and every take mask reads that list (F25c).

Actions (F33), a flat ``Discrete(22)``, are tabled in the package docstring (``envs/five_towers/__init__.py``).
"""

from __future__ import annotations

from functools import cache, lru_cache
from typing import Any

import numpy as np

from ..core import options as opt
from ..core.game import FIRST_PLAYER, TERMINAL, Fields
from ..core.game import Game as BaseGame
from ..core.game import State as BaseState
from . import observation as obs
from .actions import BID, PASS, PHASE_NAMES, PLACE, PLACING, TAKE, TAKING, TEAR, TEAR_NONE, TEARDOWN
from .cards import DUPLICATED_VALUES, NUM_KINDS, NUM_SLOTS, NUM_TYPES, TYPE_NAMES

NO_TOWER, BLOCKED = 16, 17  # top codes besides the values 0…15

NOT_ACTED = -1  # bids[p]: -1 not acted, 0 passed, b ≥ 1 bid b
IN_DISPLAY, TAKEN, PLACED, EMPTY = 0, 1, 2, -1  # display slot status


def can_place(top: int, value: int, zero_starts_tower: bool) -> bool:
    """F20 for a card of the tower's type; ``top`` is a top code."""
    if top == BLOCKED:
        return False
    if top == NO_TOWER:
        return value != 0 or zero_starts_tower
    if top == 0:
        return False
    if top == 8 or value == 9:
        return True
    return value < top


@cache
def longest_fit(top: int, values: tuple[int, ...], zero_starts_tower: bool) -> int:
    """F23/F24: the most cards of ``values`` (sorted, one type) that fit on ``top`` in some order.

    Exact search over orders, skipping repeated values; placing a card makes it the new top, so the
    recursion only carries the top code. ``values`` fit entirely iff the result is ``len(values)``.
    """
    best = 0
    previous = -1
    for i, v in enumerate(values):
        if v == previous:
            continue
        previous = v
        if can_place(top, v, zero_starts_tower):
            best = max(best, 1 + longest_fit(v, values[:i] + values[i + 1:], zero_starts_tower))
            if best == len(values):
                break
    return best


@lru_cache(maxsize=1 << 16)
def fitting_parts(top: int, values: tuple[int, ...], zero_starts_tower: bool) -> tuple[int, ...]:
    """F23: the bitmasks (bit i for ``values[i]``) of the non-empty subsets of ``values`` (one type's cards, in
    slot order) that fit entirely on ``top``. Keyed by values, not slots, so that the cache is hit far more."""
    out = []
    for chosen in range(1, 1 << len(values)):
        vals = tuple(sorted(v for i, v in enumerate(values) if chosen >> i & 1))
        if longest_fit(top, vals, zero_starts_tower) == len(vals):
            out.append(chosen)
    return tuple(out)


@cache
def slot_masks(slots: tuple[int, ...]) -> tuple[int, ...]:
    """The slot bitmask of each bitmask over positions in ``slots`` (what ``fitting_parts`` gives)."""
    return tuple(sum(1 << s for i, s in enumerate(slots) if chosen >> i & 1) for chosen in range(1 << len(slots)))


def tower_score(heights_and_tops: list[tuple[int, int]], rubble: int) -> int:
    """F27 from (height, top value) per existing tower and the rubble size."""
    base = sum(h * (2 if top == 0 else 1) for h, top in heights_and_tops)
    tallest = max((h for h, _ in heights_and_tops), default=0)
    return base + tallest - rubble * (rubble + 1) // 2


class Game(BaseGame):
    """Five Towers under one option set (§10)."""

    name = "five_towers"
    title = "Five Towers"
    option_schema = (
        opt.one_of("num_players", (2, 3, 4, 5), 2, "number of players; 4–5 use the 110-card deck (F1, F3)"),
        opt.one_of("first_player", ("random", 0, 1, 2, 3, 4), "random",
                   "start player of round 1: drawn by the seeded generator, or a seat < num_players (F7)"),
        opt.boolean("final_partial_round", True,
                    "1–4 cards left in pass 2 are played as a smaller display, else the game ends (F9)"),
        opt.boolean("reshuffle_includes_last_round", True,
                    "the discard pile is reshuffled when the next round needs cards (with pass 1's last "
                    "unused cards), else as the reveal empties the draw pile (F9)"),
        opt.boolean("zero_starts_tower", True, "a 0 may open a tower (F20)"),
        opt.boolean("rebuild_removed_tower", True,
                    "a type whose tower was torn away may be built again (F15)"),
        opt.one_of("tie_rule", ("shared",), "shared", "tied players share the rank (F28)"),
        opt.boolean("canonical_order", True, "take slots and place types in ascending order only (F26)"),
        opt.boolean("auto_resolve_forced", False, "the engine applies decisions with one legal action, still "
                    "recorded in the history (F35)"),
    )

    def _setup(self) -> None:
        o = self.options
        n = self.num_players = o["num_players"]
        if o["first_player"] != "random" and o["first_player"] >= n:
            raise ValueError(f"Five Towers: option first_player={o['first_player']!r} is not allowed with "
                             f"num_players={n}; expected 'random' or a seat 0..{n - 1}")
        self.num_actions = 22  # F33
        self.zero_starts = o["zero_starts_tower"]
        self.rebuild = o["rebuild_removed_tower"]
        self.canonical = o["canonical_order"]
        self.auto = o["auto_resolve_forced"]
        duplicated = n >= 4  # F3
        self.multiplicity = [2 if duplicated and k % 16 in DUPLICATED_VALUES else 1 for k in range(NUM_KINDS)]
        self.deck_size = sum(self.multiplicity)  # 80 or 110
        self.per_type = self.deck_size // NUM_TYPES  # 16 or 22
        self.max_rounds = 2 * self.deck_size // 5  # F29: 32 or 44
        self.num_chance_outcomes = NUM_KINDS  # chance outcomes: the kind revealed, who starts (0..n-1)
        # a round: a bid or pass per seat, a tear-down, at most 5 takes and 5 placements (F10–F17)
        self.max_game_length = self.max_rounds * (n + 11)
        self.perfect_information = True  # F30: only the draw pile's order is secret
        obs.build_layouts(self)


class State(BaseState):
    """A Five Towers position; see the module docstring for the action layout.

    ``history`` lists ``(player, action, forced)`` for every decision, forced ones included (F35). The
    observation vector ``_x`` is written by ``observation.py``'s writers where the position changes.
    """

    game: Game
    encoder = obs

    # ----------------------------------------------------------------- setup (F6, F7)
    def _setup(self) -> None:
        g = self.game
        deck = [k for k in range(NUM_KINDS) for _ in range(g.multiplicity[k])]
        self.draw = [deck[i] for i in self.rng.permutation(len(deck))]  # the next card is draw[-1]
        first = g.options["first_player"]
        self.first_player = self._random_int(g.num_players, FIRST_PLAYER) if first == "random" else first
        self.start = self.first_player
        self.pass_no = 1
        self.round = 0
        self.discard = [0] * NUM_KINDS
        self.towers: list[list[list[int]]] = [[[] for _ in range(NUM_TYPES)] for _ in range(g.num_players)]
        self.blocked = [[False] * NUM_TYPES for _ in range(g.num_players)]
        self.rubble: list[list[int]] = [[] for _ in range(g.num_players)]
        self.history: list[tuple[int, int, int]] = []
        self._clear_round()
        obs.reset(self)
        self._start_round()
        self._resolve_forced()

    def _clear_round(self) -> None:
        n = self.game.num_players
        self.display = [EMPTY] * NUM_SLOTS  # kinds
        self.status = [EMPTY] * NUM_SLOTS
        self.k = 0
        self.bids = [NOT_ACTED] * n
        self.bid_pos = 0
        self.high = 0
        self.high_bidder = -1
        self.winner = -1
        self.take_n = 0
        self.teardown = -1  # -1 not chosen, 0 none, 1 + t tower type t
        self.taken = 0  # bitmask of taken slots
        self.placed = 0
        # caches derived from the position (rebuilt by _load_dict):
        self.nmax_options: list[list[int]] = []  # BID, TEARDOWN: per player NONE, TEAR 0..4 (-1: no option)
        self.good: list[int] = []  # TAKE: fitting N-slot subsets that contain the taken slots
        self._by_type: list[tuple[int, ...]] = [()] * NUM_TYPES  # display values per type, sorted
        self.phase_id = BID
        self.current_player = TERMINAL

    def top(self, p: int, t: int) -> int:
        """Top code of p's tower of type t."""
        tower = self.towers[p][t]
        return tower[-1] if tower else (BLOCKED if self.blocked[p][t] else NO_TOWER)

    def _top_after_teardown(self, p: int, t: int) -> int:
        tower = self.towers[p][t]
        if len(tower) > 1:
            return tower[-2]
        return NO_TOWER if self.game.rebuild else BLOCKED  # F15

    # ----------------------------------------------------------------- round flow (F8–F19)
    def _start_round(self) -> None:
        """F9 exactly as its pseudo-code; called with the round's observation pieces erased."""
        g = self.game
        if not self.draw and self.pass_no == 1:  # only reached with reshuffle_includes_last_round
            self._reshuffle()
        if not self.draw or (len(self.draw) < 5 and not g.options["final_partial_round"]):
            self.current_player = TERMINAL  # F29
            obs.write_round(self)
            return
        self.round += 1
        self.k = min(5, len(self.draw))
        for s in range(self.k):
            kind = self._draw(self.draw, f"reveal slot {s}")
            self.display[s] = kind
            self.status[s] = IN_DISPLAY
            obs.write_drawn(self, kind)
        if not self.draw and self.pass_no == 1 and not g.options["reshuffle_includes_last_round"]:
            self._reshuffle()
        self.phase_id = BID
        self._derive_bidding()
        self.current_player = self.start  # F10
        obs.write_round(self)

    def _derive_bidding(self) -> None:
        """Caches used while the towers are those of the reveal (BID, TEARDOWN): ``nmax_options``."""
        by_type: list[list[int]] = [[] for _ in range(NUM_TYPES)]
        for kind in self.display[:self.k]:
            by_type[kind >> 4].append(kind & 15)
        self._by_type = [tuple(sorted(v)) for v in by_type]
        self.nmax_options = [self._nmax_options(p) for p in range(self.game.num_players)]

    def _nmax_options(self, p: int) -> list[int]:
        """F24: the largest fitting take for option NONE and for each TEAR t (−1 if t ∉ TD(p), F22)."""
        zs, by_type = self.game.zero_starts, self._by_type
        fits = [longest_fit(self.top(p, t), vals, zs) if vals else 0 for t, vals in enumerate(by_type)]
        none = sum(fits)
        out = [none, -1, -1, -1, -1, -1]
        for t, tower in enumerate(self.towers[p]):
            if tower and tower[-1] != 0:
                vals = by_type[t]
                out[1 + t] = (none - fits[t] + longest_fit(self._top_after_teardown(p, t), vals, zs)) if vals else none
        return out

    def nmax(self, p: int) -> int:
        """F24: the largest feasible bid of p on this round's display (computed at the reveal)."""
        return max(self.nmax_options[p])

    def _reshuffle(self) -> None:
        """F9: the discard pile becomes the shuffled draw pile; pass 2 begins."""
        cards = [k for k in range(NUM_KINDS) for _ in range(self.discard[k])]
        self.draw = [cards[i] for i in self.rng.permutation(len(cards))]
        self.discard = [0] * NUM_KINDS
        self.pass_no = 2
        obs.write_cards(self)

    def _end_bidding(self) -> None:
        """F13."""
        if self.high >= 1:
            obs.write_max_bid(self, 0)
            obs.write_winner(self, 0)
            self.winner = self.high_bidder
            self.take_n = self.high
            obs.write_winner(self, 1)
            self.phase_id = TEARDOWN
            self.current_player = self.winner
        else:
            self._cleanup()

    def _cleanup(self) -> None:
        """F18, then the end check F19."""
        for s in range(self.k):
            if self.status[s] == IN_DISPLAY:
                kind = self.display[s]
                self.discard[kind] += 1
                obs.write_discarded(self, kind)
        self._clear_round()
        self.start = (self.start + 1) % self.game.num_players
        if self.pass_no == 2 and not self.draw:  # F19
            self.current_player = TERMINAL
            obs.write_round(self)
        else:
            self._start_round()

    # ----------------------------------------------------------------- decisions (F10–F17, F25)
    @property
    def phase(self) -> str:
        return "terminal" if self.current_player == TERMINAL else PHASE_NAMES[self.phase_id]

    def _legal_actions(self) -> list[int]:
        phase = self.phase_id
        if phase == BID:  # F25(a)
            top = min(self.k, self.nmax(self.current_player))
            return [PASS, *range(self.high + 1, top + 1)]
        if phase == TEARDOWN:  # F25(b)
            opts = self.nmax_options[self.winner]
            return [TEAR_NONE + i for i in range(6) if opts[i] >= self.take_n]
        if phase == TAKING:  # F25(c)
            slots = self._take_slots()
            return [TAKE + s for s in range(NUM_SLOTS) if slots >> s & 1]
        return [PLACE + s for s in self._placeable_slots()]  # F25(d)

    def _take_slots(self) -> int:
        """Bitmask of the takeable slots: the untaken slots of the fitting N-subsets that contain the taken
        ones (``self.good``); canonically only each subset's lowest untaken slot, above all taken ones."""
        taken = self.taken
        out = 0
        if not self.game.canonical:
            for subset in self.good:
                out |= subset & ~taken
            return out
        below = (1 << taken.bit_length()) - 1  # F26: the slots up to the highest taken one
        for subset in self.good:
            rest = subset & ~taken
            if not rest & below:
                out |= rest & -rest
        return out

    def _placeable_slots(self) -> list[int]:
        """F25(d). The taken cards of each type always fit their tower (the take mask ensures it, and every
        placement keeps it), so a card alone of its type is placeable; with several, the card must fit on
        the top and the others of its type on the card."""
        w, zs, display, canonical = self.winner, self.game.zero_starts, self.display, self.game.canonical
        by_type: dict[int, list[int]] = {}
        for s in range(self.k):
            if self.status[s] == TAKEN:
                by_type.setdefault(display[s] >> 4, []).append(s)
        out = []
        for t in [min(by_type)] if canonical else by_type:  # F26: the lowest type first
            slots = by_type[t]
            if len(slots) == 1:
                out += slots
                continue
            top, tried = self.top(w, t), set()
            for s in slots:
                v = display[s] & 15
                if canonical and v in tried:  # F26: an identical card in a lower slot goes first
                    continue
                tried.add(v)
                rest = tuple(sorted(display[r] & 15 for r in slots if r != s))
                if can_place(top, v, zs) and longest_fit(v, rest, zs) == len(rest):
                    out.append(s)
        return out if canonical else sorted(out)

    def _apply(self, action: int) -> None:
        self._step(action, False)
        self._resolve_forced()

    def _resolve_forced(self) -> None:
        """F35: apply every decision that has a single legal action."""
        if not self.game.auto:
            return
        while self.current_player != TERMINAL:
            legal = self._legal_actions()
            if len(legal) != 1:
                return
            self._step(legal[0], True)

    def _step(self, a: int, forced: bool) -> None:
        p = self.current_player
        self.history.append((p, a, int(forced)))
        obs.write_turn(self, 0)
        if a < TEAR_NONE:
            self._bid(p, a)
        elif a < TAKE:
            self._tear_down(p, a - TEAR_NONE)
        elif a < PLACE:
            self._take(a - TAKE)
        else:
            self._place(p, a - PLACE)
        obs.write_turn(self, 1)

    def _bid(self, p: int, b: int) -> None:
        """F10–F12: one opportunity; a bid of k stops the bidding."""
        obs.write_bid(self, p, 0)
        obs.write_high(self, 0)
        self.bids[p] = b
        if b:
            self.high, self.high_bidder = b, p
        obs.write_bid(self, p, 1)
        obs.write_high(self, 1)
        self.bid_pos += 1
        if b == self.k or self.bid_pos == self.game.num_players:
            self._end_bidding()
        else:
            self.current_player = (self.start + self.bid_pos) % self.game.num_players

    def _tear_down(self, w: int, choice: int) -> None:
        """F15: choice 0 is NONE, 1 + t tears the top of tower t into the rubble."""
        obs.write_winner(self, 0)
        self.teardown = choice
        obs.write_winner(self, 1)
        if choice:
            t = choice - 1
            obs.write_tower(self, w, t, 0)
            v = self.towers[w][t].pop()
            self.rubble[w].append(16 * t + v)
            if not self.towers[w][t] and not self.game.rebuild:
                self.blocked[w][t] = True
            obs.write_tower(self, w, t, 1)
            obs.write_tower_card(self, w, t, len(self.towers[w][t]))  # the cell of the card torn away
            obs.write_rubble(self, w, 16 * t + v)
        self.good = self._fitting_subsets(w)
        self.phase_id = TAKING

    def _fitting_subsets(self, w: int) -> list[int]:
        """F25(c): the N-slot subsets of the display that fit w's towers as they are now. Types are
        independent (F23), so a subset fits iff its part of each type fits: the subsets are the unions
        of one fitting part per type (possibly empty) with N slots in all."""
        display, k, n = self.display, self.k, self.take_n
        slots: list[list[int]] = [[] for _ in range(NUM_TYPES)]
        for s in range(k):
            slots[display[s] >> 4].append(s)
        unions = [0]
        for t, typed in enumerate(slots):
            if len(typed) == 1:  # the common case, without the cache
                slot = typed[0]
                if can_place(self.top(w, t), display[slot] & 15, self.game.zero_starts):
                    unions += [u | 1 << slot for u in unions if u.bit_count() < n]
            elif typed:
                spread = slot_masks(tuple(typed))  # fitting_parts gives bitmasks over typed's positions
                values = tuple([display[s] & 15 for s in typed])
                parts = [spread[m] for m in fitting_parts(self.top(w, t), values, self.game.zero_starts)]
                unions += [u | part for u in unions for part in parts if (u | part).bit_count() <= n]
        return [u for u in unions if u.bit_count() == n]

    def _take(self, s: int) -> None:
        """F16."""
        obs.write_status(self, s, 0)
        self.taken |= 1 << s
        self.status[s] = TAKEN
        obs.write_status(self, s, 1)
        self.good = [m for m in self.good if m >> s & 1]
        if self.taken.bit_count() == self.take_n:
            self.phase_id = PLACING

    def _place(self, w: int, s: int) -> None:
        """F17: the card goes on its type's tower (or starts it)."""
        kind = self.display[s]
        t = kind >> 4
        obs.write_status(self, s, 0)
        obs.write_tower(self, w, t, 0)
        self.towers[w][t].append(kind & 15)
        self.status[s] = PLACED
        self.placed |= 1 << s
        obs.write_status(self, s, 1)
        obs.write_tower(self, w, t, 1)
        obs.write_tower_card(self, w, t, len(self.towers[w][t]) - 1)
        if self.placed == self.taken:
            self._cleanup()

    # ----------------------------------------------------------------- outcome (F27–F29)
    def score(self, p: int) -> int:
        """F27."""
        return tower_score([(len(tw), tw[-1]) for tw in self.towers[p] if tw], len(self.rubble[p]))

    def scores(self) -> list[int]:
        return [self.score(p) for p in range(self.game.num_players)]

    def ranks(self) -> list[int]:
        """F28, tie_rule 'shared': 1 + the number of players with a strictly higher score."""
        s = self.scores()
        return [1 + sum(x > mine for x in s) for mine in s]

    def end_info(self) -> dict[str, Any]:
        return {"scores": self.scores(), "ranks": self.ranks(), "rounds": self.round}

    # ----------------------------------------------------------------- information (F30, F31)
    def sample_hidden(self, player: int, rng: np.random.Generator) -> State:
        """F31: only the draw pile's order is secret, so reshuffle it (and reseed the state's generator)."""
        state = self.clone()
        pool = sorted(self.draw)  # canonical order first: the result must not depend on the secret order
        state.draw = [pool[i] for i in rng.permutation(len(pool))]
        state.rng = np.random.default_rng(int(rng.integers(2**63)))
        return state

    # ----------------------------------------------------------------- text
    @staticmethod
    def card_to_string(kind: int) -> str:
        return f"{TYPE_NAMES[kind >> 4]} {kind & 15}"

    def action_to_string(self, action: int) -> str:
        if not 0 <= action < self.game.num_actions:
            return "out of range"
        if action == PASS:
            return "pass"
        if action < TEAR_NONE:
            return f"bid {action}"
        if action == TEAR_NONE:
            return "tear down none"
        if action < TAKE:
            return f"tear down {TYPE_NAMES[action - TEAR]}"
        if action < PLACE:
            return f"take slot {action - TAKE}"
        return f"place slot {action - PLACE}"

    # ----------------------------------------------------------------- copy and JSON
    fields = Fields(
        values="first_player start pass_no round k bid_pos high high_bidder winner take_n teardown taken placed "
               "phase_id current_player",
        copied="draw discard display status bids history",  # history entries are tuples
        rows="blocked rubble",
        nested="towers",
    )
    derived = Fields(values="nmax_options good _by_type", copied="_x")  # the lists are replaced, never mutated

    def _after_load(self, data: dict[str, Any]) -> None:
        self.history = [tuple(h) for h in self.history]
        self._by_type, self.nmax_options, self.good = [()] * NUM_TYPES, [], []
        if self.current_player != TERMINAL:  # the caches, from the towers they were computed on
            if self.phase_id in (BID, TEARDOWN):
                self._derive_bidding()
            elif self.phase_id == TAKING:
                self.good = [m for m in self._fitting_subsets(self.winner) if m & self.taken == self.taken]
        obs.reset(self)


Game.state_class = State
