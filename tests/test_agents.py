"""Built-in agents (``envs/core/agents.py`` and each game's ``HeuristicAgent``) read the action mask with one
helper, ``legal_actions``: an empty mask is refused with the same one-line message by all of them."""

from __future__ import annotations

import numpy as np
import pytest

from tabletop_rl.envs import list_games
from tabletop_rl.envs.core.agents import builtin_agent
from tabletop_rl.envs.core.registry import game_class


@pytest.mark.parametrize("agent", ["random", "heuristic"])
@pytest.mark.parametrize("name", list_games())
def test_an_empty_action_mask_is_refused_in_one_line(name, agent):
    game = game_class(name)()
    observation = game.new_initial_state(0).observation(0)
    label = "RandomAgent" if agent == "random" else "HeuristicAgent"
    with pytest.raises(ValueError, match=rf"^{label}\.act: the action mask has no legal action$"):
        builtin_agent(agent, game, seed=0).act(observation, np.zeros(game.num_actions, np.int8))
