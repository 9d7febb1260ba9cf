"""The Palazzo heuristic agent: legal under every option, deterministic, sensible in scenarios and much better
than random at 2, 3 and 4 players."""

from __future__ import annotations

import numpy as np
import pytest

from tabletop_rl import envs
from tabletop_rl.envs.core.agents import RandomAgent, builtin_agent
from tabletop_rl.envs.core.match import first_place_shares, play_game, score_margins
from tabletop_rl.envs.palazzo import Game, HeuristicAgent
from tests.palazzo_helpers import RIDER, build, card, dest, play


def tournament(options: dict, games: int, seed: int) -> tuple[float, float]:
    """One heuristic, in each seat in turn, against random players through the wrapped env: its mean
    first-place share (ties split) and score margin over the others (``tabletop_rl.envs.core.match``)."""
    env = envs.make("palazzo", **options)
    n = env.unwrapped.game.num_players
    shares, margins = [], []
    for i in range(games):
        seat = i % n
        agents = [HeuristicAgent(env.unwrapped.game) if p == seat else RandomAgent(seed=seed + 100 * i + p)
                  for p in range(n)]
        returns, scores = play_game(env, agents, seed + i)
        shares.append(first_place_shares(returns)[seat])
        margins.append(score_margins(scores)[seat])
    return float(np.mean(shares)), float(np.mean(margins))


@pytest.mark.parametrize(("n", "games", "min_share"), [(2, 12, 0.9), (3, 12, 0.8), (4, 12, 0.7)])
def test_heuristic_beats_random_players(n, games, min_share):
    """Measured over 200 seat-rotated games: 100 % (2 players), 100 % (3), 97 % (4) first places; the
    thresholds leave room for noise (random play would give 1/n)."""
    share, margin = tournament({"num_players": n}, games, seed=n)
    assert share >= min_share and margin > 15, (share, margin)


@pytest.mark.parametrize("options", [{"num_players": 2, "canonical_order": False, "stack_split": "random",
                                      "reshuffle_timing": "on_empty"},
                                     {"num_players": 3, "auto_resolve_forced": True, "min_tile_price": 3,
                                      "removed_tiles_public": False, "allow_noop_reconstruct": True,
                                      "stack_split": "by_floor_shuffled"}])
def test_heuristic_is_legal_and_still_wins_under_other_options(options):
    share, margin = tournament(options, 6, seed=9)
    assert share >= 0.6 and margin > 0


def test_heuristic_self_play_is_legal_and_replays_identically():
    """Three built-in heuristics (seeds ignored) play the same game twice: every action is in the mask and
    the two games are identical; every decision D1–D11 is met along the way."""
    game = Game(num_players=3)
    runs = []
    for seed in (1, 2):
        agents = [builtin_agent("heuristic", game, seed=seed + p) for p in range(3)]
        assert all(isinstance(a, HeuristicAgent) for a in agents)
        state, actions, decisions = game.new_initial_state(4), [], set()
        while not state.is_terminal():
            p = state.current_player
            mask = state.action_mask()
            actions.append(agents[p].act(state.observation(p), mask))
            assert mask[actions[-1]]
            decisions.add(state.decision)
            state.apply_action(actions[-1])
        runs.append((actions, state.scores()))
    assert runs[0] == runs[1] and decisions >= {1, 2, 3, 4, 5, 6, 8}


def _act(state) -> int:
    p = state.current_player
    return HeuristicAgent(state.game).act(state.observation(p), state.action_mask())


LATE = {"stacks": [[], [], [40, RIDER]], "rest_removed": True, "riders": 4}  # one tile before the end


def test_heuristic_builds_up_a_palace_and_pays_keeping_its_best_money():
    """Late in the game it puts a floor-2 tile on its floor-1 palace (a new palace would score −5), and it
    pays T = 12 from {A7, A6, B5, Z} with A6 A7 (E3), keeping the Z, rather than overpaying."""
    state = build({"num_players": 2}, palaces={0: [[0]]}, quarries={1: [4]}, decision=3, **LATE)
    play(state, "auction", "pass")
    assert _act(state) == dest(0)
    state = build({"num_players": 2}, hands={0: "A7 A6 B5 Z"}, supply=[16, 17, 18], stacks=[[19, 33]])
    play(state, "tiles", "buy", "tile 16 s1.1", "tile 17 s1.2")
    for expected in (card("A6"), card("A7")):
        assert _act(state) == expected
        state.apply_action(expected)
    assert _act(state) == 75  # DONE at 13, the Z stays in hand


def test_heuristic_reconstructs_a_losing_single_tile_into_a_palace():
    """The rulebook's tip (E1), near the end: b3.1 alone and b2.1 b4.3; inserting gains 13 points for one
    card."""
    state = build({"num_players": 2}, hands={0: "A3 A4"}, palaces={0: [[6], [3, 12]]}, **LATE)
    assert _act(state) == 2  # RECONSTRUCT
    play(state, "reconstruct")
    play(state, _act(state))
    assert state.recon_tile == 6 and _act(state) == dest(1)
    assert _act(play(state, dest(1))) == card("A3")  # the card that costs the least purchasing power

