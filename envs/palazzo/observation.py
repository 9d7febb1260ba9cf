"""Palazzo observation and global state (P68–P70b): layouts, gather indices and the writers that keep the vector
current, the one idiom of ``docs/engine_contract.md`` ("How observations are kept current").

The state keeps one seat-absolute vector ``_x``: everything public (``game.layout``'s public fields, seat rows in
table order), then every seat's private block (hand, the cards it cannot locate, BestPay). A decision changes a
few cells, so the rules call the writers where the position changes: every money or tile movement writes its own
cells, and the context of the current decision (who acts, which decision, the open payment, the focus tile, …) is
erased before each decision is applied and written again after it (``write_context``). ``observation(p)`` is
``_x.take(obs_index[p])``, which rotates the seat rows so that row 0 is p and picks p's private block;
``global_state()`` copies the public part and adds every hidden card and the stacks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..core.layout import Layout
from ..core.piles import card_depths, first_copies
from .actions import BID, PAY, PLACE, RECON_DEST, RECON_PAY, SELECT
from .components import (
    FLOOR,
    IN_STACK,
    MATERIAL,
    NUM_LOCATIONS,
    NUM_QUARRIES,
    NUM_RIDERS,
    NUM_SLOTS,
    NUM_TILES,
    PALACE,
    REMOVED,
    RIDER,
    STACK_SIZES,
    WINDOWS,
)
from .payments import CARD, COPIES, MAX_BID, NUM_KINDS, NUM_UNITS, TOTAL_CARDS, UNSET, best_pay

if TYPE_CHECKING:
    from .game import Game, State

SEAT_FIELDS = ("to_act", "active", "hand_size", "known_cards", "unknown_cards", "bid_cards", "bid_value",
               "bid_currency", "passed", "leader", "picks_left", "score", "palace_count", "palaces")
"""Observation fields with one row per seat, rotated so that row 0 is the observer (the others follow
clockwise)."""
MAX_SCORE_PER_TILE = 27 / 5  # I14: a palace of t tiles scores at most 27·t/5
INV = tuple(1 / c for c in COPIES)  # count fields are divided by the copies of their kind


def build_layouts(game: Game) -> None:
    """Set ``game.layout``, ``game.state_layout``, the scales, the offsets and the gather indices."""
    n = game.num_players
    game.max_price = max(10, game.options["min_tile_price"])
    game.pay_scale = max(MAX_BID + 1, 2 * game.max_price)  # bounds V, T and bids (P36, P44)
    game.turn_scale = game.options["max_turns"] or 1000
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
    game.layout = Layout(public + private)
    game.state_layout = Layout(public + hidden)
    # the vector: the public fields, then one private block per seat
    game.public_size = game.layout["hand"].start
    game.private_size = game.layout.size - game.public_size
    game.obs_index = game.layout.seat_rotations(SEAT_FIELDS, n)
    for p, index in enumerate(game.obs_index):
        index[game.public_size:] += p * game.private_size  # p's own block
    game.off = {f.name: f.start for f in game.layout}
    game.off.update({f.name: f.start for f in game.state_layout})
    game.seat_block = game.layout["palaces"].size // n
    game.inv_copies = np.array(INV, np.float32)
    game.context_offsets = tuple(game.off[name] for name in (
        "to_act", "active", "decision", "picks_left", "tile_focus", "leader", "payment_currency", "last_unit"))
    game.first_copy = first_copies(COPIES)


# ===================================================================== reads
def reset(state: State) -> None:
    """A new vector, every cell written from the position (setup, loading, resampling)."""
    g = state.game
    n = g.num_players
    state._x = np.zeros(g.public_size + n * g.private_size, np.float32)
    o, x = g.off, state._x
    for t in range(NUM_TILES):
        x[o["tile_location"] + NUM_LOCATIONS * t + _public_where(g, state.where[t])] = 1
    for p in range(n):
        write_palaces(state, p)
        write_bidder(state, p, 1)
        for k in range(NUM_KINDS):
            write_hand(state, p, k)
            write_count(state, "bid_cards", state.bids[p], k, p)
    for k in range(NUM_KINDS):
        write_count(state, "money_display", state.display, k)
        write_count(state, "payment_cards", state.payment, k)
    write_passed(state)
    write_money_piles(state)
    write_stacks(state)
    write_turn(state)
    write_removed_count(state)
    write_master_builder(state, 1)
    write_context(state, 1)


def global_state(state: State) -> np.ndarray:
    """The public part in table order, every hand, the deck's order and the stacks (hidden information)."""
    g = state.game
    out = np.zeros(g.state_layout.size, np.float32)
    out[:g.public_size] = state._x[:g.public_size]
    o = g.off
    n = g.num_players
    out[o["hands"]:o["hands"] + n * NUM_KINDS] = (np.array(state.hands, np.float32) * g.inv_copies).ravel()
    card_depths(state.deck, g.first_copy, out[o["deck_order"]:o["deck_order"] + TOTAL_CARDS], TOTAL_CARDS)
    place, depth = o["tile_hidden_place"], o["tile_depth"]
    for s, stack in enumerate(state.stacks):
        for d, item in enumerate(reversed(stack)):
            if item == RIDER:
                out[o["rider_depth"] + d] = 1
            else:
                out[place + 4 * item + s] = 1
                out[depth + item] = (d + 1) / STACK_SIZES[2]
    if not g.removed_public:
        for t in state.removed:
            out[place + 4 * t + 3] = 1
    return out


# ===================================================================== writers
def write_count(state: State, field: str, counts: list[int], k: int, row: int = 0) -> None:
    """The cell of money count ``counts[k]`` (a per-kind field; ``row`` is the seat of a per-seat one)."""
    state._x[state.game.off[field] + NUM_KINDS * row + k] = counts[k] * INV[k]


def write_hand(state: State, p: int, k: int) -> None:
    """p's hand size, K_p and U_p (public), and p's private view of kind k and BestPay."""
    g, x = state.game, state._x
    o = g.off
    hand, known = state.hands[p], state.known[p]
    size = sum(hand)
    x[o["known_cards"] + NUM_KINDS * p + k] = known[k] * INV[k]
    x[o["hand_size"] + p] = size / TOTAL_CARDS
    x[o["unknown_cards"] + p] = (size - sum(known)) / 4
    private = g.public_size + p * g.private_size
    x[private + k] = hand[k] * INV[k]
    x[private + NUM_KINDS + k] = (state.hidden_pool[k] - hand[k] + known[k]) * INV[k]
    x[private + 2 * NUM_KINDS] = best_pay(hand) / g.pay_scale


def write_unseen(state: State, k: int) -> None:
    """Every seat's count of kind k among the cards it cannot locate (the hidden pool changed)."""
    g, x = state.game, state._x
    pool = state.hidden_pool[k]
    cell = g.public_size + NUM_KINDS + k
    for hand, known in zip(state.hands, state.known, strict=True):
        x[cell] = (pool - hand[k] + known[k]) * INV[k]
        cell += g.private_size


def write_bidder(state: State, p: int, on: int) -> None:
    """p's bid value and currency (erased with ``on=0`` before they change)."""
    o, x = state.game.off, state._x
    x[o["bid_value"] + p] = on and state.bid_value[p] / state.game.pay_scale
    if state.bid_currency[p] != UNSET:
        x[o["bid_currency"] + 3 * p + state.bid_currency[p]] = on


def write_passed(state: State) -> None:
    o = state.game.off["passed"]
    state._x[o:o + state.game.num_players] = state.passed


def write_money_piles(state: State) -> None:
    """Discard pile and deck, all kinds (after a reshuffle or a reset)."""
    o, x = state.game.off, state._x
    deck = [state.deck.count(k) if state.deck_known else 0 for k in range(NUM_KINDS)]
    for k in range(NUM_KINDS):
        x[o["discard_pile"] + k] = state.discard[k] * INV[k]
        x[o["deck_cards"] + k] = deck[k] * INV[k]
    x[o["deck_known"]] = state.deck_known
    write_deck_size(state)


def write_deck_count(state: State, k: int) -> None:
    """The deck's cards of kind k, once its contents are public."""
    state._x[state.game.off["deck_cards"] + k] = state.deck.count(k) * INV[k]


def write_deck_size(state: State) -> None:
    state._x[state.game.off["deck_size"]] = len(state.deck) / TOTAL_CARDS


def write_stacks(state: State) -> None:
    o, x = state.game.off, state._x
    for s, stack in enumerate(state.stacks):
        x[o["stack_items"] + s] = len(stack) / STACK_SIZES[s]
    x[o["riders_drawn"]] = state.riders / NUM_RIDERS


def write_turn(state: State) -> None:
    g = state.game
    state._x[g.off["turn"]] = min(state.turn, g.turn_scale) / g.turn_scale


def write_removed_count(state: State) -> None:
    state._x[state.game.off["removed_count"]] = len(state.removed) / NUM_TILES


def write_master_builder(state: State, on: int) -> None:
    state._x[state.game.off["master_builder"] + state.mb] = on


def write_where(state: State, t: int, on: int) -> None:
    """Tile t's public location (erased with ``on=0`` before it moves, with its palace slot if it leaves a
    palace; ``write_palaces`` writes the slot of a tile that enters one)."""
    g, x = state.game, state._x
    x[g.off["tile_location"] + NUM_LOCATIONS * t + _public_where(g, state.where[t])] = on
    if not on and state.where[t] == PALACE:
        x[g.off["tile_slot"] + t] = 0


def _public_where(g: Game, code: int) -> int:
    return IN_STACK if code == REMOVED and not g.removed_public else code


def write_palaces(state: State, p: int) -> None:
    """p's palace slots, count and score."""
    g, x = state.game, state._x
    start = g.off["palaces"] + p * g.seat_block
    x[start:start + g.seat_block] = 0
    slot = g.off["tile_slot"]
    for s, palace in enumerate(state.palaces[p]):
        for t in palace:
            i = start + 20 * s + 4 * (FLOOR[t] - 1)
            x[i + MATERIAL[t]] = 1
            x[i + 3] = WINDOWS[t] / 3
            x[slot + t] = (s + 1) / NUM_SLOTS
    x[g.off["palace_count"] + p] = len(state.palaces[p]) / NUM_SLOTS
    x[g.off["score"] + p] = state.score(p) / 100


def write_context(state: State, on: int) -> None:
    """The context of the current decision: one-hot cells are erased (``on=0``) before a decision is applied
    and written (``on=1``) after it; the scalar cells are simply rewritten."""
    if state.current_player < 0:
        if on:  # nothing is open any more
            _write_scalars(state, False)
        return
    x, d = state._x, state.decision
    to_act, active, decision, picks_left, focus, leader, currency, last = state.game.context_offsets
    x[to_act + state.current_player] = on
    x[active + state.active] = on
    x[decision + d - 1] = on
    for p in state.pickers:
        x[picks_left + p] = on and state.pickers.count(p) / 2
    if d == PLACE:
        x[focus + state.pending[0]] = on
    elif d == RECON_DEST or d == RECON_PAY:
        x[focus + state.recon_tile] = on
    if state.in_auction:
        x[leader + state.leader] = on
    paying = d == PAY or d == BID
    if paying:
        if state.pay_currency != UNSET:
            x[currency + state.pay_currency] = on
        if state.pay_last:
            x[last + state.pay_last - CARD] = on
    if on:
        _write_scalars(state, paying)


def _write_scalars(state: State, paying: bool) -> None:
    g, x, o = state.game, state._x, state.game.off
    scale = g.pay_scale
    x[o["payment_value"]] = state.pay_value / scale if paying else 0
    x[o["payment_target"]] = state.pay_target / scale if paying else 0
    x[o["high_bid"]] = state.high / scale if state.in_auction else 0
    x[o["x3_on_table"]] = not state.x3_out
    price = state.price if state.decision in (SELECT, PAY) else state.current_price()
    x[o["price"]] = price / g.max_price
