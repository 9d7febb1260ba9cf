"""The generic contract (``tests/contract.py``) applied to Lost Cities, with the §9 invariants (L39–L50)
of ``docs/rules/lost_cities.md`` checked at every step of hundreds of random games."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tabletop_rl import envs
from tabletop_rl.envs.core.game import ChanceNeeded
from tabletop_rl.envs.core.game import State as BaseState
from tabletop_rl.envs.lost_cities import Game, State, env, raw_env
from tabletop_rl.envs.lost_cities.cards import COLOUR_NAMES
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
from tests.lost_cities_helpers import MAX_EXTRA_ROUNDS, Checker, public_changes, visible_facts

GOLDEN = Path(__file__).parent / "golden"


# ===================================================================== random play
OPTION_SETS = {  # option set → episodes: hundreds of rounds each (a 3-round match is three rounds)
    "default": ({}, 200),
    "six_colours": ({"n_colours": 6}, 100),
    "three_rounds_leader": ({"rounds": 3, "next_round_starter": "cumulative_leader"}, 60),
    "three_rounds_alternate": ({"rounds": 3, "next_round_starter": "alternate"}, 60),
    "extra_rounds": ({"match_tie": "extra_rounds", "rounds": 2}, 80),
    "cap_44": ({"max_turns_per_round": 44}, 200),
    "no_cap": ({"max_turns_per_round": None}, 100),
    "first_player_0": ({"first_player": 0}, 100),
    "first_player_1": ({"first_player": 1, "n_colours": 6, "rounds": 2}, 40),
}


@pytest.mark.parametrize("name", OPTION_SETS)
def test_L39_to_L50_random_play_keeps_the_contract_and_the_invariants(name):
    options, episodes = OPTION_SETS[name]
    game = Game(**options)
    checker = Checker(game)
    stats = check_random_play(game, episodes, seed=sum(map(ord, name)), checker=checker, deep_every=150)
    assert stats.episodes == episodes and stats.decisions >= episodes * 2 * game.initial_draw_pile
    assert stats.deep_checks >= stats.decisions // 200 and stats.hidden_changed > 0
    if name == "cap_44":  # L29: random players draw from piles, so a 44-turn cap cuts most rounds
        assert stats.truncated > episodes // 2
        assert stats.longest == 2 * 44
    else:
        assert stats.truncated == 0  # L29: the default cap (or none) cuts no random round


def test_L27_L49_a_match_tied_every_round_stops_after_five_extra_rounds():
    """Nobody ever plays a card: every round ends 0 : 0 (L23), so ties trigger L27's extra rounds and L9's
    tie rule picks the starter; the checker follows every step."""
    game = Game(match_tie="extra_rounds", first_player=1)
    checker = Checker(game)
    state = game.new_initial_state(8)
    starters = []
    while not state.is_terminal():
        if state.turn == 0 and state.phase == "card":
            starters.append(state.current_player)
        checker.position(state)
        before = checker.snapshot(state)
        legal = state.legal_actions()
        action = next(a for a in legal if a >= game.num_kinds)  # a discard, then a deck draw
        state.apply_action(action)
        checker.transition(before, action, state)
    checker.position(state)
    assert state.round == 1 + MAX_EXTRA_ROUNDS and state.round_scores == [[0, 0]] * 6
    assert starters == [1, 0, 1, 0, 1, 0] and list(state.returns()) == [0, 0]


@pytest.mark.parametrize("name", ["default", "three_rounds_leader", "first_player_1"])
def test_L6_L13_chance_given_from_outside(name):
    """The first player, the deal and every draw (the next rounds' deals too) as given chance outcomes
    (``chance=``, OpenSpiel's chance nodes), with the L39–L50 invariants at every step."""
    options, episodes = OPTION_SETS[name]
    game = Game(**options)
    assert game.num_chance_outcomes == game.num_kinds
    events = check_given_chance(game, max(2, episodes // 30), seed=len(name), checker=Checker(game))
    assert events > 2 * game.deck_size


def test_L13_a_draw_pile_draw_is_a_chance_event_over_the_cards_in_it():
    state = Game().new_initial_state(3)
    while state.phase != "draw":
        state.apply_action(state.legal_actions()[0])
    deck, draw = sorted(state.deck), state.game.draw_deck_action
    with pytest.raises(ChanceNeeded) as needed:
        state.child(draw, [])
    kinds = sorted(set(deck))
    assert needed.value.event == f"player {state.current_player} draws"
    assert needed.value.outcomes == [(k, deck.count(k) / len(deck)) for k in kinds]
    assert needed.value.names == [state.card_to_string(k) for k in kinds]
    p, kind = state.current_player, kinds[-1]
    after = state.child(draw, [kind])
    rest = list(deck)
    rest.remove(kind)
    assert after.hands[p].get(kind, 0) == state.hands[p].get(kind, 0) + 1 and sorted(after.deck) == rest
    assert state.phase == "draw" and sorted(state.deck) == deck  # the state itself is unchanged


@pytest.mark.parametrize("options", [{}, {"n_colours": 6, "rounds": 2, "max_turns_per_round": 100}],
                         ids=["default", "6colours_2rounds_cap100"])
def test_L34_every_fact_a_seat_may_know_is_in_its_observation(options):
    """Positions that differ in one public fact (the turn cap, from turn 0 on; a discard pile's order; the
    turn counter) give every seat different observations; resampling what a seat cannot see (L47) does
    not change its observation."""
    told_apart, alike = check_observations_tell_apart(Game(**options), 3, seed=6, information=visible_facts,
                                                      variants=public_changes, stride=30)
    assert told_apart > 300 and alike > 50


def test_the_checker_can_fail():
    """A duplicated card breaks L39; a step that changes nothing is not a transition."""
    state = Game(first_player=0).new_initial_state(3)
    checker = Checker(state.game)
    before = state.clone()
    action = state.legal_actions()[0]
    state.apply_action(action)
    checker.transition(before, action, state)
    checker.position(state)
    with pytest.raises(AssertionError, match="L11"):
        checker.transition(before, action, before.clone())
    state.piles[1].append(state.deck[-1])
    with pytest.raises(AssertionError, match="L39"):
        checker.position(state)


# ===================================================================== determinism and serialisation
@pytest.mark.parametrize(("options", "seeds"), [
    ({}, range(16)),
    ({"n_colours": 6, "rounds": 2, "next_round_starter": "alternate"}, range(100, 103)),
])
def test_L48_same_seed_same_game(options, seeds):
    check_determinism(Game(**options), seeds)


def test_json_of_every_option_set_round_trips():
    for options, _ in OPTION_SETS.values():
        state = Game(**options).new_initial_state(5)
        random_playout(state, np.random.default_rng(5), 31)
        copy = BaseState.from_json(state.to_json())
        assert type(copy) is State and copy == state and copy.game.options == state.game.options


# ===================================================================== bad input
def _states(options: dict, seed: int) -> dict[str, State]:
    """A card step, a draw step after a discard, a draw step after a play, and a finished game."""
    rng = np.random.default_rng(seed)
    state = Game(**options).new_initial_state(seed)
    out = {"card": state.clone()}
    K = state.game.num_kinds
    while "after_discard" not in out or "after_play" not in out:
        action = int(rng.choice(state.legal_actions()))
        state.apply_action(action)
        if state.phase == "draw":
            out["after_play" if action < K else "after_discard"] = state.clone()
    random_playout(state, rng)
    out["terminal"] = state
    return out


@pytest.mark.parametrize("options", [{}, {"n_colours": 6}, {"max_turns_per_round": 44}])
def test_L38_bad_actions_are_rejected_and_change_nothing(options):
    for where, state in _states(options, 11).items():
        messages = check_bad_input(state)
        if where != "terminal":
            assert any("illegal" in m for m in messages)


def test_L44_the_discarded_pile_is_named_in_the_error():
    state = _states({}, 11)["after_discard"]
    c = state.forbidden
    action = state.game.draw_deck_action + 1 + c
    expected = rf"action {action} \(draw {COLOUR_NAMES[c]}\) is illegal .*phase draw"
    with pytest.raises(ValueError, match=expected):
        state.apply_action(action)


# ===================================================================== bad options
BAD_OPTIONS = [
    ({"n_colours": 4}, "n_colours", "5, 6"),
    ({"n_colours": 5.0}, "n_colours", "5, 6"),
    ({"rounds": 0}, "rounds", "an integer from 1 to 100"),
    ({"rounds": "3"}, "rounds", "an integer from 1 to 100"),
    ({"rounds": True}, "rounds", "an integer from 1 to 100"),
    ({"first_player": 2}, "first_player", "'random', 0, 1"),
    ({"first_player": True}, "first_player", "'random', 0, 1"),
    ({"next_round_starter": "winner"}, "next_round_starter", "'cumulative_leader', 'alternate'"),
    ({"match_tie": "sudden_death"}, "match_tie", "'draw', 'extra_rounds'"),
    ({"max_turns_per_round": 10}, "max_turns_per_round", "an integer from 44 to 10000"),
    ({"max_turns_per_round": 43}, "max_turns_per_round", "an integer from 44 to 10000"),
    ({"max_turns_per_round": 0}, "max_turns_per_round", "an integer from 44 to 10000"),
    ({"max_turns_per_round": 55, "n_colours": 6}, "max_turns_per_round",
     "an integer from 56 (the initial draw pile) to 10000"),
    ({"max_turns_per_round": "none"}, "max_turns_per_round", "'auto'"),
    ({"colours": 5}, "colours", "n_colours"),
]


@pytest.mark.parametrize(("options", "name", "allowed"), BAD_OPTIONS, ids=lambda x: repr(x)[:40])
def test_bad_options_name_the_option_and_the_allowed_values(options, name, allowed):
    for make in (Game, raw_env, env, lambda **o: envs.make("lost_cities", **o)):
        with pytest.raises(ValueError) as error:
            make(**options)
        message = str(error.value)
        assert "Lost Cities" in message and name in message and allowed in message, message


@pytest.mark.parametrize("options", [{"max_turns_per_round": 44}, {"n_colours": 6, "max_turns_per_round": 56},
                                     {"rounds": 9}, {"first_player": 1}, {"max_turns_per_round": None}])
def test_boundary_options_are_accepted(options):
    assert Game(**options).options.items() >= options.items()


# ===================================================================== registry and PettingZoo
def test_registry_and_pettingzoo_make():
    raw = check_registry(Game, raw_env, n_colours=6)
    assert raw.action_space("player_0").n == 127  # L36
    assert check_registry(Game, raw_env, rounds=3).game.options["rounds"] == 3
    with pytest.raises(ValueError, match="unknown game 'lost_city'.*lost_cities"):
        envs.make("lost_city")


@pytest.mark.parametrize("options", [{"n_colours": 6}, {"max_turns_per_round": 44, "rounds": 2}])
def test_pettingzoo_api_seed_render_pickle(options):  # the default options: tests/test_contract.py
    check_env_api(env, raw_env, seed=3, **options)


# ===================================================================== golden playthroughs
@pytest.mark.parametrize(("options", "filename"), [({}, "lost_cities_seed7.txt"),
                                                   ({"n_colours": 6, "rounds": 2},
                                                    "lost_cities_6colours_2rounds_seed7.txt")])
def test_golden_playthrough(options, filename):
    assert_matches_golden(golden_playthrough(Game(**options), 7), GOLDEN / filename)


# ===================================================================== global state
@pytest.mark.parametrize("options", [{}, {"n_colours": 6, "rounds": 2, "max_turns_per_round": None}],
                         ids=["default", "6colours_2rounds_nocap"])
def test_global_state_is_the_whole_position(options):
    """Both hands and the draw pile's order are in the global state (L31, L32), seats in table order: every
    resample of the hidden cards that moves one changes it."""
    game = Game(**options)
    stats = check_global_state(game, episodes=2, seed=5)
    assert stats.positions > 200 and stats.hidden_changed > 0
    state = game.new_initial_state(4)
    rng = np.random.default_rng(4)
    while not state.is_terminal():  # every resample that moves a hidden card changes the global state
        for p in (0, 1):
            sample = state.sample_hidden(p, rng)
            moved = (sample.hands, sample.deck) != (state.hands, state.deck)
            assert moved == (not np.array_equal(sample.global_state(), state.global_state()))
        random_playout(state, rng, 10)
    state = game.new_initial_state(4)
    random_playout(state, np.random.default_rng(4), 41)  # the seat to act is in its draw step
    v = game.state_layout.unpack(state.global_state())
    for p in (0, 1):
        held = [k for k, n in state.hands[p].items() for _ in range(n)]
        assert np.array_equal(v["hands"][p], np.bincount(held, minlength=game.num_kinds))
    assert v["to_act"].tolist() == [state.current_player == 0, state.current_player == 1]
    depths = np.rint(v["draw_order"] * game.initial_draw_pile).astype(int)
    assert sorted(depths[depths > 0]) == list(range(1, len(state.deck) + 1))
    assert depths[game.first_copy[state.deck[-1]]] == 1  # the next card drawn (a wager's nearest copy first)
    doc = (Path(__file__).resolve().parents[1] / "docs" / "lost_cities.md").read_text()
    assert f"Size: {Game().state_layout.size} (5 colours), {Game(n_colours=6).state_layout.size} (6 colours)" in doc
