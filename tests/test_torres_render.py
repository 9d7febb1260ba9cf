"""The Torres renderings (envs/torres/render.py): what must be readable on the picture and in the text."""

import numpy as np
import pytest

from tabletop_rl.envs.core.canvas import legend_height
from tabletop_rl.envs.torres import Game
from tabletop_rl.envs.torres import render as r
from tabletop_rl.envs.torres.game import ACQUIRE
from tests.torres_helpers import build, play

ROWS = ["1K 1 . 2R", ". . . 1", ". 1B . .", ". . . ."]


def cell(image: np.ndarray, row: int, col: int) -> np.ndarray:
    y, x = r.MARGIN + row * r.CELL, r.MARGIN + col * r.CELL
    return image[y:y + r.CELL, x:x + r.CELL]


def has(pixels: np.ndarray, colour) -> bool:
    return bool(np.all(pixels == colour, axis=-1).any())


def test_picture_shows_knights_in_seat_colours_the_king_heights_and_castle_walls():
    state = build(ROWS)
    image = state.render_rgb()
    assert image.dtype == np.uint8 and image.shape[2] == 3
    assert has(cell(image, 0, 3), r.SEAT_RGB[0]) and has(cell(image, 2, 1), r.SEAT_RGB[1])
    assert has(cell(image, 0, 0), r.GOLD)  # the king, and the king's castle walls
    assert not has(cell(image, 3, 3), r.SEAT_RGB[0]) and has(cell(image, 3, 3), r.GROUND)
    assert has(cell(image, 0, 3), r.WALL) and not has(cell(image, 3, 3), r.WALL)
    assert has(cell(image, 0, 3), r.stone_colour(2)) and has(cell(image, 1, 3), r.stone_colour(1))


def test_picture_frames_the_selected_knight():
    state = build(ROWS)
    white = (255, 255, 255)
    edge = slice(1, 4), slice(r.CELL // 2 - 5, r.CELL // 2 + 5)  # the middle of the cell's top border
    assert not has(cell(state.render_rgb(), 0, 3)[edge], white)
    play(state, "move from (0,3)")
    assert np.all(cell(state.render_rgb(), 0, 3)[edge] == white)


def test_text_shows_hands_only_to_their_owner():
    state = build(ROWS, hands={0: {2: 1}, 1: {5: 2}})
    assert "hand 1 (extra block)" in state.render_text(0) and "hand 2 (ap 6 ×2)" not in state.render_text(0)
    assert "hand 2 (ap 6 ×2)" in state.render_text(1) and "top first" not in state.render_text(1)
    assert "top first" in state.render_text()  # the deck order, for viewer=None only
    assert " 2bR" in state.render_text()  # height 2, castle b (the second in scan order), Red's knight


@pytest.mark.parametrize("num_players", [2, 4])
def test_picture_has_a_legend_naming_the_seat_colours_and_what_the_numbers_mean(num_players):
    """Under the board: a swatch per seat in play (T3), the king, ground and castle squares, and the meaning
    of the heights, castle letters and panel figures."""
    image = Game(num_players=num_players).new_initial_state(0).render_rgb()
    key = r.picture_legend(num_players)
    rows = legend_height(key, image.shape[1] - 2 * r.MARGIN) + r.MARGIN // 2
    assert image.shape[0] - rows >= r.MARGIN + r.SIZE * r.CELL  # the whole board stays above it
    legend = image[-rows:]
    for p in range(4):
        assert has(legend, r.SEAT_RGB[p]) == (p < num_players), r.SEAT_NAMES[p]
    for colour in (r.GOLD, r.GROUND, r.stone_colour(1), r.SELECTED):
        assert has(legend, colour), colour
    texts = " | ".join(text for _, text in key)
    for words in ("KING", "HEIGHT", "= CASTLE", "CASTLE EDGE", "SCORE", "LEVEL", "ACTION POINTS", "BLOCKS LEFT"):
        assert words in texts


def test_moves_are_described_in_words_and_the_cards_kept_stay_hidden():
    """'select (0,2)' says what it does in each decision; the card a player keeps after looking at three is
    named to that player only (T67)."""
    state = play(build(ROWS), "move from (0,3)")
    assert state.describe_action(state.string_to_action("select (0,2)"), viewer=1) == \
        "move the knight on (0,3) to (0,2)"
    state = Game(action_deck="personal").new_initial_state(0)
    while state.phase != "D5 keep card":
        legal = state.legal_actions()
        state.apply_action(ACQUIRE if ACQUIRE in legal else legal[0])
    me = state.current_player
    for a in state.legal_actions():
        assert state.describe_action(a, viewer=me) == state.action_to_string(a)  # e.g. "keep ap 7"
        assert state.describe_action(a, viewer=1 - me) == "keep one of the cards looked at"
