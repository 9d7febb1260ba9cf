"""Text and picture renderings of a Palazzo table."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..core.canvas import Canvas, LegendItem, legend_height
from ..core.game import TERMINAL
from .components import (
    BID,
    DISTRIBUTE,
    FLOOR,
    MATERIAL,
    NUM_QUARRIES,
    NUM_RIDERS,
    PAY,
    PICK,
    PLACE,
    RECON_PAY,
    RECON_TILE,
    RIDER,
    SELECT,
    STACK_NAMES,
    WINDOWS,
)
from .game import (
    AUCTION,
    BUY,
    DEST,
    DEST_DISCARD,
    DEST_NEW,
    DONE,
    PASS,
    TILE,
    TILES,
    palace_score,
    tile_name,
)
from .payments import CARD, CURRENCY_NAMES, NUM_KINDS, UNSET, Z, best_pay, kind_name, unit_name

if TYPE_CHECKING:
    from .game import State


def cards_text(counts: list[int]) -> str:
    """``A3 A3 B5 Z`` for a list of 16 counts, ``-`` if empty."""
    return " ".join(kind_name(k) for k in range(NUM_KINDS) for _ in range(counts[k])) or "-"


def tiles_text(tiles: list[int]) -> str:
    return " ".join(tile_name(t) for t in tiles) or "-"


def _status(state: State, viewer: int | None = None) -> str:
    if state.current_player == TERMINAL:
        if state.is_truncated():
            return f"truncated at the turn cap ({state.turn} turns)"
        if viewer is not None:  # the tie-break reads the hidden hands (P63)
            return "game over"
        return "game over — winners " + ", ".join(f"p{p}" for p in state.winners())
    return f"player {state.current_player} to act: {state.phase}"


def text_table(state: State, viewer: int | None) -> str:
    """The table as text. ``viewer`` sees only what that seat may know (P68, P69); ``None`` shows everything."""
    g = state.game
    n = g.num_players
    stacks = ", ".join(f"{name} {len(s)}" for name, s in zip(STACK_NAMES, state.stacks, strict=True))
    lines = [f"Palazzo — turn {state.turn}, active player {state.active}; {_status(state, viewer)}",
             f"stacks {stacks}; riders drawn {state.riders}/{NUM_RIDERS}; master builder on quarry {state.mb}"]
    if viewer is None:
        lines.append("next items: " + " | ".join(
            f"{name}: " + (" ".join("RIDER" if x == RIDER else tile_name(x) for x in s[:-4:-1]) or "-")
            for name, s in zip(STACK_NAMES, state.stacks, strict=True)))
    lines.append(f"supply: {tiles_text(state.supply)}" +
                 (f" (selected {tiles_text(state.selected)} at {state.price} each)" if state.selected else ""))
    for q in range(NUM_QUARRIES):
        lines.append(f"quarry {q}{' (MB)' if q == state.mb else ''}: {tiles_text(state.quarries[q])}")
    if g.removed_public or viewer is None:
        lines.append(f"removed: {tiles_text(sorted(state.removed))}")
    else:
        lines.append(f"removed: {len(state.removed)} tiles")
    deck = f"deck {len(state.deck)}"
    if viewer is None:
        deck += f" (top first: {' '.join(kind_name(k) for k in state.deck[:-6:-1])})"
    elif state.deck_known:
        deck += f" [{cards_text(np.bincount(state.deck, minlength=NUM_KINDS).tolist())}]"
    lines.append(f"{deck}; discard pile {cards_text(state.discard)}; "
                 f"X3 {'in the bid of p' + str(state.active) if state.x3_out else 'on the table'}")
    if any(state.display):
        lines.append(f"display: {cards_text(state.display)}; pickers {state.pickers}")
    if state.in_auction:
        lines.append(f"auction on quarry {state.mb}: high bid {state.high} by p{state.leader}")
    if state.decision in (PAY, BID):
        currency = "-" if state.pay_currency == UNSET else CURRENCY_NAMES[state.pay_currency]
        lines.append(f"payment: V {state.pay_value}, c* {currency}, T {state.pay_target}"
                     + (f", cards {cards_text(state.payment)}" if state.decision == PAY else ""))
    if state.pending:
        lines.append(f"pending for p{state.current_player}: {tiles_text(state.pending)}")
    if state.recon_tile >= 0:
        lines.append(f"reconstructing {tile_name(state.recon_tile)}")
    for p in range(n):
        hand = state.hands[p]
        if viewer is None or viewer == p:
            money = f"hand {cards_text(hand)} (BestPay {best_pay(hand)})"
        else:
            unknown = sum(hand) - sum(state.known[p])
            money = f"hand {sum(hand)} cards, known {cards_text(state.known[p])}, {unknown} unknown"
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
active player: whose turn it is; player N to act: who decides now, and the decision (D1-D11)
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
auction on quarry q: the high bid so far and who made it
payment: V = the value paid so far; c* = the payment's currency (- until its first currency card); T = the value
  to reach
pending for pN: tiles that player must place now (on a palace with a lower top floor, as a new palace, or
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


MATERIAL_RGB = ((178, 72, 52), (222, 190, 120), (236, 236, 242))
CURRENCY_RGB = ((214, 80, 70), (80, 120, 210), (90, 170, 90), (160, 160, 160))  # A, B, C, Z
STACK_RGB, DECK_RGB, DISCARD_RGB, X3_RGB = (90, 70, 50), (60, 50, 90), (70, 70, 70), (240, 200, 60)
FOCUS_RGB, FLOOR_RGB = (255, 230, 0), (150, 190, 160)
TILE_W, TILE_H, GAP = 34, 20, 6
CARD_W, CARD_H = 24, 32
MAX_SHOWN_PALACES = 21
LEGEND: list[LegendItem] = [
    *zip(MATERIAL_RGB, ("BRICK", "SANDSTONE", "MARBLE"), strict=True),
    (None, "F.W ON A TILE = FLOOR.WINDOWS"),
    *zip(CURRENCY_RGB, ("CURRENCY A", "CURRENCY B", "CURRENCY C", "Z = CERTIFICATE (2)"), strict=True),
    (None, "3-7 = CARD VALUE"), (STACK_RGB, "I II III: TILES LEFT IN THE STACK"), (None, "RIDERS: DRAWN / 5"),
    (None, "PRICE = PER SUPPLY TILE"), (DECK_RGB, "DECK: CARDS LEFT"), (DISCARD_RGB, "DISC: DISCARD PILE SIZE"),
    (X3_RGB, "X3: OPENING BID; TABLE / PN = WHERE IT IS"), (None, "V / T = PAYMENT SO FAR / TO REACH"),
    (None, "1-5 AT THE LEFT = FLOOR"), (None, "N:S UNDER A PALACE = PALACE N SCORES S"),
    (None, "KNOWN = HAND CARDS SEEN BY ALL"),
    (FOCUS_RGB, "PLAYER TO ACT, MASTER BUILDER (MB), TILES CHOSEN / TO PLACE"),
]
"""What the picture's colours, letters and numbers mean (drawn under the table)."""


def _tile(cv: Canvas, x: int, y: int, t: int, frame: tuple[int, int, int] | None = None) -> None:
    """A tile: its material's colour, ``floor.windows`` on it."""
    cv.card(x, y, TILE_W, TILE_H, MATERIAL_RGB[MATERIAL[t]], f"{FLOOR[t]}.{WINDOWS[t]}",
            text_colour=(255, 255, 255) if MATERIAL[t] == 0 else (0, 0, 0), scale=1)
    if frame:
        cv.rect(x - 2, y - 2, TILE_W + 4, TILE_H + 4, None, border=frame, border_width=2)


def _money_card(cv: Canvas, x: int, y: int, k: int) -> None:
    colour = CURRENCY_RGB[3 if k == Z else k // 5]
    cv.card(x, y, CARD_W, CARD_H, colour, "Z" if k == Z else str(3 + k % 5), text_colour=(255, 255, 255))


def _row_of_tiles(cv: Canvas, x: int, y: int, tiles: list[int], width: int, highlight: set[int]) -> None:
    per_row = max(1, width // (TILE_W + 4))
    for i, t in enumerate(tiles):
        _tile(cv, x + (i % per_row) * (TILE_W + 4), y + (i // per_row) * (TILE_H + 4), t,
              FOCUS_RGB if t in highlight else None)


def picture(state: State) -> np.ndarray:
    """The whole table (hidden hands as sizes): status line, stacks, supply, the four quarries with the master
    builder, the money display, deck, discard pile and X3, then one panel per player with the palaces as
    towers of tiles (floor 1 at the bottom, coloured by material, ``floor.windows`` on each tile), the
    palace scores, the hand size and the bid.  A legend under it names the materials and currencies and says
    what the numbers and marks mean."""
    g = state.game
    n = g.num_players
    width = 940
    panel_h = 5 * TILE_H + 44
    header_h = 200
    table_h = header_h + n * (panel_h + GAP) + GAP
    cv = Canvas(width, table_h + legend_height(LEGEND, width - 2 * GAP) + GAP)
    white, yellow = (255, 255, 255), FOCUS_RGB
    cv.text(GAP, GAP, f"PALAZZO  TURN {state.turn}  ACTIVE P{state.active}  " + _status(state).upper(), scale=1)

    # stacks and riders
    y = 24
    for s, stack in enumerate(state.stacks):
        x = GAP + s * (CARD_W + 10)
        cv.card(x, y, CARD_W + 4, CARD_H, STACK_RGB, str(len(stack)), text_colour=white)
        cv.text(x + 2, y + CARD_H + 3, STACK_NAMES[s])
    cv.text(GAP, y + CARD_H + 14, f"RIDERS {state.riders}/{NUM_RIDERS}")
    # supply
    x0 = 120
    cv.text(x0, y, f"SUPPLY  PRICE {state.price if state.selected else state.current_price()}")
    _row_of_tiles(cv, x0, y + 12, state.supply, 260, set(state.selected))
    # quarries
    qx = 400
    for q in range(NUM_QUARRIES):
        x = qx + q * 132
        border = yellow if q == state.mb else (200, 200, 200)
        cv.rect(x, y, 126, 92, None, border=border, border_width=2 if q == state.mb else 1)
        cv.text(x + 4, y + 4, f"QUARRY {q}" + ("  MB" if q == state.mb else ""), yellow if q == state.mb else white)
        _row_of_tiles(cv, x + 6, y + 16, state.quarries[q], 118, set())
    # money
    y = 130
    cv.text(GAP, y, "DISPLAY")
    x = GAP
    for k in range(NUM_KINDS):
        for _ in range(state.display[k]):
            _money_card(cv, x, y + 10, k)
            x += CARD_W + 3
    x = max(x + 10, 150)
    cv.card(x, y + 10, CARD_W + 6, CARD_H, DECK_RGB, str(len(state.deck)), text_colour=white)
    cv.text(x, y + CARD_H + 13, "DECK")
    x += CARD_W + 16
    cv.card(x, y + 10, CARD_W + 6, CARD_H, DISCARD_RGB, str(sum(state.discard)), text_colour=white)
    cv.text(x, y + CARD_H + 13, "DISC")
    x += CARD_W + 16
    cv.card(x, y + 10, CARD_W, CARD_H, X3_RGB if not state.x3_out else (80, 80, 80), "X3", scale=1)
    cv.text(x, y + CARD_H + 13, "TABLE" if not state.x3_out else f"P{state.active}")
    x += CARD_W + 16
    info = []
    if state.in_auction:
        info.append(f"AUCTION  HIGH {state.high} BY P{state.leader}")
    if state.decision in (PAY, BID):
        info.append(f"PAYING V {state.pay_value} / T {state.pay_target}")
    if state.pending:
        info.append(f"P{state.current_player} PLACES")
    for i, line in enumerate(info):
        cv.text(x, y + 12 + 12 * i, line)
    if state.pending:  # the tile asked about first, framed
        px = x + Canvas.text_width(info[-1]) + 8
        for i, t in enumerate(state.pending):
            _tile(cv, px + i * (TILE_W + 6), y + 8 + 12 * (len(info) - 1), t, yellow if i == 0 else None)
    if g.removed_public:
        cv.text(GAP, y + CARD_H + 26, f"REMOVED {len(state.removed)}: "
                + " ".join(tile_name(t).upper() for t in sorted(state.removed)[:24])
                + (" ..." if len(state.removed) > 24 else ""))
    else:
        cv.text(GAP, y + CARD_H + 26, f"REMOVED {len(state.removed)}")

    # players
    focus = {state.recon_tile} | set(state.pending[:1])
    for p in range(n):
        y0 = header_h + p * (panel_h + GAP)
        frame = yellow if p == state.current_player else (40, 80, 55)
        cv.rect(GAP - 3, y0, width - 2 * GAP + 6, panel_h, None, border=frame, border_width=2)
        bid = ""
        if state.in_auction:
            bid = "  PASSED" if state.passed[p] else f"  BID {state.bid_value[p]}"
        known = cards_text(state.known[p]) if any(state.known[p]) else "NONE"
        cv.text(GAP + 2, y0 + 4, f"P{p}  SCORE {state.score(p)}  HAND {sum(state.hands[p])} CARDS (KNOWN {known})"
                f"  {len(state.palaces[p])} PALACES{bid}", yellow if p == state.current_player else white)
        base = y0 + 16 + 4 * TILE_H  # y of floor-1 tiles
        for f in range(5):
            cv.text(GAP + 2, base - f * TILE_H + 7, str(f + 1), FLOOR_RGB)
        if state.in_auction and any(state.bids[p]):
            x = width - GAP - 4
            for k in range(NUM_KINDS - 1, -1, -1):
                for _ in range(state.bids[p][k]):
                    x -= CARD_W + 3
                    _money_card(cv, x, y0 + 16, k)
        for s, palace in enumerate(state.palaces[p][:MAX_SHOWN_PALACES]):
            x = GAP + 14 + s * (TILE_W + 6)
            for t in palace:
                _tile(cv, x, base - (FLOOR[t] - 1) * TILE_H, t, yellow if t in focus else None)
            cv.text(x + 2, base + TILE_H + 4, f"{s}:{palace_score(palace)}")
        extra = len(state.palaces[p]) - MAX_SHOWN_PALACES
        if extra > 0:
            cv.text(width - 60, base, f"+{extra}")
    cv.rect(0, table_h - 1, width, 1, FLOOR_RGB)
    cv.legend(GAP, table_h + 3, width - 2 * GAP, LEGEND)
    return cv.image()
