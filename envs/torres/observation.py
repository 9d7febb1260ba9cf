"""Torres observation and global state (T65–T68a): layouts, bounds and the writers that fill them, the one
idiom of ``docs/engine_contract.md`` ("How observations are kept current").

The state keeps one seat-absolute vector ``_x`` (the *internal* vector); the rules only mark what changed
(``_dirty`` bits, stale squares, castles and seats), because one decision changes many fields, and a read
rewrites the stale parts — board, pieces, context, each seat's block — once. ``observation(p)`` is
``_x.take(obs_index[p])``: the gather rotates the per-seat rows so that row 0 is p and picks p's private
block (own hand, fresh cards, cards looked at, own deck, unseen counts). ``global_state()`` gathers every
seat's rows in table order plus every hand, and appends the decks' order.

Internal vector: board (heights, castle one-hots, areas, castle table) | pieces (king, knights, best
levels) | context (supply, decks, progress, the pending decision) | one block per seat (public facts,
then the private fields).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from ..core.layout import Layout, seats_from
from .board import MAX_CASTLES, SQUARES
from .cards import NUM_CARD_TYPES

if TYPE_CHECKING:
    from .game import Game, State

TOTAL_BLOCKS = 92  # T3
MAX_HEIGHT = 44  # a castle of height h uses ≥ 2h − 1 blocks and 5 more castles need one each: 2h − 1 + 5 ≤ 92
MAX_AREA = 59  # 64 squares, five other castles (I4)
# T51 castle points of one player in one scoring: Σ area·level over castles that use ≥ area + height − 1
# blocks each (87 blocks besides five other castles) — largest with one castle of area = height = 44
MAX_CASTLE_POINTS = 44 * 44
MAX_MASTER_POINTS = 70  # T64: M1/M2 after phase 3, six knights × 10 + the extra 10
MAX_AP = 7  # I6
NUM_DECISIONS = 13  # D1–D12 without D10 (T70)
H_SCALE, AREA_SCALE, SCORE_SCALE = 8, 16, 100

BOARD_FIELDS = ("height", "castle_id", "castle_area", "castle_exists", "castle_size", "castle_height")
PIECE_FIELDS = ("king", "king_castle", "knights", "best_level")
CONTEXT_FIELDS = ("supply", "common_deck", "master_card", "phase", "round", "ap", "turn_stack", "card_played",
                  "acquired", "decision", "card", "selected", "leftover", "looked_count", "to_act", "round_start",
                  "phase_start")
SEAT_PUBLIC = (("score", 1), ("knights_in_supply", 1), ("stacks", 4), ("hand_size", 1), ("deck_size", 1),
               ("played", NUM_CARD_TYPES))
SEAT_FACTS = 8
"""The seat block's first 8 values (score … deck_size) change often and are rewritten alone; the card
fields after them (played, then the private ones) only when the seat's cards change."""
SEAT_PRIVATE = (("hand", NUM_CARD_TYPES), ("fresh", NUM_CARD_TYPES), ("looked_at", NUM_CARD_TYPES),
                ("my_deck", NUM_CARD_TYPES), ("unseen", NUM_CARD_TYPES))
ROW_FIELDS = ("knights", "best_level", "to_act", "round_start", "phase_start")
"""Per-seat fields stored field-major in the internal vector (the other per-seat fields live in the seat
blocks)."""
SEAT_OFFSET = {}
_off = 0
for _name, _size in SEAT_PUBLIC + SEAT_PRIVATE:
    SEAT_OFFSET[_name] = _off
    _off += _size
SEAT_SIZE = _off
SEAT_WIDTH = dict(SEAT_PUBLIC + SEAT_PRIVATE)
PRIVATE = frozenset(name for name, _ in SEAT_PRIVATE)
SEAT_FIELDS = tuple(name for name, _ in SEAT_PUBLIC) + ROW_FIELDS
"""Observation fields with one row per seat, rotated so that row 0 is the observer."""


def max_score(n: int) -> int:
    """A bound on any score (T54 makes scores unbounded in principle, the game does not): three scorings of
    castle points, king bonus and master card, each move leap-frogging at most n − 1 players, plus at most
    7 SCORE_STEPs in each of ≤ 12 turns, each leap-frogging too."""
    return 3 * (MAX_CASTLE_POINTS + 15 + MAX_MASTER_POINTS + 3 * (n - 1)) + 12 * MAX_AP * n


def build_layouts(game: Game) -> None:
    """Set ``game.layout`` (observation), ``game.state_layout`` (global state), the internal vector's offsets
    and the gather indices."""
    n, m = game.num_players, game.card_types
    mode = game.options["action_deck"]
    common = mode == "common"
    copies = 4 if common else 1  # of one type in one player's hand or played pile
    total_cards = 4 * m if common else m  # largest hand
    unseen_high = 4 if common else n - 1
    spec = [  # name, shape, meaning, low, high
        ("height", (8, 8), "blocks on the square / 8 (T2)", 0, MAX_HEIGHT / H_SCALE),
        ("castle_id", (8, 8, MAX_CASTLES), "castle id one-hot (T2); all 0 on the ground", 0, 1),
        ("castle_area", (8, 8), "area of the square's castle / 16; 0 on the ground (T2)", 0, MAX_AREA / AREA_SCALE),
        ("castle_exists", MAX_CASTLES, "1 if castle id c exists (T2)", 0, 1),
        ("castle_size", MAX_CASTLES, "area of castle c / 16 (T2)", 0, MAX_AREA / AREA_SCALE),
        ("castle_height", MAX_CASTLES, "height of castle c (its tallest square) / 8 (T2)", 0, MAX_HEIGHT / H_SCALE),
        ("king", (8, 8), "1 on the king's square (T9, T55)", 0, 1),
        ("king_castle", MAX_CASTLES, "1 for the king's castle (T52)", 0, 1),
        ("knights", (n, 8, 8), "1 where the seat has a knight (T4)", 0, 1),
        ("best_level", (n, MAX_CASTLES), "highest level of the seat's knights on castle c / 8; 0 if none (T51)",
         0, MAX_HEIGHT / H_SCALE),
        ("score", n, "score / 100 (T54)", 0, max_score(n) / SCORE_SCALE),
        ("knights_in_supply", n, "knights not yet on the board / 6 (T3)", 0, 1),
        ("stacks", (n, 4), "stack list, largest first: blocks / 3 (T17)", 0, 1),
        ("hand_size", n, "action cards in hand / 10 (T65)", 0, total_cards / 10),
        ("deck_size", n, "cards in the personal deck / 10 (`personal` only, T65)", 0, 1),
        ("played", (n, NUM_CARD_TYPES), "action cards played, by type (T49)", 0, copies),
        ("to_act", n, "1 for the player to act (T65)", 0, 1),
        ("round_start", n, "1 for this round's first player (T12, T62)", 0, 1),
        ("phase_start", n, "1 for this phase's first player (T13)", 0, 1),
        ("supply", 1, "blocks in the common supply / 92 (T3)", 0, 1),
        ("common_deck", 1, "cards in the common deck / its size at the start (`common` only, T65)", 0, 1),
        ("master_card", 8, "master card M1–M8 one-hot (`master` only, T59)", 0, 1),
        ("phase", 3, "phase 1–3 one-hot; all 0 during setup (T11)", 0, 1),
        ("round", 4, "round of the phase one-hot; all 0 during setup (T11)", 0, 1),
        ("ap", 1, "action points left / 7 (T22)", 0, 1),
        ("turn_stack", 1, "blocks on the active player's turn's stack / 3; 0 without one (T18)", 0, 1),
        ("card_played", 1, "1 once a card was played this turn (T34)", 0, 1),
        ("acquired", 1, "cards acquired this turn / 2 (T32)", 0, 1),
        ("decision", NUM_DECISIONS, "pending decision one-hot: D1, D2, D3, D3a, D4, D4a, D5, D6, D7, D8, D9, D11, "
         "D12; all 0 at the end (T70)", 0, 1),
        ("card", NUM_CARD_TYPES, "card being resolved one-hot (T39)", 0, 1),
        ("selected", (8, 8), "square chosen earlier in this decision sequence: the knight of a move (D4a), "
         "the knight or source of a card (D8, D9) (T65)", 0, 1),
        ("leftover", 1, "leftover blocks still to spread / 3 (T19)", 0, 1),
        ("looked_count", 1, "cards the active player is looking at / 3 (`personal`, T32)", 0, 1),
        ("hand", NUM_CARD_TYPES, "my hand by type (T66)", 0, copies),
        ("fresh", NUM_CARD_TYPES, "my cards acquired this turn, not playable yet, by type (T32)", 0,
         2 if common else 1),
        ("looked_at", NUM_CARD_TYPES, "the cards I am looking at while acquiring (`personal`, T66)", 0, 1),
        ("my_deck", NUM_CARD_TYPES, "types left in my personal deck, order unknown (`personal`, T66)", 0, 1),
        ("unseen", NUM_CARD_TYPES, "cards of the type I cannot see: in the common deck or in other players' "
         "hands and decks (T67)", 0, unseen_high),
    ]
    game.layout = Layout(spec)
    shapes = {name: (shape,) if isinstance(shape, int) else shape for name, shape, *_ in spec}
    internal = Layout([(name, shapes[name], "", 0, 0) for name in BOARD_FIELDS + PIECE_FIELDS + CONTEXT_FIELDS]
                      + [("seats", (n, SEAT_SIZE), "", 0, 0)])
    game.internal = internal
    game.off = {f.name: f.start for f in internal}
    game.context_offsets = tuple(internal[name].start for name in CONTEXT_FIELDS)
    game.region = {"board": (internal["height"].start, internal["castle_height"].stop),
                   "context": (internal["supply"].start, internal["phase_start"].stop)}

    def indices(name: str, viewer: int | None) -> np.ndarray:
        """Internal indices of a field as ``viewer`` sees it (None: table order, every seat's private rows)."""
        rows = list(range(n)) if viewer is None else seats_from(viewer, n)
        if name in SEAT_OFFSET:  # in the seat blocks; a private field only from the viewer's own block
            if name in PRIVATE and viewer is not None:
                rows = [viewer]
            base = internal["seats"].start + SEAT_OFFSET[name]
            return np.concatenate([base + q * SEAT_SIZE + np.arange(SEAT_WIDTH[name]) for q in rows])
        field = internal[name]
        return field.rows(rows, n) if name in ROW_FIELDS else np.arange(field.start, field.stop)

    game.obs_index = [np.concatenate([indices(f.name, p) for f in game.layout]) for p in range(n)]
    state_spec, sources = [], []
    for name, shape, meaning, low, high in spec:
        if name in ("my_deck", "unseen", "looked_count"):
            continue  # derived from the fields below
        source = name
        if name in PRIVATE:
            shape, meaning = (n, *shapes[name]), meaning.replace("my ", "each seat's ").replace("I am", "the seat is")
            name = {"hand": "hands"}.get(name, name)
        state_spec.append((name, shape, meaning, low, high))
        sources.append(source)
    game.state_index = np.concatenate([indices(source, None) for source in sources])
    if common:
        state_spec.append(("deck_order", (4 * m, NUM_CARD_TYPES), "common deck from the top: card type one-hot per "
                           "position (hidden information, T67)", 0, 1))
    elif mode == "personal":
        state_spec.append(("deck_order", (n, m, NUM_CARD_TYPES), "each personal deck from the top: card type "
                           "one-hot per position (hidden information, T67)", 0, 1))
    game.state_layout = Layout(state_spec)


# ===================================================================== reads
# state._dirty bits: the whole board, the king, the context (named STALE_*, not to be taken for board.KING, the king's
# occupant code). Every decision sets STALE_CONTEXT (State._step), so _dirty is nonzero whenever a finer mark
# (squares, castles, seats) is pending too: State.observation tests _dirty alone.
STALE_BOARD, STALE_KING, STALE_CONTEXT = 1, 2, 4


def reset(state: State) -> None:
    """A new vector with every part stale: the next read writes it all (setup, loading, resampling)."""
    everyone = (1 << state.game.num_players) - 1
    state._x = np.zeros(state.game.internal.size, np.float32)
    state._dirty = STALE_BOARD | STALE_KING | STALE_CONTEXT
    state._stale_squares = set()
    state._stale_castles = set()
    state._stale_rows = state._stale_seats = state._stale_cards = everyone


def global_state(state: State) -> np.ndarray:
    """Every seat's rows in table order, every hand, then the decks' order (hidden information, T67);
    ``State.global_state`` refreshes ``_x`` first."""
    g = state.game
    out = np.zeros(g.state_layout.size, np.float32)
    k = len(g.state_index)
    out[:k] = state._x.take(g.state_index)
    positions = 4 * g.card_types if g.common else g.card_types  # per deck (T8)
    for i, deck in enumerate(state.decks):  # deck_order: each deck from the top (its last element)
        base = k + i * positions * NUM_CARD_TYPES
        for j, t in enumerate(reversed(deck)):
            out[base + j * NUM_CARD_TYPES + t] = 1
    return out


# ===================================================================== writers
def refresh(state: State) -> None:
    """Rewrite the stale parts of ``state._x``: ``state._dirty`` bits, then the squares and castles whose
    blocks changed, the seats whose knights moved or rose (rows), whose facts changed (seats) and whose
    cards changed (cards)."""
    dirty = state._dirty
    if dirty & STALE_BOARD:
        _write_board(state)
    else:
        for s in state._stale_squares:
            _write_square(state, s)
        for c in state._stale_castles:
            _write_castle(state, c)
    state._stale_squares.clear()
    state._stale_castles.clear()
    if dirty & STALE_KING:
        _write_king(state)
    if dirty & STALE_CONTEXT:
        _write_context(state)
    if state._stale_rows:
        _write_seats(state, state._stale_rows, _write_row)
    if state._stale_seats:
        _write_seats(state, state._stale_seats, _write_facts)
    if state._stale_cards:
        _write_seats(state, state._stale_cards, _write_cards)
    state._dirty = state._stale_rows = state._stale_seats = state._stale_cards = 0


def _write_seats(state: State, seats: int, write: Callable[[State, int], None]) -> None:
    """``write(state, p)`` for every seat p whose bit is set in ``seats``."""
    p = 0
    while seats:
        if seats & 1:
            write(state, p)
        seats >>= 1
        p += 1


def _write_board(state: State) -> None:
    start, stop = state.game.region["board"]
    state._x[start:stop] = 0
    for s in range(SQUARES):
        _write_square(state, s)
    for c in range(MAX_CASTLES):
        _write_castle(state, c)


def _write_square(state: State, s: int) -> None:
    o, b, x = state.game.off, state.board, state._x
    x[o["height"] + s] = b.h[s] / H_SCALE
    one_hot = o["castle_id"] + MAX_CASTLES * s
    x[one_hot:one_hot + MAX_CASTLES] = 0
    c = b.cid[s]
    if c >= 0:
        x[one_hot + c] = 1
        x[o["castle_area"] + s] = len(b.castles[c]) / AREA_SCALE
    else:
        x[o["castle_area"] + s] = 0


def _write_castle(state: State, c: int) -> None:
    o, b, x = state.game.off, state.board, state._x
    squares = b.castles[c]
    if squares is None:
        x[o["castle_exists"] + c] = x[o["castle_size"] + c] = x[o["castle_height"] + c] = 0
        return
    area = len(squares) / AREA_SCALE
    x[o["castle_exists"] + c] = 1
    x[o["castle_size"] + c] = area
    x[o["castle_height"] + c] = max(map(b.h.__getitem__, squares)) / H_SCALE
    at = o["castle_area"]
    for s in squares:  # a castle has a few squares: scalar stores cost less than building an index array
        x[at + s] = area


def _write_king(state: State) -> None:
    o, x = state.game.off, state._x
    x[o["king"]:o["king"] + SQUARES] = 0
    x[o["king_castle"]:o["king_castle"] + MAX_CASTLES] = 0
    if state.king >= 0:
        x[o["king"] + state.king] = 1
        x[o["king_castle"] + state.board.cid[state.king]] = 1


def _write_row(state: State, p: int) -> None:
    """Seat p's knights and their best level per castle."""
    o, b, x = state.game.off, state.board, state._x
    knights = o["knights"] + SQUARES * p
    best = o["best_level"] + MAX_CASTLES * p
    x[knights:knights + SQUARES] = 0
    levels = [0] * MAX_CASTLES
    h, cid = b.h, b.cid
    for s in state.knights[p]:
        x[knights + s] = 1
        c = cid[s]
        if c >= 0 and h[s] > levels[c]:
            levels[c] = h[s]
    x[best:best + MAX_CASTLES] = [level / H_SCALE for level in levels]


def _write_context(state: State) -> None:
    g, x = state.game, state._x
    (supply, common_deck, master_card, phase, round_, ap, turn_stack, card_played, acquired, decision, card,
     selected, leftover, looked_count, to_act, round_start, phase_start) = g.context_offsets
    start, stop = g.region["context"]
    x[start:stop] = 0
    x[supply] = state.supply / TOTAL_BLOCKS
    if g.common:
        x[common_deck] = len(state.decks[0]) / (4 * g.card_types)
    if state.master_card >= 0:
        x[master_card + state.master_card] = 1
    if state.phase_no:
        x[phase + state.phase_no - 1] = 1
        x[round_ + state.round_no - 1] = 1
        x[round_start + state.round_start] = 1
        x[phase_start + state.phase_start] = 1
    # the region is zeroed above: the values usually 0 are only written when they are not
    if state.ap:
        x[ap] = state.ap / MAX_AP
    if state.turn_stack > 0:
        x[turn_stack] = state.turn_stack / 3
    if state.card_played:
        x[card_played] = state.card_played
    if state.acquired:
        x[acquired] = state.acquired / 2
    if state.current_player >= 0:
        x[decision + state.decision] = 1
        x[to_act + state.current_player] = 1
    if state.card >= 0:
        x[card + state.card] = 1
    if state.selected >= 0:
        x[selected + state.selected] = 1
    if state.leftover:
        x[leftover] = state.leftover / 3
    if state.looked:
        x[looked_count] = len(state.looked) / 3


def _write_facts(state: State, p: int) -> None:
    """The first values of seat p's block: score, knights in supply, stacks, hand and deck sizes."""
    g = state.game
    stacks = [size / 3 for size in state.stacks[p]]
    own_deck = len(state.decks[p]) if g.personal else 0
    base = g.off["seats"] + SEAT_SIZE * p
    state._x[base:base + SEAT_FACTS] = [state.score[p] / SCORE_SCALE, state.in_supply[p] / 6, *stacks,
                                        *[0] * (4 - len(stacks)), sum(state.hands[p]) / 10, own_deck / 10]


def _write_cards(state: State, p: int) -> None:
    """The card fields of seat p's block: played, then the private ones (hand, fresh, looked at, own deck,
    unseen)."""
    g = state.game
    hand = state.hands[p]
    looked = [0] * NUM_CARD_TYPES
    in_deck = [0] * NUM_CARD_TYPES
    if p == state.current_player:
        for t in state.looked:
            looked[t] = 1
    if g.personal:
        for t in state.decks[p]:
            in_deck[t] = 1
    copies = 4 if g.common else g.num_players
    unseen = [0] * NUM_CARD_TYPES
    for t, column in enumerate(zip(*state.played, strict=True)):
        if t < g.card_types:
            unseen[t] = copies - sum(column) - hand[t] - looked[t] - in_deck[t]
    base = g.off["seats"] + SEAT_SIZE * p + SEAT_FACTS
    state._x[base:base + SEAT_SIZE - SEAT_FACTS] = [*state.played[p], *hand, *state.fresh[p], *looked, *in_deck,
                                                   *unseen]
