"""The engine contract (docs/engine_contract.md, ``tests/contract.py``) for every registered game at its default
options, parametrized over ``list_games()``: a new game is covered here without new wiring. Each game's own file
(``tests/test_<game>_contract.py``) keeps what is specific to it: its invariants checked at every step, its option
sets, errors, golden playthroughs and hidden facts."""

from __future__ import annotations

import numpy as np
import pytest

from tabletop_rl import envs
from tabletop_rl.envs.core.game import State
from tests.contract import (
    check_bad_input,
    check_determinism,
    check_env_api,
    check_given_chance,
    check_global_state,
    check_random_play,
    check_registry,
    random_playout,
)

GAMES = envs.list_games()


def game_of(name: str):
    return envs.game_class(name)()


@pytest.mark.parametrize("name", GAMES)
def test_random_play_keeps_the_contract(name):
    stats = check_random_play(game_of(name), episodes=3, seed=1, deep_every=40)
    assert stats.episodes == 3 and stats.decisions > 0 and stats.deep_checks > 0


@pytest.mark.parametrize("name", GAMES)
def test_same_seed_same_game(name):
    check_determinism(game_of(name), range(4))


@pytest.mark.parametrize("name", GAMES)
def test_chance_given_from_outside(name):
    check_given_chance(game_of(name), 2, seed=2)  # how many events a game has is the game's own test


@pytest.mark.parametrize("name", GAMES)
def test_bad_actions_are_refused_and_change_nothing(name):
    game = game_of(name)
    state, rng = game.new_initial_state(4), np.random.default_rng(4)
    while not state.is_terminal():
        assert any("illegal" in message for message in check_bad_input(state))
        random_playout(state, rng, 23)
    check_bad_input(state)


@pytest.mark.parametrize("name", GAMES)
def test_json_round_trips_along_a_game(name):
    state, rng = game_of(name).new_initial_state(5), np.random.default_rng(5)
    while not state.is_terminal():
        copy = State.from_json(state.to_json())
        assert type(copy) is type(state) and copy == state and copy.game.options == state.game.options
        random_playout(state, rng, 17)


@pytest.mark.parametrize("name", GAMES)
def test_registry_and_pettingzoo(name):
    module = envs.game_module(name)
    check_registry(module.Game, module.raw_env)
    check_env_api(module.env, module.raw_env, seed=3, num_cycles=game_of(name).max_game_length or 10_000)


@pytest.mark.parametrize("name", GAMES)
def test_global_state_is_checked(name):
    stats = check_global_state(game_of(name), episodes=1, seed=5, deep_every=25)
    assert stats.positions > 0
