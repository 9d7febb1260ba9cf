"""The pictures (``State.render_rgb``, ``render_mode="rgb_array"``: the game's SVG rasterised by resvg,
``envs/core/picture.py``): one size per game's options, the same pixels for the same position, new ones when it
changes, nothing a seat cannot know on its picture, words drawn; the missing extra named in one line at the env's
creation; and videos of whole games from Gymnasium's ``RecordVideo`` and from PettingZoo frames."""

from __future__ import annotations

import re
import subprocess
import sys
import warnings

import gymnasium
import numpy as np
import pytest

import tabletop_rl
from tabletop_rl import envs
from tabletop_rl.envs.core import picture
from tabletop_rl.envs.core import svg as s
from tabletop_rl.envs.core.extras import install_hint

GAMES = [("lost_cities", {}), ("five_towers", {"num_players": 3}), ("palazzo", {"num_players": 3}),
         ("torres", {"num_players": 3, "action_deck": "personal"})]


def rgb(colour: str) -> tuple[int, int, int]:
    return tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))


def has(image: np.ndarray, colour: str) -> bool:
    """Whether some pixel of ``image`` is exactly ``colour`` (``#rrggbb``): inside a filled shape it is."""
    return bool(np.all(image == rgb(colour), axis=-1).any())


def positions(name: str, options: dict, count: int, seed: int = 0) -> list:
    """``count`` positions of one random game, evenly spread from the first to the last."""
    game = envs.game_class(name)(**options)
    rng = np.random.default_rng(seed)
    state, seen = game.new_initial_state(seed), []
    while True:
        seen.append(state.clone())
        if state.is_terminal():
            break
        legal = state.legal_actions()
        state.apply_action(legal[int(rng.integers(len(legal)))])
    return [seen[round(i * (len(seen) - 1) / (count - 1))] for i in range(count)]


@pytest.mark.parametrize(("name", "options"), GAMES, ids=[name for name, _ in GAMES])
def test_one_size_the_same_pixels_for_the_same_position_and_new_ones_when_it_changes(name, options):
    """Every picture of a game under its options has its first position's size (a video needs one size), even where
    the table is drawn taller; a copy of the position (clone, JSON) gives the same pixels, another position others."""
    first, *later = positions(name, options, 4)
    height, width = picture.size(first.game)
    before = None
    for state in (first, *later):
        image = state.render_rgb()
        assert image.dtype == np.uint8 and image.shape == (height, width, 3) and image.flags.writeable
        assert before is None or not np.array_equal(image, before), "the picture did not change with the position"
        before = image
    assert np.array_equal(image, state.clone().render_rgb())
    assert np.array_equal(image, type(state).from_json(state.to_json()).render_rgb())
    assert first.render_rgb().shape[:2] == picture.rasterise(first.render_svg(legal=())).shape[:2]  # not scaled


@pytest.mark.parametrize(("name", "options"), GAMES, ids=[name for name, _ in GAMES])
def test_a_seat_picture_shows_nothing_it_cannot_know(name, options):
    """Redrawing what a seat cannot see (``sample_hidden``) leaves its picture's pixels unchanged, while the whole
    table's picture, which shows hands and pile orders, changes at some position."""
    rng = np.random.default_rng(1)
    changed = 0
    for state in positions(name, options, 3, seed=1)[:2]:  # the first position and mid-game (not the end)
        whole = state.render_rgb()
        for p in range(state.num_players):
            sample = state.sample_hidden(p, rng)
            assert np.array_equal(sample.render_rgb(p), state.render_rgb(p)), \
                f"information leak: render_rgb({p}) shows something player {p} cannot know"
            changed += not np.array_equal(sample.render_rgb(), whole)
    assert changed


def test_the_words_are_drawn_and_a_missing_font_is_reported(monkeypatch):
    """The status line at the top left is drawn in the ink colour (a font was found), with no warning; without a
    font the picture would have no words, which :func:`picture.rasterise` says once."""
    state = envs.game_class("lost_cities")().new_initial_state(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        image = state.render_rgb()
    heading = image[16:32, 16:400]  # "Lost Cities · round 1 of 1 · …", 15 px bold ink on the table
    assert np.all(heading == rgb(s.INK), axis=-1).sum() > 100
    from PIL import Image

    real = picture._render
    monkeypatch.setattr(picture, "_render", lambda svg: Image.new("RGBA", (16, 16)) if svg == picture.LETTER
                        else real(svg))  # as if resvg found no font: the letter leaves the picture transparent
    picture._text_is_drawn.cache_clear()
    try:
        with pytest.warns(RuntimeWarning, match="no font was found .* apt install fonts-dejavu-core"):
            state.render_rgb()
    finally:
        picture._text_is_drawn.cache_clear()


def test_the_colours_of_the_table_are_on_the_picture():
    """The things each game tells apart by colour (with a letter on each as well) come out in their own colours:
    expeditions, tower types, materials and currencies, seats; a colour not in play is not drawn."""
    from tabletop_rl.envs.five_towers import svg as five_towers
    from tabletop_rl.envs.lost_cities import svg as lost_cities
    from tabletop_rl.envs.palazzo import svg as palazzo
    from tabletop_rl.envs.torres import svg as torres

    for n_colours in (5, 6):
        image = envs.game_class("lost_cities")(n_colours=n_colours).new_initial_state(0).render_rgb()
        assert [has(image, c) for c in lost_cities.COLOURS] == [True] * 5 + [n_colours == 6]
    image = envs.game_class("five_towers")().new_initial_state(0).render_rgb()
    assert all(has(image, c) for c in five_towers.COLOURS)
    image = envs.game_class("palazzo")().new_initial_state(0).render_rgb()
    assert all(has(image, c) for c in (*palazzo.MATERIAL_COLOURS, *palazzo.CURRENCY_COLOURS))
    for n in (2, 4):
        image = envs.game_class("torres")(num_players=n).new_initial_state(0).render_rgb()
        key = image[-round(s.legend_height(torres.legend(n), torres.WIDTH - 2 * torres.MARGIN)):]
        assert [has(key, c) for c in torres.SEAT_COLOURS] == [p < n for p in range(4)]  # the status is yellow


def test_the_pettingzoo_env_shows_the_whole_table_and_the_gymnasium_env_the_learners_seat():
    pz = envs.make("palazzo", render_mode="rgb_array", num_players=3)
    pz.reset(seed=2)
    assert np.array_equal(pz.render(), pz.unwrapped.game_state.render_rgb())
    single = gymnasium.make("tabletop/palazzo-v0", opponent="random", seat=1, num_players=3, render_mode="rgb_array")
    assert single.metadata["render_fps"] > 0 and "rgb_array" in single.metadata["render_modes"]
    single.reset(seed=2)
    state = single.unwrapped.game_state
    assert np.array_equal(single.render(), state.render_rgb(viewer=1))
    assert not np.array_equal(single.render(), state.render_rgb())  # the others' hands stay hidden


def test_without_the_extra_the_env_says_what_to_install(monkeypatch):
    """``render_mode="rgb_array"`` fails at the env's creation, in one line naming the extra; the light install
    imports no rasteriser, even to render text."""
    monkeypatch.setitem(sys.modules, "resvg_py", None)  # as if not installed: importing it raises ImportError
    line = r"^render_mode='rgb_array' needs the SVG rasteriser \(resvg-py and Pillow\), which is not installed " \
           r"\(resvg_py is missing\): " + re.escape(install_hint("render")) + "$"  # as the package is installed
    for make in (lambda: envs.make("lost_cities", render_mode="rgb_array"),
                 lambda: gymnasium.make("tabletop/lost_cities-v0", render_mode="rgb_array"),
                 lambda: envs.game_class("lost_cities")().new_initial_state(0).render_rgb()):
        with pytest.raises(ImportError, match=line):
            make()
    text = envs.make("lost_cities", render_mode="ansi")
    text.reset(seed=0)
    assert text.render().startswith("Lost Cities")
    code = ("import sys, tabletop_rl; e = tabletop_rl.make('torres', render_mode='ansi'); e.reset(seed=0); "
            "e.render(); e.unwrapped.game_state.render_svg(); print(sorted({'resvg_py', 'PIL'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.slow
def test_record_video_films_a_whole_episode_of_the_gymnasium_env(tmp_path):
    """Gymnasium's RecordVideo (moviepy) on ``tabletop/<game>-v0``: one video of the learner's whole episode."""
    imageio = pytest.importorskip("imageio")
    env = gymnasium.make("tabletop/five_towers-v0", opponent="random", render_mode="rgb_array")
    env = gymnasium.wrappers.RecordVideo(env, str(tmp_path / "videos"), episode_trigger=lambda episode: True,
                                         disable_logger=True)
    _, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    steps, done = 0, False
    while not done:
        _, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        steps, done = steps + 1, terminated or truncated
    env.close()
    (video,) = (tmp_path / "videos").glob("*.mp4")
    height, width = picture.size(env.unwrapped.game)
    with imageio.get_reader(video) as reader:
        assert reader.count_frames() == steps + 1  # the first position, then one per step
        assert reader.get_data(0).shape == (height, width, 3)


@pytest.mark.slow
def test_pettingzoo_frames_of_a_whole_game_make_a_video(tmp_path):
    """The PettingZoo env's ``rgb_array`` frames, one per decision of a whole game, all of one size, written as a
    video with moviepy (what RecordVideo does with them)."""
    ImageSequenceClip = pytest.importorskip("moviepy").ImageSequenceClip
    env = tabletop_rl.make("five_towers", render_mode="rgb_array")
    env.reset(seed=1)
    rng = np.random.default_rng(1)
    frames = [env.render()]
    for _ in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
        frames.append(env.render())
    assert env.unwrapped.game_state.is_terminal() and len(frames) > 100
    assert len({frame.shape for frame in frames}) == 1
    clip = ImageSequenceClip(frames, fps=env.metadata["render_fps"])
    clip.write_videofile(str(tmp_path / "game.mp4"), logger=None)
    assert (tmp_path / "game.mp4").stat().st_size > 10_000
