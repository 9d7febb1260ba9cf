"""The Torres renderings (envs/torres/render.py, svg.py): what must be readable on the picture and in the text."""

import numpy as np
import pytest

from tabletop_rl.envs.core import picture
from tabletop_rl.envs.torres import Game
from tabletop_rl.envs.torres import svg as t
from tabletop_rl.envs.torres.actions import ACQUIRE
from tests.torres_helpers import build, play

ROWS = ["1K 1 . 2R", ". . . 1", ". 1B . .", ". . . ."]
BOARD = t.MARGIN + 20  # the board's top left corner, in pixels


def cell(image: np.ndarray, row: int, col: int) -> np.ndarray:
    y, x = BOARD + row * t.CELL, BOARD + col * t.CELL
    return image[y + 6:y + t.CELL - 6, x + 6:x + t.CELL - 6]  # inside the walls


def has(pixels: np.ndarray, colour: str) -> bool:
    return bool(np.all(pixels == tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5)), axis=-1).any())


def test_picture_shows_knights_in_seat_colours_the_king_heights_and_ground():
    state = build(ROWS)
    image = state.render_rgb()
    assert image.shape[:2] == picture.rasterise(state.render_svg()).shape[:2]  # not scaled: cells where drawn
    assert has(cell(image, 0, 3), t.SEAT_COLOURS[0]) and has(cell(image, 2, 1), t.SEAT_COLOURS[1])
    assert has(cell(image, 0, 0), t.s.BLACK)  # the king
    assert not has(cell(image, 3, 3), t.SEAT_COLOURS[0]) and has(cell(image, 3, 3), t.GROUND)
    assert has(cell(image, 0, 3), t.stone(2)) and has(cell(image, 1, 3), t.stone(1))
    assert not has(cell(image, 0, 3), t.GROUND)


def test_the_selected_knight_is_framed():
    state = build(ROWS)
    assert 'stroke-dasharray="6 4"' not in state.render_svg()
    play(state, "move from (0,3)")
    assert 'stroke-dasharray="6 4"' in state.render_svg() and "selected (0,3)" in state.render_text()


def test_text_shows_hands_only_to_their_owner():
    state = build(ROWS, hands={0: {2: 1}, 1: {5: 2}})
    assert "hand 1 (extra block)" in state.render_text(0) and "hand 2 (ap 6 ×2)" not in state.render_text(0)
    assert "hand 2 (ap 6 ×2)" in state.render_text(1) and "top first" not in state.render_text(1)
    assert "top first" in state.render_text()  # the deck order, for viewer=None only
    assert " 2bR" in state.render_text()  # height 2, castle b (the second in scan order), Red's knight


@pytest.mark.parametrize("num_players", [2, 4])
def test_the_legend_names_the_seats_in_play_and_what_the_numbers_mean(num_players):
    """Under the board: each seat in play (T3), the king, ground and castle squares, and the meaning of the heights,
    castle letters and panel figures."""
    legend = Game(num_players=num_players).new_initial_state(0).render_svg().split(">Legend<")[1]
    for p, name in enumerate(("R red", "B blue", "G green", "Y yellow")):
        assert (f"{name} knight" in legend) == (p < num_players), name
    for words in ("K the king", "ground", "darker = higher", "big number: height", "castle wall",
                  "orange dashes", "selected", "at level 2", "stack: its blocks", "deck or unseen cards"):
        assert words in legend, words


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
