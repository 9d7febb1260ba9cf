"""The Palazzo picture (envs/palazzo/render.py): what must be readable on it."""

import numpy as np
import pytest

from tabletop_rl.envs.core.canvas import legend_height
from tabletop_rl.envs.palazzo import Game
from tabletop_rl.envs.palazzo import render as r
from tests.palazzo_helpers import build, play, tile


def has(pixels: np.ndarray, colour) -> bool:
    return bool(np.all(pixels == colour, axis=-1).any())


@pytest.mark.parametrize("num_players", [2, 4])
def test_the_picture_has_a_legend_naming_materials_currencies_and_what_the_numbers_mean(num_players):
    """Under the table: a swatch per material (P4), per currency and for the certificate (P2), the piles and
    X3 (P3), and what the numbers on tiles, cards, piles and palaces mean."""
    image = Game(num_players=num_players).new_initial_state(0).render_rgb()
    rows = legend_height(r.LEGEND, image.shape[1] - 2 * r.GAP) + r.GAP
    legend = image[-rows:]
    assert rows > 3 * 12  # several rows of entries
    for colour in (*r.MATERIAL_RGB, *r.CURRENCY_RGB, r.STACK_RGB, r.DECK_RGB, r.DISCARD_RGB, r.X3_RGB,
                   r.FOCUS_RGB):
        assert has(legend, colour), colour
    texts = " | ".join(text for _, text in r.LEGEND)
    for words in ("BRICK", "SANDSTONE", "MARBLE", "FLOOR.WINDOWS", "CERTIFICATE", "CARD VALUE", "RIDERS",
                  "PRICE", "MASTER BUILDER", "= FLOOR", "SCORES"):
        assert words in texts


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
