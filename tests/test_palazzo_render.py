"""The Palazzo renderings (envs/palazzo/render.py, svg.py): what must be readable in the text and on the picture."""

import pytest

from tabletop_rl.envs.palazzo import Game
from tests.palazzo_helpers import build, play, tile


@pytest.mark.parametrize("num_players", [2, 4])
def test_the_legend_names_materials_currencies_and_what_the_numbers_mean(num_players):
    """Under the table: each material (P4), each currency and the certificate (P2), the piles and X3 (P3), and what
    the numbers on tiles, cards, piles and palaces mean."""
    legend = Game(num_players=num_players).new_initial_state(0).render_svg().split(">Legend<")[1]
    for words in ("b brick", "s sandstone", "m marble", "floor 1–5", "window", "A currency A", "C currency C",
                  "Z certificate (2)", "card value", "pays 15", "unseen cards", "X3 opening bid", "master builder",
                  "palace column", "score"):
        assert words in legend, words


def test_text_and_picture_say_the_same_status_and_auction():
    """One status line and one note per auction for both (render.py), the winners only for the whole table (P63)."""
    state = play(build({"num_players": 2}, quarries={1: [33]}, stacks=[[20, 1]]), "tiles", "auction")
    text, svg = state.render_text(1), state.render_svg(1)
    auction = [line for line in text.splitlines() if line.startswith("auction of quarry 1: high bid")]
    assert len(auction) == 1 and auction[0] in svg and text.splitlines()[1] in svg
    while not state.is_terminal():
        play(state, state.legal_actions()[0])
    assert "Game over · winner player" in state.render_text() and "winner" not in state.render_text(0)
    assert "Game over · winner player" in state.render_svg() and "winner" not in state.render_svg(0)


def test_moves_are_described_with_their_tiles_and_cards():
    """The action names serve several decisions ("done", "palace 0"); described, each says what it does."""
    state = play(build(hands={0: "A7 B7 C7 A6"}, supply=[tile("b2.1")], palaces={0: [[tile("b1.2")]]}),
                 "tiles", "buy")
    assert [state.describe_action(a) for a in state.legal_actions()] == [
        "select b1.3 from the supply to buy", "select b2.1 from the supply to buy"]
    play(state, "tile 3 b2.1")
    assert state.describe_action(state.string_to_action("done")) == "buy only b2.1"
    play(state, "done", "card A6", "card A7")
    assert state.describe_action(state.string_to_action("done"), viewer=1) == "pay 13 for b2.1"
    play(state, "done")
    assert [state.describe_action(a, viewer=1) for a in state.legal_actions()] == [
        "place b2.1 on top of palace 0 (b1.2)", "place b2.1 as a new palace", "discard b2.1"]
