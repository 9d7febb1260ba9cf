"""The Five Towers table as SVG (``State.render_svg``), drawn with ``envs/core/svg.py``.

At the top the status (round, pass, who does what, the high bid H and the display size k), the display's five
slots (a taken card marked "taken", a placed one dimmed and marked "placed"), the draw pile and the discard pile;
then a panel per seat (the viewer's first): score, bid, five towers bottom card first with the top card whole,
blocked types crossed out, and the rubble with what it costs. Everything is public but the draw pile's order
(F30), whose next five cards only the whole table's view (``viewer=None``) shows. Every card carries its type's
first letters as well as its colour; a legend says what the marks mean.

Clickable legal moves (``data-actions``), for the seat to act seen by itself or by the whole table:

- TEAR DOWN type t (``7 + t``): the top card of that seat's tower t;
- TAKE slot s (``12 + s``) and PLACE the card of slot s (``17 + s``): the card in display slot s; PLACE also the
  tower the card goes onto (its top card, or its empty place), so that the tower is marked too.

PASS, the bids (``0–5``) and TEAR DOWN none (``6``) have no spot: the app lists them in words.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import svg as s
from ..core.game import TERMINAL
from .actions import PLACE, PLACING, TAKE, TEAR, TEARDOWN
from .cards import NUM_SLOTS, NUM_TYPES, TYPE_NAMES
from .game import EMPTY, PLACED
from .render import SLOT_NOTES, bid_text, heading, next_cards, status

if TYPE_CHECKING:
    from collections.abc import Iterable

    from .game import State

COLOURS = (s.PURPLE, s.BLUE, s.GREEN, "#9E9E9E", s.YELLOW)  # candy, scary, tree, scrap, sand
MARKS = tuple(name[:3] for name in TYPE_NAMES)
DW, DH = 56, 78  # a display card
TW, TH, STRIP, SHOWN = 44, 58, 16, 12  # a tower card, the strip of a lower card left visible, most cards drawn
ROOM = 6  # tower cards a panel has room for before it grows (to SHOWN): no empty bands early on
RW, RH = 26, 34  # a rubble card
MARGIN, GAP, LINE = 16, 10, 20
PANEL_W = NUM_TYPES * (TW + GAP) + GAP


def tower_height(state: State) -> float:
    """Room for the tallest tower on the table (ROOM cards at least, SHOWN at most)."""
    tallest = max(len(tower) for seat in state.towers for tower in seat)
    return TH + (min(max(tallest, ROOM), SHOWN) - 1) * STRIP


def panel_height(tower_h: float) -> float:
    return 2 * LINE + 14 + tower_h + 22 + RH + 18


def svg(state: State, viewer: int | None = None, legal: Iterable[int] | None = None, you: bool = True) -> str:
    """The table as ``viewer`` may see it (None: everything), ``legal`` actions clickable (see the module doc)."""
    actions = s.clickable(state, viewer, legal)
    n = state.game.num_players
    per_row = n if n <= 3 else 2 if n == 4 else 3
    rows = -(-n // per_row)
    width = max(2 * MARGIN + per_row * (PANEL_W + GAP) - GAP,
                2 * MARGIN + (NUM_SLOTS + 2) * (DW + GAP) + 5 * GAP + 5 * (RW + 4))
    tower_h = tower_height(state)
    panel_h = panel_height(tower_h)
    y_panels = MARGIN + 2 * LINE + DH + 36
    y_legend = y_panels + rows * (panel_h + GAP) + 8
    key = legend()
    out = s.Svg(width, y_legend + s.legend_height(key, width - 2 * MARGIN), f"Five Towers: {status(state)}")
    acting = state.current_player

    out.text(MARGIN, MARGIN + 12, heading(state), 15, bold=True)
    out.text(MARGIN, MARGIN + 12 + LINE, status(state), 14, s.INK if acting == TERMINAL else s.YELLOW)
    y = MARGIN + 2 * LINE + 6
    for slot in range(NUM_SLOTS):
        x = MARGIN + slot * (DW + GAP)
        slot_status = state.status[slot]
        if slot_status == EMPTY:
            out.outline(x, y, DW, DH, s.MUTED, "empty")
        else:
            kind = state.display[slot]
            ids = s.among(actions, TAKE + slot, PLACE + slot)
            note = SLOT_NOTES.get(slot_status, "")
            title = f"display slot {slot}: {state.card_to_string(kind)}" + (f", {note}" if note else "")
            out.card(x, y, DW, DH, COLOURS[kind >> 4], str(kind & 15), title, ids, MARKS[kind >> 4],
                     dim=slot_status == PLACED)
            if note:
                out.text(x + DW / 2, y + DH - 6, note, 11, s.ink(COLOURS[kind >> 4]), "middle", True)
        out.text(x + DW / 2, y + DH + 15, f"slot {slot}", 11, s.MUTED, "middle")
    x = MARGIN + NUM_SLOTS * (DW + GAP) + 2 * GAP
    out.back(x, y, DW, DH, str(len(state.draw)), f"draw pile: {s.count(len(state.draw), 'card')}")
    out.text(x + DW / 2, y + DH + 15, "draw pile", 11, s.MUTED, "middle")
    x += DW + GAP
    discarded = sum(state.discard)
    out.rect(x, y, DW, DH, "#555555", s.EDGE, rx=4)
    out.text(x + DW / 2, y + DH / 2 + 6, discarded, 17, s.INK, "middle", True)
    out.text(x + DW / 2, y + DH + 15, "discard", 11, s.MUTED, "middle")
    if upcoming := next_cards(state, viewer):
        x += DW + 2 * GAP
        out.text(x, y + 12, "next cards, top first", 11, s.MUTED)
        for i, kind in enumerate(upcoming):
            out.card(x + i * (RW + 4), y + 20, RW, RH, COLOURS[kind >> 4], str(kind & 15),
                     f"draw pile, card {i + 1} from the top: {state.card_to_string(kind)}", size=13)

    for i, p in enumerate(s.seat_order(viewer, n)):
        _panel(out, state, p, viewer, you, actions, MARGIN + (i % per_row) * (PANEL_W + GAP),
               y_panels + (i // per_row) * (panel_h + GAP), tower_h)
    out.line(0, y_legend - 8, width, y_legend - 8, s.MUTED)
    out.legend(MARGIN, y_legend, width - 2 * MARGIN, key)
    return str(out)


def _panel(out: s.Svg, state: State, p: int, viewer: int | None, you: bool, actions: frozenset[int], x0: float,
           y0: float, tower_h: float) -> None:
    """Seat p: score and bid, the five towers (bottom card first), the rubble."""
    acting = p == state.current_player
    out.rect(x0, y0, PANEL_W, panel_height(tower_h), s.PANEL, s.HIGHLIGHT if acting else s.PANEL, rx=6,
             stroke_width=2.5 if acting else 1)
    who = f"{'▶ ' if acting else ''}Player {p}" + (" (you)" if you and p == viewer else "")
    out.text(x0 + GAP, y0 + LINE, who, 14, s.YELLOW if acting else s.INK, bold=True)
    out.text(x0 + PANEL_W - GAP, y0 + LINE, f"{state.score(p)} points", 14, s.INK, "end", True)
    out.text(x0 + GAP, y0 + 2 * LINE, bid_text(state, p), 12, s.MUTED)
    tearing = acting and state.phase_id == TEARDOWN
    placing = [PLACE + slot for slot in range(NUM_SLOTS) if acting and state.phase_id == PLACING
               and PLACE + slot in actions]
    base = y0 + 2 * LINE + 14 + tower_h - TH  # the bottom card's top
    for t in range(NUM_TYPES):
        x = x0 + GAP + t * (TW + GAP)
        tower = state.towers[p][t]
        name = TYPE_NAMES[t]
        out.text(x + TW / 2, base + TH + 16, name, 11, s.MUTED, "middle")
        onto = [a for a in placing if state.display[a - PLACE] >> 4 == t]  # the taken cards of this type
        if not tower:
            with out.spot((x, base, TW, TH), f"player {p}'s {name} tower, empty", onto):
                out.outline(x, base, TW, TH, COLOURS[t], "blocked" if state.blocked[p][t] else "", 10)
                if state.blocked[p][t]:
                    out.line(x + 4, base + 4, x + TW - 4, base + TH - 4, COLOURS[t], 2)
            continue
        shown = tower[-SHOWN:]
        for i, v in enumerate(shown):
            y = base - i * STRIP
            top = i == len(shown) - 1
            ids = (s.among(actions, TEAR + t) if tearing else onto) if top else []
            title = f"player {p}'s {name} tower, " + \
                (f"top card {v}, {s.count(len(tower), 'card')}" if top else f"card {v}")
            out.card(x, y, TW, TH, COLOURS[t], str(v), title, ids, MARKS[t] if top else "",
                     size=22 if top else 12, label_y=None if top else TH - 4)
        if len(tower) > SHOWN:
            out.text(x + TW / 2, base + TH - 4, f"+{len(tower) - SHOWN} below", 9, s.ink(COLOURS[t]), "middle")
    y = base + TH + 26
    rubble = state.rubble[p]
    cost = len(rubble) * (len(rubble) + 1) // 2
    out.text(x0 + GAP, y + RH / 2 + 5, f"rubble −{cost}" if rubble else "rubble: none", 12, s.MUTED)
    room = PANEL_W - 2 * GAP - 78 - RW  # a long row overlaps its cards, like a fanned hand, inside the panel
    step = min(RW + 4, room / max(1, len(rubble) - 1))
    for i, kind in enumerate(rubble):
        out.card(x0 + GAP + 78 + i * step, y, RW, RH, COLOURS[kind >> 4], str(kind & 15),
                 f"rubble: {state.card_to_string(kind)}", size=13)


def legend() -> list[tuple[s.Swatch, str]]:
    """What the picture's colours, letters and numbers mean."""
    return [*((COLOURS[t], f"{MARKS[t]} {TYPE_NAMES[t]}") for t in range(NUM_TYPES)),
            (None, "0–15 card value"), (None, "tower: bottom card first, top card whole"),
            (None, "taken / placed: by the bid winner this round"), (None, "H high bid, k cards shown"),
            (s.CARD_BACK, "draw pile (order hidden)"), (None, "rubble: −1, −2, −3, … per card at the end"),
            (None, "blocked: this type can never be built again"), (None, "▶ player to act"),
            (("none", s.HIGHLIGHT), "legal move: click it")]
