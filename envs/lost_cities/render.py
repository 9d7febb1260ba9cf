"""Text and picture renderings of a Lost Cities table."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from envs.core.canvas import Canvas
from envs.core.game import TERMINAL

from .game import COLOUR_NAMES, HAND_SIZE, kind_value

if TYPE_CHECKING:
    from .game import State

COLOURS_RGB = ((236, 200, 40), (60, 110, 220), (235, 235, 235), (60, 170, 80), (210, 50, 50), (150, 80, 190))


def _card(kind: int) -> str:
    v = kind_value(kind)
    return "W" if v == 0 else str(v)


def text_table(state: State, viewer: int | None) -> str:
    """The table as text; with a ``viewer`` the opponent's hand shows only the cards known from piles."""
    g = state.game
    C = g.n_colours
    lines = [f"Lost Cities — round {state.round}/{g.options['rounds']}"
             + (f" (extra {state.extra_rounds})" if state.extra_rounds else "")
             + f", turn {state.turn}, draw pile {len(state.deck)}, "
             f"totals {state.cumulative[0]} : {state.cumulative[1]}"]
    if state.current_player == TERMINAL:
        lines.append("truncated by the turn cap" if state.truncated else "game over")
    else:
        forbidden = f" (pile {COLOUR_NAMES[state.forbidden]} forbidden)" if state.forbidden >= 0 else ""
        lines.append(f"player {state.current_player} to act: {state.phase} step{forbidden}")
    width = max(len(n) for n in COLOUR_NAMES[:C])
    provisional = state.provisional_scores()
    for p in (0, 1):
        lines.append(f"player {p} expeditions (round score {provisional[p]}):")
        for c in range(C):
            cards = " ".join(_card(k) for k in state.expeditions[p][c]) or "-"
            lines.append(f"  {COLOUR_NAMES[c]:<{width}}  {cards}")
    lines.append("discard piles (bottom → top):")
    for c in range(C):
        lines.append(f"  {COLOUR_NAMES[c]:<{width}}  {' '.join(_card(k) for k in state.piles[c]) or '-'}")
    for p in (0, 1):
        if viewer is None or viewer == p:
            cards = [k for k in sorted(state.hands[p]) for _ in range(state.hands[p][k])]
            shown = ", ".join(state.card_to_string(k) for k in cards)
        else:
            known = [k for k, n in enumerate(state.known[p]) for _ in range(n)]
            hidden = sum(state.hands[p].values()) - len(known)
            shown = ", ".join([*(state.card_to_string(k) for k in known), *["?"] * hidden])
        lines.append(f"player {p} hand: {shown}")
    return "\n".join(lines)


CARD_W, CARD_H, GAP = 34, 46, 6


def picture(state: State) -> np.ndarray:
    """Both expeditions (player 1 on top, player 0 below), the discard piles between them, the draw
    pile and both hands, as an RGB image."""
    g = state.game
    C = g.n_colours
    col_w = CARD_W + 3 * GAP
    width = 2 * GAP + (C + 1) * col_w + 60
    step = 14  # vertical offset between overlapping cards of one column
    column_h = CARD_H + 11 * step
    height = 2 * column_h + 3 * CARD_H + 12 * GAP
    cv = Canvas(width, height)
    x0 = GAP + 60

    def hand_row(p: int, y: int) -> None:
        cv.text(GAP, y + CARD_H // 2 - 3, f"P{p}", scale=2)
        kinds = [k for k in sorted(state.hands[p]) for _ in range(state.hands[p][k])]
        for i, k in enumerate(kinds[:HAND_SIZE + 1]):
            cv.card(x0 + i * (CARD_W + GAP), y, CARD_W, CARD_H, COLOURS_RGB[k // 10], _card(k))

    def expedition(p: int, y: int, downward: bool) -> None:
        for c in range(C):
            x = x0 + c * col_w
            cards = state.expeditions[p][c]
            if not cards:
                cv.rect(x, y if downward else y + column_h - CARD_H, CARD_W, CARD_H, None,
                        border=COLOURS_RGB[c])
            for i, k in enumerate(cards):
                yy = y + i * step if downward else y + column_h - CARD_H - i * step
                cv.card(x, yy, CARD_W, CARD_H, COLOURS_RGB[c], _card(k), scale=1)

    y = GAP
    hand_row(1, y)
    y += CARD_H + 2 * GAP
    expedition(1, y, downward=False)
    y += column_h + GAP
    for c in range(C):  # discard piles: top card shown, pile size underneath
        x = x0 + c * col_w
        pile = state.piles[c]
        if pile:
            cv.card(x, y, CARD_W, CARD_H, COLOURS_RGB[c], _card(pile[-1]))
        else:
            cv.rect(x, y, CARD_W, CARD_H, (40, 70, 50), border=COLOURS_RGB[c], border_width=2)
        cv.text(x + CARD_W + 3, y + CARD_H - 7, str(len(pile)))
    x = x0 + C * col_w
    cv.card(x, y, CARD_W, CARD_H, (110, 70, 40), str(len(state.deck)))
    cv.text(GAP, y + 4, f"R{state.round}", scale=2)
    cv.text(GAP, y + 24, f"{state.cumulative[1]}", scale=1)
    cv.text(GAP, y + 34, f"{state.cumulative[0]}", scale=1)
    y += CARD_H + GAP
    expedition(0, y, downward=True)
    y += column_h + 2 * GAP
    hand_row(0, y)
    if state.current_player != TERMINAL:  # a marker next to the hand of the player to act
        marker_y = GAP if state.current_player == 1 else y
        cv.rect(2, marker_y, 4, CARD_H, (255, 255, 255))
    return cv.image()
