"""The Lost Cities rgb_array picture (envs/lost_cities/render.py): what must be readable on it."""

import numpy as np
import pytest

from envs.lost_cities import Game, State
from envs.lost_cities import render as r
from tests.lost_cities_helpers import BLUE, RED, build, cards

BLACK = (0, 0, 0)  # card labels; card borders are (16, 16, 16)


def full_columns(n_colours: int) -> State:
    """All 12 red cards in player 0's red expedition, all 12 blue ones in player 1's (L3, L41)."""
    every = "W W W 2 3 4 5 6 7 8 9 10"
    return build({"n_colours": n_colours}, expeditions={(0, RED): cards(RED, every), (1, BLUE): cards(BLUE, every)})


def label_rows(image: np.ndarray, x: int, y0: int, y1: int) -> int:
    """Number of separate runs of rows holding label pixels in one column's strip of the image."""
    has = np.all(image[y0:y1, x:x + r.CARD_W] == BLACK, axis=2).any(axis=1)
    return int(np.count_nonzero(has[1:] & ~has[:-1]) + has[0])


@pytest.mark.parametrize("n_colours", [5, 6])
def test_every_card_of_a_full_expedition_shows_its_value(n_colours):
    image = full_columns(n_colours).render_rgb()
    assert image.dtype == np.uint8 and image.shape == (r.HEIGHT, image.shape[1], 3)
    column_h = r.COLUMN_H - r.LINE  # without the score line
    # player 0's red column hangs down from the piles, player 1's blue column stands up towards them
    assert label_rows(image, r.GAP + 4 * r.COL_W, r.Y_P0_COLUMNS, r.Y_P0_COLUMNS + column_h) == 12
    y1 = r.Y_P1_COLUMNS + r.COLUMN_H
    assert label_rows(image, r.GAP + 1 * r.COL_W, y1 - column_h, y1) == 12


def test_the_player_to_act_is_framed_in_gold_and_the_forbidden_pile_in_red():
    state = Game().new_initial_state(3)
    p = state.current_player
    hand_top = (r.Y_P0_HAND, r.Y_P1_HAND)

    def gold_near_hand(image, seat):
        rows = image[hand_top[seat] - 3:hand_top[seat] + r.CARD_H + 3]
        return np.all(rows == r.GOLD, axis=2).any()

    image = state.render_rgb()
    assert gold_near_hand(image, p) and not gold_near_hand(image, 1 - p)
    piles = slice(r.Y_PILES - 3, r.Y_PILES + r.CARD_H + 3)
    assert not np.all(image[piles] == r.RED, axis=2).any()
    state.apply_action(next(a for a in state.legal_actions() if a >= state.game.num_kinds))  # a discard
    image = state.render_rgb()
    assert np.all(image[piles] == r.RED, axis=2).any()  # L21: that pile is closed for this draw
    assert gold_near_hand(image, p)  # still the same player's turn (L11)
