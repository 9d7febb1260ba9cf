"""Five Towers observation and global state (F30, F31): layouts, gather indices and the writers that keep the
vector current, the one idiom of ``docs/engine_contract.md`` ("How observations are kept current").

The state keeps one seat-absolute vector ``_x`` laid out as ``game.layout`` with the seat rows in table order
(the global state's first part); ``observation(p)`` is ``_x.take(obs_index[p])``, which rotates the seat rows
so that row 0 is p (F31). A decision changes a few cells, so the rules call the writers where the position
changes: a one-hot is erased before the change (``on=0``) and written after it (``on=1``), a value is written
after it; a new round rewrites all of the round's fields.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..core.layout import Layout
from ..core.piles import card_depths, first_copies
from .cards import NUM_KINDS, NUM_TYPES

if TYPE_CHECKING:
    from .game import Game, State

SEAT_FIELDS = ("to_act", "start_player", "bid", "high_bidder", "winner", "max_bid", "tower_exists",
               "tower_height", "tower_top", "tower_below", "tower_cards", "tower_sealed", "tower_blocked",
               "rubble", "rubble_cards", "score")
"""Observation fields with one row per seat, rotated so that row 0 is the observer (F31)."""


def build_layouts(game: Game) -> None:
    """Set ``game.layout``, ``game.state_layout``, the offsets and the gather indices."""
    n = game.num_players
    worst_rubble = game.max_rounds * (game.max_rounds + 1) / 2
    copies = max(game.multiplicity)
    fields = [
        # This round's fields first, so that write_round clears them with one slice (F18). Seat fields
        # have one row per player: row 0 is the observer, then the players to the left (F31).
        ("to_act", n, "1 for the acting player (F30)", 0, 1),
        ("start_player", n, "1 for this round's start player (F18, F43)", 0, 1),
        ("bid", (n, 7), "bidding state one-hot: not acted yet, passed, bid 1–5 (F10–F12)", 0, 1),
        ("high_bidder", n, "1 for the player holding the high bid H (F11)", 0, 1),
        ("winner", n, "1 for the bid winner once the bidding ended (F13)", 0, 1),
        ("max_bid", n, "Nmax / 5 during the bidding: the highest bid each player could make (F24)", 0, 1),
        ("phase", 4, "phase one-hot: bid, teardown, take, place; all 0 at the end (F32)", 0, 1),
        ("display_type", (5, 5), "display slot s: card type one-hot (F9)", 0, 1),
        ("display_value", (5, 16), "display slot s: card value one-hot (F9)", 0, 1),
        ("display_status", (5, 3), "display slot s: in the display, taken, placed; all 0 if no card "
         "(F16, F17, F30)", 0, 1),
        ("display_size", 6, "k one-hot: cards revealed this round (F9)", 0, 1),
        ("high_bid", 6, "H one-hot (F11)", 0, 1),
        ("take_count", 6, "N one-hot: cards the winner takes, 0 before the bidding ends (F13)", 0, 1),
        ("teardown", 6, "tear-down choice one-hot: none, type 0–4; all 0 before it is made (F15)", 0, 1),
        # the rest of the game
        ("tower_exists", (n, 5), "1 if the player has a tower of the type (F5)", 0, 1),
        ("tower_height", (n, 5), "cards in the tower / cards per type", 0, 1),
        ("tower_top", (n, 5, 16), "value of the top card, one-hot (F20)", 0, 1),
        ("tower_below", (n, 5, 16), "value of the card under the top, one-hot: what a tear-down "
         "uncovers (F15)", 0, 1),
        ("tower_cards", (n, 5, game.per_type), "the whole tower in order: card j from the bottom, "
         "(value + 1) / 16; 0 above the top (F30)", 0, 1),
        ("tower_sealed", (n, 5), "1 if the top is a 0 (F21)", 0, 1),
        ("tower_blocked", (n, 5), "1 if the type can never be built again (rebuild_removed_tower=False, "
         "F15)", 0, 1),
        ("rubble", n, "rubble cards / 10 (F15)", 0, game.max_rounds / 10),
        ("rubble_cards", (n, NUM_KINDS), "the rubble pile: cards per kind (F15, F30)", 0, copies),
        ("score", n, "current score / 100 (F27)", -worst_rubble / 100, 3 * game.deck_size / 100),
        ("unseen", NUM_KINDS, "cards per kind in the draw pile, whose order is secret (F31)", 0, copies),
        ("discard", NUM_KINDS, "discard pile per kind (F30)", 0, copies),
        ("draw_pile", 1, "draw-pile size / deck size (F30)", 0, 1),
        ("second_pass", 1, "1 once the discard pile was reshuffled (F9)", 0, 1),
        ("round", 1, "round number / maximum rounds (F29)", 0, 1),
    ]
    game.layout = Layout(fields)
    # The global state (centralized critics): the vector itself, seat rows in table order, plus the one secret,
    # the draw pile's order (F31)
    game.state_layout = Layout([*fields, (
        "draw_order", game.deck_size, "per card of the deck (kinds in order, the copies of a duplicated kind "
        "side by side): depth in the draw pile / deck size, the next card 1/deck size; 0 if not in the draw "
        "pile (F31)", 0, 1)])
    game.first_copy = first_copies(game.multiplicity)
    game.obs_index = game.layout.seat_rotations(SEAT_FIELDS, n)
    game.off = off = {f.name: f.start for f in game.layout}
    game.round_fields_end = game.layout["teardown"].stop
    # write_tower's cells per (seat, type), found once: it runs at every placement and tear-down
    game.tower_cells = [[(off["tower_exists"] + i, off["tower_height"] + i, off["tower_top"] + 16 * i,
                          off["tower_below"] + 16 * i, off["tower_sealed"] + i, off["tower_blocked"] + i,
                          off["tower_cards"] + game.per_type * i)
                         for i in range(p * NUM_TYPES, (p + 1) * NUM_TYPES)] for p in range(n)]


# ===================================================================== reads
def reset(state: State) -> None:
    """A new vector written from the position (setup, loading)."""
    state._x = np.zeros(state.game.layout.size, np.float32)
    for p in range(state.game.num_players):
        for t in range(NUM_TYPES):
            write_tower(state, p, t, 1)
            for j in range(len(state.towers[p][t])):
                write_tower_card(state, p, t, j)
        for kind in state.rubble[p]:
            write_rubble(state, p, kind)
    write_cards(state)
    write_round(state)


def global_state(state: State) -> np.ndarray:
    """Every player's facts in table order (the vector) and the draw pile's order."""
    g = state.game
    out = np.empty(g.state_layout.size, np.float32)
    out[:g.layout.size] = state._x
    card_depths(state.draw, g.first_copy, out[g.layout.size:], g.deck_size)
    return out


# ===================================================================== writers
def write_tower(state: State, p: int, t: int, on: int) -> None:
    """Tower facts of (p, t) but its cards (``write_tower_card``), plus p's rubble size and score, which change
    with it. The values (height, rubble, score) are only written with ``on=1``, after the change."""
    g, x = state.game, state._x
    exists, height, top, below, sealed, blocked, _ = g.tower_cells[p][t]
    tower = state.towers[p][t]
    if tower:
        x[exists] = on
        x[top + tower[-1]] = on
        if len(tower) > 1:
            x[below + tower[-2]] = on
        if tower[-1] == 0:
            x[sealed] = on
    elif state.blocked[p][t]:
        x[blocked] = on
    if on:
        x[height] = len(tower) / g.per_type
        x[g.off["rubble"] + p] = len(state.rubble[p]) / 10
        x[g.off["score"] + p] = state.score(p) / 100


def write_tower_card(state: State, p: int, t: int, j: int) -> None:
    """Card j from the bottom of (p, t)'s tower, 0 above the top: a placement or a tear-down changes only the
    top card, so only its cell is written."""
    tower = state.towers[p][t]
    *_, cards = state.game.tower_cells[p][t]
    state._x[cards + j] = (tower[j] + 1) / 16 if j < len(tower) else 0


def write_rubble(state: State, p: int, kind: int) -> None:
    """p's rubble cards of ``kind`` (F15)."""
    state._x[state.game.off["rubble_cards"] + NUM_KINDS * p + kind] = state.rubble[p].count(kind)


def write_drawn(state: State, kind: int) -> None:
    """A card of ``kind`` left the draw pile (revealed): one fewer unseen."""
    state._x[state.game.off["unseen"] + kind] -= 1


def write_discarded(state: State, kind: int) -> None:
    """The discard pile's cards of ``kind``."""
    state._x[state.game.off["discard"] + kind] = state.discard[kind]


def write_cards(state: State) -> None:
    """The draw pile's contents (``unseen``, F31) and the discard pile, every kind (a reshuffle, a reset)."""
    o, x = state.game.off, state._x
    unseen = [0] * NUM_KINDS
    for kind in state.draw:
        unseen[kind] += 1
    x[o["unseen"]:o["unseen"] + NUM_KINDS] = unseen
    x[o["discard"]:o["discard"] + NUM_KINDS] = state.discard


def write_round(state: State) -> None:
    """This round's fields, cleared first with one slice (the cleanup, F18), and the round counters."""
    g, x = state.game, state._x
    o = g.off
    x[:g.round_fields_end] = 0
    for s in range(state.k):
        write_slot(state, s, 1)
    for p in range(g.num_players):
        write_bid(state, p, 1)
    write_high(state, 1)
    write_winner(state, 1)
    write_turn(state, 1)
    write_max_bid(state, 1)
    x[o["display_size"] + state.k] = 1
    if state.current_player >= 0:
        x[o["start_player"] + state.start] = 1
    x[o["draw_pile"]] = len(state.draw) / g.deck_size
    x[o["second_pass"]] = state.pass_no == 2
    x[o["round"]] = state.round / g.max_rounds


def write_max_bid(state: State, on: int) -> None:
    """Nmax / 5 per player while the bidding is open (F24)."""
    if state.winner < 0 and state.current_player >= 0:
        o = state.game.off["max_bid"]
        for p in range(state.game.num_players):
            state._x[o + p] = on and state.nmax(p) / 5


def write_slot(state: State, s: int, on: int) -> None:
    o, kind, x = state.game.off, state.display[s], state._x
    x[o["display_type"] + 5 * s + (kind >> 4)] = on
    x[o["display_value"] + 16 * s + (kind & 15)] = on
    write_status(state, s, on)


def write_status(state: State, s: int, on: int) -> None:
    """Slot s's status alone: a take or a placement leaves its card's type and value as they are."""
    state._x[state.game.off["display_status"] + 3 * s + state.status[s]] = on


def write_bid(state: State, p: int, on: int) -> None:
    state._x[state.game.off["bid"] + 7 * p + 1 + state.bids[p]] = on


def write_high(state: State, on: int) -> None:
    o = state.game.off
    state._x[o["high_bid"] + state.high] = on
    if state.high_bidder >= 0:
        state._x[o["high_bidder"] + state.high_bidder] = on


def write_winner(state: State, on: int) -> None:
    o = state.game.off
    state._x[o["take_count"] + state.take_n] = on
    if state.winner >= 0:
        state._x[o["winner"] + state.winner] = on
    if state.teardown >= 0:
        state._x[o["teardown"] + state.teardown] = on


def write_turn(state: State, on: int) -> None:
    if state.current_player >= 0:
        o = state.game.off
        state._x[o["phase"] + state.phase_id] = on
        state._x[o["to_act"] + state.current_player] = on
