"""Palazzo rules engine (``docs/rules/palazzo.md``; rule ids P1…P74, D1…D11, I1…I17 cited inline).

Tiles are ids 0–47 (``16·material + j``, P4) and ``RIDER`` (48) for a game-end tile; stacks are lists whose
last element is the top. Money is handled as kinds (``payments.py``): hands, the discard pile, the take-money
display, bids and the open buy payment are lists of 16 counts, the deck a list of kinds (top = last).

A turn is a sequence of decisions D1–D11 (P72), each made by the seat that owns it (P14): ``decision`` says
which, ``current_player`` who. Everything automatic between decisions — reveals, draws, the master builder's
move, auction settlement, reshuffles, the end of the turn — happens inside ``_apply``.

The observation (``Game.layout``) is kept in ``State._pub``, a seat-absolute vector of everything public,
written piece by piece as the position changes; ``observation(p)`` rotates the seats and adds p's own cards,
``global_state()`` adds every hidden card and the stacks instead. Actions (P73) are tabled in the package
docstring.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np

from tabletop_rl.envs.core import options as opt
from tabletop_rl.envs.core.game import TERMINAL
from tabletop_rl.envs.core.game import Game as BaseGame
from tabletop_rl.envs.core.game import State as BaseState
from tabletop_rl.envs.core.layout import Layout
from tabletop_rl.envs.core.piles import card_depths, first_copies

from .payments import (
    CARD,
    COPIES,
    CURRENCY,
    GROUP,
    MAX_BID,
    MAX_PAYMENT,
    NUM_KINDS,
    NUM_UNITS,
    TOTAL_CARDS,
    UNSET,
    X3_VALUE,
    Z,
    best_pay,
    legal_units,
    reach,
    unit_kinds,
    unit_name,
    unit_value,
)

# ----------------------------------------------------------------- components (P4, P5)
_J_TABLE = ((1, 1), (1, 2), (1, 3), (2, 1), (2, 2), (2, 3), (3, 1), (3, 1), (3, 2), (3, 3), (4, 1), (4, 2), (4, 3),
            (5, 1), (5, 2), (5, 3))
NUM_TILES = 48
RIDER = 48
NUM_RIDERS = 5
MATERIAL = tuple(t // 16 for t in range(NUM_TILES))
FLOOR = tuple(_J_TABLE[t % 16][0] for t in range(NUM_TILES))
WINDOWS = tuple(_J_TABLE[t % 16][1] for t in range(NUM_TILES))
STACK_NAMES = ("I", "II", "III")
STACK_SIZES = (16, 16, 16 + NUM_RIDERS)  # P7, P8
# P7, A1 by_floor: the 48 tiles sorted by (floor, id), cut into 16/16/16
BY_FLOOR = tuple(sorted(range(NUM_TILES), key=lambda t: (FLOOR[t], t)).index(t) // 16 for t in range(NUM_TILES))
NUM_SLOTS = 48  # P50: no player needs more palace slots
NUM_QUARRIES = 4
MAX_TURNS = 10_000  # the largest turn cap allowed, generous: random games take 33–98 turns, the default cap is 400

# ----------------------------------------------------------------- actions (P73)
TAKE_MONEY, TILES, RECONSTRUCT = 0, 1, 2
BUY, AUCTION = 3, 4
TILE = 5  # TILE(id) = 5 + id
DONE, PASS = 75, 76
DEST = 77  # DEST(slot) = 77 + slot
DEST_NEW, DEST_DISCARD = 125, 126
NUM_ACTIONS = 127

# ----------------------------------------------------------------- decisions (P72)
(ACTION, PICK, MODE, SELECT, PAY, BID, DISTRIBUTE, PLACE, RECON_TILE, RECON_DEST, RECON_PAY) = range(1, 12)
DECISION_NAMES = ("terminal", "D1 action", "D2 money pick", "D3 buy or auction", "D4 select tile", "D5 buy payment",
                  "D6 bidding step", "D7 distribution pick", "D8 place tile", "D9 reconstruct tile",
                  "D10 reconstruct destination", "D11 reconstruct payment")
# P74: decisions whose mask reads public state only (D4 only for its first selection)
AUTO_DECISIONS = frozenset((ACTION, PICK, SELECT, DISTRIBUTE, PLACE, RECON_TILE, RECON_DEST))

# ----------------------------------------------------------------- where a tile is (P6, I3)
IN_STACK, SUPPLY, SELECTED, QUARRY, PENDING, REMOVED, PALACE = 0, 1, 2, 3, 7, 8, 9
NUM_LOCATIONS = 10  # the quarries take codes 3–6

SEAT_FIELDS = ("to_act", "active", "hand_size", "known_cards", "unknown_cards", "bid_cards", "bid_value",
               "bid_currency", "passed", "leader", "picks_left", "score", "palace_count", "palaces")
"""Observation fields with one row per seat, rotated so that row 0 is the observer (the others follow
clockwise); ``palaces`` is the last public field."""
MAX_SCORE_PER_TILE = 27 / 5  # I14: a palace of t tiles scores at most 27·t/5
INV = tuple(1 / c for c in COPIES)  # count fields are divided by the copies of their kind


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
        self.max_price = max(10, o["min_tile_price"])
        self.pay_scale = max(MAX_BID + 1, 2 * self.max_price)  # bounds V, T and bids (P36, P44)
        self.turn_scale = o["max_turns"] or 1000
        score_lo, score_hi = -5 * NUM_TILES / 100, MAX_SCORE_PER_TILE * NUM_TILES / 100
        public = [
            # per seat, rotated: row 0 is the observer
            ("to_act", n, "1 for the seat that makes the current decision (P14, P71)", 0, 1),
            ("active", n, "1 for the active player of this turn (P12)", 0, 1),
            ("hand_size", n, "money cards in hand / 55 (P68)", 0, 1),
            ("known_cards", (n, NUM_KINDS), "K_q: cards of each kind known from public history to be in the "
             "hand, / copies of the kind (3, or 10 for Z) (P70a)", 0, 1),
            ("unknown_cards", n, "U_q: hand cards of unknown kind / 4 (only dealt cards are unknown, P70a)", 0, 1),
            ("bid_cards", (n, NUM_KINDS), "cards in the seat's current bid / copies (P44)", 0, 1),
            ("bid_value", n, "value of the seat's current bid, X3 included / pay scale (P42, P44)", 0, 1),
            ("bid_currency", (n, 3), "currency of the bid one-hot (A, B, C); all 0 while unset (P17)", 0, 1),
            ("passed", n, "1 if the seat passed in this auction (P45)", 0, 1),
            ("leader", n, "1 for the high bidder of the running auction (P42–P44)", 0, 1),
            ("picks_left", n, "money picks the seat still makes in this take-money turn / 2 (P27)", 0, 1),
            ("score", n, "current palace score / 100 (P61, P62)", score_lo, score_hi),
            ("palace_count", n, "palaces / 48 (P50)", 0, 1),
            # table
            ("decision", 11, "current decision D1–D11 one-hot; all 0 at the end (P71, P72)", 0, 1),
            ("tile_location", (NUM_TILES, NUM_LOCATIONS), "per tile id: unseen (in a stack, or removed when "
             "removed_tiles_public=False), supply, supply and selected for this buy, quarry 0–3, pending "
             "placement, removed, in a palace (P68, P69)", 0, 1),
            ("tile_slot", NUM_TILES, "(palace slot + 1) / 48 of a tile in a palace, else 0: maps TILE(id) to its "
             "palace (the identical twins 6/7, 22/23, 38/39 differ only here) (P50, P70b)", 0, 1),
            ("tile_focus", NUM_TILES, "1 for the tile the decision is about: D8 the tile to place, D10 and D11 "
             "the tile chosen in D9 (P53, P56)", 0, 1),
            ("master_builder", NUM_QUARRIES, "quarry of the master builder one-hot (P40)", 0, 1),
            ("stack_items", 3, "items left in stacks I, II, III / 16, 16, 21 (P30)", 0, 1),
            ("riders_drawn", 1, "game-end tiles drawn / 5 (P33)", 0, 1),
            ("removed_count", 1, "tiles in the removed area / 48 (P68)", 0, 1),
            ("price", 1, "buy price p now (fixed once BUY is chosen) / max(10, min_tile_price) (P36)", 0, 1),
            ("money_display", NUM_KINDS, "take-money display per kind / copies (P26, P27)", 0, 1),
            ("discard_pile", NUM_KINDS, "discard pile per kind / copies (P20)", 0, 1),
            ("deck_size", 1, "cards in the deck / 55 (P68)", 0, 1),
            ("deck_known", 1, "1 once the deck holds only reshuffled discards, so its contents are public "
             "(P26, P28)", 0, 1),
            ("deck_cards", NUM_KINDS, "deck contents per kind / copies while deck_known, else 0", 0, 1),
            ("payment_cards", NUM_KINDS, "cards of the open buy payment / copies (P38)", 0, 1),
            ("x3_on_table", 1, "1 while X3 lies on the table (I2)", 0, 1),
            ("high_bid", 1, "high bid of the running auction / pay scale (P42–P44)", 0, 1),
            ("payment_value", 1, "V of the open payment or bidding step / pay scale (P21, P44)", 0, 1),
            ("payment_currency", 3, "c* of the open payment or bidding step one-hot; all 0 while unset (P21)",
             0, 1),
            ("payment_target", 1, "T of the open payment or bidding step / pay scale (P38, P44)", 0, 1),
            ("last_unit", NUM_UNITS, "last unit committed in this payment or bidding step, one-hot over the "
             "unit actions 53–74; all 0 before the first (P23a)", 0, 1),
            ("turn", 1, "turn counter / max_turns (/ 1000, capped at 1, when max_turns=None) (P66)", 0, 1),
            # last, so that rotating its rows is two slice copies
            ("palaces", (n, NUM_SLOTS, 5, 4), "palace slot s (DEST(s) = 77 + s), floor f = 1..5: the tile's "
             "material one-hot (brick, sandstone, marble) and its windows / 3; all 0 if the floor is empty "
             "(P49, P50, P70b)", 0, 1),
        ]
        private = [
            ("hand", NUM_KINDS, "my money cards per kind / copies", 0, 1),
            ("unseen_cards", NUM_KINDS, "cards per kind I cannot locate: the opponents' unknown cards and, "
             "until the deck is known, the deck / copies (P69)", 0, 1),
            ("best_pay", 1, "BestPay of my hand / pay scale (P24)", 0, 1),
        ]
        hidden = [
            ("hands", (n, NUM_KINDS), "every hand per kind / copies", 0, 1),
            ("deck_order", TOTAL_CARDS, "per money card (kinds in order, the copies of a kind side by side): its "
             "depth in the deck / 55, 1/55 = drawn next, 0 = not in the deck (envs/core/piles.py)", 0, 1),
            ("tile_hidden_place", (NUM_TILES, 4), "for each tile not visible in tile_location: stack I, II, "
             "III or removed, one-hot", 0, 1),
            ("tile_depth", NUM_TILES, "depth of a stacked tile in its stack / 21, 1/21 = drawn next, 0 = not in "
             "a stack", 0, 1),
            ("rider_depth", STACK_SIZES[2], "1 at each depth of stack III (from the top) that holds a game-end "
             "tile", 0, 1),
        ]
        self.layout = Layout(public + private)
        self.state_layout = Layout(public + hidden)
        self.public_size = self.layout["hand"].start
        self.off = {f.name: f.start for f in self.layout}
        self.off.update({f.name: f.start for f in self.state_layout})
        self.palace_start = self.layout["palaces"].start
        self.seat_block = self.layout["palaces"].size // n
        # obs_perm[p]: indices turning the seat-absolute fields before the palaces into p's view (rows rotated)
        self.obs_perm = [index[:self.palace_start] for index in self.layout.seat_rotations(SEAT_FIELDS[:-1], n)]
        self.inv_copies = np.array(INV, np.float32)
        self.context_offsets = tuple(self.off[name] for name in (
            "to_act", "active", "decision", "picks_left", "tile_focus", "leader", "payment_currency", "last_unit"))
        self.first_copy = first_copies(COPIES)


class State(BaseState):
    """A Palazzo position; see the module docstring.

    ``_pub`` is written piece by piece as the position changes: every money or tile movement writes its own
    cells (``_w_*``), and the context of the current decision (who acts, which decision, the open payment,
    the focus tile, …) is erased before each decision is applied and written again after it
    (``_mark_context``). ``_rebuild_pub`` writes everything from scratch (after loading)."""

    game: Game

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
            t = self.stacks[0].pop()
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
                self.hands[p][self.deck.pop()] += 1
        first = g.options["first_player"]  # P11
        self.active = int(rng.integers(n)) if first is None else first
        self.turn = 0
        self.truncated = False
        self._clear_turn()
        self.decision = ACTION
        self.current_player = self.active
        self._derive()
        self._rebuild_pub()
        self._resolve_forced()
        if g.auto:
            self._rebuild_pub()  # the forced steps are not marked one by one

    def _split_stacks(self) -> list[int]:
        """P7 (A1): stack I, II or III for each tile id."""
        split = self.game.options["stack_split"]
        if split == "by_floor":
            return list(BY_FLOOR)
        if split == "random":
            member = [0] * NUM_TILES
            for i, t in enumerate(self.rng.permutation(NUM_TILES)):
                member[int(t)] = i // 16
            return member
        member = [(FLOOR[t] - 1) // 2 for t in range(NUM_TILES)]  # floors 1, 3, 5 -> I, II, III
        for floor, low, in_low in ((2, 0, 7), (4, 1, 2)):  # 7 floor-2 tiles in I, 2 floor-4 tiles in II
            tiles = [t for t in range(NUM_TILES) if FLOOR[t] == floor]
            for i, j in enumerate(self.rng.permutation(len(tiles))):
                member[tiles[j]] = low if i < in_low else low + 1
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
        if self.in_auction or any(self.passed):
            self._pub[self.game.off["passed"]:self.game.off["passed"] + self.game.num_players] = 0
        self._clear_turn()
        self.turn += 1
        self._w_turn()
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

    def is_terminal(self) -> bool:
        return self.current_player == TERMINAL

    def is_truncated(self) -> bool:
        return self.truncated

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

    def current_price(self) -> int:
        """P36 (A2): p = max(min_tile_price, 10 − N)."""
        return max(self.game.options["min_tile_price"], 10 - len(self.supply))

    # ----------------------------------------------------------------- applying decisions
    def _apply(self, action: int) -> None:
        self._mark_context(0)
        self._step(action)
        self._resolve_forced()
        self._mark_context(1)

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
        k = self.deck.pop()
        if self.deck_known:
            self._pub[self.game.off["deck_cards"] + k] = self.deck.count(k) * INV[k]
        else:
            self.hidden_pool[k] -= 1
            self._w_unseen(k)
        if not self.deck and any(self.discard) and self.game.options["reshuffle_timing"] == "on_empty":
            self._reshuffle()
        self._pub[self.game.off["deck_size"]] = len(self.deck) / TOTAL_CARDS
        return k

    def _reshuffle(self) -> None:
        """The discard pile, shuffled, becomes the deck; its contents are public from now on (P26, P28)."""
        cards = [k for k in range(NUM_KINDS) for _ in range(self.discard[k])]
        self.deck = [cards[i] for i in self.rng.permutation(len(cards))]
        self.discard = [0] * NUM_KINDS
        self.deck_known = True
        self._w_money_piles()

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
        self._w_hand(p, k)

    def _hand_out(self, p: int, k: int) -> None:
        """A card leaves p's hand; K_p loses it if known, else U_p shrinks (P70a)."""
        self.hands[p][k] -= 1
        if self.known[p][k]:
            self.known[p][k] -= 1
        else:
            self.hidden_pool[k] -= 1
            self._w_unseen(k)
        self._w_hand(p, k)

    # ----------------------------------------------------------------- tiles (P30–P34)
    def _draw_item(self) -> int:
        """P30: the top item of the lowest-numbered non-empty stack (P34: one always exists)."""
        for stack in self.stacks:
            if stack:
                return stack.pop()
        raise AssertionError("P34: every stack is empty while the game runs")

    def _draw_tiles(self) -> None:
        """P31–P33, then D3 (P35)."""
        for second in (False, True):
            item = self._draw_item()
            if item == RIDER:  # P32
                self.riders += 1
                if self.riders == NUM_RIDERS:  # P33, P60
                    self._w_stacks()
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
        self._w_stacks()
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
            self._w_bidder(p, 0)
            self.bid_value[p], self.bid_currency[p] = self.pay_value, self.pay_currency
            self._w_bidder(p, 1)

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
        mb = self.game.off["master_builder"]
        self._pub[mb + self.mb] = 0
        self.mb = q
        self._pub[mb + q] = 1
        if len(self.quarries[q]) >= 4:  # P41
            self.dist_pickers = [(self.active + i) % n for i in range(n)]
            self.decision = DISTRIBUTE
            self.current_player = self.active
            return
        self.in_auction = True  # P42: the opening bid is X3
        self.x3_out = True
        self._w_bidder(self.active, 0)
        self.bid_value[self.active] = X3_VALUE
        self._w_bidder(self.active, 1)
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
        self._w_bidder(p, 0)
        self.bid_value[p], self.bid_currency[p] = 0, UNSET
        if p == self.active:
            self.x3_out = False
        self.passed[p] = True
        self._pub[self.game.off["passed"] + p] = 1
        self._next_bidder(p)

    def _settle(self) -> None:
        """P46, P47: the winner pays his bid cards (not X3) and receives the lot."""
        w = self.passed.index(False)
        bid = self.bids[w]
        for k in range(NUM_KINDS):
            if bid[k]:
                self._count("discard_pile", self.discard, k, bid[k])
                self._count("bid_cards", bid, k, -bid[k], w)
        self._w_bidder(w, 0)
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
            self._w_palaces(p)
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
        self._pub[self.game.off["removed_count"]] = len(self.removed) / NUM_TILES

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
        self._w_palaces(p)

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

    # ----------------------------------------------------------------- the public vector (P68–P70b)
    def _count(self, field: str, counts: list[int], k: int, delta: int, row: int = 0) -> None:
        """Change a money count and its cell (a per-kind field; ``row`` is the seat of a per-seat one)."""
        counts[k] += delta
        self._pub[self.game.off[field] + NUM_KINDS * row + k] = counts[k] * INV[k]

    def _w_hand(self, p: int, k: int) -> None:
        """p's hand size, K_p and U_p (public), and p's private view of kind k and BestPay."""
        o, pub = self.game.off, self._pub
        hand, known = self.hands[p], self.known[p]
        size = sum(hand)
        pub[o["known_cards"] + NUM_KINDS * p + k] = known[k] * INV[k]
        pub[o["hand_size"] + p] = size / TOTAL_CARDS
        pub[o["unknown_cards"] + p] = (size - sum(known)) / 4
        private = self._private[p]
        private[k] = hand[k] * INV[k]
        private[NUM_KINDS + k] = (self.hidden_pool[k] - hand[k] + known[k]) * INV[k]
        private[2 * NUM_KINDS] = best_pay(hand) / self.game.pay_scale

    def _w_unseen(self, k: int) -> None:
        """Every seat's count of kind k among the cards it cannot locate (the hidden pool changed)."""
        pool = self.hidden_pool[k]
        for private, hand, known in zip(self._private, self.hands, self.known, strict=True):
            private[NUM_KINDS + k] = (pool - hand[k] + known[k]) * INV[k]

    def _w_bidder(self, p: int, on: int) -> None:
        """p's bid value and currency (erased with ``on=0`` before they change)."""
        o, pub = self.game.off, self._pub
        pub[o["bid_value"] + p] = on and self.bid_value[p] / self.game.pay_scale
        if self.bid_currency[p] != UNSET:
            pub[o["bid_currency"] + 3 * p + self.bid_currency[p]] = on

    def _w_money_piles(self) -> None:
        """Discard pile and deck, all kinds (after a reshuffle or a rebuild)."""
        o, pub = self.game.off, self._pub
        deck = [self.deck.count(k) if self.deck_known else 0 for k in range(NUM_KINDS)]
        for k in range(NUM_KINDS):
            pub[o["discard_pile"] + k] = self.discard[k] * INV[k]
            pub[o["deck_cards"] + k] = deck[k] * INV[k]
        pub[o["deck_known"]] = self.deck_known
        pub[o["deck_size"]] = len(self.deck) / TOTAL_CARDS

    def _w_stacks(self) -> None:
        o, pub = self.game.off, self._pub
        for s, stack in enumerate(self.stacks):
            pub[o["stack_items"] + s] = len(stack) / STACK_SIZES[s]
        pub[o["riders_drawn"]] = self.riders / NUM_RIDERS

    def _w_turn(self) -> None:
        self._pub[self.game.off["turn"]] = min(self.turn, self.game.turn_scale) / self.game.turn_scale

    def _set_where(self, t: int, code: int) -> None:
        """Move tile t to location ``code`` and write its public location."""
        o = self.game.off["tile_location"] + NUM_LOCATIONS * t
        self._pub[o + self._public_where(self.where[t])] = 0
        if self.where[t] == PALACE:
            self._pub[self.game.off["tile_slot"] + t] = 0
        self.where[t] = code
        self._pub[o + self._public_where(code)] = 1

    def _public_where(self, code: int) -> int:
        return IN_STACK if code == REMOVED and not self.game.removed_public else code

    def _w_palaces(self, p: int) -> None:
        """p's palace slots, count and score."""
        g, pub = self.game, self._pub
        start = g.off["palaces"] + p * g.seat_block
        pub[start:start + g.seat_block] = 0
        slot = g.off["tile_slot"]
        for s, palace in enumerate(self.palaces[p]):
            for t in palace:
                i = start + 20 * s + 4 * (FLOOR[t] - 1)
                pub[i + MATERIAL[t]] = 1
                pub[i + 3] = WINDOWS[t] / 3
                pub[slot + t] = (s + 1) / NUM_SLOTS
        pub[g.off["palace_count"] + p] = len(self.palaces[p]) / NUM_SLOTS
        pub[g.off["score"] + p] = self.score(p) / 100

    def _mark_context(self, on: int) -> None:
        """The context of the current decision: one-hot cells are erased (``on=0``) before a decision is
        applied and written (``on=1``) after it; the scalar cells are simply rewritten."""
        if self.current_player == TERMINAL:
            if on:  # nothing is open any more
                self._w_scalars(False)
            return
        pub, d = self._pub, self.decision
        to_act, active, decision, picks_left, focus, leader, currency, last = self.game.context_offsets
        pub[to_act + self.current_player] = on
        pub[active + self.active] = on
        pub[decision + d - 1] = on
        for p in self.pickers:
            pub[picks_left + p] = on and self.pickers.count(p) / 2
        if d == PLACE:
            pub[focus + self.pending[0]] = on
        elif d == RECON_DEST or d == RECON_PAY:
            pub[focus + self.recon_tile] = on
        if self.in_auction:
            pub[leader + self.leader] = on
        paying = d == PAY or d == BID
        if paying:
            if self.pay_currency != UNSET:
                pub[currency + self.pay_currency] = on
            if self.pay_last:
                pub[last + self.pay_last - CARD] = on
        if on:
            self._w_scalars(paying)

    def _w_scalars(self, paying: bool) -> None:
        g, pub, o = self.game, self._pub, self.game.off
        scale = g.pay_scale
        pub[o["payment_value"]] = self.pay_value / scale if paying else 0
        pub[o["payment_target"]] = self.pay_target / scale if paying else 0
        pub[o["high_bid"]] = self.high / scale if self.in_auction else 0
        pub[o["x3_on_table"]] = not self.x3_out
        price = self.price if self.decision in (SELECT, PAY) else self.current_price()
        pub[o["price"]] = price / g.max_price

    def _rebuild_pub(self) -> None:
        """Write every public cell and every seat's private part from the position (after loading or
        resampling)."""
        g = self.game
        n = g.num_players
        self._pub = np.zeros(g.public_size, np.float32)
        self._private = np.zeros((n, g.layout.size - g.public_size), np.float32)
        o, pub = g.off, self._pub
        for t in range(NUM_TILES):
            pub[o["tile_location"] + NUM_LOCATIONS * t + self._public_where(self.where[t])] = 1
        for p in range(n):
            self._w_palaces(p)
            self._w_bidder(p, 1)
            pub[o["passed"] + p] = self.passed[p]
            for k in range(NUM_KINDS):
                self._w_hand(p, k)
                self._count("bid_cards", self.bids[p], k, 0, p)
        for k in range(NUM_KINDS):
            self._count("money_display", self.display, k, 0)
            self._count("payment_cards", self.payment, k, 0)
        self._w_money_piles()
        self._w_stacks()
        self._w_turn()
        pub[o["removed_count"]] = len(self.removed) / NUM_TILES
        pub[o["master_builder"] + self.mb] = 1
        self._mark_context(1)

    # ----------------------------------------------------------------- observations
    def observation(self, player: int) -> np.ndarray:
        g, pub = self.game, self._pub
        start, stop = g.palace_start, g.public_size
        cut = start + player * g.seat_block  # the palace rows from the observer on, then the ones before
        return np.concatenate((pub[g.obs_perm[player]], pub[cut:stop], pub[start:cut], self._private[player]))

    def unseen(self, player: int) -> list[int]:
        """The cards ``player`` cannot locate, per kind: the others' unknown cards, and the deck until it is
        known (the observation's ``unseen_cards``)."""
        return [u - h + k for u, h, k in zip(self.hidden_pool, self.hands[player], self.known[player], strict=True)]

    def global_state(self) -> np.ndarray:
        g = self.game
        out = np.zeros(g.state_layout.size, np.float32)
        out[:g.public_size] = self._pub
        o = g.off
        n = g.num_players
        out[o["hands"]:o["hands"] + n * NUM_KINDS] = (np.array(self.hands, np.float32) * g.inv_copies).ravel()
        card_depths(self.deck, g.first_copy, out[o["deck_order"]:o["deck_order"] + TOTAL_CARDS], TOTAL_CARDS)
        place, depth = o["tile_hidden_place"], o["tile_depth"]
        for s, stack in enumerate(self.stacks):
            for d, item in enumerate(reversed(stack)):
                if item == RIDER:
                    out[o["rider_depth"] + d] = 1
                else:
                    out[place + 4 * item + s] = 1
                    out[depth + item] = (d + 1) / STACK_SIZES[2]
        if not g.removed_public:
            for t in self.removed:
                out[place + 4 * t + 3] = 1
        return out

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
        state._rebuild_pub()
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
    def action_to_string(self, action: int) -> str:
        return action_name(action)

    def render_text(self, viewer: int | None = None) -> str:
        from .render import text_table

        return text_table(self, viewer)

    def text_legend(self) -> str:
        from .render import TEXT_LEGEND

        return TEXT_LEGEND

    def describe_action(self, action: int, viewer: int | None = None) -> str:
        from .render import describe_action

        return describe_action(self, action, viewer)

    def render_rgb(self) -> np.ndarray:
        from .render import picture

        return picture(self)

    # ----------------------------------------------------------------- copy and JSON
    _FIELDS = ("mb", "riders", "deck_known", "active", "turn", "truncated", "first_pick", "price", "pay_value",
               "pay_target", "pay_last", "step_units", "pay_currency", "in_auction", "high", "leader", "x3_out",
               "recon_tile", "decision", "current_player", "member", "where", "supply", "removed", "deck",
               "discard", "display", "pickers", "selected", "payment", "bid_value", "bid_currency", "passed",
               "dist_pickers", "pending", "stacks", "quarries", "hands", "known", "bids", "palaces")
    """The position: ints, bools and (nested) lists of ints."""

    def clone(self) -> State:
        s = object.__new__(State)
        self._copy_base_into(s)
        for key, value in self._to_dict().items():
            setattr(s, key, _copied(value))
        s.hidden_pool = list(self.hidden_pool)
        s._pub = self._pub.copy()
        s._private = self._private.copy()
        return s

    def _to_dict(self) -> dict[str, Any]:
        return {key: getattr(self, key) for key in self._FIELDS}

    def _load_dict(self, d: dict[str, Any]) -> None:
        for key in self._FIELDS:
            setattr(self, key, d[key])
        self._derive()
        self._rebuild_pub()


def _copied(value: Any) -> Any:
    """A copy of a position field: lists (of lists) copied at every level, ints and bools shared."""
    if not isinstance(value, list):
        return value
    return [_copied(x) for x in value] if value and isinstance(value[0], list) else list(value)


def action_name(a: int) -> str:
    """Readable action names (P73), distinct for all 127 actions."""
    if not 0 <= a < NUM_ACTIONS:
        return "out of range"
    if a <= RECONSTRUCT:
        return ("take money", "tiles", "reconstruct")[a]
    if a <= AUCTION:
        return ("buy", "auction")[a - BUY]
    if a < CARD:
        return f"tile {a - TILE} {tile_name(a - TILE)}"
    if a < DONE:
        return ("card " if a < GROUP else "group ") + unit_name(a)
    if a == DONE:
        return "done"
    if a == PASS:
        return "pass"
    if a < DEST_NEW:
        return f"palace {a - DEST}"
    return "new palace" if a == DEST_NEW else "discard tile"


Game.state_class = State
