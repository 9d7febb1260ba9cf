"""The generic contract (``tests/contract.py``) applied to Five Towers, with the §9 invariants (F36–F45) of
``docs/rules/five_towers.md`` checked at every step of random games for 2–5 players and every option.

The masks are compared at every decision with a brute force written from the spec
(``five_towers_helpers.expected_legal``: F24's Nmax over every tear-down option, subset and order — the
F39 cross-check — and F25(b)–(d)), which also proves F41: no mask is ever empty and every round ends.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from tabletop_rl import envs
from tabletop_rl.envs.core.game import State as BaseState
from tabletop_rl.envs.five_towers import Game, State, env, raw_env
from tests.contract import (
    assert_matches_golden,
    check_bad_input,
    check_determinism,
    check_env_api,
    check_given_chance,
    check_global_state,
    check_observations_tell_apart,
    check_random_play,
    check_registry,
    golden_playthrough,
    random_playout,
)
from tests.five_towers_helpers import CANDY, SAND, Checker, build, kind, public_facts, public_swaps

GOLDEN = Path(__file__).parent / "golden"


# ===================================================================== random play
OPTION_SETS = {  # name → (options, episodes); every option value appears, every player count twice
    "2p": ({}, 100),
    "2p_free_order": ({"canonical_order": False, "first_player": 1}, 50),
    "3p": ({"num_players": 3, "reshuffle_includes_last_round": False}, 50),
    "3p_free_order": ({"num_players": 3, "canonical_order": False, "final_partial_round": False}, 30),
    "4p": ({"num_players": 4, "zero_starts_tower": False, "rebuild_removed_tower": False}, 30),
    "4p_free_order": ({"num_players": 4, "canonical_order": False, "auto_resolve_forced": True}, 25),
    "5p": ({"num_players": 5, "auto_resolve_forced": True, "first_player": 4}, 25),
    "5p_free_order": ({"num_players": 5, "canonical_order": False, "rebuild_removed_tower": False,
                       "final_partial_round": False, "reshuffle_includes_last_round": False}, 25),
}


@pytest.mark.parametrize("name", OPTION_SETS)
def test_F36_to_F45_random_play_keeps_the_contract_and_the_invariants(name):
    options, episodes = OPTION_SETS[name]
    game = Game(**options)
    checker = Checker(game)
    stats = check_random_play(game, episodes, seed=sum(map(ord, name)), checker=checker, deep_every=60)
    assert stats.episodes == episodes and stats.truncated == 0
    assert stats.decisions >= episodes * 15 * game.num_players  # whole games were played
    assert stats.deep_checks >= stats.decisions // 100 and stats.hidden_changed > 0
    assert checker.rounds_checked >= episodes * 16


@pytest.mark.parametrize("name", ["2p", "3p", "5p_free_order"])
def test_F7_F9_chance_given_from_outside(name):
    """The first player and every revealed card as given chance outcomes (OpenSpiel's chance nodes), with the
    invariants at every position."""
    options, _ = OPTION_SETS[name]
    game = Game(**options)
    events = check_given_chance(game, 3, seed=len(name), checker=Checker(game))
    assert events > 3 * game.deck_size  # both passes through the deck


@pytest.mark.parametrize("options", [{}, {"num_players": 4, "rebuild_removed_tower": False}], ids=["2p", "4p"])
def test_F30_every_public_fact_is_in_the_observation(options):
    """Positions that differ in public cards only (two cards of a type trading places between towers, rubble
    piles and the discard pile, or within a tower) give every seat different observations; reshuffling the
    draw pile (F31) gives the same ones."""
    told_apart, alike = check_observations_tell_apart(Game(**options), 3, seed=8, information=public_facts,
                                                      variants=lambda state, rng: public_swaps(state, rng, 8))
    assert told_apart > 500 and alike > 100


def test_checker_catches_broken_invariants(monkeypatch):
    """The invariant callbacks can fail: a duplicated card, an illegal tower, a wrong mask."""
    game = Game()
    checker = Checker(game)
    state = game.new_initial_state(3)
    checker.position(state)
    broken = state.clone()
    broken.discard[broken.draw[-1]] += 1
    with pytest.raises(AssertionError, match="F36"):
        checker.position(broken)
    with pytest.raises(AssertionError, match="F37"):
        checker.position(build(display=[kind(SAND, 1)], towers={0: {CANDY: [3, 7]}}))
    monkeypatch.setattr(State, "legal_actions", lambda self: [0])  # an engine that only lets you pass
    with pytest.raises(AssertionError, match="F25"):
        checker.position(game.new_initial_state(3))


def test_F42_pass_two_length():
    """P2 = deck − cards taken in pass 1; pass 2 lasts ceil(P2 / 5) rounds (floor without a partial round)."""
    for options in ({}, {"final_partial_round": False}):
        game = Game(**options)
        rng = np.random.default_rng(42)
        for seed in range(4):
            state = game.new_initial_state(seed)
            taken = 0
            while state.pass_no == 1:
                if state.phase == "place" and state.placed == 0:
                    taken += state.take_n
                random_playout(state, rng, 1)
            assert state.round == 17
            p2 = 80 - taken
            random_playout(state, rng)
            rounds = math.ceil(p2 / 5) if game.options["final_partial_round"] else p2 // 5
            assert state.round == 16 + rounds


# ===================================================================== determinism, serialisation, bad input
@pytest.mark.parametrize("options", [{"num_players": 4, "canonical_order": False,
                                      "auto_resolve_forced": True}])  # the default options: tests/test_contract.py
def test_F45_same_seed_same_game(options):
    check_determinism(Game(**options), range(4))


def test_json_of_every_option_set_round_trips_in_every_phase():
    for options, _ in OPTION_SETS.values():
        game = Game(**options)
        state = game.new_initial_state(5)
        rng = np.random.default_rng(5)
        seen = set()
        while not state.is_terminal() and len(seen) < 4:
            seen.add(state.phase)
            copy = BaseState.from_json(state.to_json())
            assert type(copy) is State and copy == state and copy.legal_actions() == state.legal_actions()
            assert np.array_equal(copy.observation(0), state.observation(0))
            random_playout(state, rng, 1)
        assert seen == {"bid", "teardown", "take", "place"} or options.get("auto_resolve_forced")


def _phase_states(options: dict, seed: int) -> dict[str, State]:
    """One state of each phase with some illegal action, and a finished game."""
    rng = np.random.default_rng(seed)
    state = Game(**options).new_initial_state(seed)
    out: dict[str, State] = {}
    while not state.is_terminal():
        if state.phase not in out and len(state.legal_actions()) < 22:
            out[state.phase] = state.clone()
        random_playout(state, rng, 1)
    out["terminal"] = state
    return out


@pytest.mark.parametrize("options", [{}, {"num_players": 5, "canonical_order": False}])
def test_bad_actions_are_rejected_and_change_nothing(options):
    states = _phase_states(options, 11)
    assert set(states) == {"bid", "teardown", "take", "place", "terminal"}
    for where, state in states.items():
        messages = check_bad_input(state)
        if where != "terminal":
            assert any("illegal" in m and where in m for m in messages)


def test_an_action_of_another_phase_is_named_in_the_error():
    state = _phase_states({}, 3)["take"]
    with pytest.raises(ValueError, match=r"action 1 \(bid 1\) is illegal for player \d in phase take"):
        state.apply_action(1)


# ===================================================================== registry and PettingZoo
def test_registry_and_pettingzoo_make():
    raw = check_registry(Game, raw_env, num_players=4)
    assert raw.possible_agents == [f"player_{i}" for i in range(4)]
    assert raw.action_space("player_0").n == 22  # F33
    assert check_registry(Game, raw_env, num_players=3).game.num_players == 3
    with pytest.raises(ValueError, match="num_players"):
        envs.make("five_towers", num_players=7)


@pytest.mark.parametrize("options", [{"num_players": 3, "auto_resolve_forced": True},
                                     {"num_players": 4, "canonical_order": False}, {"num_players": 5}],
                         ids=["3p_auto", "4p_free_order", "5p"])  # the default options: tests/test_contract.py
def test_pettingzoo_api_seed_render_pickle(options):
    check_env_api(env, raw_env, seed=3, num_cycles=2000, **options)


def test_F34_masks_in_observations_and_infos():
    e = env(num_players=3)
    e.reset(seed=1)
    for agent in e.agent_iter(60):
        obs, _, terminated, truncated, info = e.last()
        mask = obs["action_mask"]
        assert mask.dtype == np.int8 and mask.any() and np.array_equal(info["action_mask"], mask)
        for other in e.agents:
            if other != agent:
                assert not e.observe(other)["action_mask"].any()
        e.step(int(np.flatnonzero(mask)[0]))


# ===================================================================== golden playthroughs
@pytest.mark.parametrize(("options", "filename"), [
    ({}, "five_towers_seed7.txt"),
    ({"num_players": 3, "canonical_order": False, "auto_resolve_forced": True, "zero_starts_tower": False,
      "rebuild_removed_tower": False, "first_player": 1}, "five_towers_3p_options_seed7.txt"),
])
def test_golden_playthrough(options, filename):
    assert_matches_golden(golden_playthrough(Game(**options), 7), GOLDEN / filename)


def test_doc_has_the_generated_tables_and_every_observation_size():
    """``tests/test_docs.py`` checks the options and 2-player layout tables; the sizes for 2–5 players too
    (observation and global state)."""
    doc = (Path(__file__).resolve().parents[1] / "docs" / "five_towers.md").read_text()
    assert Game().layout.to_markdown() in doc
    for n in (2, 3, 4, 5):
        assert f"{Game(num_players=n).layout.size} ({n} players)" in doc
        assert f"{Game(num_players=n).state_layout.size} ({n} players)" in doc


def test_env_docstring_has_the_action_and_observation_tables():
    for doc in (env.__doc__, raw_env.__doc__):
        assert Game().layout.to_markdown() in doc and "TEAR DOWN the top of tower type" in doc


# ===================================================================== global state
@pytest.mark.parametrize("options", [{}, {"num_players": 4, "canonical_order": False},
                                     {"num_players": 5, "auto_resolve_forced": True}], ids=["2p", "4p", "5p_auto"])
def test_global_state_is_the_whole_position(options):
    """The global state holds every public fact in table order (seat 0's observation, F30) and the one
    secret, the draw pile's order (F31): every reshuffle of the draw pile changes it, no observation."""
    game = Game(**options)
    stats = check_global_state(game, episodes=3, seed=5)
    assert stats.positions > 300 and stats.hidden_changed == stats.resamples_moved > 0
    state = game.new_initial_state(2)
    random_playout(state, np.random.default_rng(2), 30)
    vector = state.global_state()
    assert np.array_equal(vector[:game.layout.size], state.observation(0))
    depths = np.rint(game.state_layout.unpack(vector)["draw_order"] * game.deck_size).astype(int)
    assert sorted(depths[depths > 0]) == list(range(1, len(state.draw) + 1))  # one card per depth
    for depth, kind_ in enumerate(reversed(state.draw), 1):  # the copies of a kind sit side by side
        copies = depths[game.first_copy[kind_]:game.first_copy[kind_] + game.multiplicity[kind_]]
        assert depth in copies
