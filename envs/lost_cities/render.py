"""The Lost Cities table as text, and what the text and the SVG (``svg.py``) both say: the heading, the status,
the card labels and what a seat sees of a hand."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.game import TERMINAL
from .actions import CARD_STEP
from .cards import COLOUR_NAMES, kind_value

if TYPE_CHECKING:
    from .game import State


def card_label(kind: int) -> str:
    """A card as its value, ``W`` for a wager."""
    v = kind_value(kind)
    return "W" if v == 0 else str(v)


def heading(state: State) -> str:
    extra = f" (extra {state.extra_rounds})" if state.extra_rounds else ""
    return (f"Lost Cities · round {state.round} of {state.game.options['rounds']}{extra} · turn {state.turn} · "
            f"draw pile {len(state.deck)}")


def status(state: State) -> str:
    """Who must do what (L11–L13), or the result (L27, L29)."""
    p = state.current_player
    if p == TERMINAL:
        if state.truncated:
            return "Stopped by the turn cap"
        a, b = state.cumulative
        return ("A draw" if a == b else f"Player {0 if a > b else 1} wins") + f": player 0 {a}, player 1 {b}"
    if state.step == CARD_STEP:
        return f"Player {p} to play a card on an expedition or discard it"
    closed = f" (not {COLOUR_NAMES[state.forbidden]}, just discarded to)" if state.forbidden >= 0 else ""
    return f"Player {p} to draw: the draw pile or a discard pile{closed}"


def hand(state: State, p: int, viewer: int | None) -> tuple[list[int], int]:
    """Seat p's hand as ``viewer`` may see it: the cards shown (all, in order; of another seat's hand only those it
    took from the discard piles, L33) and how many more it holds unseen."""
    counts = state.hands[p]
    if viewer is None or viewer == p:
        shown = [k for k in sorted(counts) for _ in range(counts[k])]
    else:
        shown = [k for k, n in enumerate(state.known[p]) for _ in range(n)]
    return shown, sum(counts.values()) - len(shown)


def text_table(state: State, viewer: int | None) -> str:
    """The table as text; with a ``viewer`` the opponent's hand shows only the cards known from piles. A hand
    the viewer sees marks the card its player took in the latest draw step "(new)"."""
    C = state.game.n_colours
    lines = [f"{heading(state)} · totals {state.cumulative[0]} : {state.cumulative[1]}", status(state)]
    width = max(len(n) for n in COLOUR_NAMES[:C])
    provisional = state.provisional_scores()
    for p in (0, 1):
        lines.append(f"player {p} expeditions (round score {provisional[p]}):")
        for c in range(C):
            cards = " ".join(card_label(k) for k in state.expeditions[p][c]) or "-"
            lines.append(f"  {COLOUR_NAMES[c]:<{width}}  {cards}")
    lines.append("discard piles (bottom → top):")
    for c in range(C):
        lines.append(f"  {COLOUR_NAMES[c]:<{width}}  {' '.join(card_label(k) for k in state.piles[c]) or '-'}")
    for p in (0, 1):
        cards, hidden = hand(state, p, viewer)
        names = [state.card_to_string(k) for k in cards]
        if (viewer is None or viewer == p) and state.drawn[p] in cards:  # the card p took in its latest draw step
            names[cards.index(state.drawn[p])] += " (new)"
        lines.append(f"player {p} hand: {', '.join([*names, *['?'] * hidden])}")
    return "\n".join(lines)


TEXT_LEGEND = """\
round r of R: the round being played (extra e: tie-break rounds added); turn: turns played this round (a turn is
  a card step, then a draw step)
draw pile: cards left to draw; the round ends when it is empty
totals a : b: the points of player 0 and player 1 in the rounds already over
expeditions: each player's cards laid out, per colour, in the order played; W = a wager (each one adds 1 to the
  multiplier of the expedition's score); - = none yet
round score: what the expeditions would score if the round ended now (a started expedition costs 20)
discard piles: per colour, bottom card first; "draw <colour>" takes the top card of that pile
(not X, just discarded to): the pile the card step discarded to is forbidden in that turn's draw step
hand: ? = a card you have not seen; an opponent's card shown by name was drawn from a discard pile;
  (new) = the card just drawn"""
"""What ``text_table``'s words and symbols mean (``State.text_legend``)."""


def describe_action(state: State, action: int, viewer: int | None) -> str:
    """A draw from a discard pile names the card it takes (the pile's top, public); the other names stand alone."""
    colour = action - state.game.draw_deck_action - 1
    if colour < 0:
        return state.action_to_string(action)
    return f"draw {state.card_to_string(state.piles[colour][-1])} from the {COLOUR_NAMES[colour]} discard pile"
