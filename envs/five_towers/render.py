"""The Five Towers table as text, and what the text and the SVG (``svg.py``) both say: the heading, the status,
the slots' notes, the bids and the next cards."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.game import TERMINAL
from .actions import PLACE, TAKE, TEAR, TEAR_NONE
from .cards import NUM_SLOTS, NUM_TYPES, TYPE_NAMES
from .game import EMPTY, PLACED, TAKEN

if TYPE_CHECKING:
    from .game import State

SLOT_NOTES = {TAKEN: "taken", PLACED: "placed"}
"""What became of a display card this round (a slot holding neither has no note)."""


def heading(state: State) -> str:
    return f"Five Towers · round {state.round} · pass {state.pass_no} of 2 · start player {state.start}"


def status(state: State) -> str:
    """Who must do what, with the high bid H and the display size k, or the ranks at the end."""
    p = state.current_player
    if p == TERMINAL:
        return "Game over · ranks " + ", ".join(f"player {q}: {r}" for q, r in enumerate(state.ranks()))
    what = {"bid": "bid (or pass)", "teardown": "tear down a tower top (or nothing)",
            "take": f"take display cards ({state.take_n} in all, {state.taken.bit_count()} taken)",
            "place": "place a taken card"}[state.phase]
    return f"Player {p} to {what} · H = {state.high}, k = {state.k}"


def bid_text(state: State, p: int) -> str:
    """Seat p's part in this round's bidding ("" once the game is over)."""
    if state.current_player == TERMINAL:
        return ""
    if state.winner == p:
        return f"won the bid: takes {state.take_n}"
    bid = state.bids[p]
    if bid < 0:
        return "not asked yet" if state.phase == "bid" else "not asked: the bidding is over"
    return "passed" if bid == 0 else f"bid {bid}"


def next_cards(state: State, viewer: int | None) -> list[int]:
    """The top five cards of the draw pile, top first: the pile's order (F30), shown to the whole table only."""
    return state.draw[:-6:-1] if viewer is None else []


def text_table(state: State, viewer: int | None) -> str:
    """Everything is public except the draw pile's order, which only ``viewer=None`` shows (F30, F31)."""
    n = state.game.num_players
    lines = [f"{heading(state)} · draw pile {len(state.draw)} · discard {sum(state.discard)}", status(state)]
    if state.current_player != TERMINAL:
        slots = []
        for s in range(NUM_SLOTS):
            if state.status[s] != EMPTY:
                note = SLOT_NOTES.get(state.status[s])
                card = state.card_to_string(state.display[s])
                slots.append(f"[{s}] {card}" + (f" ({note})" if note else ""))
        lines.append("display: " + "  ".join(slots))
        lines.append("bids: " + ", ".join(f"player {p} {bid_text(state, p)}" for p in range(n)))
    for p in range(n):
        towers = []
        for t in range(NUM_TYPES):
            cards = " ".join(map(str, state.towers[p][t])) or ("blocked" if state.blocked[p][t] else "-")
            towers.append(f"{TYPE_NAMES[t]} {cards}")
        rubble = ", ".join(state.card_to_string(k) for k in state.rubble[p]) or "-"
        lines.append(f"player {p} (score {state.score(p)}): " + " | ".join(towers) + f" | rubble: {rubble}")
    if upcoming := next_cards(state, viewer):
        lines.append("next cards: " + ", ".join(state.card_to_string(k) for k in upcoming))
    return "\n".join(lines)


TEXT_LEGEND = """\
round: one display of cards each; pass 1 of 2 / 2 of 2: first or second time through the draw pile (it is
  reshuffled once); start player: who bids first this round
draw pile / discard: cards left to reveal / cards discarded
a card: its type (candy, scary, tree, scrap, sand) and value 0-15
H: the high bid so far this round; k: cards in the display, the highest possible bid
take display cards (M in all, t taken): the bid winner takes and builds exactly M display cards
display: [slot] card; (taken) / (placed): taken by the bid winner / placed on their tower
bids: not asked yet; passed; bid N (the number of cards bid); won the bid: takes M
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
