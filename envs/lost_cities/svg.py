"""The Lost Cities table as SVG (``State.render_svg``), drawn with ``envs/core/svg.py``.

The viewer's seat sits at the bottom (seat 0 for the whole table, ``viewer=None``); from the top: the status, the
other seat's hand (as backs, apart from the cards it took from the discard piles, when the viewer may not see
it), its expeditions growing towards it, the discard piles with the draw pile, the viewer's expeditions and hand.
Each expedition shows every card's value on the strip left visible and what it scores now; a legend names the
colours and says what the marks mean. Every card carries its colour's letter as well as its colour.

Clickable legal moves (``data-actions``), for the seat to act seen by itself or by the whole table:

- card step: a card in its hand holds PLAY (``k``, when it fits) and DISCARD (``K + k``) of its kind;
- draw step: the draw pile holds DRAW_DECK (``2K``), each discard pile its DRAW_PILE (``2K + 1 + c``).

Every action has its spot.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import svg as s
from ..core.game import TERMINAL
from .cards import COLOUR_NAMES, HAND_SIZE, kind_value
from .game import expedition_score
from .render import card_label, hand, heading, status

if TYPE_CHECKING:
    from collections.abc import Iterable

    from .game import State

COLOURS = (s.YELLOW, s.BLUE, "#F2F2F2", s.GREEN, s.VERMILLION, s.PURPLE)
LETTERS = "YBWGRP"
CW, CH, GAP, STRIP = 50, 70, 8, 16  # card, gap, the strip of an expedition card left visible under the next
COL = CW + 18  # one expedition column (and its discard pile) per colour
MARGIN, LINE = 16, 20
ROOM = 6  # expedition cards a column has room for before it grows (12 at most, L3): no empty bands early on
HAND_W = HAND_SIZE * (CW + GAP)


def svg(state: State, viewer: int | None = None, legal: Iterable[int] | None = None, you: bool = True) -> str:
    """The table as ``viewer`` may see it (None: everything), ``legal`` actions clickable (see the module doc)."""
    actions = s.clickable(state, viewer, legal)
    g = state.game
    C, K = g.n_colours, g.num_kinds
    width = 2 * MARGIN + max(HAND_W, (C + 1) * COL, 560)
    key = legend(C)
    longest = max(len(cards) for seat in state.expeditions for cards in seat)
    column_h = CH + (max(longest, ROOM) - 1) * STRIP
    y_top_label = MARGIN + 3 * LINE + 4
    y_top_hand = y_top_label + 8
    y_top_cols = y_top_hand + CH + 14
    y_piles = y_top_cols + column_h + LINE + 4
    y_bottom_cols = y_piles + CH + 2 * LINE + 4
    y_bottom_hand = y_bottom_cols + column_h + 14
    y_legend = y_bottom_hand + CH + LINE + 16
    height = y_legend + s.legend_height(key, width - 2 * MARGIN)
    out = s.Svg(width, height, f"Lost Cities: {status(state)}")
    bottom, top = s.seat_order(viewer, 2)
    acting = state.current_player
    scores = state.provisional_scores()

    out.text(MARGIN, MARGIN + 12, heading(state), 15, bold=True)
    out.text(MARGIN, MARGIN + 12 + LINE, status(state), 14, s.INK if acting == TERMINAL else s.YELLOW)

    def seat_label(p: int, y: float) -> None:
        mark = "▶ " if p == acting else ""
        who = f"Player {p}" + (" (you)" if you and p == viewer else "")
        out.text(MARGIN, y, f"{mark}{who} · this round {scores[p]} · total {state.cumulative[p]}", 14,
                 s.YELLOW if p == acting else s.INK, bold=p == acting)

    def seat_hand(p: int, y: float) -> None:
        seen = viewer is None or viewer == p
        kinds, hidden = hand(state, p, viewer)  # of another seat's hand: the cards taken from the discard piles
        new = state.drawn[p] if seen else -1
        for i, k in enumerate(kinds):
            x = MARGIN + i * (CW + GAP)
            ids = s.among(actions, k, K + k) if p == acting else []  # the other hand may hold a wager of that kind
            mark = " (just drawn)" if k == new else "" if seen else " (seen: taken from a discard pile)"
            out.card(x, y, CW, CH, COLOURS[k // 10], card_label(k), f"{state.card_to_string(k)}{mark}", ids,
                     LETTERS[k // 10])
            if k == new or not seen:
                out.text(x + CW / 2, y + CH - 5, "new" if seen else "seen", 10, s.ink(COLOURS[k // 10]), "middle")
                new = -1
        for i in range(len(kinds), len(kinds) + hidden):
            out.back(MARGIN + i * (CW + GAP), y, CW, CH, "?", "a card you have not seen")

    def expeditions(p: int, y: float, down: bool) -> None:
        """The bottom seat's columns hang down from y, the top seat's stand up towards it from y + column_h."""
        for c in range(C):
            x = MARGIN + c * COL
            cards = state.expeditions[p][c]
            first = y if down else y + column_h - CH
            if not cards:
                out.outline(x, first, CW, CH, COLOURS[c], "")
            for i, k in enumerate(cards):
                label_y = 15 if down else CH - 5
                out.card(x, first + (i if down else -i) * STRIP, CW, CH, COLOURS[c], card_label(k),
                         f"player {p}'s {COLOUR_NAMES[c]} expedition: {state.card_to_string(k)}", size=14,
                         label_y=label_y)
            wagers = sum(k % 10 == 0 for k in cards)
            score = expedition_score(len(cards), wagers, sum(kind_value(k) for k in cards))
            score_y = y - 6 if down else y + column_h + 16
            out.text(x + CW / 2, score_y, f"{score:+d}" if cards else "–", 13, s.MUTED, "middle")

    def piles(y: float) -> None:
        for c in range(C):
            x = MARGIN + c * COL
            pile = state.piles[c]
            ids = s.among(actions, 2 * K + 1 + c)
            name = COLOUR_NAMES[c]
            if pile:
                title = f"{name} discard pile, {s.count(len(pile), 'card')}, top {state.card_to_string(pile[-1])}"
                out.card(x, y, CW, CH, COLOURS[c], card_label(pile[-1]), title, ids, LETTERS[c])
            else:
                out.outline(x, y, CW, CH, COLOURS[c], "empty", 10)
            out.text(x + CW / 2, y + CH + 15, f"{name} {len(pile)}" if pile else name, 11, s.MUTED, "middle")
            if c == state.forbidden:  # L21: no draw from the pile just discarded to
                out.tag("circle", cx=x + CW, cy=y, r=10, fill=s.BLACK, stroke=s.INK)
                out.text(x + CW, y + 5, "✕", 13, s.INK, "middle", True)
        x = MARGIN + C * COL
        ids = s.among(actions, 2 * K)
        out.back(x, y, CW, CH, str(len(state.deck)), f"draw pile: {s.count(len(state.deck), 'card')}", ids)
        out.text(x + CW / 2, y + CH + 15, "draw pile", 11, s.MUTED, "middle")

    seat_label(top, y_top_label)
    seat_hand(top, y_top_hand)
    expeditions(top, y_top_cols, down=False)
    piles(y_piles)
    expeditions(bottom, y_bottom_cols + 8, down=True)
    seat_hand(bottom, y_bottom_hand)
    seat_label(bottom, y_bottom_hand + CH + LINE)
    out.line(0, y_legend - 8, width, y_legend - 8, s.MUTED)
    out.legend(MARGIN, y_legend, width - 2 * MARGIN, key)
    return str(out)


def legend(n_colours: int) -> list[tuple[s.Swatch, str]]:
    """What the picture's colours, letters and numbers mean."""
    return [*((COLOURS[c], f"{LETTERS[c]} {COLOUR_NAMES[c]}") for c in range(n_colours)),
            (None, "2–10 card value"), (None, "W wager (score ×2, ×3, ×4)"),
            (None, "+12 above or below a column: what it scores now"), (s.CARD_BACK, "card you have not seen"),
            (None, "seen: taken from a discard pile; new: just drawn"),
            (None, "discard pile: top card; name and count under it"),
            (None, "✕ on a pile: just discarded to, no draw from it"),
            (None, "▶ player to act"), (("none", s.HIGHLIGHT), "legal move: click it")]
