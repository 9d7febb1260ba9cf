"""The Palazzo table as SVG (``State.render_svg``), drawn with ``envs/core/svg.py``.

From the top: the status; the tile stacks I–III (counts) and the game-end tiles drawn, the supply with its price,
the four quarries with the master builder (MB); the money deck, the discard pile, the money display, the X3
opening bid, an open payment or auction and the tiles waiting to be placed, and the tiles out of the game; then a
panel per seat (the viewer's first): score, hand, bid, and the palaces as towers of tiles at their floors
(floor 1 at the bottom), each with its slot number and score. A tile shows its floor, its windows as small
squares and its material's colour and letter; a money card its value, its currency's colour and letter. Another
seat's hand shows the cards everyone saw enter it and backs for the rest (P69, P70a); the stacks' and the deck's
order, and removed tiles when ``removed_tiles_public`` is off, stay hidden.

Clickable legal moves (``data-actions``), for the seat to act seen by itself or by the whole table:

- TAKE_MONEY (``0``): the money deck; TILES (``1``): the tile stacks; BUY (``3``): the supply; AUCTION (``4``):
  the quarry it auctions (the next one with tiles after the master builder's);
- TILE(id) (``5–52``): the tile, in the supply (D4 select), in the master builder's quarry (D7 distribution
  pick) or in the seat's palaces (D9 tile to move);
- CARD(k) (``53–68``): the card in the money display (D2 pick), or in the seat's hand (D5, D6, D11 payments);
  ADD_GROUP (``69–74``): each hand card of the group ([Av Bv Cv] or [Z Z Z]);
- DEST(slot) (``77–124``): that palace of the seat; DEST(NEW) (``125``): the "new palace" place after its
  palaces; DEST(DISCARD) (``126``): the box of tiles out of the game.

RECONSTRUCT (``2``), DONE (``75``) and PASS (``76``) have no spot: the app lists them in words.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import svg as s
from ..core.game import TERMINAL
from .actions import (
    AUCTION,
    BID,
    BUY,
    DEST,
    DEST_DISCARD,
    DEST_NEW,
    PAY,
    PICK,
    PLACE,
    RECON_DEST,
    RECON_PAY,
    TAKE_MONEY,
    TILE,
    TILES,
)
from .components import FLOOR, MATERIAL, NUM_QUARRIES, NUM_RIDERS, STACK_NAMES, WINDOWS
from .game import palace_score, tile_name
from .payments import CARD, GROUP, GROUP_Z, NUM_KINDS, VALUE, Z, best_pay, kind_name
from .render import hand, heading, notes, removed_shown, status, x3_place

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from .game import State

MATERIALS = ("brick", "sandstone", "marble")
MATERIAL_COLOURS = (s.VERMILLION, s.YELLOW, "#F2F2F2")
CURRENCY_COLOURS = (s.ORANGE, s.SKY_BLUE, s.PURPLE, "#9E9E9E")  # A, B, C, Z
TW, TH = 50, 28  # a tile
CW, CH = 30, 42  # a money card
MARGIN, GAP, LINE = 16, 8, 20
WIDTH = 1180
SUPPLY_W, QUARRY_W = 240, 176
PALACES_W = 640  # the palace area of a seat's panel; its hand and bid go to the right
PANEL_H = 36 + 5 * TH + 26
REMOVED_PER_LINE = 6  # tile names ("b3.1") on one line of the 260-wide box at 12 px
MIN_TEXT = 12  # the widest table: the web app shows it at 0.92 px a unit beside its panel (1400 px window)


def svg(state: State, viewer: int | None = None, legal: Iterable[int] | None = None, you: bool = True) -> str:
    """The table as ``viewer`` may see it (None: everything), ``legal`` actions clickable (see the module doc)."""
    actions = s.clickable(state, viewer, legal)
    n = state.game.num_players
    key = legend()
    rows = max(1, *(-(-len(tiles) // _per_row(QUARRY_W)) for tiles in state.quarries),
               -(-len(state.supply) // _per_row(SUPPLY_W)))
    tiles_h = max(22 + rows * (TH + 6) + 4, 112)  # the stacks and their labels need 112
    y_money = MARGIN + 2 * LINE + 14 + tiles_h + 28
    y_panels = y_money + CH + 2 * LINE + 24
    y_legend = y_panels + n * (PANEL_H + GAP) + 8
    out = s.Svg(WIDTH, y_legend + s.legend_height(key, WIDTH - 2 * MARGIN), f"Palazzo: {status(state, viewer)}",
                min_text=MIN_TEXT)
    d = state.decision
    acting = state.current_player

    out.text(MARGIN, MARGIN + 12, heading(state), 15, bold=True)
    out.text(MARGIN, MARGIN + 12 + LINE, status(state, viewer), 14, s.INK if acting == TERMINAL else s.YELLOW)

    # ---- tiles: stacks, supply, quarries
    y = MARGIN + 2 * LINE + 14
    with out.spot((MARGIN, y + 18, 3 * 44 - 4, 54), "tile stacks: draw two tiles", s.among(actions, TILES)):
        out.text(MARGIN, y + 12, "tile stacks", 12, s.MUTED)
        for i, stack in enumerate(state.stacks):
            out.back(MARGIN + i * 44, y + 18, 40, 54, str(len(stack)),
                     f"stack {STACK_NAMES[i]}: {s.count(len(stack), 'tile')}")
            out.text(MARGIN + i * 44 + 20, y + 86, STACK_NAMES[i], 12, s.MUTED, "middle")
    out.text(MARGIN, y + 106, f"game-end tiles {state.riders} of {NUM_RIDERS}", 12, s.MUTED)
    x = MARGIN + 150
    price = state.price if state.selected else state.current_price()
    with out.spot((x, y, SUPPLY_W, tiles_h), f"supply, price {price} per tile", s.among(actions, BUY)):
        out.rect(x, y, SUPPLY_W, tiles_h, s.PANEL, s.MUTED, rx=6)
        out.text(x + GAP, y + 16, f"supply · price {price} per tile", 12, s.INK, bold=True)
        chosen = set(state.selected)
        _tiles(out, state.supply, x + GAP, y + 24, SUPPLY_W, "supply",
               lambda t: s.among(actions, TILE + t), chosen)
    auctioned = _auction_quarry(state)
    for q in range(NUM_QUARRIES):
        x = MARGIN + 150 + SUPPLY_W + GAP + q * (QUARRY_W + GAP)
        mb = q == state.mb
        title = f"quarry {q}" + (" (master builder)" if mb else "")
        with out.spot((x, y, QUARRY_W, tiles_h), title + (": auction it" if q == auctioned else ""),
                      s.among(actions, AUCTION) if q == auctioned else []):
            out.rect(x, y, QUARRY_W, tiles_h, s.PANEL, s.YELLOW if mb else s.MUTED, rx=6,
                     stroke_width=2.5 if mb else 1)
            out.text(x + GAP, y + 16, f"quarry {q}", 12, s.INK, bold=True)
            if mb:
                out.text(x + QUARRY_W - GAP, y + 16, "master builder", 11, s.YELLOW, "end", True)
            _tiles(out, state.quarries[q], x + GAP, y + 24, QUARRY_W, f"quarry {q}",
                   lambda t: s.among(actions, TILE + t))

    # ---- money, payment, auction, pending tiles, removed tiles
    y = y_money
    out.text(MARGIN, y - 4, "money", 12, s.MUTED)
    out.back(MARGIN, y, CW + 8, CH, str(len(state.deck)), f"money deck: {s.count(len(state.deck), 'card')}",
             s.among(actions, TAKE_MONEY))
    out.text(MARGIN + (CW + 8) / 2, y + CH + 14, "deck", 11, s.MUTED, "middle")
    x = MARGIN + CW + 8 + GAP
    out.rect(x, y, CW + 8, CH, "#555555", s.EDGE, rx=4)
    out.text(x + (CW + 8) / 2, y + CH / 2 + 5, sum(state.discard), 14, s.INK, "middle", True)
    out.text(x + (CW + 8) / 2, y + CH + 14, "discard", 11, s.MUTED, "middle")
    x += CW + 8 + 2 * GAP
    x3 = f"X3 opening bid: {x3_place(state)}"
    with out.spot((x, y, 32, CH), x3):
        out.tag("circle", cx=x + 16, cy=y + CH / 2, r=16, fill=s.YELLOW if not state.x3_out else "#555555",
                stroke=s.EDGE)
        out.text(x + 16, y + CH / 2 + 5, "X3", 12, s.BLACK if not state.x3_out else s.INK, "middle", True)
        out.text(x + 16, y + CH + 14, "X3" if not state.x3_out else f"P{state.active}", 11, s.MUTED, "middle")
    x += 44
    if any(state.display):
        out.text(x, y - 4, "money display: pickers " + ", ".join(f"player {p}" for p in state.pickers), 12,
                 s.MUTED)
        x = _money(out, state.display, x, y, "money display", lambda k: s.among(actions, CARD + k) if d == PICK else [])
        x += 2 * GAP
    lines = notes(state)
    for i, note in enumerate(lines):
        out.text(x, y + 12 + i * 16, note, 13, s.INK)
    if state.decision == PAY and any(state.payment):
        x2 = x + max(map(len, lines)) * 8 + GAP
        _money(out, state.payment, x2, y, "in the payment", lambda k: [])
    if state.pending:
        y2 = y + 12 + len(lines) * 16 - 8
        out.text(x, y2 + TH / 2 + 9, f"player {state.current_player} places:", 13, s.INK)
        for i, t in enumerate(state.pending):
            _tile(out, t, x + 130 + i * (TW + 6), y2 + 4, "to place" + (" now" if i == 0 else ""), [],
                  i == 0)
    _removed(out, state, viewer, WIDTH - MARGIN - 260, y - 4, s.among(actions, DEST_DISCARD))

    for i, p in enumerate(s.seat_order(viewer, n)):
        _panel(out, state, p, viewer, you, actions if p == acting else frozenset(), y_panels + i * (PANEL_H + GAP))
    out.line(0, y_legend - 8, WIDTH, y_legend - 8, s.MUTED)
    out.legend(MARGIN, y_legend, WIDTH - 2 * MARGIN, key)
    return str(out)


def _per_row(width: float) -> int:
    return int((width - 2 * GAP + 6) // (TW + 6))


def _tile(out: s.Svg, t: int, x: float, y: float, where: str, ids: list[int], focus: bool = False) -> None:
    """A tile: its material's colour and letter, its floor, its windows as small squares."""
    m = MATERIAL[t]
    title = f"{MATERIALS[m]} tile {tile_name(t)}: floor {FLOOR[t]}, {WINDOWS[t]} window" + \
        ("s" if WINDOWS[t] > 1 else "") + f", {where}"
    fill = MATERIAL_COLOURS[m]
    with out.spot((x, y, TW, TH), title, ids):
        out.rect(x, y, TW, TH, fill, s.YELLOW if focus else s.EDGE, rx=3, stroke_width=3 if focus else 1)
        colour = s.ink(fill)
        out.text(x + 10, y + TH / 2 + 6, FLOOR[t], 17, colour, "middle", True)
        out.text(x + TW - 3, y + 10, "bsm"[m], 9, colour, "end")
        for w in range(WINDOWS[t]):
            out.rect(x + 21 + w * 9, y + TH - 13, 6, 8, "#37474F", colour, stroke_width=0.8)


def _tiles(out: s.Svg, tiles: list[int], x: float, y: float, width: float, where: str,
           ids: Callable[[int], list[int]], chosen: set[int] = frozenset()) -> None:
    """A row of tiles wrapping within ``width``; ``ids(t)`` the actions of tile t, ``chosen`` ones framed."""
    per_row = _per_row(width)
    for i, t in enumerate(tiles):
        _tile(out, t, x + (i % per_row) * (TW + 6), y + (i // per_row) * (TH + 6), where, ids(t),
              t in chosen)


def _money(out: s.Svg, counts: list[int], x: float, y: float, where: str, ids: Callable[[int], list[int]]) -> float:
    """Money cards, one per kind with ×n for more than one; returns the x after them."""
    for k in range(NUM_KINDS):
        if counts[k]:
            title = f"{kind_name(k)} {where}" + (f", {counts[k]} cards" if counts[k] > 1 else "")
            _card(out, k, x, y, title, ids(k), counts[k])
            x += CW + 4
    return x


def _card(out: s.Svg, k: int, x: float, y: float, title: str, ids: list[int], count: int = 1) -> None:
    fill = CURRENCY_COLOURS[3 if k == Z else k // 5]
    out.card(x, y, CW, CH, fill, "Z" if k == Z else str(VALUE[k]), title, ids, "" if k == Z else "ABC"[k // 5],
             size=16, label_y=26 if count > 1 else None)
    if count > 1:
        out.text(x + CW - 3, y + CH - 4, f"×{count}", 10, s.ink(fill), "end", True)


def _removed(out: s.Svg, state: State, viewer: int | None, x: float, y: float, ids: list[int]) -> None:
    """The tiles out of the game; their ids only if public (P68) or for the whole table."""
    removed = state.removed
    w, h = 260, CH + 2 * LINE + 12
    with out.spot((x, y, w, h), "tiles out of the game" + (": discard the tile here" if ids else ""), ids):
        out.rect(x, y, w, h, s.PANEL, s.MUTED, rx=6, stroke_dasharray="4 3")
        out.text(x + GAP, y + 16, f"out of the game: {s.count(len(removed), 'tile')}", 12, s.INK, bold=True)
        if removed_shown(state, viewer):
            names = [tile_name(t) for t in sorted(removed)]
            for row in range(2):  # what two lines of the box hold; the rest is "…"
                line = names[row * REMOVED_PER_LINE:(row + 1) * REMOVED_PER_LINE]
                more = row == 1 and len(names) > 2 * REMOVED_PER_LINE
                if line:
                    out.text(x + GAP, y + 34 + 16 * row, " ".join(line) + (" …" if more else ""), 12, s.MUTED)


def _panel(out: s.Svg, state: State, p: int, viewer: int | None, you: bool, actions: frozenset[int],
           y0: float) -> None:
    """Seat p: score, hand, bid and palaces."""
    acting = p == state.current_player
    d = state.decision
    out.rect(MARGIN, y0, WIDTH - 2 * MARGIN, PANEL_H, s.PANEL, s.HIGHLIGHT if acting else s.PANEL, rx=6,
             stroke_width=2.5 if acting else 1)
    palaces = state.palaces[p]
    who = f"{'▶ ' if acting else ''}Player {p}" + (" (you)" if you and p == viewer else "")
    out.text(MARGIN + GAP, y0 + 20, who, 14, s.YELLOW if acting else s.INK, bold=True)
    out.text(MARGIN + 140, y0 + 20, f"{s.count(state.score(p), 'point')} · {s.count(len(palaces), 'palace')}",
             13, s.INK)
    # palaces: a column per slot, tiles at their floors
    base = y0 + 36 + 4 * TH  # floor 1's top
    for f in range(5):
        out.text(MARGIN + GAP + 6, base - f * TH + TH / 2 + 4, f + 1, 11, s.MUTED, "middle")
    new_place = DEST_NEW in actions and d in (PLACE, RECON_DEST)
    slots = len(palaces) + new_place
    step = min(TW + 10, (PALACES_W - 30) / max(slots, 1))
    width = min(TW, step - 4)
    for i, palace in enumerate(palaces):
        x = MARGIN + 30 + i * step
        ids = s.among(actions, DEST + i)
        with out.spot((x, base - 4 * TH, width, 5 * TH), f"player {p}'s palace {i}: "
                      + " ".join(tile_name(t) for t in palace) + f", scores {palace_score(palace)}", ids):
            out.rect(x, base - 4 * TH, width, 5 * TH, "none", "none")  # the palace's whole column is the spot
            for t in palace:
                tile_ids = s.among(actions, TILE + t)
                focus = t == state.recon_tile
                if width < TW:
                    out.rect(x, base - (FLOOR[t] - 1) * TH, width, TH, MATERIAL_COLOURS[MATERIAL[t]], s.EDGE)
                else:
                    _tile(out, t, x, base - (FLOOR[t] - 1) * TH, f"player {p}'s palace {i}", tile_ids, focus)
        out.text(x + width / 2, base + TH + 14, f"{i}: {palace_score(palace):+d}", 11, s.MUTED, "middle")
    if new_place:
        x = MARGIN + 30 + len(palaces) * step
        with out.spot((x, base - 4 * TH, width, 5 * TH), "a new palace", [DEST_NEW]):
            out.outline(x, base - 4 * TH, width, 5 * TH, s.MUTED, "new", 10)
    # hand and bid
    x0 = MARGIN + PALACES_W + 20
    shown, hidden = hand(state, p, viewer)
    size = s.count(sum(shown) + hidden, "card")
    paying = acting and d in (PAY, BID, RECON_PAY)
    if viewer is None or viewer == p:
        out.text(x0, y0 + 20, f"hand: {size}, largest payment {best_pay(shown)}", 12, s.MUTED)
        _money(out, shown, x0, y0 + 28, f"in player {p}'s hand", lambda k: _hand_ids(k, actions) if paying else [])
    else:
        out.text(x0, y0 + 20, f"hand: {size}, {sum(shown)} seen by all", 12, s.MUTED)
        x = _money(out, shown, x0, y0 + 28, f"in player {p}'s hand (seen by all)", lambda k: [])
        if hidden:
            out.back(x, y0 + 28, CW, CH, str(hidden), f"{s.count(hidden, 'card')} you have not seen")
    if state.in_auction:
        y = y0 + 28 + CH + 22
        if state.passed[p]:
            out.text(x0, y, "passed", 12, s.MUTED)
        elif state.bid_value[p] == 0:
            out.text(x0, y, "no bid yet", 12, s.MUTED)
        else:
            x3 = " with X3" if p == state.active and state.x3_out else ""
            out.text(x0, y, f"bid {state.bid_value[p]}{x3}" + (" · high bid" if p == state.leader else ""), 12,
                     s.INK, bold=p == state.leader)
            _money(out, state.bids[p], x0 + 120, y - 16, f"in player {p}'s bid", lambda k: [])


def _hand_ids(k: int, actions: frozenset[int]) -> list[int]:
    """A hand card pays alone (CARD) or in its group of three (ADD_GROUP)."""
    group = GROUP_Z if k == Z else GROUP + k % 5
    return s.among(actions, CARD + k, group)


def _auction_quarry(state: State) -> int:
    """P40: the next quarry with tiles after the master builder's, or -1."""
    for step in range(1, NUM_QUARRIES):
        q = (state.mb + step) % NUM_QUARRIES
        if state.quarries[q]:
            return q
    return -1


def legend() -> list[tuple[s.Swatch, str]]:
    """What the picture's colours, letters and numbers mean."""
    return [*((MATERIAL_COLOURS[m], f"{MATERIALS[m][0]} {MATERIALS[m]}") for m in range(3)),
            (None, "tile: floor 1–5, ▪ = a window"),
            *((CURRENCY_COLOURS[c], f"{'ABC'[c]} currency {'ABC'[c]}") for c in range(3)),
            (CURRENCY_COLOURS[3], "Z certificate (2)"), (None, "3–7 card value, ×n cards"),
            (None, "[Av Bv Cv] or [Z Z Z] pays 15"), (s.CARD_BACK, "stack, deck or unseen cards (count)"),
            (s.YELLOW, "X3 opening bid; master builder; tile to place"),
            (None, "palace column: floors 1–5 from the bottom; slot: score under it"),
            (None, "▶ player to act"), (("none", s.HIGHLIGHT), "legal move: click it")]
