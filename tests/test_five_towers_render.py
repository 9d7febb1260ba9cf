"""The Five Towers renderings (envs/five_towers/render.py, svg.py): what must be readable in the text and on the
picture."""

from tabletop_rl.envs.five_towers import Game
from tests.five_towers_helpers import feasibility, play


def test_render_text_and_picture():
    state = feasibility(bid=4)
    play(state, "tear down tree", "take slot 0", "take slot 1", "take slot 2", "take slot 4", "place slot 1")
    text = state.render_text(0)
    assert "Player 0 to place a taken card · H = 4" in text and "[0] tree 11 (taken)" in text and "(placed)" in text
    assert "tree 12 8" in text and "rubble: tree 3" in text and "next cards" not in text
    assert "next cards" in state.render_text() and "next cards, top first" in state.render_svg()
    assert "next cards" not in state.render_svg(0)  # the draw pile's order (F30)
    assert state.render_text(0).splitlines()[1] in state.render_svg(0)  # one status line for both
    wide = Game(num_players=5).new_initial_state(0).render_rgb()
    assert wide.shape[1] > state.render_rgb().shape[1]  # three panels a row instead of two
