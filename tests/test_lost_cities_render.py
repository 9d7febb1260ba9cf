"""The Lost Cities renderings (envs/lost_cities/render.py, svg.py): what must be readable in the text and in the
SVG that the picture rasterises."""

import xml.etree.ElementTree as ET

import pytest

from tabletop_rl.envs.lost_cities import Game, State
from tabletop_rl.envs.lost_cities.render import card_label
from tests.lost_cities_helpers import BLUE, RED, build, cards

SVG = "{http://www.w3.org/2000/svg}"


def full_columns(n_colours: int) -> State:
    """All 12 red cards in player 0's red expedition, all 12 blue ones in player 1's (L3, L41)."""
    every = "W W W 2 3 4 5 6 7 8 9 10"
    return build({"n_colours": n_colours}, expeditions={(0, RED): cards(RED, every), (1, BLUE): cards(BLUE, every)})


def named(svg: str, prefix: str) -> list[ET.Element]:
    """The elements whose name (``<title>``) starts with ``prefix``, in drawing order."""
    return [g for g in ET.fromstring(svg).iter(f"{SVG}g") if g.findtext(f"{SVG}title", "").startswith(prefix)]


@pytest.mark.parametrize("n_colours", [5, 6])
def test_every_card_of_a_full_expedition_shows_its_value(n_colours):
    state = full_columns(n_colours)
    for viewer in (None, 0, 1):
        svg = state.render_svg(viewer)
        for p, colour in ((0, "red"), (1, "blue")):
            shown = named(svg, f"player {p}'s {colour} expedition: ")
            assert [g.findtext(f"{SVG}text") for g in shown] == [card_label(k) for k in state.expeditions[p][
                RED if colour == "red" else BLUE]]


def test_the_player_to_act_is_marked_and_the_pile_just_discarded_to_is_crossed():
    state = Game().new_initial_state(3)
    p = state.current_player
    svg = state.render_svg()
    assert f"▶ Player {p} ·" in svg and f"▶ Player {1 - p}" not in svg and ">✕<" not in svg
    state.apply_action(next(a for a in state.legal_actions() if a >= state.game.num_kinds))  # a discard
    svg = state.render_svg()
    assert ">✕<" in svg and "(not " in svg  # L21: that pile is closed for this draw
    assert f"▶ Player {p} ·" in svg  # still the same player's turn (L11)


def test_the_text_table_marks_the_card_just_drawn_only_in_hands_the_viewer_sees():
    """A pile draw is public (L30) yet only the drawer's own view marks it "(new)"; a deck draw is hidden
    from the opponent (L32): their view shows "?" and no mark."""
    state = build(piles={BLUE: cards(BLUE, "4")}, step="draw")
    state.apply_action(2 * state.game.num_kinds + 1 + BLUE)  # seat 0 takes the blue 4 from its pile
    assert "blue 4 (new)" in state.render_text(0) and "blue 4 (new)" in state.render_text()
    assert "(new)" not in state.render_text(1) and "player 0 hand: blue 4, ?" in state.render_text(1)
    state.apply_action(state.legal_actions()[-1])  # seat 1 discards, then draws from the deck
    state.apply_action(2 * state.game.num_kinds)
    mine, theirs = state.render_text(1), state.render_text(0)
    assert mine.split("player 1 hand:")[1].count("(new)") == 1 and "(new)" not in mine.split("player 1 hand:")[0]
    assert "(new)" not in theirs.split("player 1 hand:")[1] and "blue 4 (new)" in theirs


@pytest.mark.parametrize("n_colours", [5, 6])
def test_the_legend_names_every_colour_in_play(n_colours):
    """Under the table: each expedition colour (L2) with its letter, and the meaning of the marks and numbers."""
    legend = Game(n_colours=n_colours).new_initial_state(0).render_svg().split(">Legend<")[1]
    assert ("P purple" in legend) == (n_colours == 6)
    assert all(words in legend for words in ("R red", "W wager", "card value", "card you have not seen"))


def test_a_draw_from_a_discard_pile_is_described_with_the_card_it_takes():
    state = build(piles={BLUE: cards(BLUE, "3 4")}, step="draw")
    deck = 2 * state.game.num_kinds
    assert state.describe_action(deck + 1 + BLUE, viewer=1) == "draw blue 4 from the blue discard pile"
    assert state.describe_action(deck, viewer=1) == "draw pile"
