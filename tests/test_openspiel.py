"""The games in OpenSpiel (``training/interop/openspiel.py``, docs/interop.md "OpenSpiel"): OpenSpiel's own random
simulation test for every game, player count and documented option set; GameType and GameInfo; parameters;
chance nodes; the observer's no-leak guarantee; resampling, serialisation; OpenSpiel's search bots."""

from __future__ import annotations

import pickle
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from open_spiel.python.observation import make_observation  # noqa: E402

import tabletop_rl.openspiel  # noqa: E402
from tabletop_rl.envs.torres.actions import ACQUIRE  # noqa: E402
from tabletop_rl.training.interop import openspiel  # noqa: E402
from tests.doc_snippets import run_section  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
Information, ChanceMode = pyspiel.GameType.Information, pyspiel.GameType.ChanceMode

# Every (game, player count, option set) the docs list (docs/interop.md, "OpenSpiel"): name -> simulations
SIMULATED = {
    "tabletop_lost_cities": 3,
    "tabletop_lost_cities(n_colours=6,rounds=3,match_tie=extra_rounds,first_player=1)": 1,
    "tabletop_lost_cities(max_turns_per_round=44,next_round_starter=alternate,rounds=2)": 2,
    "tabletop_five_towers": 2,
    "tabletop_five_towers(num_players=3,canonical_order=false)": 1,
    "tabletop_five_towers(num_players=4,auto_resolve_forced=true)": 1,
    "tabletop_five_towers(num_players=5,final_partial_round=false)": 1,
    "tabletop_palazzo(num_players=2)": 1,
    "tabletop_palazzo(num_players=3,reshuffle_timing=on_empty)": 1,
    "tabletop_palazzo": 1,
    "tabletop_palazzo(num_players=2,stack_split=random)": 1,
    "tabletop_palazzo(num_players=3,stack_split=by_floor_shuffled,removed_tiles_public=false)": 1,
    "tabletop_torres": 2,
    "tabletop_torres(num_players=3)": 1,
    "tabletop_torres(num_players=4)": 1,
    "tabletop_torres(action_deck=master)": 2,
    "tabletop_torres(action_deck=master,master_card=M3,num_players=3)": 1,
    "tabletop_torres(action_deck=personal)": 2,
    "tabletop_torres(action_deck=personal,num_players=3,card_types=8)": 1,
    "tabletop_torres(action_deck=personal,num_players=4)": 1,
}


def play(state, rng: np.random.Generator, steps: int | None = None):
    """Random chance outcomes (by their probabilities) and random legal actions, until the end or ``steps``."""
    while not state.is_terminal() and steps != 0:
        if state.is_chance_node():
            outcomes, probabilities = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rng.choice(outcomes, p=probabilities)))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
            steps = None if steps is None else steps - 1
    return state


def test_the_module_registers_every_game_under_both_names():
    assert tabletop_rl.openspiel is openspiel
    names = set(pyspiel.registered_names())
    assert {f"tabletop_{name}" for name in tabletop_rl.list_games()} <= names
    openspiel.register()  # again: nothing changes, nothing is registered twice
    assert set(pyspiel.registered_names()) == names


@pytest.mark.parametrize("spec", SIMULATED)
def test_openspiel_random_sim_test(spec):
    """OpenSpiel's own checks: legal actions and masks, chance outcomes, clones, serialisation, observation and
    information-state tensors and strings of every seat, returns within the utilities and the game length."""
    pyspiel.random_sim_test(pyspiel.load_game(spec), num_sims=SIMULATED[spec], serialize=True, verbose=False)


@pytest.mark.parametrize(("spec", "information", "chance", "players", "actions", "outcomes", "length"), [
    ("tabletop_lost_cities", Information.IMPERFECT_INFORMATION, ChanceMode.EXPLICIT_STOCHASTIC, 2, 106, 50, 616),
    ("tabletop_lost_cities(n_colours=6,rounds=3,match_tie=extra_rounds)", Information.IMPERFECT_INFORMATION,
     ChanceMode.EXPLICIT_STOCHASTIC, 2, 127, 60, 2 * 392 * 8),
    ("tabletop_five_towers(num_players=4)", Information.PERFECT_INFORMATION, ChanceMode.EXPLICIT_STOCHASTIC, 4, 22,
     80, 44 * 15),
    ("tabletop_palazzo", Information.IMPERFECT_INFORMATION, ChanceMode.EXPLICIT_STOCHASTIC, 4, 127, 49, None),
    ("tabletop_palazzo(stack_split=random)", Information.IMPERFECT_INFORMATION, ChanceMode.EXPLICIT_STOCHASTIC, 4,
     127, 49, None),
    ("tabletop_torres", Information.IMPERFECT_INFORMATION, ChanceMode.EXPLICIT_STOCHASTIC, 2, 305, 10, None),
    ("tabletop_torres(action_deck=master)", Information.PERFECT_INFORMATION, ChanceMode.EXPLICIT_STOCHASTIC, 2,
     305, 8, None),
    ("tabletop_torres(action_deck=master,master_card=M1)", Information.PERFECT_INFORMATION,
     ChanceMode.DETERMINISTIC, 2, 305, 0, None),
    ("tabletop_torres(action_deck=personal,num_players=3)", Information.IMPERFECT_INFORMATION,
     ChanceMode.EXPLICIT_STOCHASTIC, 3, 305, 10, None),
])
def test_game_type_and_info_per_option_set(spec, information, chance, players, actions, outcomes, length):
    game = pyspiel.load_game(spec)
    kind = game.get_type()
    assert (kind.information, kind.chance_mode, kind.dynamics) == (information, chance,
                                                                    pyspiel.GameType.Dynamics.SEQUENTIAL)
    assert kind.utility == pyspiel.GameType.Utility.ZERO_SUM
    assert kind.reward_model == pyspiel.GameType.RewardModel.TERMINAL
    assert (game.min_utility(), game.max_utility(), game.utility_sum()) == (-1.0, 1.0, 0.0)
    assert (game.num_players(), game.num_distinct_actions(), game.max_chance_outcomes()) == (players, actions, outcomes)
    assert game.max_game_length() == (length or game.engine.max_game_length)
    assert game.observation_tensor_shape() == game.information_state_tensor_shape() == [game.engine.layout.size]


def test_registered_types_span_the_player_counts():
    counts = {name: (pyspiel.load_game(f"tabletop_{name}").get_type().min_num_players,
                     pyspiel.load_game(f"tabletop_{name}").get_type().max_num_players)
              for name in tabletop_rl.list_games()}
    assert counts == {"five_towers": (2, 5), "lost_cities": (2, 2), "palazzo": (2, 4), "torres": (2, 4)}


def test_the_game_lengths_bound_their_engines():
    """max_game_length: two decisions a turn up to the turn cap per round (Lost Cities); per round a bid per seat, a
    tear-down, 5 takes and 5 placements (Five Towers); per turn at most 36 decisions, plus the setup and the king
    moves (Torres); per turn of the cap at most an action and its longest follow-up (Palazzo)."""
    assert pyspiel.load_game("tabletop_lost_cities(max_turns_per_round=44,rounds=2)").max_game_length() == 2 * 44 * 2
    assert pyspiel.load_game("tabletop_five_towers").max_game_length() == 32 * (2 + 11)
    assert pyspiel.load_game("tabletop_torres").max_game_length() == 2 + 1 + 2 + 24 * 36
    assert pyspiel.load_game("tabletop_torres(action_deck=master)").max_game_length() == 8 + 2 + 1 + 2 + 24 * 36
    palazzo = pyspiel.load_game("tabletop_palazzo(num_players=2,max_turns=10)")
    assert palazzo.max_game_length() == 10 * (1 + 1 + 112 + 48)


def test_parameters_are_the_options_with_spelled_values():
    game = pyspiel.load_game("tabletop_lost_cities(n_colours=6,rounds=3)")
    assert game.engine.options["n_colours"] == 6 and game.engine.options["rounds"] == 3
    assert game.engine.options["first_player"] == "random" and game.engine.options["max_turns_per_round"] == "auto"
    assert pyspiel.load_game("tabletop_lost_cities(first_player=1,max_turns_per_round=50)").engine.options | {} == {
        **pyspiel.load_game("tabletop_lost_cities").engine.options, "first_player": 1, "max_turns_per_round": 50}
    torres = pyspiel.load_game("tabletop_torres(master_card=M2,action_deck=master,stack_table=3 3/2/1,"
                               "start_castles=0 7 19 28 35 44 56 63)").engine
    assert torres.options["master_card"] == "M2" and torres.options["stack_table"] == [[3, 3], [2], [1]]
    assert torres.options["start_castles"] == [0, 7, 19, 28, 35, 44, 56, 63]
    assert pyspiel.load_game("tabletop_torres").engine.options["master_card"] is None
    assert pyspiel.load_game("tabletop_palazzo").engine.options["first_player"] is None


@pytest.mark.parametrize(("spec", "message"), [
    ("tabletop_lost_cities(n_colours=7)", "Lost Cities: option n_colours=7 is not allowed; expected one of 5, 6"),
    ("tabletop_lost_cities(max_turns_per_round=10)", "tabletop_lost_cities: parameter max_turns_per_round=10 is "
     "not allowed; expected 0 ('auto') or a turn cap from 44 (OpenSpiel needs one)"),
    ("tabletop_lost_cities(first_player=2)", "tabletop_lost_cities: parameter first_player=2 is not allowed; "
     "expected -1 (random), 0 or 1"),
    ("tabletop_torres(start_castles=a b)", "tabletop_torres: parameter start_castles='a b' is not allowed; expected "
     "8 squares separated by spaces"),
    ("tabletop_torres(stack_table=3 x)", "tabletop_torres: parameter stack_table='3 x' is not allowed; expected "
     "default, or the 3 phases separated by / of stack sizes separated by spaces"),
    ("tabletop_torres(master_card=M9)", "tabletop_torres: parameter master_card='M9' is not allowed; expected "
     "random or M1 … M8"),
])
def test_a_bad_parameter_is_refused_with_one_line(spec, message):
    with pytest.raises(ValueError) as error:
        pyspiel.load_game(spec)
    assert str(error.value) == message


def test_chance_nodes_are_the_deal_and_every_draw_with_their_frequencies():
    game = pyspiel.load_game("tabletop_lost_cities")
    state = game.new_initial_state()
    assert state.is_chance_node() and state.chance_outcomes() == [(0, 0.5), (1, 0.5)]
    assert state.action_to_string(pyspiel.PlayerId.CHANCE, 1) == "first player: player 1"
    state.apply_action(1)
    assert state.chance_outcomes() == [(k, (3 if k % 10 == 0 else 1) / 60) for k in range(50)]
    for _ in range(16):  # the deal, card by card
        assert state.is_chance_node()
        state.apply_action(state.chance_outcomes()[-1][0])  # the highest kind left
    assert state.current_player() == 1 and state.engine.hands == [
        {k: 1 for k in range(49, 41, -1)}, {41: 1, 40: 3, 39: 1, 38: 1, 37: 1, 36: 1}]  # 40 is a wager: 3 copies
    state.apply_action(game.engine.num_kinds + 41)  # discard red 2
    state.apply_action(game.engine.draw_deck_action)
    deck = sorted(state.engine.deck)
    assert state.is_chance_node() and state.chance_outcomes() == [
        (k, deck.count(k) / len(deck)) for k in sorted(set(deck))]
    assert state.action_to_string(pyspiel.PlayerId.CHANCE, 0) == "player 1 draws: yellow wager"
    state.apply_action(0)
    assert state.current_player() == 0 and state.engine.hands[1][0] == 1


def test_a_shuffled_split_deals_its_stacks_at_chance_nodes():
    game = pyspiel.load_game("tabletop_palazzo(stack_split=by_floor_shuffled)")
    state = game.new_initial_state()
    floor_2 = [t for t in range(48) if t % 16 in (3, 4, 5)]  # floor 2: the 4th to 6th tile of each material
    for i in range(7):  # 7 of the 9 floor-2 tiles go to stack I
        assert state.is_chance_node() and state.chance_outcomes() == [(t, 1 / (9 - i)) for t in floor_2[i:]]
        state.apply_action(floor_2[i])
    assert state.chance_outcomes() == [(t, 1 / 9) for t in range(48) if t % 16 in (10, 11, 12)]  # floor 4, to II
    assert state.action_to_string(pyspiel.PlayerId.CHANCE, 42) == "tile into stack II: tile 42 m4.1"


def test_a_personal_deck_card_nobody_has_seen_is_a_chance_node():
    game = pyspiel.load_game("tabletop_torres(action_deck=personal)")
    state = game.new_initial_state()
    while ACQUIRE not in state.legal_actions():  # no chance node before the first acquisition
        state.apply_action(state.legal_actions()[-1])
    p = state.current_player()
    state.apply_action(ACQUIRE)
    assert state.is_chance_node() and state.chance_outcomes() == [(t, 0.1) for t in range(10)]
    assert state.action_to_string(pyspiel.PlayerId.CHANCE, 4) == f"player {p} looks at a card: diagonal move"


def test_a_state_is_a_function_of_its_history():
    """With explicit chance the engine's own generator orders only the cards left face down: replaying the history
    gives the same state (text, observations, legal actions)."""
    game = pyspiel.load_game("tabletop_palazzo(num_players=3)")
    state = play(game.new_initial_state(), np.random.default_rng(1), steps=60)
    again = game.new_initial_state()
    for action in state.history():
        again.apply_action(action)
    assert str(again) == str(state) and again.legal_actions() == state.legal_actions()
    for p in range(3):
        assert again.observation_tensor(p) == state.observation_tensor(p)


@pytest.mark.parametrize("spec", ["tabletop_lost_cities", "tabletop_palazzo(num_players=3)", "tabletop_torres",
                                  "tabletop_torres(action_deck=personal)", "tabletop_palazzo(stack_split=random)",
                                  "tabletop_palazzo(num_players=2,stack_split=by_floor_shuffled)"])
def test_no_leak_a_resampled_state_looks_the_same_to_its_seat(spec):
    """States that differ only in what a seat cannot see (``resample_from_infostate``, the engine's
    ``sample_hidden``) give that seat the same observation and information-state tensors and strings, and the
    same legal actions on its turn; what it cannot see does change."""
    game = pyspiel.load_game(spec)
    rng = np.random.default_rng(7)
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    changed = 0
    for steps in (5, 40, 120):
        state = play(game.new_initial_state(), rng, steps)
        while state.is_chance_node():  # a decision node (or the end): resampling is a seat's
            state.apply_action(state.chance_outcomes()[0][0])
        for p in range(game.num_players()):
            for _ in range(3):
                sample = state.resample_from_infostate(p, sampler)
                for view in ("observation_tensor", "information_state_tensor", "observation_string",
                             "information_state_string"):
                    assert getattr(sample, view)(p) == getattr(state, view)(p), f"{view}({p}) leaks"
                assert sample.current_player() == state.current_player()
                if state.current_player() == p:
                    assert sample.legal_actions() == state.legal_actions()
                changed += any(sample.observation_tensor(q) != state.observation_tensor(q)
                               for q in range(game.num_players()) if q != p)
    assert changed


def test_observation_string_names_the_nonzero_fields():
    game = pyspiel.load_game("tabletop_lost_cities")
    state = play(game.new_initial_state(), np.random.default_rng(3), steps=10)
    text, vector = state.observation_string(0), np.array(state.observation_tensor(0), np.float32)
    entries = dict(item.split("=") for item in text.split())
    assert len(entries) == np.count_nonzero(vector)
    for name, value in entries.items():
        field, index = re.fullmatch(r"(\w+)\[(\d+)\]", name).groups()
        assert vector[game.engine.layout[field].start + int(index)] == np.float32(value)
    observation = make_observation(game)  # the observer's named fields
    observation.set_from(state, 0)
    assert list(observation.dict) == list(game.engine.layout.fields)
    assert observation.dict["hand"].shape == game.engine.layout["hand"].shape


def test_an_observer_the_games_do_not_have_is_refused():
    game = pyspiel.load_game("tabletop_lost_cities")
    public = pyspiel.IIGObservationType(perfect_recall=False, private_info=pyspiel.PrivateInfoType.NONE)
    with pytest.raises(ValueError, match=r"^Lost Cities: only a seat's own observation \(private_info=SINGLE_PLAYER, "
                                         r"public_info=True\) exists; got [^\n]*$"):
        game.make_py_observer(public)
    with pytest.raises(ValueError, match=r"^Lost Cities: the observer takes no parameters; got \['x'\]$"):
        game.make_py_observer(None, {"x": 1})


def test_resampling_a_chance_node_is_refused():
    state = pyspiel.load_game("tabletop_lost_cities").new_initial_state()
    with pytest.raises(ValueError, match=r"^Lost Cities: resample_from_infostate needs a decision node, not a chance "
                                         r"node$"):
        state.resample_from_infostate(0, pyspiel.UniformProbabilitySampler(0.0, 1.0))


def test_serialisation_and_pickling_round_trip_at_chance_and_decision_nodes():
    game = pyspiel.load_game("tabletop_lost_cities(rounds=2)")
    state = game.new_initial_state()
    rng = np.random.default_rng(5)
    for steps in (0, 3, 30):
        play(state, rng, steps)
        for copy in (pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, state))[1],
                     pickle.loads(pickle.dumps(state)), state.clone()):
            assert str(copy) == str(state) and copy.history() == state.history()
            assert copy.is_chance_node() == state.is_chance_node()
            assert (copy.chance_outcomes() if state.is_chance_node() else copy.legal_actions()) == \
                (state.chance_outcomes() if state.is_chance_node() else state.legal_actions())
            assert copy.observation_tensor(1) == state.observation_tensor(1)
        state.apply_action(state.chance_outcomes()[0][0] if state.is_chance_node() else state.legal_actions()[0])


class ZeroEvaluator:
    """No play-outs: value 0, uniform prior (the test is that the bots play whole games, not how well)."""

    def evaluate(self, state):
        return [0.0] * state.num_players()

    def prior(self, state):
        legal = state.legal_actions()
        return [(a, 1 / len(legal)) for a in legal]


@pytest.mark.parametrize("spec", ["tabletop_lost_cities", "tabletop_five_towers", "tabletop_palazzo(num_players=2)",
                                  "tabletop_torres", "tabletop_torres(action_deck=master)"])
def test_openspiel_search_bots_play_whole_games(spec):
    """ISMCTSBot (resampling with ``resample_from_infostate``) on the imperfect-information games, MCTSBot on the
    perfect-information ones (ISMCTSBot refuses them), every seat."""
    from open_spiel.python.algorithms import ismcts, mcts

    game = pyspiel.load_game(spec)
    random_state = np.random.RandomState(0)
    if game.get_type().information == Information.PERFECT_INFORMATION:
        bot = mcts.MCTSBot(game, 2.0, 4, ZeroEvaluator(), random_state=random_state)
    else:
        bot = ismcts.ISMCTSBot(game, ZeroEvaluator(), 2.0, 4, random_state=random_state)
    state, rng, decisions = game.new_initial_state(), np.random.default_rng(0), 0
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probabilities = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rng.choice(outcomes, p=probabilities)))
        else:
            action = bot.step(state)
            assert action in state.legal_actions()
            state.apply_action(action)
            decisions += 1
    assert decisions > 20 and sum(state.returns()) == 0


def bots_benchmark(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "benchmarks" / "openspiel_bots.py"), *args],
                          capture_output=True, text=True, timeout=300)


def test_the_bots_benchmark_plays_paired_deals():
    done = bots_benchmark("lost_cities", "--simulations", "2", "--deals", "1")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split(":")[0] for line in lines[:2]] == ["deal 0 bot seat 0", "deal 0 bot seat 1"]
    assert re.match(r"ismcts \(2 simulations\) vs heuristic on tabletop_lost_cities\(.*\): 2 games, wins ", lines[2])


@pytest.mark.parametrize(("args", "message"), [
    (["lost_cities", "--deals", "0"], "argument --deals: expected an integer >= 1, got '0'"),
    (["lost_cities", "--bot", "mcts"], "--bot mcts needs a game of perfect information; use --bot ismcts"),
    (["palazzo"], "palazzo has 4 players here; this benchmark pits two"),
    (["lost_cities", "--params", "n_colours=7"],
     "Lost Cities: option n_colours=7 is not allowed; expected one of 5, 6"),
    (["lost_cities", "--params", "colours=6"], "--params colours=6: expected one of n_colours=<int>, "
     "rounds=<int>, first_player=<int>, next_round_starter=<str>, match_tie=<str>, max_turns_per_round=<int>"),
    (["lost_city"], "unknown game 'lost_city'; expected one of five_towers, lost_cities, palazzo, torres"),
])
def test_the_bots_benchmark_refuses_bad_input_in_one_line(args, message):
    done = bots_benchmark(*args)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == f"openspiel_bots.py: error: {message}\n"


def test_the_docs_snippets_run():
    """docs/interop.md, section "OpenSpiel": every python block runs, in order, as one script."""
    run_section("docs/interop.md", "OpenSpiel")
