"""The Palazzo table as text, and what the text and the SVG (``svg.py``) both say: the heading, the status, the
notes on an auction, a payment or a reconstruction, where the X3 is, and what a seat sees of hands and removed
tiles."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..core.game import TERMINAL
from .actions import (
    ACTION,
    AUCTION,
    BID,
    BUY,
    DEST,
    DEST_DISCARD,
    DEST_NEW,
    DISTRIBUTE,
    DONE,
    MODE,
    PASS,
    PAY,
    PICK,
    PLACE,
    RECON_DEST,
    RECON_PAY,
    RECON_TILE,
    SELECT,
    TILE,
    TILES,
)
from .components import NUM_QUARRIES, NUM_RIDERS, RIDER, STACK_NAMES
from .game import palace_score, tile_name
from .payments import CARD, CURRENCY_NAMES, NUM_KINDS, UNSET, best_pay, kind_name, unit_name

if TYPE_CHECKING:
    from .game import State

_WHAT = {ACTION: "take money, draw two tiles, or reconstruct", PICK: "pick a money card from the display",
         MODE: "buy from the supply or auction the next quarry", SELECT: "select supply tiles to buy",
         PAY: "add cards to the payment", BID: "raise the bid or pass",
         DISTRIBUTE: "take a tile from the lot in the master builder's quarry",
         PLACE: "place a tile: on a palace, as a new palace, or out of the game",
         RECON_TILE: "choose a palace tile to move", RECON_DEST: "choose where the tile goes",
         RECON_PAY: "pay one card for the reconstruction"}


def cards_text(counts: list[int]) -> str:
    """``A3 A3 B5 Z`` for a list of 16 counts, ``-`` if empty."""
    return " ".join(kind_name(k) for k in range(NUM_KINDS) for _ in range(counts[k])) or "-"


def tiles_text(tiles: list[int]) -> str:
    return " ".join(tile_name(t) for t in tiles) or "-"


def heading(state: State) -> str:
    return f"Palazzo · turn {state.turn + 1} · active player {state.active}"


def status(state: State, viewer: int | None) -> str:
    """Who must do what, or the result; a seat's view leaves out the winners, which a tie-break may take from the
    hidden hands (P63)."""
    p = state.current_player
    if p == TERMINAL:
        if state.is_truncated():
            return f"Stopped by the turn cap ({state.turn} turns)"
        scores = "scores " + ", ".join(map(str, state.scores()))
        if viewer is not None:
            return f"Game over · {scores}"
        return "Game over · winner " + ", ".join(f"player {q}" for q in state.winners()) + f" · {scores}"
    return f"Player {p} to {_WHAT[state.decision]}"


def notes(state: State) -> list[str]:
    """The auction, payment, bid or reconstruction under way, a line each."""
    out = []
    if state.in_auction:
        out.append(f"auction of quarry {state.mb}: high bid {state.high} by player {state.leader}")
    if state.decision == PAY:
        out.append(f"paying {state.pay_value} of {state.pay_target} for " + tiles_text(state.selected))
    if state.decision == BID:
        out.append(f"player {state.current_player}'s bid {state.pay_value}, {state.pay_target} to raise")
    if state.recon_tile >= 0:
        out.append(f"moving {tile_name(state.recon_tile)}")
    return out


def x3_place(state: State) -> str:
    """Where the X3 opening bid is (P3)."""
    return f"in player {state.active}'s bid" if state.x3_out else "on the table"


def hand(state: State, p: int, viewer: int | None) -> tuple[list[int], int]:
    """Seat p's money cards as ``viewer`` may see them: the counts per kind shown (the whole hand; of another seat's
    hand the cards everyone saw enter it, P69, P70a) and how many more it holds unseen."""
    shown = state.hands[p] if viewer is None or viewer == p else state.known[p]
    return shown, sum(state.hands[p]) - sum(shown)


def removed_shown(state: State, viewer: int | None) -> bool:
    """Whether ``viewer`` sees which tiles are out of the game (P68: with ``removed_tiles_public``) or only their
    number."""
    return state.game.removed_public or viewer is None


def text_table(state: State, viewer: int | None) -> str:
    """The table as text. ``viewer`` sees only what that seat may know (P68, P69); ``None`` shows everything."""
    n = state.game.num_players
    stacks = ", ".join(f"{name} {len(s)}" for name, s in zip(STACK_NAMES, state.stacks, strict=True))
    lines = [heading(state), status(state, viewer),
             f"stacks {stacks}; riders drawn {state.riders}/{NUM_RIDERS}; master builder on quarry {state.mb}"]
    if viewer is None:
        lines.append("next items: " + " | ".join(
            f"{name}: " + (" ".join("RIDER" if x == RIDER else tile_name(x) for x in s[:-4:-1]) or "-")
            for name, s in zip(STACK_NAMES, state.stacks, strict=True)))
    lines.append(f"supply: {tiles_text(state.supply)}" +
                 (f" (selected {tiles_text(state.selected)} at {state.price} each)" if state.selected else ""))
    for q in range(NUM_QUARRIES):
        lines.append(f"quarry {q}{' (MB)' if q == state.mb else ''}: {tiles_text(state.quarries[q])}")
    if removed_shown(state, viewer):
        lines.append(f"removed: {tiles_text(sorted(state.removed))}")
    else:
        lines.append(f"removed: {len(state.removed)} tiles")
    deck = f"deck {len(state.deck)}"
    if viewer is None:
        deck += f" (top first: {' '.join(kind_name(k) for k in state.deck[:-6:-1])})"
    elif state.deck_known:
        deck += f" [{cards_text(np.bincount(state.deck, minlength=NUM_KINDS).tolist())}]"
    lines.append(f"{deck}; discard pile {cards_text(state.discard)}; X3 {x3_place(state)}")
    if any(state.display):
        lines.append(f"display: {cards_text(state.display)}; pickers {state.pickers}")
    lines += notes(state)
    if state.decision in (PAY, BID):
        currency = "-" if state.pay_currency == UNSET else CURRENCY_NAMES[state.pay_currency]
        lines.append(f"payment: c* {currency}" + (f", cards {cards_text(state.payment)}" if state.decision == PAY
                                                   else ""))
    if state.pending:
        lines.append(f"pending for player {state.current_player}: {tiles_text(state.pending)}")
    for p in range(n):
        shown, hidden = hand(state, p, viewer)
        if viewer is None or viewer == p:
            money = f"hand {cards_text(shown)} (BestPay {best_pay(shown)})"
        else:
            money = f"hand {sum(shown) + hidden} cards, known {cards_text(shown)}, {hidden} unknown"
        bid = ""
        if state.in_auction:
            bid = "; passed" if state.passed[p] else \
                f"; bid {state.bid_value[p]} {cards_text(state.bids[p])}" + (" +X3" if p == state.active and
                                                                            state.x3_out else "")
        palaces = " | ".join(f"{tiles_text(pal)} ({palace_score(pal)})" for pal in state.palaces[p]) or "-"
        lines.append(f"player {p} (score {state.score(p)}): {money}{bid}")
        lines.append(f"  palaces: {palaces}")
    return "\n".join(lines)


TEXT_LEGEND = """\
turn: the turn being played; active player: whose turn it is; then who decides now, and what
stacks I II III: tiles left in each; riders drawn r/5: game-end tiles drawn (the fifth ends the game)
a tile: b1.3 = brick (s = sandstone, m = marble), floor 1, 3 windows
supply: tiles for sale (selected ... at P each: the tiles being bought, and their price)
quarry 0-3: tiles waiting for an auction or a distribution; MB: the master builder's quarry (auctions take the
  next one with tiles)
removed: tiles out of the game
a money card: A3 = currency A (or B, C), value 3 (values 3-7); Z = a certificate worth 2; a group [A4 B4 C4]
  (one value in the three currencies) or [Z Z Z] is worth 15
deck / discard pile: the money cards left to draw / paid
X3: the free certificate worth 3 that opens an auction; on the table, or in the bid of its player
display: the money cards revealed to pick from; pickers: the seats that still pick, in order
auction of quarry q: the high bid so far and who made it
paying V of T for tiles, player N's bid V, T to raise: V = the value paid or bid so far; T = the value to reach
payment: c* = the payment's currency (- until its first currency card); cards = the cards paid so far
moving: the palace tile being reconstructed
pending for player N: tiles that player must place now (on a palace with a lower top floor, as a new palace, or
  discarded)
player N (score S): hand, BestPay = the largest single payment the hand can make (it breaks ties); another
  player's hand: known = cards everyone saw enter it, unknown = dealt cards nobody else has seen
palaces: numbered 0, 1, ... from the left ('palace N' in an action); each lists its tiles from the ground floor
  up, then its score in parentheses"""
"""What ``text_table``'s words and symbols mean (``State.text_legend``)."""


def describe_action(state: State, action: int, viewer: int | None) -> str:
    """The action as its decision means it, naming its tiles and cards (the names are shared by decisions)."""
    d, p = state.decision, state.current_player
    if TILE <= action < CARD:
        tile = tile_name(action - TILE)
        return {SELECT: f"select {tile} from the supply to buy", DISTRIBUTE: f"take {tile} from the lot",
                RECON_TILE: f"reconstruct: move {tile}"}[d]
    if CARD <= action < DONE:
        unit = unit_name(action)
        return {PICK: f"take {unit} from the money display", PAY: f"pay {unit}", BID: f"add {unit} to the bid",
                RECON_PAY: f"pay {unit} for the reconstruction"}[d]
    if action >= DEST:
        tile = tile_name(state.pending[0] if d == PLACE else state.recon_tile)
        if action == DEST_DISCARD:
            return f"discard {tile}"
        if action == DEST_NEW:
            return f"{'place' if d == PLACE else 'move'} {tile} as a new palace"
        palace = f"palace {action - DEST} ({tiles_text(state.palaces[p][action - DEST])})"
        return f"place {tile} on top of {palace}" if d == PLACE else f"insert {tile} into {palace}"
    if action == DONE:
        return {SELECT: f"buy only {tiles_text(state.selected)}",
                PAY: f"pay {state.pay_value} for {tiles_text(state.selected)}",
                BID: f"bid {state.pay_value}"}[d]
    return {TILES: "draw two tiles", BUY: "buy from the supply", AUCTION: "auction the next quarry with tiles",
            PASS: "pass: leave the auction"}.get(action, state.action_to_string(action))
