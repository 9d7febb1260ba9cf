"""The Torres heuristic agent: legal under every option, deterministic, sensible in small positions, and much
stronger than random players at 2, 3 and 4 players."""

from __future__ import annotations

import numpy as np
import pytest

from tabletop_rl import envs
from tabletop_rl.envs.core.agents import RandomAgent, builtin_agent
from tabletop_rl.envs.core.match import play_game
from tabletop_rl.envs.torres import Game, HeuristicAgent
from tests.contract import bot_against_random
from tests.torres_helpers import MOVE_FROM, PLACE_BLOCK, SELECT, build, sq


@pytest.mark.parametrize(("n", "games", "min_share"), [(2, 8, 0.85), (3, 6, 0.8), (4, 8, 0.75)])
def test_heuristic_beats_random_players(n, games, min_share):
    """Random players win a 1/n share; the heuristic won every one of 36 games per count when measured."""
    share, margin = bot_against_random(Game(num_players=n), HeuristicAgent, games, seed=n)
    assert share >= min_share and margin > 40, (share, margin)


@pytest.mark.parametrize("options", [
    {"action_deck": "personal", "door_model": "monotone_tunnel", "forced_redistribution": False},
    {"num_players": 3, "action_deck": "master", "auto_resolve_forced": True, "jump_up_two": "up_to_two"},
    {"num_players": 4, "card_types": 8, "king_move_scope": "any_castle", "phase_start": "king_mover"}])
def test_heuristic_is_legal_and_still_wins_under_other_options(options):
    game = Game(**options)
    share, margin = bot_against_random(game, HeuristicAgent, game.num_players, seed=9)
    assert share >= 0.6 and margin > 0


def test_heuristic_is_deterministic_and_built_in():
    game = Game(num_players=3, action_deck="personal")
    agent = builtin_agent("heuristic", game, seed=1)
    assert isinstance(agent, HeuristicAgent)
    state = game.new_initial_state(4)
    rng = np.random.default_rng(4)
    phases = set()
    while not state.is_terminal():
        p = state.current_player
        obs, mask = state.observation(p), state.action_mask()
        action = agent.act(obs, mask)
        assert mask[action] and action == HeuristicAgent(game, 99).act(obs.copy(), mask.copy())
        phases.add(state.phase.split()[0])
        legal = state.legal_actions()
        state.apply_action(legal[rng.integers(len(legal))])  # wander, so every decision is asked
    assert {"D2", "D3", "D3a", "D4", "D4a", "D5", "D6", "D7", "D8", "D11", "D12"} <= phases


def test_heuristic_climbs_onto_the_highest_reachable_level():
    state = build([". . . .", "1 2 1R .", ". . . .", ". . . 1B"])  # castle of area 3; Red on level 1
    agent = HeuristicAgent(state.game)
    first = agent.act(state.observation(0), state.action_mask())
    assert first == MOVE_FROM + sq(1, 2)
    state.apply_action(first)
    assert agent.act(state.observation(0), state.action_mask()) == SELECT + sq(1, 1)  # up to level 2


def test_heuristic_builds_where_its_knight_scores():
    """Nothing to climb: it extends the castle its knight tops (area × level grows), not another one."""
    state = build(["2R 1 . . . .", ". . . . . .", ". . . . . .", ". . . . 1 1B"], turn_stack=3, ap=1)
    action = HeuristicAgent(state.game).act(state.observation(0), state.action_mask())
    assert action - PLACE_BLOCK in (sq(1, 0), sq(1, 1), sq(0, 2))  # the extensions of Red's castle


def test_heuristic_plays_through_the_env():
    e = envs.make("torres", num_players=3)
    game = e.unwrapped.game
    returns, scores = play_game(e, [HeuristicAgent(game), RandomAgent(game, 1), HeuristicAgent(game)], seed=0)
    assert len(scores) == 3 and returns.sum() == pytest.approx(0) and max(scores) in (scores[0], scores[2])
