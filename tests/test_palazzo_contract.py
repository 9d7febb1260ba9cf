"""The generic contract (``tests/contract.py``) applied to Palazzo, and random play with the §13 invariants
(I1–I17) of ``docs/rules/palazzo.md`` checked after every action, for 2–4 players and every option.

Masks are compared at every decision with ``palazzo_helpers.expected_legal``, written from the spec (P72,
with the reach formula of P22/P23a as printed); the observation is checked against the state (own hand, the
others' K_q and U_q, the cards the seat cannot locate, tile locations) and against a from-scratch rebuild.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from tabletop_rl import envs
from tabletop_rl.envs.core.game import State as BaseState
from tabletop_rl.envs.palazzo import Game, State, env, raw_env
from tabletop_rl.envs.palazzo.components import FLOOR
from tabletop_rl.envs.palazzo.game import tile_name
from tests.contract import (
    assert_matches_golden,
    check_bad_input,
    check_determinism,
    check_env_api,
    check_given_chance,
    check_global_state,
    check_random_play,
    check_registry,
    checked_random_games,
    given_chance,
    golden_playthrough,
    random_playout,
)
from tests.palazzo_helpers import Checker, build, play

GOLDEN = Path(__file__).parent / "golden"

# name → options; every option value appears, every player count several times
OPTION_SETS = {
    "2p": {"num_players": 2},
    "3p": {"num_players": 3},
    "4p": {},
    "2p_free_order_random_stacks": {"num_players": 2, "canonical_order": False, "stack_split": "random",
                                    "reshuffle_timing": "on_empty", "first_player": 1},
    "3p_auto_hidden_removed": {"num_players": 3, "auto_resolve_forced": True, "removed_tiles_public": False,
                               "stack_split": "by_floor_shuffled", "allow_noop_reconstruct": True},
    "4p_free_order_auto_price": {"canonical_order": False, "auto_resolve_forced": True, "min_tile_price": 2,
                                 "stack_split": "by_floor_shuffled", "removed_tiles_public": False},
    "4p_noop_reshuffle_on_empty": {"allow_noop_reconstruct": True, "reshuffle_timing": "on_empty",
                                   "stack_split": "random", "first_player": 3, "max_turns": 60},
}
# random games with the invariants per option set: hundreds per player count
BULK = {"2p": 140, "3p": 130, "4p": 110, "2p_free_order_random_stacks": 60, "3p_auto_hidden_removed": 70,
        "4p_free_order_auto_price": 50, "4p_noop_reshuffle_on_empty": 40}  # 200 games per player count


@pytest.mark.parametrize("name", OPTION_SETS)
def test_I1_to_I17_hold_after_every_action_of_random_games(name):
    game = Game(**OPTION_SETS[name])
    checker = Checker(game, observation_every=40)
    games = checked_random_games(game, BULK[name], seed=sum(map(ord, name)), checker=checker)
    assert checker.seen_decisions == set(range(1, 12)), "every decision D1–D11 was met"
    assert checker.transitions == sum(decisions for _, decisions in games) and checker.positions > checker.transitions
    if game.options["max_turns"] == 400:
        assert not any(state.is_truncated() for state, _ in games)  # P66: random games end well before the cap
        assert min(state.turn for state, _ in games) >= 16  # at least 16 TILES turns (P66)
    else:
        assert any(state.is_truncated() for state, _ in games)


@pytest.mark.parametrize("name", OPTION_SETS)
def test_contract_battery_clone_json_leaks_bounds(name):
    """tests/contract.py's random play: clone / JSON copies replay the same future, no leak through
    sample_hidden (observation, text, legal actions), bounds; with the invariants on every sample too."""
    game = Game(**OPTION_SETS[name])
    checker = Checker(game, observation_every=7)
    stats = check_random_play(game, 4, seed=len(name), checker=checker, deep_every=40)
    assert stats.episodes == 4 and stats.deep_checks >= stats.decisions // 45 and stats.hidden_changed > 0


@pytest.mark.parametrize("name", ["2p", "4p", "2p_free_order_random_stacks", "3p_auto_hidden_removed"])
def test_P6a_chance_given_from_outside(name):
    """The first player, the tiles of a shuffled split's stacks I and II, the tiles revealed and drawn, the deal and
    every money card drawn (reshuffled decks too) as given chance outcomes (OpenSpiel's chance nodes), with the
    invariants at every position."""
    game = Game(**OPTION_SETS[name])
    assert game.num_chance_outcomes == 49  # tiles 0–47, the riders
    assert check_given_chance(game, 2, seed=len(name), checker=Checker(game, observation_every=7)) > 100


@pytest.mark.parametrize(("split", "stack_I", "stack_II"), [
    ("by_floor_shuffled", [t for t in range(48) if FLOOR[t] == 2], [t for t in range(48) if FLOOR[t] == 4]),
    ("random", list(range(48)), None),  # stack II: of the tiles left
])
def test_P7_a_shuffled_split_deals_stacks_I_and_II_by_chance(split, stack_I, stack_II):
    """With given chance outcomes, which tiles a shuffled split puts in stacks I and II are chance events at setup,
    each tile of the pile dealt from equally likely (7 floor-2 tiles to I and 2 floor-4 tiles to II, or 16 and 16
    of all 48); the setup's draws (P9) then come from stack I as dealt."""
    events = []
    state, given = given_chance(partial(Game(stack_split=split).new_initial_state, 0), np.random.default_rng(0), events)
    counts = (7, 2) if split == "by_floor_shuffled" else (16, 16)
    split_events, draw = events[:sum(counts)], events[sum(counts)]
    assert [e.event for e in split_events] == ["tile into stack I"] * counts[0] + ["tile into stack II"] * counts[1]
    dealt = [given[:counts[0]], given[counts[0]:sum(counts)]]
    stack_II = stack_II or [t for t in range(48) if t not in dealt[0]]
    for stack, pile in enumerate((stack_I, stack_II)):
        for i, needed in enumerate(split_events[sum(counts[:stack]):sum(counts[:stack + 1])]):
            left = [t for t in pile if t not in dealt[stack][:i]]
            assert needed.outcomes == [(t, 1 / len(left)) for t in left]
        assert all(state.member[t] == stack for t in dealt[stack])
    assert sum(m == 0 for m in state.member) == sum(m == 1 for m in state.member) == 16
    assert draw.event == "tile drawn" and draw.outcomes == [(t, 1 / 16) for t in range(48) if state.member[t] == 0]
    assert draw.names[0] == f"tile {draw.outcomes[0][0]} {tile_name(draw.outcomes[0][0])}"


def test_checker_catches_broken_invariants(monkeypatch):
    """The checker can fail: a duplicated card, a palace with a repeated floor, a wrong mask."""
    game = Game(num_players=2)
    checker = Checker(game)
    state = game.new_initial_state(3)
    checker.position(state)
    broken = state.clone()
    broken.discard[0] += 1
    with pytest.raises(AssertionError, match="I1"):
        checker.position(broken)
    with pytest.raises(AssertionError, match="I5"):
        checker.position(build({"num_players": 2}, palaces={0: [[1, 4, 3]]}))
    monkeypatch.setattr(State, "legal_actions", lambda self: [1])  # an engine that only draws tiles
    with pytest.raises(AssertionError, match="P72"):
        checker.position(game.new_initial_state(3))


# ===================================================================== leaks and the global state
def _positions(options: dict, seed: int, every: int = 17) -> list[State]:
    rng = np.random.default_rng(seed)
    state = Game(**options).new_initial_state(seed)
    out = []
    while not state.is_terminal():
        if len(state.legal_actions()) > 0 and rng.random() < 1 / every:
            out.append(state.clone())
        random_playout(state, rng, 1)
    return out + [state]


@pytest.mark.parametrize("options", [{}, {"num_players": 2, "stack_split": "random",
                                          "removed_tiles_public": False}])
def test_P69_P70a_sample_hidden_keeps_every_public_fact_and_redraws_the_rest(options):
    changed_hands = changed_stacks = 0
    for state in _positions(options, 5):
        for p in range(state.num_players):
            sample = state.sample_hidden(p, np.random.default_rng(p))
            assert np.array_equal(sample.observation(p), state.observation(p))
            assert sample.known == state.known and sample.hands[p] == state.hands[p]  # I15
            for q in range(state.num_players):
                assert sum(sample.hands[q]) == sum(state.hands[q])
                assert all(k <= h for k, h in zip(sample.known[q], sample.hands[q], strict=True))
            assert [len(s) for s in sample.stacks] == [len(s) for s in state.stacks]
            assert len(sample.removed) == len(state.removed) and len(sample.deck) == len(state.deck)
            if state.deck_known:
                assert sorted(sample.deck) == sorted(state.deck)  # its contents are public
            changed_hands += sample.hands != state.hands
            changed_stacks += sample.stacks != state.stacks
    assert changed_hands and changed_stacks


def test_P69_stack_contents_are_resampled_only_where_the_split_leaves_them_open():
    """by_floor with public removed tiles: every stack keeps its contents (only the order is hidden);
    by_floor_shuffled: each stack keeps its floor counts (P7), and some floor-2 / floor-4 tiles move."""
    state = _positions({}, 8)[3]
    sample = state.sample_hidden(1, np.random.default_rng(0))
    assert [sorted(s) for s in sample.stacks] == [sorted(s) for s in state.stacks]
    moved = 0
    for state in _positions({"stack_split": "by_floor_shuffled"}, 9)[:4]:
        sample = state.sample_hidden(0, np.random.default_rng(1))
        moved += [sorted(s) for s in sample.stacks] != [sorted(s) for s in state.stacks]
        for st in (state, sample):
            floor2, floor4 = (3, 4, 5), (10, 11, 12)  # j of the floor-2 and floor-4 tiles (P4)
            assert sum(st.member[t] == 0 for t in range(48) if t % 16 in floor2) == 7
            assert sum(st.member[t] == 1 for t in range(48) if t % 16 in floor4) == 2
            for s, stack in enumerate(st.stacks):
                assert all(st.member[t] == s for t in stack if t < 48)
    assert moved


def test_sample_hidden_keeps_an_opponents_open_payment_reachable():
    """An opponent in the middle of a payment is known to reach its target (I10 in every sample)."""
    state = build({"num_players": 2}, active=1, hands={1: "A7 A6 B5 Z"}, known={1: ""}, supply=[0, 1, 2],
                  stacks=[[33, 40]])
    play(state, "tiles", "buy", "tile 0 b1.1", "tile 1 b1.2")  # 4 tiles after the draw: p = 6, T = 12 (E3)
    assert state.decision == 5 and state.pay_target == 12
    hands = set()
    for seed in range(40):
        sample = state.sample_hidden(0, np.random.default_rng(seed))
        assert sample.legal_actions(), "a resampled opponent cannot complete his payment"
        hands.add(tuple(sample.hands[1]))
    assert len(hands) > 5  # still resampled


@pytest.mark.parametrize("name", ["2p", "4p", "3p_auto_hidden_removed"])
def test_global_state_contract_and_env_state(name):
    """tests/contract.py: bounds, determinism, copies, JSON, hidden information, env.state() and
    PettingZoo's state_test. Under by_floor with public removed tiles every resample (hands, deck order,
    stack order) shows in the global state; otherwise a resample may also relabel which stack a removed
    tile came from, which no rule reads."""
    game = Game(**OPTION_SETS[name])
    stats = check_global_state(game, episodes=2, seed=3, deep_every=25)
    assert stats.hidden_changed > 0
    if name != "3p_auto_hidden_removed":
        assert stats.hidden_changed == stats.resamples_moved


def test_global_state_is_bounded_complete_and_not_an_observation():
    game = Game(num_players=3)
    low, high = game.state_layout.bounds()
    for state in _positions({"num_players": 3}, 4):
        g = state.global_state()
        assert g.dtype == np.float32 and g.shape == (game.state_layout.size,)
        assert np.all((g >= low) & (g <= high)) and np.array_equal(g, state.global_state())
        f = game.state_layout.unpack(g)
        for p in range(3):  # seats in table order, hands included
            assert np.array_equal(np.rint(f["hands"][p] * ([3] * 15 + [10])), state.hands[p])
            assert f["hand_size"][p] * 55 == pytest.approx(sum(state.hands[p]))
        assert sorted(np.rint(f["deck_order"][f["deck_order"] > 0] * 55).astype(int)) == \
            list(range(1, len(state.deck) + 1))
        assert f["rider_depth"].sum() == 5 - state.riders
        if not state.is_terminal():
            assert f["to_act"][state.current_player] == 1
        for p in range(3):
            sample = state.sample_hidden(p, np.random.default_rng(p))
            if sample.hands != state.hands or sample.stacks != state.stacks:
                assert not np.array_equal(sample.global_state(), g), "hidden cards changed, the state did not"
                assert np.array_equal(sample.observation(p), state.observation(p))


def test_global_state_layout_shares_the_public_fields():
    game = Game()
    public = [f.name for f in game.layout][:-3]
    assert [f.name for f in game.state_layout][:len(public)] == public
    assert {"hands", "deck_order", "tile_hidden_place", "tile_depth", "rider_depth"} <= \
        {f.name for f in game.state_layout}
    assert not {"hand", "unseen_cards"} & {f.name for f in game.state_layout}


# ===================================================================== determinism, serialisation, bad input
@pytest.mark.parametrize("options", [{"num_players": 2, "canonical_order": False, "auto_resolve_forced": True,
                                      "stack_split": "random"}])  # the default options: tests/test_contract.py
def test_P6a_same_seed_same_game(options):
    check_determinism(Game(**options), range(3))


def test_json_round_trips_in_every_decision():
    """At the first position of every decision and every third position after, under every option set."""
    for options in OPTION_SETS.values():
        state = Game(**options).new_initial_state(5)
        rng = np.random.default_rng(5)
        seen, step = set(), 0
        while not state.is_terminal():
            if state.decision not in seen or step % 3 == 0:
                seen.add(state.decision)
                copy = BaseState.from_json(state.to_json())
                assert type(copy) is State and copy == state and copy.legal_actions() == state.legal_actions()
                assert np.array_equal(copy.observation(0), state.observation(0))
                assert np.array_equal(copy.global_state(), state.global_state())
            random_playout(state, rng, 1)
            step += 1
        assert len(seen) >= 10


def _decision_states(options: dict, seed: int) -> dict[str, State]:
    """One state of each decision with an illegal action (all have one), and a finished game."""
    out: dict[str, State] = {}
    rng = np.random.default_rng(seed)
    for game_seed in range(seed, seed + 20):
        state = Game(**options).new_initial_state(game_seed)
        while not state.is_terminal():
            out.setdefault(state.phase, state.clone())
            random_playout(state, rng, 1)
        out.setdefault("terminal", state)
        if len(out) == 12:
            break
    return out


@pytest.mark.parametrize("options", [{}, {"num_players": 2, "canonical_order": False}])
def test_bad_actions_are_rejected_naming_the_action_and_the_decision(options):
    states = _decision_states(options, 11)
    assert len(states) == 12
    for where, state in states.items():
        messages = check_bad_input(state)
        if where != "terminal":
            assert any("illegal" in m and where in m for m in messages)


def test_an_action_of_another_decision_is_named_in_the_error():
    state = build({"num_players": 2}, hands={0: "A3"})
    with pytest.raises(ValueError, match=r"action 76 \(pass\) is illegal for player 0 in phase D1 action"):
        state.apply_action(76)
    with pytest.raises(ValueError, match=r"action 2 \(reconstruct\) is illegal .* D1 action"):
        state.apply_action(2)  # no palace (P12)


@pytest.mark.parametrize(("options", "allowed"), [
    ({"num_players": 5}, "one of 2, 3, 4"),
    ({"num_players": 1}, "one of 2, 3, 4"),
    ({"stack_split": "by_back"}, "'by_floor', 'by_floor_shuffled', 'random'"),
    ({"first_player": 4}, "one of None, 0, 1, 2, 3"),
    ({"num_players": 2, "first_player": 2}, "None or a seat 0..1"),
    ({"min_tile_price": -1}, "an integer from 0 to 272"),
    ({"max_turns": 0}, "an integer from 1 to 10000 or None"),
    ({"reshuffle_timing": "later"}, "'on_draw', 'on_empty'"),
    ({"canonical_order": 1}, "True or False"),
    ({"removed_tiles_public": "yes"}, "True or False"),
    ({"seed": 3}, "unknown option"),
])
def test_bad_options_fail_at_construction_listing_what_is_allowed(options, allowed):
    with pytest.raises(ValueError, match="Palazzo") as error:
        Game(**options)
    assert allowed in str(error.value)


# ===================================================================== registry and PettingZoo
def test_registry_and_pettingzoo_make():
    raw = check_registry(Game, raw_env, num_players=3)
    assert raw.possible_agents == [f"player_{i}" for i in range(3)]
    assert raw.action_space("player_0").n == 127  # P73
    assert check_registry(Game, raw_env).game.num_players == 4  # P1: 4 by default
    with pytest.raises(ValueError, match="num_players"):
        envs.make("palazzo", num_players=5)


@pytest.mark.parametrize("options", [{"num_players": 2}, {"num_players": 3, "auto_resolve_forced": True},
                                     {"canonical_order": False, "max_turns": 30}],
                         ids=["2p", "3p_auto", "4p_free_order_capped"])
def test_pettingzoo_api_seed_render_pickle(options):
    check_env_api(env, raw_env, seed=3, num_cycles=4000, **options)


def test_P66_truncation_reaches_the_env():
    e = env(num_players=2, max_turns=5)
    e.reset(seed=1)
    for _agent in e.agent_iter():
        obs, reward, terminated, truncated, info = e.last()
        if terminated or truncated:
            assert truncated and not terminated and reward == 0 and info["winners"] == []
            e.step(None)
        else:
            e.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert e.unwrapped.game_state.turn == 5 and e.unwrapped.game_state.is_truncated()


# ===================================================================== golden playthroughs and docs
@pytest.mark.parametrize(("options", "filename"), [
    ({"num_players": 2}, "palazzo_2p_seed7.txt"),
    ({"num_players": 3, "canonical_order": False, "auto_resolve_forced": True, "stack_split": "by_floor_shuffled",
      "removed_tiles_public": False, "reshuffle_timing": "on_empty", "first_player": 1},
     "palazzo_3p_options_seed7.txt"),
])
def test_golden_playthrough(options, filename):
    assert_matches_golden(golden_playthrough(Game(**options), 7), GOLDEN / filename)


def test_doc_has_the_generated_tables_and_every_observation_size():
    """``tests/test_docs.py`` checks the options and 4-player layout tables; the sizes for 2–4 players too."""
    doc = (Path(__file__).resolve().parents[1] / "docs" / "palazzo.md").read_text()
    assert Game().layout.to_markdown() in doc
    for n in (2, 3, 4):
        assert f"{Game(num_players=n).layout.size} ({n} players)" in doc
        assert f"{Game(num_players=n).state_layout.size} ({n} players)" in doc


def test_env_docstring_has_the_action_and_observation_tables():
    for doc in (env.__doc__, raw_env.__doc__):
        assert Game().layout.to_markdown() in doc and "ADD_GROUP(v), v = index − 66" in doc


def test_end_info_is_plain_data():
    state = _positions({"num_players": 2}, 2)[-1]
    info = state.end_info()
    assert json.loads(json.dumps(info)) == info and set(info) == {"scores", "best_pay", "winners", "turns"}
    assert info["winners"] and info["scores"] == state.scores() and info["best_pay"] == state.best_pays()
