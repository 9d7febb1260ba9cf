"""The Lost Cities rgb_array picture (envs/lost_cities/render.py): what must be readable on it."""

import numpy as np
import pytest

from tabletop_rl.envs.lost_cities import Game, State
from tabletop_rl.envs.lost_cities import render as r
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
    assert image.dtype == np.uint8 and image.shape[0] > r.HEIGHT and image.shape[2] == 3  # the legend below
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
def test_the_picture_has_a_legend_naming_every_colour(n_colours):
    """Under the table: a swatch per expedition colour (L2) and the meaning of the marks and numbers."""
    image = Game(n_colours=n_colours).new_initial_state(0).render_rgb()
    legend = image[r.HEIGHT:]
    for c in range(6):
        assert np.all(legend == r.COLOURS_RGB[c], axis=2).any() == (c < n_colours), r.COLOUR_NAMES[c]
    texts = [text for _, text in r.picture_legend(n_colours)]
    assert "PURPLE" in texts if n_colours == 6 else "PURPLE" not in texts
    assert any("WAGER" in t for t in texts) and any("CARD VALUE" in t for t in texts)
    assert legend.shape[0] > 4 * 12  # several rows of entries, nothing clipped away


def test_a_draw_from_a_discard_pile_is_described_with_the_card_it_takes():
    state = build(piles={BLUE: cards(BLUE, "3 4")}, step="draw")
    deck = 2 * state.game.num_kinds
    assert state.describe_action(deck + 1 + BLUE, viewer=1) == "draw blue 4 from the blue discard pile"
    assert state.describe_action(deck, viewer=1) == "draw deck"
