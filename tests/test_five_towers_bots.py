"""The Five Towers heuristic agent: legal under every option, deterministic, and much better than random."""

from __future__ import annotations

import numpy as np
import pytest

from tabletop_rl import envs
from tabletop_rl.envs.core.agents import builtin_agent
from tabletop_rl.envs.five_towers import Game, HeuristicAgent
from tests.contract import bot_against_random
from tests.five_towers_helpers import SCARY, TREE, feasibility, kind


@pytest.mark.parametrize(("n", "games", "min_share"), [(2, 40, 0.9), (4, 40, 0.7)])
def test_heuristic_beats_random_players(n, games, min_share):
    share, margin = bot_against_random(Game(num_players=n), HeuristicAgent, games, seed=n)
    assert share >= min_share and margin > 10, (share, margin)


@pytest.mark.parametrize("options", [{"canonical_order": False, "zero_starts_tower": False},
                                     {"num_players": 3, "rebuild_removed_tower": False,
                                      "auto_resolve_forced": True, "final_partial_round": False}])
def test_heuristic_is_legal_and_still_wins_under_other_options(options):
    share, margin = bot_against_random(Game(**options), HeuristicAgent, 6, seed=9)
    assert share >= 0.6 and margin > 0


def test_heuristic_is_deterministic_and_built_in():
    game = Game(num_players=3)
    agent = builtin_agent("heuristic", game, seed=1)
    assert isinstance(agent, HeuristicAgent)
    state = game.new_initial_state(4)
    rng = np.random.default_rng(4)
    for _ in range(80):
        p = state.current_player
        obs, mask = state.observation(p), state.action_mask()
        action = agent.act(obs, mask)
        assert mask[action] and action == HeuristicAgent(game, 99).act(obs.copy(), mask.copy())
        legal = state.legal_actions()
        state.apply_action(legal[rng.integers(len(legal))])  # wander, so every phase is asked


def test_heuristic_plans_the_worked_feasibility_round():
    """Candy [10], Scary [7, 0], Tree [12, 8, 3]; display Tree 11, Candy 9, Tree 6, Scary 2, Sand 4. The
    Tree 3 blocks both trees; the heuristic bids, tears the 3 down to reach the 8 and builds Tree 11 on it."""
    state = feasibility()
    agent = HeuristicAgent(state.game, 0)
    while state.round == 1:
        p = state.current_player
        state.apply_action(agent.act(state.observation(p), state.action_mask()) if p == 0 else 0)
    assert state.towers[0][TREE][:3] == [12, 8, 11] and state.rubble[0] == [kind(TREE, 3)]
    assert state.towers[0][SCARY] == [7, 0]


def test_heuristic_plays_through_the_env():
    e = envs.make("five_towers", num_players=2)
    e.reset(seed=0)
    agents = {a: HeuristicAgent(e.unwrapped.game, 0) for a in e.possible_agents}
    for agent in e.agent_iter():
        obs, _, terminated, truncated, info = e.last()
        e.step(None if terminated or truncated else agents[agent].act(obs["observation"], obs["action_mask"]))
    assert sorted(info["ranks"]) in ([1, 2], [1, 1])
