"""The Palazzo picture (envs/palazzo/render.py): what must be readable on it."""

import numpy as np
import pytest

from tabletop_rl.envs.core.canvas import legend_height
from tabletop_rl.envs.palazzo import Game
from tabletop_rl.envs.palazzo import render as r


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
