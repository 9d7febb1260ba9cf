"""The Torres table as SVG (``State.render_svg``), drawn with ``envs/core/svg.py``.

The board: each square's height (ground is tan, castle stone darker as it rises) and castle letter, thick walls
where a castle ends, the king's castle walled in orange dashes, knights as discs in their seat's colour with its
letter, the king as a black disc "K", the selected knight or square dashed. Beside it: the phase, round and
the decision, then a box per seat (the viewer's first): score, knights in supply, knights per castle level, the
block stacks and the turn's stack, the action cards (another seat's hand and deck as backs with counts, T67),
the cards looked at; then the common deck, the block supply and the master card. A legend says what the marks
mean.

Clickable legal moves (``data-actions``), for the seat to act seen by itself or by the whole table:

- MOVE_FROM, ADD_KNIGHT, PLACE_BLOCK and SELECT of a square (``0–255``): that square;
- STACK(k) (``256–259``): the seat's stack k; STACK_CURRENT (``260``): its turn's stack;
- ACQUIRE (``261``): the deck the card comes from (the common deck, or the seat's own);
- PLAY_CARD(x) (``262–271``): card x in the seat's hand; KEEP(x), RETURN_TOP(x) and RETURN_BOTTOM(x)
  (``272–301``): card x among the cards looked at.

SCORE_STEP (``302``), END_TURN (``303``) and PASS (``304``) have no spot: the app lists them in words.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import svg as s
from ..core.game import TERMINAL
from .actions import (
    ACQUIRE,
    ADD_KNIGHT,
    KEEP,
    MOVE_FROM,
    PLACE_BLOCK,
    PLAY_CARD,
    RETURN_BOTTOM,
    RETURN_TOP,
    SELECT,
    STACK,
    STACK_CURRENT,
)
from .board import EMPTY, KING, SIZE, square_name
from .cards import CARD_NAMES
from .render import SEAT_LETTERS, SEAT_NAMES, details, heading, master_text, status

if TYPE_CHECKING:
    from collections.abc import Iterable

    from .game import State

SEAT_COLOURS = (s.VERMILLION, s.BLUE, s.GREEN, s.YELLOW)  # red, blue, green, yellow
GROUND, WALL, KING_WALL = "#D8C7A0", "#1B1B1B", s.ORANGE
CELL, MARGIN, GAP, LINE = 64, 16, 8, 18
BOARD = SIZE * CELL
X_PANEL = MARGIN + 20 + BOARD + 24
PANEL_W = 460
WIDTH = X_PANEL + PANEL_W + MARGIN
PILL_H = 22  # an action card
SHORT_NAMES = ("jump up two", "block under knight", "extra block", "door climb", "diagonal", "AP 6", "AP 7",
               "move block", "relocate", "jump over")  # CARD_NAMES, shorter where long


def svg(state: State, viewer: int | None = None, legal: Iterable[int] | None = None, you: bool = True) -> str:
    """The table as ``viewer`` may see it (None: everything), ``legal`` actions clickable (see the module doc)."""
    actions = s.clickable(state, viewer, legal)
    key = legend(state.game.num_players)
    out = s.Svg(WIDTH, 0, f"Torres: {status(state)}")
    _board(out, state, actions)
    y_legend = max(MARGIN + 20 + BOARD + 16, _side(out, state, viewer, you, actions)) + 8
    out.height = y_legend + s.legend_height(key, WIDTH - 2 * MARGIN)
    out.line(0, y_legend - 8, WIDTH, y_legend - 8, s.MUTED)
    out.legend(MARGIN, y_legend, WIDTH - 2 * MARGIN, key)
    return str(out)


def stone(height: int) -> str:
    """Castle squares: light grey stone, darker with each level."""
    v = max(0xE6 - 0x16 * (height - 1), 0x50)
    return f"#{v:02X}{v:02X}{max(v - 8, 0):02X}"


def _board(out: s.Svg, state: State, actions: frozenset[int]) -> None:
    b = state.board
    x0, y0 = MARGIN + 20, MARGIN + 20
    for i in range(SIZE):
        out.text(x0 + i * CELL + CELL / 2, y0 - 6, i, 12, s.MUTED, "middle")
        out.text(x0 - 8, y0 + i * CELL + CELL / 2 + 4, i, 12, s.MUTED, "middle")
    home = b.cid[state.king] if state.king >= 0 else -2
    for sq in range(SIZE * SIZE):
        r, c = divmod(sq, SIZE)
        x, y = x0 + c * CELL, y0 + r * CELL
        h, castle, occ = b.h[sq], b.cid[sq], b.occ[sq]
        ids = s.among(actions, MOVE_FROM + sq, ADD_KNIGHT + sq, PLACE_BLOCK + sq, SELECT + sq)
        what = f"castle {chr(ord('a') + castle)}, height {h}" if h else "ground"
        if occ == KING:
            what += ", the king"
        elif occ != EMPTY:
            what += f", a {SEAT_NAMES[occ]} knight"
        with out.spot((x + 6, y + 6, CELL - 12, CELL - 12), f"square {square_name(sq)}: {what}", ids):
            out.rect(x, y, CELL, CELL, stone(h) if h else GROUND, "#9C8B6E")
            if h:
                out.text(x + 5, y + 19, h, 18, s.ink(stone(h)), bold=True)
                out.text(x + CELL - 5, y + 14, chr(ord("a") + castle), 12, s.ink(stone(h)), "end")
            if occ == KING:
                out.tag("circle", cx=x + CELL / 2 + 4, cy=y + CELL / 2 + 6, r=17, fill=s.BLACK, stroke=s.INK,
                        stroke_width=2)
                out.text(x + CELL / 2 + 4, y + CELL / 2 + 12, "K", 17, s.INK, "middle", True)
            elif occ != EMPTY:
                out.tag("circle", cx=x + CELL / 2 + 4, cy=y + CELL / 2 + 6, r=17, fill=SEAT_COLOURS[occ],
                        stroke=s.INK, stroke_width=2)
                out.text(x + CELL / 2 + 4, y + CELL / 2 + 12, SEAT_LETTERS[occ], 17, s.ink(SEAT_COLOURS[occ]),
                         "middle", True)
    cid = b.cid
    for sq in range(SIZE * SIZE):  # walls where a castle ends (T2); the king's castle's in orange (T52)
        if cid[sq] < 0:
            continue
        r, c = divmod(sq, SIZE)
        x, y = x0 + c * CELL, y0 + r * CELL
        colour, dash = (KING_WALL, {"stroke_dasharray": "8 4"}) if cid[sq] == home else (WALL, {})
        for edge, (x1, y1, x2, y2) in (
                (r == 0 or cid[sq - 8] != cid[sq], (x, y, x + CELL, y)),
                (r == SIZE - 1 or cid[sq + 8] != cid[sq], (x, y + CELL, x + CELL, y + CELL)),
                (c == 0 or cid[sq - 1] != cid[sq], (x, y, x, y + CELL)),
                (c == SIZE - 1 or cid[sq + 1] != cid[sq], (x + CELL, y, x + CELL, y + CELL))):
            if edge:
                out.line(x1, y1, x2, y2, colour, 5, stroke_linecap="square", **dash)
    if state.selected >= 0:
        r, c = divmod(state.selected, SIZE)
        out.rect(x0 + c * CELL + 4, y0 + r * CELL + 4, CELL - 8, CELL - 8, "none", s.BLACK, stroke_width=3,
                 stroke_dasharray="6 4")


def _side(out: s.Svg, state: State, viewer: int | None, you: bool, actions: frozenset[int]) -> float:
    """The status, a box per seat, the supply, the common deck and the master card; returns the bottom."""
    g = state.game
    n = g.num_players
    x, y = X_PANEL, MARGIN + 14
    out.text(x, y, heading(state), 16, bold=True)
    out.text(x, y + LINE + 2, status(state), 14, s.INK if state.current_player == TERMINAL else s.YELLOW)
    out.text(x, y + 2 * LINE + 4, " · ".join(details(state)), 12, s.MUTED)
    y += 2 * LINE + 20
    for p in s.seat_order(viewer, n):
        y += _seat(out, state, p, viewer, you, actions if p == state.current_player else frozenset(), y) + GAP
    y += 6
    out.text(x, y + 12, f"block supply: {state.supply}", 13, s.INK)
    if g.common:
        deck = state.decks[0]
        ids = s.among(actions, ACQUIRE)
        out.back(x + 180, y - 4, 44, 56, str(len(deck)), f"action card deck: {s.count(len(deck), 'card')}", ids)
        out.text(x + 232, y + 12, "action card deck", 12, s.MUTED)
    if master := master_text(state):
        out.text(x, y + 36, master, 12, s.INK)
    return y + 60


Item = tuple[bool, str, str, list[int]]
"""A thing in a seat's rows of cards: face up (a card) or not (a back), its label, its name, its actions."""


def _seat(out: s.Svg, state: State, p: int, viewer: int | None, you: bool, actions: frozenset[int],
          y: float) -> float:
    """Seat p's box: score, knights, stacks, cards, the cards it looks at; returns the box's height."""
    g = state.game
    x = X_PANEL
    acting = p == state.current_player
    seen = viewer is None or viewer == p
    hand, fresh, played = state.hands[p], state.fresh[p], state.played[p]
    cards: list[Item] = []
    if seen:
        for t in range(len(CARD_NAMES)):
            if hand[t]:
                ids = s.among(actions, PLAY_CARD + t)
                new = f", {fresh[t]} bought this turn (not playable yet)" if fresh[t] else ""
                label = SHORT_NAMES[t] + (f" ×{hand[t]}" if hand[t] > 1 else "") + (" (new)" if fresh[t] else "")
                cards.append((True, label, f"player {p}'s card {CARD_NAMES[t]}{new}", ids))
    elif any(hand):
        cards.append((False, s.count(sum(hand), 'card'), f"player {p}'s hand: {s.count(sum(hand), 'card')}", []))
    if g.personal:
        deck = len(state.decks[p])
        cards.append((False, f"deck {deck}", f"player {p}'s deck: {s.count(deck, 'card')}", s.among(actions, ACQUIRE)))
    looked: list[Item] = []
    if acting and state.looked:  # T32: the cards looked at, to keep one, then to put the others back
        if seen:
            looked = [(True, SHORT_NAMES[t], f"looking at {CARD_NAMES[t]}",
                       s.among(actions, KEEP + t, RETURN_TOP + t, RETURN_BOTTOM + t)) for t in state.looked]
        else:
            n = s.count(len(state.looked), "card")
            looked = [(False, n, f"player {p} looks at {n}", [])]
    left, right = x + 56, x + PANEL_W - 16
    card_rows, look_rows = _flow(cards, left, right), _flow(looked, left, right)
    rows = (max(r for _, r, _ in card_rows) + 1 if card_rows else 1) + (look_rows[-1][1] + 1 if look_rows else 0)
    height = 88 + 28 * rows + (16 if any(played) else 0)

    out.rect(x - 6, y, PANEL_W, height, s.PANEL, s.HIGHLIGHT if acting else s.PANEL, rx=6,
             stroke_width=2.5 if acting else 1)
    colour = SEAT_COLOURS[p]
    out.tag("circle", cx=x + 10, cy=y + 17, r=10, fill=colour, stroke=s.INK)
    out.text(x + 10, y + 22, SEAT_LETTERS[p], 12, s.ink(colour), "middle", True)
    who = f"{'▶ ' if acting else ''}{SEAT_NAMES[p].capitalize()} (player {p})"
    who += " · you" if you and p == viewer else ""
    out.text(x + 28, y + 22, who, 14, s.YELLOW if acting else s.INK, bold=True)
    out.text(x + PANEL_W - 16, y + 22, s.count(state.score[p], "point"), 14, s.INK, "end",
             True)
    out.text(x, y + 42, f"knights in supply {state.in_supply[p]} · on the board: {_levels(state, p)}", 12, s.MUTED)
    out.text(x, y + 68, "stacks", 12, s.MUTED)
    bx = left
    for k, size in enumerate(state.stacks[p]):
        ids = s.among(actions, STACK + k)
        _stack(out, bx, y + 50, str(size), f"player {p}'s stack {k}: {s.count(size, 'block')}", ids)
        bx += 36
    if not state.stacks[p]:
        out.text(bx, y + 68, "none", 12, s.MUTED)
        bx += 36
    if acting and state.turn_stack >= 0:
        ids = s.among(actions, STACK_CURRENT)
        out.text(bx + 10, y + 68, "this turn", 12, s.MUTED)
        _stack(out, bx + 70, y + 50, str(state.turn_stack),
               f"the turn's stack: {s.count(state.turn_stack, 'block')}", ids)
    cy = y + 84
    out.text(x, cy + 15, "cards", 12, s.MUTED)
    if not cards:
        out.text(left, cy + 15, "none", 12, s.MUTED)
    for dx, row, item in card_rows:
        _item(out, dx, cy + 28 * row, item)
    cy += 28 * (rows - (look_rows[-1][1] + 1 if look_rows else 0))
    if looked:
        out.text(x, cy + 15, "looking", 12, s.YELLOW)
        for dx, row, item in look_rows:
            _item(out, dx, cy + 28 * row, item)
    if any(played):
        out.text(x, y + height - 8, "played: " + ", ".join(
            SHORT_NAMES[t] + (f" ×{played[t]}" if played[t] > 1 else "") for t in range(len(CARD_NAMES)) if played[t]),
            11, s.MUTED)
    return height


def _flow(items: list[Item], left: float, right: float) -> list[tuple[float, int, Item]]:
    """Where each item goes: (x, row), rows filled left to right within [left, right]."""
    out, x, row = [], left, 0
    for item in items:
        w = _width(item)
        if x > left and x + w > right:
            x, row = left, row + 1
        out.append((x, row, item))
        x += w + 6
    return out


def _width(item: Item) -> float:
    return s.text_width(item[1], 11) + 14


def _item(out: s.Svg, x: float, y: float, item: Item) -> None:
    """An action card as a labelled pill, or a back with its count."""
    face_up, label, title, ids = item
    w = _width(item)
    if not face_up:
        out.back(x, y, w, PILL_H, label, title, ids)
        return
    with out.spot((x, y, w, PILL_H), title, ids):
        out.rect(x, y, w, PILL_H, "#ECEFF1", s.EDGE, rx=11)
        out.text(x + w / 2, y + 15, label, 11, s.BLACK, "middle")


def _stack(out: s.Svg, x: float, y: float, label: str, title: str, ids: list[int]) -> None:
    """A stack of blocks: a stone block with its size on it."""
    with out.spot((x, y, 28, 24), title, ids):
        out.rect(x, y + 4, 28, 20, stone(2), s.EDGE, rx=2)
        out.rect(x + 3, y, 22, 6, stone(1), s.EDGE, rx=1)
        out.text(x + 14, y + 20, label, 12, s.BLACK, "middle", True)


def _levels(state: State, p: int) -> str:
    b = state.board
    on = " ".join(f"{chr(ord('a') + b.cid[sq])}{b.h[sq]}" for sq in state.knights[p] if b.cid[sq] >= 0)
    ground = sum(b.cid[sq] < 0 for sq in state.knights[p])
    parts = ([on] if on else []) + ([f"{ground} on the ground"] if ground else [])
    return ", ".join(parts) or "none"


def legend(num_players: int) -> list[tuple[s.Swatch, str]]:
    """What the picture's colours, letters and numbers mean."""
    return [*((SEAT_COLOURS[p], f"{SEAT_LETTERS[p]} {SEAT_NAMES[p]} knight") for p in range(num_players)),
            (s.BLACK, "K the king"), (GROUND, "ground"), (stone(1), "castle: darker = higher"),
            (None, "big number: height; small letter: castle"), (WALL, "thick line: castle wall"),
            (KING_WALL, "orange dashes: the king's castle"), (None, "dashed square: selected"),
            (None, "a2: a knight on castle a at level 2"), (stone(2), "stack: its blocks"),
            (s.CARD_BACK, "deck or unseen cards (count)"), (None, "▶ player to act"),
            (("none", s.HIGHLIGHT), "legal move: click it")]
