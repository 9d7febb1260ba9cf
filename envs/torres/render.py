"""The Torres table as text, and what the text and the SVG (``svg.py``) both say: the seats' names and letters,
the heading, the status and its details, and the master card."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.game import TERMINAL
from ..core.svg import count
from .actions import (
    ACQUIRE,
    ACTION,
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
from .board import EMPTY, KING, SIZE, square_name
from .cards import CARD_NAMES, MASTER_NAMES, MASTER_TEXT, MOVE_BLOCK

if TYPE_CHECKING:
    from .game import State

SEAT_LETTERS = "RBGY"
SEAT_NAMES = ("red", "blue", "green", "yellow")
_WHAT = {SETUP_BLOCK: "place a start block", SETUP_KNIGHT: "put a knight on a start castle",
         SETUP_KING: "put the king on a start castle", CHOOSE_STACK: "choose the turn's block stack",
         ACTION: "spend action points, or end the turn",
         MOVE_TO: "choose where the knight goes", KEEP_CARD: "keep one card looked at",
         RETURN_CARD: "put a card back on top of or under the deck", CARD_SOURCE: "choose the card's knight or block",
         CARD_TARGET: "choose the card's square", CARD_STACK: "choose the stack for the block",
         LEFTOVER: "put a leftover block on a stack", KING_MOVE: "move the king, or leave it"}


def _cards(counts: list[int]) -> str:
    return ", ".join(f"{CARD_NAMES[t]}" + (f" ×{k}" if k > 1 else "") for t, k in enumerate(counts) if k) or "-"


def heading(state: State) -> str:
    return "Torres · " + ("setup" if state.phase_no == 0 else f"phase {state.phase_no} of 3 · round {state.round_no}")


def status(state: State) -> str:
    """Who must decide what, or the winners and scores at the end."""
    p = state.current_player
    if p == TERMINAL:
        return "Game over · winner " + ", ".join(SEAT_NAMES[q] for q in state.winners()) + " · scores " + \
            ", ".join(map(str, state.scores()))
    return f"{SEAT_NAMES[p].capitalize()} to {_WHAT[state.decision]}"


def details(state: State) -> list[str]:
    """The turn's action points, card and purchases, the card being resolved, the leftover blocks."""
    out = []
    if state.phase_no and state.current_player != TERMINAL:
        out.append(f"{count(state.ap, 'action point')} left · card played: {'yes' if state.card_played else 'no'}"
                   f" · bought {state.acquired}")
    if state.card >= 0:
        out.append(f"resolving {CARD_NAMES[state.card]}")
    if state.leftover:
        out.append(count(state.leftover, "leftover block"))
    return out


def master_text(state: State) -> str:
    """The master card in play (T59), "" without one."""
    card = state.master_card
    return f"master card {MASTER_NAMES[card]}: {MASTER_TEXT[card]}" if card >= 0 else ""


def text_table(state: State, viewer: int | None) -> str:
    """The board (height, castle letter, piece per square), each seat and the pending decision. Hands are
    shown to their owner only, deck orders only with ``viewer=None`` (T65–T67)."""
    g = state.game
    b = state.board
    p = state.current_player
    start = f" · round start player {state.round_start}" if state.phase_no else ""
    lines = [f"{heading(state)} · {g.options['action_deck']} deck{start}", status(state)]
    more = details(state)
    if state.selected >= 0:
        more.append(f"selected {square_name(state.selected)}")
    if state.looked:
        seen = ", ".join(CARD_NAMES[t] for t in state.looked) if viewer in (None, p) else f"{len(state.looked)} cards"
        more.append(f"looking at {seen}")
    if more:
        lines.append(" · ".join(more))
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
    for q in range(g.num_players):
        stacks = "[" + ",".join(map(str, state.stacks[q])) + "]"
        parts = [f"score {state.score[q]}", f"knights in supply {state.in_supply[q]}", f"stacks {stacks}"]
        if q == p and state.turn_stack >= 0:
            parts.append(f"turn's stack {state.turn_stack}")
        hand = f"hand {sum(state.hands[q])}"
        if viewer is None or viewer == q:
            hand += f" ({_cards(state.hands[q])}" + (f"; fresh {_cards(state.fresh[q])}" if any(state.fresh[q])
                                                       else "") + ")"
        parts.append(hand)
        if g.personal:
            deck = state.decks[q]
            parts.append(f"deck {len(deck)}" + (f" (top first: {_cards_in_order(deck)})" if viewer is None else ""))
        if any(state.played[q]):
            parts.append(f"played {_cards(state.played[q])}")
        lines.append(f"player {q} ({SEAT_NAMES[q]}, {SEAT_LETTERS[q]}): " + ", ".join(parts))
    extra = [f"supply {state.supply} blocks"]
    if g.common:
        deck = state.decks[0]
        extra.append(f"common deck {len(deck)}" + (f" (top first: {_cards_in_order(deck)})" if viewer is None
                                                   else ""))
    if master := master_text(state):
        extra.append(master)
    lines.append(", ".join(extra))
    return "\n".join(lines)


def _cards_in_order(deck: list[int]) -> str:
    return ", ".join(CARD_NAMES[t] for t in reversed(deck)) or "-"


TEXT_LEGEND = """\
board: rows 0-7 down, columns 0-7 across; (r,c) names the square in row r, column c
a square: its height in blocks (. = ground), its castle's letter, its piece: R B G Y = a knight of the red, blue,
  green or yellow player, K = the king
castles: area = squares, height = the tallest square; king = the king's castle
phase p of 3 · round r: three phases of rounds; every castle scores at the end of each phase; round start
  player: who plays first this round
Red to ...: the seat to act and its decision; action points left: AP left this turn; card played: whether this
  turn's card was played; bought: cards bought this turn; selected: the knight or square being moved or used
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
