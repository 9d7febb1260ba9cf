"""Text and picture renderings of a Torres position."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..core.canvas import Canvas, LegendItem, legend_height
from ..core.game import TERMINAL
from .board import EMPTY, KING, SIZE, square_name
from .cards import CARD_NAMES, MASTER_NAMES, MASTER_TEXT, MOVE_BLOCK
from .game import (
    ACQUIRE,
    ADD_KNIGHT,
    CARD_SOURCE,
    CARD_STACK,
    CARD_TARGET,
    CHOOSE_STACK,
    END_TURN,
    KEEP_CARD,
    KING_MOVE,
    LEFTOVER,
    MOVE_FROM,
    MOVE_TO,
    PASS,
    PLACE_BLOCK,
    RETURN_CARD,
    SCORE_STEP,
    SELECT,
    SETUP_BLOCK,
    SETUP_KING,
    SETUP_KNIGHT,
    STACK,
    STACK_CURRENT,
)

if TYPE_CHECKING:
    from .game import State

SEAT_LETTERS = "RBGY"
SEAT_NAMES = ("red", "blue", "green", "yellow")
SEAT_RGB = ((215, 40, 40), (40, 90, 220), (30, 150, 60), (235, 200, 20))
GOLD = (255, 205, 0)


def _cards(counts: list[int]) -> str:
    return ", ".join(f"{CARD_NAMES[t]}" + (f" ×{k}" if k > 1 else "") for t, k in enumerate(counts) if k) or "-"


def text_table(state: State, viewer: int | None) -> str:
    """The board (height, castle letter, piece per square), each seat and the pending decision. Hands are
    shown to their owner only, deck orders only with ``viewer=None`` (T65–T67)."""
    g = state.game
    b = state.board
    lines = [f"Torres ({g.options['action_deck']} deck), " + _progress(state)]
    if state.current_player == TERMINAL:
        lines.append(f"game over — scores {state.scores()}, winners {state.winners()}")
    else:
        lines.append(_pending(state, viewer))
    lines.append("     " + "    ".join(str(c) for c in range(SIZE)))
    for r in range(SIZE):
        cells = []
        for c in range(SIZE):
            s = 8 * r + c
            occ = b.occ[s]
            piece = "K" if occ == KING else SEAT_LETTERS[occ] if occ != EMPTY else " "
            castle = chr(ord("a") + b.cid[s]) if b.cid[s] >= 0 else " "
            cells.append(f"{b.h[s] if b.h[s] else '.':>2}{castle}{piece}")
        lines.append(f"{r} " + " ".join(cells))
    castles = []
    for c in b.castle_ids():
        king = " king" if state.king >= 0 and b.cid[state.king] == c else ""
        castles.append(f"{chr(ord('a') + c)}: area {b.area(c)} height {b.castle_height(c)}{king}")
    lines.append("castles: " + "; ".join(castles))
    for p in range(g.num_players):
        stacks = "[" + ",".join(map(str, state.stacks[p])) + "]"
        parts = [f"score {state.score[p]}", f"knights in supply {state.in_supply[p]}", f"stacks {stacks}"]
        if p == state.current_player and state.turn_stack >= 0:
            parts.append(f"turn's stack {state.turn_stack}")
        hand = f"hand {sum(state.hands[p])}"
        if viewer is None or viewer == p:
            hand += f" ({_cards(state.hands[p])}" + (f"; fresh {_cards(state.fresh[p])}" if any(state.fresh[p])
                                                       else "") + ")"
        parts.append(hand)
        if g.personal:
            deck = state.decks[p]
            parts.append(f"deck {len(deck)}" + (f" (top first: {_cards_in_order(deck)})" if viewer is None else ""))
        if any(state.played[p]):
            parts.append(f"played {_cards(state.played[p])}")
        lines.append(f"player {p} ({SEAT_NAMES[p]}, {SEAT_LETTERS[p]}): " + ", ".join(parts))
    extra = [f"supply {state.supply} blocks"]
    if g.common:
        deck = state.decks[0]
        extra.append(f"common deck {len(deck)}" + (f" (top first: {_cards_in_order(deck)})" if viewer is None
                                                   else ""))
    if state.master_card >= 0:
        extra.append(f"master card {MASTER_NAMES[state.master_card]}: {MASTER_TEXT[state.master_card]}")
    lines.append(", ".join(extra))
    return "\n".join(lines)


def _cards_in_order(deck: list[int]) -> str:
    return ", ".join(CARD_NAMES[t] for t in reversed(deck)) or "-"


def _progress(state: State) -> str:
    if state.phase_no == 0:
        return "setup"
    return f"phase {state.phase_no}, round {state.round_no}, round start player {state.round_start}"


def _pending(state: State, viewer: int | None) -> str:
    p = state.current_player
    text = f"player {p} to act: {state.phase}"
    if state.phase_no:
        text += f" (AP {state.ap}, card played: {'yes' if state.card_played else 'no'}, acquired {state.acquired})"
    if state.card >= 0:
        text += f", resolving {CARD_NAMES[state.card]}"
    if state.selected >= 0:
        text += f", selected {square_name(state.selected)}"
    if state.leftover:
        text += f", {state.leftover} leftover block(s)"
    if state.looked:
        seen = ", ".join(CARD_NAMES[t] for t in state.looked) if viewer in (None, p) else f"{len(state.looked)} cards"
        text += f", looking at {seen}"
    return text


TEXT_LEGEND = """\
board: rows 0-7 down, columns 0-7 across; (r,c) names the square in row r, column c
a square: its height in blocks (. = ground), its castle's letter, its piece: R B G Y = a knight of the red, blue,
  green or yellow player, K = the king
castles: area = squares, height = the tallest square; king = the king's castle
phase p, round r: three phases of rounds; every castle scores at the end of each phase
player N to act: the decision (D1-D12); AP: action points left this turn; card played: whether this turn's card
  was played; acquired: cards bought this turn; selected: the knight or square being moved or used
knights in supply: knights not yet on the board; stacks [3,3]: blocks in each stack left for this phase;
  turn's stack: blocks left on the stack chosen for this turn
hand: action cards (fresh: bought this turn, not playable before the next); played: cards used up
supply: blocks left; deck: action cards left"""
"""What ``text_table``'s words and symbols mean (``State.text_legend``)."""


def describe_action(state: State, action: int, viewer: int | None) -> str:
    """The action as its decision means it ('select', 'stack' and 'pass' serve several decisions); the cards
    a player keeps or puts back after looking stay hidden from the others (T67)."""
    d, p = state.decision, state.current_player
    if d in (KEEP_CARD, RETURN_CARD) and viewer not in (None, p):
        return "keep one of the cards looked at" if d == KEEP_CARD else "put back one of the cards looked at"
    card = CARD_NAMES[state.card] if state.card >= 0 else ""
    if action < SELECT:
        square = square_name(action % 64)
        return {MOVE_FROM: f"pick the knight on {square} to move", ADD_KNIGHT: f"add a knight on {square}",
                PLACE_BLOCK: f"place a block on {square}"}[action - action % 64]
    if action < STACK:
        square = square_name(action - SELECT)
        source = f"the {'block' if state.card == MOVE_BLOCK else 'knight'} on {square}"
        return {SETUP_BLOCK: f"put a start block on {square}", SETUP_KNIGHT: f"put a knight on {square}",
                SETUP_KING: f"put the king on {square}", KING_MOVE: f"move the king to {square}",
                MOVE_TO: f"move the knight on {square_name(state.selected)} to {square}",
                CARD_SOURCE: f"{card}: {source}", CARD_TARGET: f"{card}: to {square}"}[d]
    if action <= STACK_CURRENT:
        stack = "the turn's stack" if action == STACK_CURRENT else f"the stack of {state.stacks[p][action - STACK]}"
        return {CHOOSE_STACK: f"take {stack} blocks for this turn", CARD_STACK: f"{card}: the block from {stack}",
                LEFTOVER: f"put a leftover block on {stack}"}[d]
    if action == PASS:
        return "leave the king where it is" if d == KING_MOVE else "return the leftover blocks to the supply"
    return {ACQUIRE: "buy an action card", SCORE_STEP: "take a score step", END_TURN: "end the turn"}.get(
        action, state.action_to_string(action))


# ===================================================================== picture
CELL, MARGIN, PANEL_W = 60, 24, 330
GROUND = (214, 190, 140)
WALL = (40, 30, 20)
SELECTED = (255, 255, 255)


def stone_colour(height: int) -> tuple[int, int, int]:
    """Castle squares: light grey stone, darker with each level."""
    shade = max(235 - 22 * (height - 1), 70)
    return (shade, shade - 6, shade - 18)


def picture(state: State) -> np.ndarray:
    """The board with each square's height, castle walls (thick lines where castles end), knights in seat
    colours, the king, the king's castle framed in gold and the selected square in white; a side panel
    with the phase, the pending decision, scores, stacks and cards.  A legend under the board names the
    seat colours and says what the squares, numbers and letters mean."""
    b = state.board
    board_px = SIZE * CELL
    width, table_h = MARGIN + board_px + MARGIN + PANEL_W, MARGIN + board_px + MARGIN // 2
    key = picture_legend(state.game.num_players)
    cv = Canvas(width, table_h + legend_height(key, width - 2 * MARGIN) + MARGIN // 2)
    cv.rect(0, 0, cv.pixels.shape[1], cv.pixels.shape[0], (30, 45, 35))
    home = b.cid[state.king] if state.king >= 0 else -2
    for s in range(64):
        r, c = divmod(s, SIZE)
        x, y = MARGIN + c * CELL, MARGIN + r * CELL
        h = b.h[s]
        cv.rect(x, y, CELL, CELL, stone_colour(h) if h else GROUND, border=(150, 130, 95))
        if h:
            cv.text(x + 5, y + 5, str(h), (0, 0, 0), scale=2)
            cv.text(x + CELL - 11, y + 5, chr(ord("a") + b.cid[s]), (110, 100, 90))
        occ = b.occ[s]
        if occ == KING:
            cv.card(x + 16, y + 18, 34, 34, GOLD, "K")
        elif occ != EMPTY:
            cv.card(x + 16, y + 18, 34, 34, SEAT_RGB[occ], SEAT_LETTERS[occ], text_colour=(255, 255, 255))
    _walls(cv, state, home)
    if state.selected >= 0:  # over the walls, so that it shows on a castle's edge too
        r, c = divmod(state.selected, SIZE)
        cv.rect(MARGIN + c * CELL, MARGIN + r * CELL, CELL, CELL, None, border=SELECTED, border_width=4)
    for i in range(SIZE):  # coordinates
        cv.text(MARGIN + i * CELL + CELL // 2 - 2, MARGIN - 12, str(i), (200, 200, 200))
        cv.text(MARGIN - 12, MARGIN + i * CELL + CELL // 2 - 3, str(i), (200, 200, 200))
    _panel(cv, state, MARGIN + board_px + MARGIN, MARGIN)
    cv.rect(0, table_h - 1, width, 1, (90, 110, 95))
    cv.legend(MARGIN, table_h + 3, width - 2 * MARGIN, key)
    return cv.image()


def picture_legend(num_players: int) -> list[LegendItem]:
    """What the picture's colours, letters and numbers mean."""
    return [*((SEAT_RGB[p], f"{SEAT_NAMES[p].upper()} KNIGHT") for p in range(num_players)),
            (GOLD, "K = KING; GOLD: KING'S CASTLE, PLAYER TO ACT"), (GROUND, "GROUND"),
            (stone_colour(1), "CASTLE SQUARE, DARKER = HIGHER"), (None, "BIG NUMBER = HEIGHT"),
            (None, "CORNER LETTER = CASTLE"), (None, "THICK DARK LINE = CASTLE EDGE"),
            (SELECTED, "SELECTED SQUARE"),
            (None, "PTS = SCORE"), (None, "STACKS = BLOCKS IN EACH STACK"), (None, "TURN = THIS TURN'S STACK"),
            (None, "KNIGHTS A2 = ON CASTLE A AT LEVEL 2"), (None, "AP = ACTION POINTS LEFT"),
            (None, "CARDS = IN HAND"), (None, "DECK = CARDS LEFT"), (None, "SUPPLY = BLOCKS LEFT")]


def _walls(cv: Canvas, state: State, home: int) -> None:
    """Thick lines where a castle ends (T2): dark, gold around the king's castle (T52)."""
    cid = state.board.cid
    for s in range(64):
        if cid[s] < 0:
            continue
        r, c = divmod(s, SIZE)
        x, y = MARGIN + c * CELL, MARGIN + r * CELL
        colour, w = (GOLD, 4) if cid[s] == home else (WALL, 3)
        if r == 0 or cid[s - 8] != cid[s]:
            cv.rect(x, y, CELL, w, colour)
        if r == SIZE - 1 or cid[s + 8] != cid[s]:
            cv.rect(x, y + CELL - w, CELL, w, colour)
        if c == 0 or cid[s - 1] != cid[s]:
            cv.rect(x, y, w, CELL, colour)
        if c == SIZE - 1 or cid[s + 1] != cid[s]:
            cv.rect(x + CELL - w, y, w, CELL, colour)


def _panel(cv: Canvas, state: State, x: int, y: int) -> None:
    g = state.game
    white, grey = (255, 255, 255), (190, 190, 190)
    cv.text(x, y, "TORRES", GOLD, scale=3)
    y += 30
    if state.current_player == TERMINAL:
        cv.text(x, y, "GAME OVER", white, scale=2)
        y += 20
        cv.text(x, y, "WINNER " + " ".join(SEAT_NAMES[p].upper() for p in state.winners()), GOLD)
    else:
        cv.text(x, y, "SETUP" if state.phase_no == 0 else f"PHASE {state.phase_no}  ROUND {state.round_no}",
                white, scale=2)
        y += 20
        cv.text(x, y, f"{SEAT_NAMES[state.current_player].upper()}: {state.phase.upper()}", white)
        if state.phase_no:
            y += 12
            extra = f"  CARD {CARD_NAMES[state.card].upper()}" if state.card >= 0 else ""
            cv.text(x, y, f"AP {state.ap}" + extra, grey)
    y += 22
    for p in range(g.num_players):
        frame = GOLD if p == state.current_player else (60, 80, 65)
        cv.rect(x - 4, y - 4, PANEL_W - 16, 62, None, border=frame, border_width=2)
        cv.card(x, y, 22, 22, SEAT_RGB[p], SEAT_LETTERS[p], text_colour=(255, 255, 255))
        cv.text(x + 30, y, f"{state.score[p]} PTS", white, scale=2)
        cv.text(x + 150, y + 4, f"{state.in_supply[p]} KNIGHTS IN SUPPLY", grey)
        stacks = " ".join(map(str, state.stacks[p])) or "-"
        turn = f"  TURN {state.turn_stack}" if p == state.current_player and state.turn_stack >= 0 else ""
        cv.text(x + 30, y + 20, f"STACKS {stacks}{turn}", grey)
        deck = f"  DECK {len(state.decks[p])}" if g.personal else ""
        played = sum(state.played[p])
        cv.text(x + 30, y + 32, f"CARDS {sum(state.hands[p])}{deck}  PLAYED {played}", grey)
        levels = _levels(state, p)
        cv.text(x + 30, y + 44, f"KNIGHTS {levels}", grey)
        y += 70
    cv.text(x, y, f"SUPPLY {state.supply}", grey)
    if g.common:
        cv.text(x + 110, y, f"DECK {len(state.decks[0])}", grey)
    if state.master_card >= 0:
        y += 14
        cv.text(x, y, f"{MASTER_NAMES[state.master_card]} {MASTER_TEXT[state.master_card].upper()}", grey)


def _levels(state: State, p: int) -> str:
    """The player's knights on castles as castle letter and level (``A2 C1``), then those on the ground."""
    b = state.board
    on = " ".join(f"{chr(ord('A') + b.cid[s])}{b.h[s]}" for s in state.knights[p] if b.cid[s] >= 0) or "-"
    ground = sum(b.cid[s] < 0 for s in state.knights[p])
    return on + (f"  GROUND {ground}" if ground else "")
