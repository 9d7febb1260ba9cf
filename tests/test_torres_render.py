"""The Torres renderings (envs/torres/render.py): what must be readable on the picture and in the text."""

import numpy as np

from tabletop_rl.envs.torres import render as r
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
    assert has(cell(image, 0, 3), r._stone(2)) and has(cell(image, 1, 3), r._stone(1))


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
