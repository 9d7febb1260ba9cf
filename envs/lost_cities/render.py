"""Text and picture renderings of a Lost Cities table."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..core.canvas import Canvas, LegendItem, legend_height
from ..core.game import TERMINAL
from .game import CARD_STEP, COLOUR_NAMES, HAND_SIZE, expedition_score, kind_value

if TYPE_CHECKING:
    from .game import State

COLOURS_RGB = ((236, 200, 40), (60, 110, 220), (235, 235, 235), (60, 170, 80), (210, 50, 50), (150, 80, 190))


def _card(kind: int) -> str:
    v = kind_value(kind)
    return "W" if v == 0 else str(v)


def text_table(state: State, viewer: int | None) -> str:
    """The table as text; with a ``viewer`` the opponent's hand shows only the cards known from piles. A hand
    the viewer sees marks the card its player took in the latest draw step "(new)"."""
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
            names = [state.card_to_string(k) for k in cards]
            if state.drawn[p] in cards:  # the card p took in its latest draw step
                names[cards.index(state.drawn[p])] += " (new)"
            shown = ", ".join(names)
        else:
            known = [k for k, n in enumerate(state.known[p]) for _ in range(n)]
            hidden = sum(state.hands[p].values()) - len(known)
            shown = ", ".join([*(state.card_to_string(k) for k in known), *["?"] * hidden])
        lines.append(f"player {p} hand: {shown}")
    return "\n".join(lines)


TEXT_LEGEND = """\
round r/R: round r of R (extra e: tie-break rounds added); turn: turns played this round (a turn is a card step,
  then a draw step)
draw pile: cards left to draw; the round ends when it is empty
totals a : b: the points of player 0 and player 1 in the rounds already over
expeditions: each player's cards laid out, per colour, in the order played; W = a wager (each one adds 1 to the
  multiplier of the expedition's score); - = none yet
round score: what the expeditions would score if the round ended now (a started expedition costs 20)
discard piles: per colour, bottom card first; "draw <colour>" takes the top card of that pile
(pile X forbidden): the card just discarded there cannot be drawn back in the same turn
hand: ? = a card you have not seen; an opponent's card shown by name was drawn from a discard pile;
  (new) = the card just drawn"""
"""What ``text_table``'s words and symbols mean (``State.text_legend``)."""


def describe_action(state: State, action: int, viewer: int | None) -> str:
    """A draw from a discard pile names the card it takes (the pile's top, public); the other names stand alone."""
    colour = action - state.game.draw_deck_action - 1
    if colour < 0:
        return state.action_to_string(action)
    return f"draw {state.card_to_string(state.piles[colour][-1])} from the {COLOUR_NAMES[colour]} discard pile"


CARD_W, CARD_H, GAP = 34, 46, 6
STRIP = 17  # visible height of a card covered by the next one in an expedition column
COL_W = CARD_W + 14  # one expedition column (and its discard pile) per colour
LINE = 12  # a line of scale-1 text
LABEL_H = 2 * 7  # a scale-2 card label
COLUMN_H = CARD_H + 11 * STRIP + LINE  # 12 cards at most (L3), then the column's score
WHITE, GOLD, GREY, RED = (255, 255, 255), (255, 215, 0), (170, 190, 170), (230, 40, 40)
DECK_RGB, EMPTY_RGB = (110, 70, 40), (40, 70, 50)
# Tops of the picture's horizontal sections (the same for every table), from the top down.
Y_STATUS = GAP
Y_P1_LABEL = Y_STATUS + LINE + GAP
Y_P1_HAND = Y_P1_LABEL + LINE
Y_P1_COLUMNS = Y_P1_HAND + CARD_H + 2 * GAP
Y_PILES = Y_P1_COLUMNS + COLUMN_H + GAP
Y_P0_COLUMNS = Y_PILES + CARD_H + LINE + GAP
Y_P0_HAND = Y_P0_COLUMNS + COLUMN_H + 2 * GAP
Y_P0_LABEL = Y_P0_HAND + CARD_H + GAP
HEIGHT = Y_P0_LABEL + LINE + GAP


def picture(state: State) -> np.ndarray:
    """The whole table as an RGB image (both hands face up), laid out like a real table.

    From the top: the status line (round, turn, who acts and in which step), player 1's label and
    hand, player 1's expeditions growing upwards, the discard piles (top card, card count) and the
    draw pile, player 0's expeditions growing downwards, player 0's hand and label.  Expedition cards
    overlap; each shows its value on the strip left visible (at its top edge for player 0, at its
    bottom edge for player 1, who sits across the table).  The player to act is drawn in gold.  A legend
    at the bottom names the colours and says what the marks and numbers mean.
    """
    g = state.game
    C = g.n_colours
    hand_w = HAND_SIZE * (CARD_W + GAP)  # a hand holds at most 8 cards (L15)
    width = 2 * GAP + max(hand_w, (C + 1) * COL_W)
    key = picture_legend(C)
    cv = Canvas(width, HEIGHT + legend_height(key, width - 2 * GAP) + GAP)
    acting = state.current_player
    provisional = state.provisional_scores()

    def player_label(p: int, y: int) -> None:
        colour = GOLD if p == acting else WHITE
        text = f"P{p}  THIS ROUND {provisional[p]}  TOTAL {state.cumulative[p]}"
        cv.text(GAP, y, ("> " if p == acting else "") + text, colour)

    def hand(p: int, y: int) -> None:
        kinds = [k for k in sorted(state.hands[p]) for _ in range(state.hands[p][k])]
        if p == acting:  # a gold frame around the hand of the player to act
            cv.rect(GAP - 3, y - 3, len(kinds) * (CARD_W + GAP) - GAP + 6, CARD_H + 6, None, GOLD, 2)
        for i, k in enumerate(kinds):
            cv.card(GAP + i * (CARD_W + GAP), y, CARD_W, CARD_H, COLOURS_RGB[k // 10], _card(k))

    def expeditions(p: int, y: int) -> None:
        """Player 0's columns hang down from y, player 1's stand up from y + COLUMN_H."""
        for c in range(C):
            x = GAP + c * COL_W
            cards = state.expeditions[p][c]
            if p == 0:
                first, step, label_dy, score_y = y, STRIP, 2, y + COLUMN_H - LINE + 3
            else:
                first, step = y + COLUMN_H - CARD_H, -STRIP
                label_dy, score_y = CARD_H - LABEL_H - 2, y + 2
            if not cards:
                cv.rect(x, first, CARD_W, CARD_H, None, border=COLOURS_RGB[c])
                continue
            for i, k in enumerate(cards):
                label = _card(k)
                yy = first + i * step
                cv.card(x, yy, CARD_W, CARD_H, COLOURS_RGB[c], "")
                cv.text(x + (CARD_W - cv.text_width(label, 2)) // 2, yy + label_dy, label, (0, 0, 0), 2)
            wagers = sum(k % 10 == 0 for k in cards)
            score = expedition_score(len(cards), wagers, sum(kind_value(k) for k in cards))
            cv.text(x + (CARD_W - cv.text_width(str(score))) // 2, score_y, str(score), GREY)

    def piles(y: int) -> None:
        """Discard piles: the top card and the number of cards; the draw pile with its size."""
        for c in range(C):
            x = GAP + c * COL_W
            pile = state.piles[c]
            if pile:
                cv.card(x, y, CARD_W, CARD_H, COLOURS_RGB[c], _card(pile[-1]))
                cv.text(x, y + CARD_H + 3, f"{len(pile)} CARD" + ("" if len(pile) == 1 else "S"), GREY)
            else:
                cv.rect(x, y, CARD_W, CARD_H, EMPTY_RGB, border=COLOURS_RGB[c], border_width=2)
            if c == state.forbidden:  # L21: this pile may not be drawn from in this draw step
                cv.rect(x - 3, y - 3, CARD_W + 6, CARD_H + 6, None, RED, 2)
                cv.text(x + CARD_W - 5, y - 3, "X", RED, 2)
        x = GAP + C * COL_W
        cv.card(x, y, CARD_W, CARD_H, DECK_RGB, str(len(state.deck)), WHITE)
        cv.text(x, y + CARD_H + 3, "DECK", GREY)

    cv.text(GAP, Y_STATUS, _status(state), GOLD if acting != TERMINAL else WHITE)
    player_label(1, Y_P1_LABEL)
    hand(1, Y_P1_HAND)
    expeditions(1, Y_P1_COLUMNS)
    piles(Y_PILES)
    expeditions(0, Y_P0_COLUMNS)
    hand(0, Y_P0_HAND)
    player_label(0, Y_P0_LABEL)
    cv.rect(0, HEIGHT - 1, width, 1, GREY)
    cv.legend(GAP, HEIGHT + 3, width - 2 * GAP, key)
    return cv.image()


def picture_legend(n_colours: int) -> list[LegendItem]:
    """What the picture's colours, letters and numbers mean."""
    return [*((COLOURS_RGB[c], COLOUR_NAMES[c].upper()) for c in range(n_colours)),
            (None, "2-10 = CARD VALUE"), (None, "W = WAGER (SCORE X2/X3/X4)"), (GREY, "EXPEDITION SCORE"),
            (DECK_RGB, "DECK: CARDS LEFT"), (None, "N CARDS = PILE SIZE"),
            (RED, "X: JUST DISCARDED TO, NO DRAW FROM IT"), (GOLD, "PLAYER TO ACT")]


def _status(state: State) -> str:
    """Round, turn and who must do what (L11–L13), or the result at the end (L27, L29)."""
    g = state.game
    rounds = g.options["rounds"]
    head = f"ROUND {state.round}/{rounds}" + (" EXTRA" if state.round > rounds else "") + f"  TURN {state.turn}"
    if state.current_player == TERMINAL:
        if state.truncated:
            return f"{head}  TRUNCATED BY THE TURN CAP"
        a, b = state.cumulative
        return f"{head}  " + ("DRAW" if a == b else f"P{0 if a > b else 1} WINS") + f" {a}:{b}"
    if state.step == CARD_STEP:
        return f"{head}  P{state.current_player} TO PLAY OR DISCARD"
    return f"{head}  P{state.current_player} TO DRAW"
