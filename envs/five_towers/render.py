"""Text and picture renderings of a Five Towers table."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..core.canvas import Canvas, LegendItem, legend_height
from ..core.game import TERMINAL
from .game import EMPTY, NUM_SLOTS, NUM_TYPES, PLACE, PLACED, TAKE, TAKEN, TEAR, TEAR_NONE, TYPE_NAMES

if TYPE_CHECKING:
    from .game import State

TYPE_RGB = ((240, 140, 190), (150, 90, 200), (80, 160, 70), (160, 160, 160), (235, 205, 90))  # F2 colours
DECK_RGB, DISCARD_RGB, FRAME_RGB = (110, 70, 40), (60, 60, 60), (255, 230, 0)
LEGEND: list[LegendItem] = [
    *zip(TYPE_RGB, (name.upper() for name in TYPE_NAMES), strict=True),
    (None, "0-15 = CARD VALUE"), (None, "TOWERS: TOP CARD ABOVE"), (None, "+N = N LOWER CARDS NOT DRAWN"),
    (None, "T / P UNDER A SLOT: TAKEN / PLACED"), (None, "H = HIGH BID, K = CARDS SHOWN"),
    (DECK_RGB, "DECK: DRAW PILE"), (DISCARD_RGB, "DISC: DISCARD PILE"), (None, "PTS = SCORE NOW"),
    (None, "RUBBLE = TORN-DOWN CARDS"), (None, "X = TYPE BLOCKED FOR GOOD"), (FRAME_RGB, "PLAYER TO ACT"),
]
"""What the picture's colours, letters and numbers mean (drawn under the table)."""
STATUS_NAMES = {TAKEN: "taken", PLACED: "placed"}


def _bid_text(bid: int) -> str:
    return "-" if bid < 0 else "pass" if bid == 0 else str(bid)


def text_table(state: State, viewer: int | None) -> str:
    """Everything is public except the draw pile's order, which only ``viewer=None`` shows (F30, F31)."""
    g = state.game
    n = g.num_players
    lines = [f"Five Towers — round {state.round}, pass {state.pass_no}, draw pile {len(state.draw)}, "
             f"discard {sum(state.discard)}, start player {state.start}"]
    if state.current_player == TERMINAL:
        lines.append("game over — ranks " + ", ".join(f"p{p}: {r}" for p, r in enumerate(state.ranks())))
    else:
        lines.append(f"player {state.current_player} to act: {state.phase} "
                     f"(H = {state.high}, k = {state.k}"
                     + (f", winner {state.winner} takes {state.take_n}" if state.winner >= 0 else "") + ")")
        slots = []
        for s in range(NUM_SLOTS):
            if state.status[s] != EMPTY:
                note = STATUS_NAMES.get(state.status[s])
                card = state.card_to_string(state.display[s])
                slots.append(f"[{s}] {card}" + (f" ({note})" if note else ""))
        lines.append("display: " + "  ".join(slots))
        lines.append("bids: " + ", ".join(f"p{p} {_bid_text(state.bids[p])}" for p in range(n)))
    for p in range(n):
        towers = []
        for t in range(NUM_TYPES):
            cards = " ".join(map(str, state.towers[p][t])) or ("blocked" if state.blocked[p][t] else "-")
            towers.append(f"{TYPE_NAMES[t]} {cards}")
        rubble = ", ".join(state.card_to_string(k) for k in state.rubble[p]) or "-"
        lines.append(f"player {p} (score {state.score(p)}): " + " | ".join(towers) + f" | rubble: {rubble}")
    if viewer is None and state.draw:
        lines.append("next cards: " + ", ".join(state.card_to_string(k) for k in state.draw[:-6:-1]))
    return "\n".join(lines)


TEXT_LEGEND = """\
round: one display of cards each; pass 1 / 2: first or second time through the draw pile (it is reshuffled once)
draw pile / discard: cards left to reveal / cards discarded; start player: who bids first this round; pN: player N
a card: its type (candy, scary, tree, scrap, sand) and value 0-15
H: the high bid so far this round; k: cards in the display, the highest possible bid
winner N takes M: the bid winner takes and builds exactly M display cards
display: [slot] card; (taken) / (placed): taken by the bid winner / placed on their tower
bids: - = not asked yet; pass; or the number of cards bid
player N (score S): the score if the game ended now; then one tower per type, bottom card first and top card
  last; - = no tower; blocked = this type can never be built again
rubble: the player's torn-down cards; each costs points at the end (1, then 2, 3, ...)
next cards: the top of the draw pile (shown only in the all-seeing view)"""
"""What ``text_table``'s words and symbols mean (``State.text_legend``)."""


def describe_action(state: State, action: int, viewer: int | None) -> str:
    """Tear-downs, takes and placements name their card: the slots they refer to change every round."""
    if action == TEAR_NONE:
        return "tear down nothing"
    if TEAR <= action < TAKE:
        t = action - TEAR
        top = state.towers[state.current_player][t][-1]
        return f"tear down the top of the {TYPE_NAMES[t]} tower, {TYPE_NAMES[t]} {top}, to the rubble"
    if TAKE <= action < PLACE:
        return f"take {state.card_to_string(state.display[action - TAKE])} from the display (slot {action - TAKE})"
    if action >= PLACE:
        kind = state.display[action - PLACE]
        return f"place {state.card_to_string(kind)} on the {TYPE_NAMES[kind >> 4]} tower"
    return state.action_to_string(action)


CARD_W, CARD_H, GAP, STEP, SHOWN = 30, 40, 6, 13, 12  # SHOWN: most cards drawn per tower


def picture(state: State) -> np.ndarray:
    """The display with slot status, deck and discard counts, then one panel per player: five towers as
    stacks of coloured cards (top card last), score, rubble and bid; the acting player's panel is framed.
    A legend under it names the types and says what the letters and numbers mean."""
    g = state.game
    n = g.num_players
    panel_w = NUM_TYPES * (CARD_W + GAP) + GAP
    tower_h = CARD_H + (SHOWN - 1) * STEP
    width = max(n * (panel_w + GAP) + GAP, 460)
    header_h = CARD_H + 48
    table_h = header_h + tower_h + 60
    cv = Canvas(width, table_h + legend_height(LEGEND, width - 2 * GAP) + GAP)

    status = "GAME OVER" if state.current_player == TERMINAL else \
        f"P{state.current_player} TO ACT: {state.phase.upper()}  H={state.high}  K={state.k}"
    cv.text(GAP, GAP, f"ROUND {state.round}  PASS {state.pass_no}  " + status)
    y = GAP + 14
    for s in range(NUM_SLOTS):
        x = GAP + s * (CARD_W + GAP)
        if state.status[s] == EMPTY:
            cv.rect(x, y, CARD_W, CARD_H, None, border=(200, 200, 200))
            continue
        kind = state.display[s]
        colour = TYPE_RGB[kind >> 4]
        if state.status[s] != 0:  # taken or placed: dimmed, with a marker underneath
            colour = tuple(c // 2 for c in colour)
            cv.text(x + 4, y + CARD_H + 3, "T" if state.status[s] == TAKEN else "P")
        cv.card(x, y, CARD_W, CARD_H, colour, str(kind & 15))
    x = GAP + NUM_SLOTS * (CARD_W + GAP) + 2 * GAP
    cv.card(x, y, CARD_W, CARD_H, DECK_RGB, str(len(state.draw)))
    cv.text(x, y + CARD_H + 3, "DECK")
    x += CARD_W + 3 * GAP
    cv.card(x, y, CARD_W, CARD_H, DISCARD_RGB, str(sum(state.discard)), text_colour=(255, 255, 255))
    cv.text(x, y + CARD_H + 3, "DISC")

    for p in range(n):
        x0 = GAP + p * (panel_w + GAP)
        y0 = header_h
        frame = FRAME_RGB if p == state.current_player else (40, 70, 50)
        cv.rect(x0 - 3, y0 - 3, panel_w + 6, tower_h + 54, None, border=frame, border_width=2)
        bid = state.bids[p] if state.current_player != TERMINAL else -1
        bid_text = "" if bid < 0 else "PASS" if bid == 0 else f"BID {bid}"
        cv.text(x0 + 2, y0 + 2, f"P{p} {state.score(p)} PTS  RUBBLE {len(state.rubble[p])}  {bid_text}")
        base = y0 + 14 + tower_h - CARD_H  # y of the bottom card
        for t in range(NUM_TYPES):
            x = x0 + GAP + t * (CARD_W + GAP)
            tower = state.towers[p][t]
            if not tower:
                cv.rect(x, base, CARD_W, CARD_H, None, border=TYPE_RGB[t])
                if state.blocked[p][t]:
                    cv.text(x + 12, base + 16, "X", TYPE_RGB[t])
                continue
            for i, v in enumerate(tower[-SHOWN:]):  # each value in its visible strip, bottom card first
                y = base - i * STEP
                cv.card(x, y, CARD_W, CARD_H, TYPE_RGB[t], "")
                cv.text(x + 4, y + CARD_H - STEP + 3, str(v), (0, 0, 0))  # the strip left visible
            if len(tower) > SHOWN:
                cv.text(x, base + CARD_H + 2, f"+{len(tower) - SHOWN}")
    cv.rect(0, table_h - 1, width, 1, (170, 190, 170))
    cv.legend(GAP, table_h + 3, width - 2 * GAP, LEGEND)
    return cv.image()
