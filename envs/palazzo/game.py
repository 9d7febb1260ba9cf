"""Palazzo rules engine (``docs/rules/palazzo.md``; rule ids P1…P74, D1…D11, I1…I17 cited inline).

Tiles are ids 0–47 (``16·material + j``, P4) and ``RIDER`` (48) for a game-end tile; stacks are lists whose
last element is the top. Money is handled as kinds (``payments.py``): hands, the discard pile, the take-money
display, bids and the open buy payment are lists of 16 counts, the deck a list of kinds (top = last).

A turn is a sequence of decisions D1–D11 (P72), each made by the seat that owns it (P14): ``decision`` says
which, ``current_player`` who. Everything automatic between decisions — reveals, draws, the master builder's
move, auction settlement, reshuffles, the end of the turn — happens inside ``_apply``.

The observation is kept in ``observation.py``: the rules call its writers where the position changes. Actions
(P73) are tabled in the package docstring.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np

from ..core import options as opt
from ..core.game import FIRST_PLAYER, TERMINAL, Fields
from ..core.game import Game as BaseGame
from ..core.game import State as BaseState
from . import observation as obs
from .actions import (
    ACTION,
    AUCTION,
    AUTO_DECISIONS,
    BID,
    BUY,
    DECISION_NAMES,
    DEST,
    DEST_DISCARD,
    DEST_NEW,
    DISTRIBUTE,
    DONE,
    MODE,
    NUM_ACTIONS,
    PASS,
    PAY,
    PICK,
    PLACE,
    RECON_DEST,
    RECON_PAY,
    RECON_TILE,
    RECONSTRUCT,
    SELECT,
    TAKE_MONEY,
    TILE,
    TILES,
)
from .components import (
    BY_FLOOR,
    FLOOR,
    IN_STACK,
    MATERIAL,
    NUM_QUARRIES,
    NUM_RIDERS,
    NUM_TILES,
    PALACE,
    PENDING,
    QUARRY,
    REMOVED,
    RIDER,
    SELECTED,
    STACK_NAMES,
    SUPPLY,
    WINDOWS,
)
from .payments import (
    CARD,
    COPIES,
    CURRENCY,
    GROUP,
    MAX_PAYMENT,
    NUM_KINDS,
    TOTAL_CARDS,
    UNSET,
    X3_VALUE,
    Z,
    best_pay,
    kind_name,
    legal_units,
    reach,
    unit_kinds,
    unit_name,
    unit_value,
)

TILE_DRAWN = "tile drawn"  # the chance event of a draw from a tile stack
SPLIT_DEALT = tuple(f"tile into stack {name}" for name in STACK_NAMES[:2])  # a shuffled split's chance events (P7)
MAX_TURNS = 10_000  # the largest turn cap allowed, generous: random games take 33–98 turns, the default cap is 400




def palace_score(tiles: list[int]) -> int:
    """P61: by tile count t, total windows W and whether one material."""
    t = len(tiles)
    if t == 1:
        return -5
    if t == 2:
        return 0
    w = sum(WINDOWS[x] for x in tiles)
    mono = len({MATERIAL[x] for x in tiles}) == 1
    if t == 3:
        return w + 3 * mono
    if t == 4:
        return w + 3 + 3 * mono
    return w + 6 + 6 * mono


def tile_name(t: int) -> str:
    """``b3.1`` (§0 notation)."""
    return f"{'bsm'[MATERIAL[t]]}{FLOOR[t]}.{WINDOWS[t]}"


class Game(BaseGame):
    """Palazzo under one option set (§14)."""

    name = "palazzo"
    title = "Palazzo"
    option_schema = (
        opt.one_of("num_players", (2, 3, 4), 4, "number of players (P1)"),
        opt.one_of("first_player", (None, 0, 1, 2, 3), None,
                   "first active player; None draws it with the state's generator (P11, A6)"),
        opt.one_of("stack_split", ("by_floor", "by_floor_shuffled", "random"), "by_floor",
                   "which tiles form stacks I, II, III (P7, A1)"),
        opt.integer("min_tile_price", 0, 0, MAX_PAYMENT, "floor of the buy price max(min_tile_price, 10 − supply); "
                    f"{MAX_PAYMENT}, the largest payment of all 55 cards, is the highest price that can be paid "
                    "(P36, A2)"),
        opt.one_of("reshuffle_timing", ("on_draw", "on_empty"), "on_draw",
                   "the discard pile becomes the deck when a card must be drawn from an empty deck, or as soon "
                   "as the deck runs out (P28, A3)"),
        opt.boolean("allow_noop_reconstruct", False,
                    "RECONSTRUCT may 'remove' the tile of a single-tile palace (a paid pass) (P59, A4)"),
        opt.boolean("removed_tiles_public", True, "the ids of removed tiles stay public (P68, A5)"),
        opt.integer("max_turns", 400, 1, MAX_TURNS, "turn cap, truncates the episode (P66, A7)", allow_none=True),
        opt.boolean("canonical_order", True, "payment units, money picks and bought tiles in ascending id only "
                    "(P23a, P27, P37)"),
        opt.boolean("auto_resolve_forced", False, "the engine applies public decisions that have one legal "
                    "action (D1, D2, first D4, D7–D10) (P74)"),
    )

    def _setup(self) -> None:
        o = self.options
        n = self.num_players = o["num_players"]
        if o["first_player"] is not None and o["first_player"] >= n:
            raise ValueError(f"Palazzo: option first_player={o['first_player']!r} is not allowed with "
                             f"num_players={n}; expected None or a seat 0..{n - 1}")
        self.num_actions = NUM_ACTIONS
        self.canonical = o["canonical_order"]
        self.auto = o["auto_resolve_forced"]
        self.removed_public = o["removed_tiles_public"]
        # Chance outcomes: the tile dealt to a stack (a shuffled split, P7), the tile (or rider) drawn, the money
        # card drawn, who starts.
        self.num_chance_outcomes = RIDER + 1
        # Decisions per turn: an action (P12), then one of: n + 1 money picks (P27); a reconstruction (tile,
        # destination, card; P55–P57); or a tile mode (P35) with a buy (two tiles and done, a unit per card and
        # done, P37–P38), an auction (a unit per card, a done after each, a pass per seat, P43–P45) or a
        # distribution (a pick per seat, P41), and a placement per tile received (P51).
        per_turn = 1 + max(n + 1, 3, 1 + max(3 + TOTAL_CARDS + 1, 2 * TOTAL_CARDS + n, n) + NUM_TILES)
        turns = o["max_turns"]
        self.max_game_length = None if turns is None else turns * per_turn
        obs.build_layouts(self)


class State(BaseState):
    """A Palazzo position; see the module docstring."""

    game: Game
    encoder = obs

    # ----------------------------------------------------------------- setup (P6a–P11)
    def _setup(self) -> None:
        g = self.game
        n = g.num_players
        rng = self.rng
        self.member = self._split_stacks()  # P7: the stack each tile belongs to (hidden while unseen)
        self.stacks = []
        for s in range(3):  # P8
            items = [t for t in range(NUM_TILES) if self.member[t] == s] + [RIDER] * (NUM_RIDERS if s == 2 else 0)
            self.stacks.append([items[i] for i in rng.permutation(len(items))])
        self.where = [IN_STACK] * NUM_TILES
        self.supply: list[int] = []
        self.quarries: list[list[int]] = [[] for _ in range(NUM_QUARRIES)]
        for i in range(5):  # P9: the supply, then quarries 0–3
            t = self._draw(self.stacks[0], TILE_DRAWN)
            if i == 0:
                self.supply.append(t)
                self.where[t] = SUPPLY
            else:
                self.quarries[i - 1].append(t)
                self.where[t] = QUARRY + i - 1
        self.mb = 0
        self.riders = 0
        self.removed: list[int] = []
        self.palaces: list[list[list[int]]] = [[] for _ in range(n)]
        cards = [k for k in range(NUM_KINDS) for _ in range(COPIES[k])]  # P10
        self.deck = [cards[i] for i in rng.permutation(len(cards))]
        self.deck_known = False
        self.discard = [0] * NUM_KINDS
        self.hands = [[0] * NUM_KINDS for _ in range(n)]
        self.known = [[0] * NUM_KINDS for _ in range(n)]  # K_q (P70a)
        for p in range(n):
            for _ in range(4):
                self.hands[p][self._draw(self.deck, f"deal to player {p}")] += 1
        first = g.options["first_player"]  # P11
        self.active = self._random_int(n, FIRST_PLAYER) if first is None else first
        self.turn = 0
        self.truncated = False
        self._clear_turn()
        self.decision = ACTION
        self.current_player = self.active
        self._derive()
        obs.reset(self)
        self._resolve_forced()
        if g.auto:
            obs.reset(self)  # the forced steps are not marked one by one

    def _split_stacks(self) -> list[int]:
        """P7 (A1): stack I, II or III for each tile id. A shuffled split deals tiles from a shuffled pile into the
        lower stacks, each tile dealt a chance event (:data:`SPLIT_DEALT`) that no seat sees; the tiles left over
        go to the stack above."""
        split = self.game.options["stack_split"]
        if split == "by_floor":
            return list(BY_FLOOR)
        if split == "random":  # 16 tiles to I, 16 to II, the rest to III
            member, deals = [2] * NUM_TILES, [(list(range(NUM_TILES)), ((0, 16), (1, 16)))]
        else:  # floors 1, 2–3, 4–5 to I, II, III, then 7 of the floor-2 tiles to I and 2 of the floor-4 tiles to II
            member = [FLOOR[t] // 2 for t in range(NUM_TILES)]
            deals = [([t for t in range(NUM_TILES) if FLOOR[t] == floor], ((stack, count),))
                     for floor, stack, count in ((2, 0, 7), (4, 1, 2))]
        for tiles, counts in deals:
            pile = [tiles[j] for j in self.rng.permutation(len(tiles))][::-1]  # the first in the order on top
            for stack, count in counts:
                for _ in range(count):
                    member[self._draw(pile, SPLIT_DEALT[stack])] = stack
        return member

    def _clear_turn(self) -> None:
        """The per-turn context; empty at the start of every turn (I13)."""
        n = self.game.num_players
        self.display = [0] * NUM_KINDS
        self.pickers: list[int] = []
        self.first_pick = -1
        self.selected: list[int] = []
        self.price = 0
        self.payment = [0] * NUM_KINDS
        self.pay_value = self.pay_target = self.pay_last = self.step_units = 0
        self.pay_currency = UNSET
        self.in_auction = False
        self.bids = [[0] * NUM_KINDS for _ in range(n)]
        self.bid_value = [0] * n
        self.bid_currency = [UNSET] * n
        self.passed = [False] * n
        self.high = 0
        self.leader = -1
        self.x3_out = False
        self.dist_pickers: list[int] = []
        self.pending: list[int] = []
        self.recon_tile = -1

    def _derive(self) -> None:
        """Caches derived from the position: the cards of unknown place (P70a): every hand's cards outside
        K, and the deck until it is known."""
        pool = [0] * NUM_KINDS if self.deck_known else [self.deck.count(k) for k in range(NUM_KINDS)]
        for hand, known in zip(self.hands, self.known, strict=True):
            for k in range(NUM_KINDS):
                pool[k] += hand[k] - known[k]
        self.hidden_pool = pool

    # ----------------------------------------------------------------- turn flow (P12, P13, P66)
    def _end_turn(self) -> None:
        """P13; then P66: the turn cap truncates before a turn starts."""
        auction = self.in_auction or any(self.passed)
        self._clear_turn()
        if auction:
            obs.write_passed(self)
        self.turn += 1
        obs.write_turn(self)
        self.active = (self.active + 1) % self.game.num_players
        if self.turn == self.game.options["max_turns"]:
            self.truncated = True
            self._finish()
            return
        self.decision = ACTION
        self.current_player = self.active

    def _finish(self) -> None:
        self.decision = 0
        self.current_player = TERMINAL

    @property
    def phase(self) -> str:
        return DECISION_NAMES[self.decision]

    # ----------------------------------------------------------------- legal actions (P72)
    def _legal_actions(self) -> list[int]:
        d, p, g = self.decision, self.current_player, self.game
        hand = self.hands[p]
        if d == ACTION:  # P12
            out = [TILES]
            if len(self.deck) + sum(self.discard) >= g.num_players + 1:
                out.insert(0, TAKE_MONEY)
            if self.palaces[p] and any(hand):
                out.append(RECONSTRUCT)
            return out
        if d == PICK:  # P27
            kinds = [k for k in range(NUM_KINDS) if self.display[k]]
            if g.canonical and p == self.active and len(self.pickers) > g.num_players - 1:
                if self.first_pick < 0:  # the first pick must leave a card of id >= its own
                    return [CARD + k for k in kinds if self.display[k] > 1 or k < kinds[-1]]
                return [CARD + k for k in kinds if k >= self.first_pick]
            return [CARD + k for k in kinds]
        if d == MODE:  # P35
            if self.supply and best_pay(hand) >= self.current_price():
                return [BUY, AUCTION]
            return [AUCTION]
        if d == SELECT:  # P37
            if not self.selected:
                return [TILE + t for t in self.supply]
            first = self.selected[0]
            out = []
            if best_pay(hand) >= 2 * self.price:
                out = [TILE + t for t in self.supply if t > first or (t != first and not g.canonical)]
            return out + [DONE]
        if d == PAY or d == BID:  # P23, P23a, P44, P45
            a = self.pay_last if g.canonical else 0
            out = legal_units(hand, self.pay_currency, a, g.canonical, self.pay_target - self.pay_value)
            if d == BID and not self.step_units:
                return out + [PASS]
            return out + [DONE] if self.pay_value >= self.pay_target else out
        if d == DISTRIBUTE:  # P41
            return [TILE + t for t in sorted(self.quarries[self.mb])]
        if d == PLACE:  # P51
            floor = FLOOR[self.pending[0]]
            return [DEST + s for s, palace in enumerate(self.palaces[p]) if FLOOR[palace[-1]] < floor] + \
                [DEST_NEW, DEST_DISCARD]
        if d == RECON_TILE:  # P56
            return sorted(TILE + t for palace in self.palaces[p] for t in palace)
        if d == RECON_DEST:  # P56, P58, P59
            s, _ = self._palace_of(p, self.recon_tile)
            if len(self.palaces[p][s]) > 1:
                return [DEST_NEW]
            floor = FLOOR[self.recon_tile]
            out = [DEST + i for i, palace in enumerate(self.palaces[p])
                   if i != s and all(FLOOR[x] != floor for x in palace)]
            if g.options["allow_noop_reconstruct"]:
                out.append(DEST_NEW)
            return out + [DEST_DISCARD]
        return [CARD + k for k in range(NUM_KINDS) if hand[k]]  # D11, P57

    def outcome_to_string(self, event: str, outcome: int) -> str:
        if event == TILE_DRAWN or event in SPLIT_DEALT:
            return "rider" if outcome == RIDER else f"tile {outcome} {tile_name(outcome)}"  # as in action names
        return super().outcome_to_string(event, outcome)  # who starts, or a money card drawn

    def current_price(self) -> int:
        """P36 (A2): p = max(min_tile_price, 10 − N)."""
        return max(self.game.options["min_tile_price"], 10 - len(self.supply))

    # ----------------------------------------------------------------- applying decisions
    def _apply(self, action: int) -> None:
        obs.write_context(self, 0)
        self._step(action)
        self._resolve_forced()
        obs.write_context(self, 1)

    def _resolve_forced(self) -> None:
        """P74: with auto_resolve_forced, apply public decisions that have a single legal action."""
        if not self.game.auto:
            return
        while self.decision in AUTO_DECISIONS and not (self.decision == SELECT and self.selected):
            legal = self._legal_actions()
            if len(legal) != 1:
                return
            self._step(legal[0])

    def _step(self, a: int) -> None:
        d, p = self.decision, self.current_player
        if d == ACTION:
            if a == TAKE_MONEY:
                self._take_money()
            elif a == TILES:
                self._draw_tiles()
            else:
                self.decision = RECON_TILE
        elif d == PICK:
            self._pick(p, a - CARD)
        elif d == MODE:
            if a == BUY:
                self.price = self.current_price()
                self.decision = SELECT
            else:
                self._auction()
        elif d == SELECT:
            self._select(a)
        elif d == PAY or d == BID:
            if a == DONE:
                self._done(p)
            elif a == PASS:
                self._pass(p)
            else:
                self._add_unit(p, a)
        elif d == DISTRIBUTE:
            t = a - TILE
            self.quarries[self.mb].remove(t)
            self._receive([t], p)
        elif d == PLACE:
            self._place(p, a)
        elif d == RECON_TILE:
            self.recon_tile = a - TILE
            self.decision = RECON_DEST
        elif d == RECON_DEST:
            self._reconstruct(p, a)
            self.decision = RECON_PAY
        else:  # RECON_PAY, P57: the card goes face up to the discard pile
            self._hand_out(p, a - CARD)
            self._count("discard_pile", self.discard, a - CARD, 1)
            self._end_turn()

    # ----------------------------------------------------------------- take money (P25–P28)
    def _take_money(self) -> None:
        n = self.game.num_players
        for _ in range(n + 1):  # P26
            self._count("money_display", self.display, self._draw_card(), 1)
        self.pickers = [self.active, *((self.active + i) % n for i in range(n))]  # P27
        self.decision = PICK
        self.current_player = self.active

    def _draw_card(self) -> int:
        """P26, P28 (A3)."""
        if not self.deck:
            self._reshuffle()
        k = self._draw(self.deck, "money card")
        if self.deck_known:
            obs.write_deck_count(self, k)
        else:
            self.hidden_pool[k] -= 1
            obs.write_unseen(self, k)
        if not self.deck and any(self.discard) and self.game.options["reshuffle_timing"] == "on_empty":
            self._reshuffle()
        obs.write_deck_size(self)
        return k

    def _reshuffle(self) -> None:
        """The discard pile, shuffled, becomes the deck; its contents are public from now on (P26, P28)."""
        cards = [k for k in range(NUM_KINDS) for _ in range(self.discard[k])]
        self.deck = [cards[i] for i in self.rng.permutation(len(cards))]
        self.discard = [0] * NUM_KINDS
        self.deck_known = True
        obs.write_money_piles(self)

    def _pick(self, p: int, k: int) -> None:
        """P27: the picked card goes to the picker's hand, publicly (P70a)."""
        self._count("money_display", self.display, k, -1)
        self._hand_in(p, k)
        if p == self.active and len(self.pickers) == self.game.num_players + 1:
            self.first_pick = k
        self.pickers.pop(0)
        if self.pickers:
            self.current_player = self.pickers[0]
        else:
            self._end_turn()

    def _hand_in(self, p: int, k: int) -> None:
        """A card enters p's hand publicly (P70: picks, bid cards taken back), so K_p gains it (P70a)."""
        self.hands[p][k] += 1
        self.known[p][k] += 1
        obs.write_hand(self, p, k)

    def _hand_out(self, p: int, k: int) -> None:
        """A card leaves p's hand; K_p loses it if known, else U_p shrinks (P70a)."""
        self.hands[p][k] -= 1
        if self.known[p][k]:
            self.known[p][k] -= 1
        else:
            self.hidden_pool[k] -= 1
            obs.write_unseen(self, k)
        obs.write_hand(self, p, k)

    # ----------------------------------------------------------------- tiles (P30–P34)
    def _draw_item(self) -> int:
        """P30: the top item of the lowest-numbered non-empty stack (P34: one always exists)."""
        for stack in self.stacks:
            if stack:
                return self._draw(stack, TILE_DRAWN)
        raise AssertionError("P34: every stack is empty while the game runs")

    def _draw_tiles(self) -> None:
        """P31–P33, then D3 (P35)."""
        for second in (False, True):
            item = self._draw_item()
            if item == RIDER:  # P32
                self.riders += 1
                if self.riders == NUM_RIDERS:  # P33, P60
                    obs.write_stacks(self)
                    self._finish()
                    return
            elif second:
                q = (self.mb + WINDOWS[item]) % NUM_QUARRIES
                self.quarries[q].append(item)
                self._set_where(item, QUARRY + q)
            else:
                self.supply.append(item)
                self.supply.sort()
                self._set_where(item, SUPPLY)
        obs.write_stacks(self)
        self.decision = MODE

    # ----------------------------------------------------------------- buy (P36–P39)
    def _select(self, a: int) -> None:
        if a == DONE:
            self._open_payment(PAY, self.price)
            return
        t = a - TILE
        self.selected.append(t)
        self._set_where(t, SELECTED)
        if len(self.selected) == 2:
            self._open_payment(PAY, 2 * self.price)

    def _open_payment(self, decision: int, target: int) -> None:
        """P38: V = 0, c* unset, T = k·p; P44: V and c* from the bidder's bid, T = high + 1."""
        self.decision = decision
        self.pay_target = target
        self.pay_last = self.step_units = 0
        if decision == PAY:
            self.pay_value, self.pay_currency = 0, UNSET
        else:
            b = self.current_player
            self.pay_value, self.pay_currency = self.bid_value[b], self.bid_currency[b]

    def _add_unit(self, p: int, unit: int) -> None:
        """P21: commit one unit from p's hand to the buy payment or p's bid."""
        bidding = self.decision == BID
        for k in unit_kinds(unit):
            self._hand_out(p, k)
            if bidding:
                self._count("bid_cards", self.bids[p], k, 1, p)
            else:
                self._count("payment_cards", self.payment, k, 1)
        self.pay_value += unit_value(unit)
        if unit < GROUP and unit - CARD != Z:
            self.pay_currency = CURRENCY[unit - CARD]
        self.pay_last = unit
        self.step_units += 1
        if bidding:
            obs.write_bidder(self, p, 0)
            self.bid_value[p], self.bid_currency[p] = self.pay_value, self.pay_currency
            obs.write_bidder(self, p, 1)

    def _done(self, p: int) -> None:
        if self.decision == PAY:  # P38: the cards go to the discard pile, the tiles become pending
            for k in range(NUM_KINDS):
                if self.payment[k]:
                    self._count("discard_pile", self.discard, k, self.payment[k])
                    self._count("payment_cards", self.payment, k, -self.payment[k])
            bought, self.selected = self.selected, []
            for t in bought:
                self.supply.remove(t)
            self._close_payment()
            self._receive(bought, p)
            return
        self.high, self.leader = self.pay_value, p  # P44: DONE makes him the leader
        self._next_bidder(p)

    def _close_payment(self) -> None:
        self.pay_value = self.pay_target = self.pay_last = self.step_units = 0
        self.pay_currency = UNSET

    # ----------------------------------------------------------------- auction and distribution (P40–P48)
    def _auction(self) -> None:
        n = self.game.num_players
        for step in range(1, NUM_QUARRIES):  # P40
            q = (self.mb + step) % NUM_QUARRIES
            if self.quarries[q]:
                break
        else:
            self._end_turn()  # no lot: the master builder stays
            return
        obs.write_master_builder(self, 0)
        self.mb = q
        obs.write_master_builder(self, 1)
        if len(self.quarries[q]) >= 4:  # P41
            self.dist_pickers = [(self.active + i) % n for i in range(n)]
            self.decision = DISTRIBUTE
            self.current_player = self.active
            return
        self.in_auction = True  # P42: the opening bid is X3
        self.x3_out = True
        obs.write_bidder(self, self.active, 0)
        self.bid_value[self.active] = X3_VALUE
        obs.write_bidder(self, self.active, 1)
        self.high, self.leader = X3_VALUE, self.active
        self._next_bidder(self.active)

    def _next_bidder(self, p: int) -> None:
        """P43: clockwise, skipping passed players; P46 when one player is left."""
        n = self.game.num_players
        if self.passed.count(False) == 1:
            self._settle()
            return
        b = (p + 1) % n
        while self.passed[b]:
            b = (b + 1) % n
        self.current_player = b
        self._open_payment(BID, self.high + 1)

    def _pass(self, p: int) -> None:
        """P45: the bid cards go back to the hand (publicly), X3 back to the table."""
        bid = self.bids[p]
        for k in range(NUM_KINDS):
            for _ in range(bid[k]):
                self._hand_in(p, k)
            if bid[k]:
                self._count("bid_cards", bid, k, -bid[k], p)
        obs.write_bidder(self, p, 0)
        self.bid_value[p], self.bid_currency[p] = 0, UNSET
        if p == self.active:
            self.x3_out = False
        self.passed[p] = True
        obs.write_passed(self)
        self._next_bidder(p)

    def _settle(self) -> None:
        """P46, P47: the winner pays his bid cards (not X3) and receives the lot."""
        w = self.passed.index(False)
        bid = self.bids[w]
        for k in range(NUM_KINDS):
            if bid[k]:
                self._count("discard_pile", self.discard, k, bid[k])
                self._count("bid_cards", bid, k, -bid[k], w)
        obs.write_bidder(self, w, 0)
        self.bid_value[w], self.bid_currency[w] = 0, UNSET
        self.x3_out = False
        self.in_auction = False
        self._close_payment()
        lot = self.quarries[self.mb]
        self.quarries[self.mb] = []
        self._receive(lot, w)

    def _receive(self, tiles: list[int], p: int) -> None:
        """P51, P53: the tiles become p's pending tiles, offered in ascending (floor, id) order."""
        self.pending = sorted(tiles, key=lambda t: (FLOOR[t], t))
        for t in self.pending:
            self._set_where(t, PENDING)
        self.decision = PLACE
        self.current_player = p

    # ----------------------------------------------------------------- building (P49–P54)
    def _place(self, p: int, a: int) -> None:
        t = self.pending.pop(0)
        if a == DEST_DISCARD:
            self._remove_tile(t)
        else:
            if a == DEST_NEW:
                self.palaces[p].append([t])
            else:
                self.palaces[p][a - DEST].append(t)
            self._set_where(t, PALACE)
            obs.write_palaces(self, p)
        if self.pending:
            return
        if self.dist_pickers:  # P41: the next player picks, or the rest of the lot is removed
            self.dist_pickers.pop(0)
            if self.dist_pickers:
                self.decision = DISTRIBUTE
                self.current_player = self.dist_pickers[0]
                return
            for rest in self.quarries[self.mb]:
                self._remove_tile(rest)
            self.quarries[self.mb] = []
        self._end_turn()

    def _remove_tile(self, t: int) -> None:
        self.removed.append(t)
        self._set_where(t, REMOVED)
        obs.write_removed_count(self)

    def _palace_of(self, p: int, t: int) -> tuple[int, int]:
        """(slot, position) of tile t in p's palaces."""
        for s, palace in enumerate(self.palaces[p]):
            if t in palace:
                return s, palace.index(t)
        raise AssertionError(f"tile {t} is not in a palace of player {p}")

    # ----------------------------------------------------------------- reconstruct (P55–P59)
    def _reconstruct(self, p: int, a: int) -> None:
        t = self.recon_tile
        palaces = self.palaces[p]
        s, i = self._palace_of(p, t)
        if a == DEST_NEW:  # REMOVE (or, with A4, the no-op that moves a single tile to the last slot)
            del palaces[s][i]
            if not palaces[s]:
                del palaces[s]
            palaces.append([t])
        elif a == DEST_DISCARD:  # DISCARD
            del palaces[s]
            self._remove_tile(t)
        else:  # INSERT where the floors keep rising, then the single-tile palace disappears (P50)
            target = palaces[a - DEST]
            target.append(t)
            target.sort(key=FLOOR.__getitem__)
            del palaces[s]
        obs.write_palaces(self, p)

    # ----------------------------------------------------------------- outcome (P60–P64)
    def score(self, p: int) -> int:
        """P62."""
        return sum(palace_score(palace) for palace in self.palaces[p])

    def scores(self) -> list[int]:
        return [self.score(p) for p in range(self.game.num_players)]

    def best_pays(self) -> list[int]:
        """P24 per seat."""
        return [best_pay(h) for h in self.hands]

    def ranking_key(self) -> list[tuple[int, int]]:
        """P63, P64: the score, then BestPay; equal pairs are co-winners."""
        return list(zip(self.scores(), self.best_pays(), strict=True))

    def winners(self) -> list[int]:
        key = self.ranking_key()
        return [p for p, k in enumerate(key) if k == max(key)]

    def end_info(self) -> dict[str, Any]:
        """P64: scores, BestPay and the winner set (empty when truncated), and the turns played."""
        return {"scores": self.scores(), "best_pay": self.best_pays(),
                "winners": [] if self.truncated else self.winners(), "turns": self.turn}

    # ----------------------------------------------------------------- moving money and tiles
    def _count(self, field: str, counts: list[int], k: int, delta: int, row: int = 0) -> None:
        """Change a money count and write its cell (a per-kind field; ``row`` is the seat of a per-seat one)."""
        counts[k] += delta
        obs.write_count(self, field, counts, k, row)

    def _set_where(self, t: int, code: int) -> None:
        """Move tile t to location ``code`` and write its public location."""
        obs.write_where(self, t, 0)
        self.where[t] = code
        obs.write_where(self, t, 1)

    # ----------------------------------------------------------------- observations (P68–P70b)
    def unseen(self, player: int) -> list[int]:
        """The cards ``player`` cannot locate, per kind: the others' unknown cards, and the deck until it is
        known (the observation's ``unseen_cards``)."""
        return [u - h + k for u, h, k in zip(self.hidden_pool, self.hands[player], self.known[player], strict=True)]

    # ----------------------------------------------------------------- sample_hidden (P69, P70a, I15)
    def sample_hidden(self, player: int, rng: np.random.Generator) -> State:
        """Redraw what ``player`` cannot know: the others' unknown cards and the deck (P70a), the stacks'
        contents and order and, with removed_tiles_public=False, which tiles were removed (P69)."""
        state = self.clone()
        self._sample_money(state, player, rng)
        self._sample_tiles(state, rng)
        state.rng = np.random.default_rng(int(rng.integers(2**63)))
        state._legal = None
        state._derive()
        obs.reset(state)
        return state

    def _sample_money(self, state: State, player: int, rng: np.random.Generator) -> None:
        """Deal the cards ``player`` cannot locate anew: each opponent keeps K_q and gets U_q of them, the rest
        (until the deck is known) form the deck. An opponent in the middle of a payment (D5, or a D6 step
        after an addition) is known to reach its target — his choices so far guarantee it and his next
        decision must have a legal action (I10) — so his cards are drawn under that condition."""
        counts = self.unseen(player)
        pool = [k for k in range(NUM_KINDS) for _ in range(counts[k])]  # sorted: no trace of the true deal
        unknown = [sum(h) - sum(k) for h, k in zip(self.hands, self.known, strict=True)]
        q = self.current_player
        if q != player and q != TERMINAL and (self.decision == PAY or (self.decision == BID and self.step_units)):
            first = self._paying_cards(q, pool, unknown[q], rng)
            for k in first:
                pool.remove(k)
        else:
            q, first = -1, []
        pool = [pool[i] for i in rng.permutation(len(pool))]
        for r in range(self.game.num_players):
            if r != player:
                hand = list(self.known[r])  # K_q stays in the hand (I15)
                dealt = first if r == q else pool[:unknown[r]]
                for k in dealt:
                    hand[k] += 1
                if r != q:
                    del pool[:unknown[r]]
                state.hands[r] = hand
        if self.deck_known:  # the contents are public, only the order is not
            deck = sorted(self.deck)
            state.deck = [deck[i] for i in rng.permutation(len(deck))]
        else:
            state.deck = pool

    def _paying_cards(self, q: int, pool: list[int], size: int, rng: np.random.Generator) -> list[int]:
        """``size`` cards of ``pool`` (sorted) that, with K_q, let q's open payment still reach its target:
        random draws until one does, else the first such combination in sorted order (one exists: q's
        true cards)."""
        a = self.pay_last if self.game.canonical else 0

        def reaches(cards: tuple[int, ...] | list[int]) -> bool:
            hand = list(self.known[q])
            for k in cards:
                hand[k] += 1
            return self.pay_value + reach(hand, self.pay_currency, a) >= self.pay_target

        for _ in range(200):
            cards = sorted(pool[i] for i in rng.permutation(len(pool))[:size])
            if reaches(cards):
                return cards
        return list(next(c for c in combinations(pool, size) if reaches(c)))

    def _sample_tiles(self, state: State, rng: np.random.Generator) -> None:
        """P69: which hidden tile belongs to which stack (keeping each stack's count and the composition rule
        of P7), which of those are still stacked (the rest were removed unseen) and the stacks' order. Only
        the stacks of visible tiles (public: each was drawn from the current stack) enter."""
        g = self.game
        hidden = [t for t in range(NUM_TILES) if self.where[t] == IN_STACK or
                  (self.where[t] == REMOVED and not g.removed_public)]
        visible = [t for t in range(NUM_TILES) if t not in hidden]
        member = list(self.member)
        split = g.options["stack_split"]
        if split == "random":  # any 16 tiles per stack
            quota = [16 - sum(self.member[t] == s for t in visible) for s in range(3)]
            for i, j in enumerate(rng.permutation(len(hidden))):
                member[hidden[j]] = 0 if i < quota[0] else 1 if i < quota[0] + quota[1] else 2
        elif split == "by_floor_shuffled":  # 7 floor-2 tiles in I, 2 floor-4 tiles in II
            for floor, low, in_low in ((2, 0, 7), (4, 1, 2)):
                tiles = [t for t in hidden if FLOOR[t] == floor]
                quota = in_low - sum(FLOOR[t] == floor and self.member[t] == low for t in visible)
                for i, j in enumerate(rng.permutation(len(tiles))):
                    member[tiles[j]] = low if i < quota else low + 1
        state.member = member
        removed = list(self.removed) if g.removed_public else []
        for s in range(3):
            tiles = [t for t in hidden if member[t] == s]
            tiles = [tiles[i] for i in rng.permutation(len(tiles))]
            riders = NUM_RIDERS - self.riders if s == 2 else 0
            stacked = len(self.stacks[s]) - riders
            removed += tiles[stacked:]
            items = tiles[:stacked] + [RIDER] * riders
            state.stacks[s] = [items[i] for i in rng.permutation(len(items))]
        state.removed = removed if g.removed_public else sorted(removed)
        for t in hidden:
            state.where[t] = IN_STACK
        for t in state.removed:
            state.where[t] = REMOVED

    # ----------------------------------------------------------------- text
    card_to_string = staticmethod(kind_name)  # the money cards

    def action_to_string(self, action: int) -> str:
        """Readable action names (P73), distinct for all 127 actions."""
        if not 0 <= action < NUM_ACTIONS:
            return "out of range"
        if action <= RECONSTRUCT:
            return ("take money", "tiles", "reconstruct")[action]
        if action <= AUCTION:
            return ("buy", "auction")[action - BUY]
        if action < CARD:
            return f"tile {action - TILE} {tile_name(action - TILE)}"
        if action < DONE:
            return ("card " if action < GROUP else "group ") + unit_name(action)
        if action == DONE:
            return "done"
        if action == PASS:
            return "pass"
        if action < DEST_NEW:
            return f"palace {action - DEST}"
        return "new palace" if action == DEST_NEW else "discard tile"

    # ----------------------------------------------------------------- copy and JSON
    fields = Fields(
        values="mb riders deck_known active turn truncated first_pick price pay_value pay_target pay_last step_units "
               "pay_currency in_auction high leader x3_out recon_tile decision current_player",
        copied="member where supply removed deck discard display pickers selected payment bid_value bid_currency "
               "passed dist_pickers pending",
        rows="stacks quarries hands known bids",
        nested="palaces",
    )
    derived = Fields(copied="hidden_pool _x")

    def _after_load(self, data: dict[str, Any]) -> None:
        self._derive()
        obs.reset(self)


Game.state_class = State
