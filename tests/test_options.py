"""Game options (``envs/core/options.py``) for every registered game: numpy scalars, as sweeps produce them,
are accepted as the plain value they hold, and the resolved options are plain Python values."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from tabletop_rl import envs
from tabletop_rl.envs.core.game import State
from tabletop_rl.envs.core.layout import Layout


def _numpy_twins(value):
    """The numpy scalars a sweep could hand over for ``value`` (none for strings and None)."""
    if isinstance(value, bool):
        return [np.bool_(value)]
    if isinstance(value, int):
        return [np.int64(value), np.int32(value)] + ([np.uint8(value)] if 0 <= value <= 255 else [])
    return []


@pytest.mark.parametrize("name", envs.list_games())
def test_numpy_scalars_are_accepted_as_plain_values(name):
    game_class = envs.game_class(name)
    plain = game_class().options
    checked = 0
    for option, value in plain.items():
        for twin in _numpy_twins(value):
            options = game_class(**{option: twin}).options
            assert options == plain, f"{option}={twin!r} resolved to {options[option]!r}"
            assert type(options[option]) is type(value), f"{option}={twin!r} kept the numpy type"
            checked += 1
    assert checked >= 3


@pytest.mark.parametrize(("name", "options"), [
    ("five_towers", {"num_players": np.int64(4), "first_player": np.int64(3), "canonical_order": np.bool_(False)}),
    ("lost_cities", {"rounds": np.int64(3), "n_colours": np.int64(6), "first_player": np.int64(1),
                     "max_turns_per_round": np.int64(100)}),
])
def test_a_sweep_with_numpy_options_plays_serialises_and_prints_cleanly(name, options):
    env = envs.make(name, **options)
    game = env.unwrapped.game
    assert all(type(v) in (int, bool, str, type(None)) for v in game.options.values()), game.options
    assert "np." not in repr(game) and "numpy" not in repr(game)
    assert json.loads(json.dumps(game.options)) == game.options
    env.reset(seed=0)
    state = env.unwrapped.game_state
    assert State.from_json(state.to_json()) == state
    assert env.unwrapped.metadata["name"] == f"{name}_v{envs.game_version(name)}"


@pytest.mark.parametrize(("name", "option", "value", "allowed"), [
    ("five_towers", "num_players", np.int64(7), "one of 2, 3, 4, 5"),
    ("five_towers", "num_players", np.float64(4.0), "one of 2, 3, 4, 5"),
    ("five_towers", "num_players", np.bool_(True), "one of 2, 3, 4, 5"),  # a bool is not the seat count 1
    ("five_towers", "canonical_order", np.int64(1), "True or False"),
    ("lost_cities", "rounds", np.int64(0), "an integer from 1 to 100"),
    ("lost_cities", "rounds", np.bool_(True), "an integer from 1 to 100"),
    ("lost_cities", "max_turns_per_round", np.int64(43), "an integer from 44 to 10000"),
])
def test_bad_numpy_values_are_still_rejected_by_name(name, option, value, allowed):
    with pytest.raises(ValueError) as error:
        envs.game_class(name)(**{option: value})
    message = str(error.value)
    assert option in message and allowed in message and repr(value) in message, message


# Every integer option's largest value: generous, yet every layout bound stays finite in float32.
MAXIMA = [("lost_cities", "rounds", 100, "an integer from 1 to 100"),
          ("lost_cities", "max_turns_per_round", 10_000, "'auto' or an integer from 44 to 10000 or None"),
          ("palazzo", "min_tile_price", 272, "an integer from 0 to 272"),
          ("palazzo", "max_turns", 10_000, "an integer from 1 to 10000 or None"),
          ("torres", "master_min_knights", 6, "an integer from 1 to 6")]


def test_every_integer_option_has_a_tested_maximum():
    integers = {(name, o.name) for name in envs.list_games() for o in envs.game_class(name).option_schema
                if "an integer" in o.allowed}
    assert integers == {(name, option) for name, option, _, _ in MAXIMA}


@pytest.mark.parametrize(("name", "option", "maximum", "allowed"), MAXIMA)
def test_integer_options_are_refused_above_their_maximum(name, option, maximum, allowed):
    game_class = envs.game_class(name)
    for too_big in (maximum + 1, np.int64(maximum + 1), 10**40):
        expected = f"{game_class.title}: option {option}={too_big!r} is not allowed; expected {allowed}"
        with pytest.raises(ValueError, match=f"^{re.escape(expected)}$"):
            envs.make(name, **{option: too_big})
    env = envs.make(name, wrapped=False, **{option: maximum})
    assert env.game.options[option] == maximum
    for space in (env.observation_space("player_0")["observation"], env.state_space):
        assert np.isfinite(space.low).all() and np.isfinite(space.high).all()
    env.reset(seed=0)
    assert env.observation_space("player_0").contains(env.observe(env.agent_selection))


@pytest.mark.parametrize(("low", "high"), [(0, 10**40), (-np.inf, 0), (0, np.nan), (1, 0)])
def test_a_layout_refuses_bounds_a_float32_box_cannot_hold(low, high):
    expected = f"observation field 'x' has bounds [{low}, {high}]; they must be finite in float32, low <= high"
    with pytest.raises(ValueError, match=f"^{re.escape(expected)}$"):
        Layout([("x", 2, "a field", low, high)])


def test_seat_rotations_put_each_viewer_first_and_keep_the_table_order():
    layout = Layout([("table", 2, "a table field", 0, 9), ("seat", (3, 2), "one row per seat", 0, 9)])
    vector = np.array([9, 8, 0, 0, 1, 1, 2, 2], np.float32)  # the table field, then the rows of seats 0, 1, 2
    views = [vector.take(index).tolist() for index in layout.seat_rotations(["seat"], 3)]
    assert views == [[9, 8, 0, 0, 1, 1, 2, 2], [9, 8, 1, 1, 2, 2, 0, 0], [9, 8, 2, 2, 0, 0, 1, 1]]
