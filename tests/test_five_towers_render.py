"""The Five Towers renderings (envs/five_towers/render.py): what must be readable in the text and on the picture."""

import numpy as np

from tabletop_rl.envs.core.canvas import legend_height
from tabletop_rl.envs.five_towers import Game, render
from tests.five_towers_helpers import feasibility, play


def test_render_text_and_picture():
    state = feasibility(bid=4)
    play(state, "tear down tree", "take slot 0", "take slot 1", "take slot 2", "take slot 4", "place slot 1")
    text = state.render_text(0)
    assert "player 0 to act: place" in text and "[0] tree 11 (taken)" in text and "(placed)" in text
    assert "tree 12 8" in text and "rubble: tree 3" in text and "next cards" not in text
    assert "next cards" in state.render_text()
    image = state.render_rgb()
    assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3 and min(image.shape[:2]) > 200
    assert len(np.unique(image.reshape(-1, 3), axis=0)) > 10
    assert image.shape != Game(num_players=5).new_initial_state(0).render_rgb().shape  # grows with n
    rows = legend_height(render.LEGEND, image.shape[1] - 2 * render.GAP) + render.GAP
    legend = image[-rows:]  # the legend under the table: a swatch per type (F2) and what the marks mean
    for t, colour in enumerate(render.TYPE_RGB):
        assert np.all(legend == colour, axis=2).any(), f"no {render.TYPE_NAMES[t]} swatch in the legend"
    assert any("CARD VALUE" in text for _, text in render.LEGEND)
