"""Any registered game as an RLlib ``MultiAgentEnv`` (:class:`TabletopMultiAgentEnv`: the engine driven directly,
RLlib's turn-based convention), and who sits in which seat (:class:`SeatMapping`, the ``policy_mapping_fn``: the
learner in one random seat per episode, opponent modules from the mix in the others). docs/rllib.md, "What is
trained", describes both.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from ... import envs
from ...envs.core.extras import needs_extra
from ...envs.core.game import check_seed
from ..runtime.opponents import SELF, check_weights

try:
    from ray.rllib.env.multi_agent_env import MultiAgentEnv
except ImportError as error:
    raise needs_extra("tabletop_rl.training.interop.rllib_env", "rllib", error) from None

LEARNER = "learner"  # the trained RLModule


def snapshot_id(slot: int) -> str:
    return f"{SELF}_{slot}"


def fixed_agent_ids(mix: Mapping[str, float]) -> dict[str, str]:
    """Module ids of the fixed agents of an opponent mix (RLlib wants ids usable as file names):
    ``fixed_random``, ``fixed_heuristic``, ``fixed_pretrained``; a policy path becomes ``fixed_<i>``."""
    return {spec: f"fixed_{spec if re.fullmatch(r'[A-Za-z0-9_-]+', spec) else i}"
            for i, spec in enumerate(mix) if spec != SELF}


class TabletopMultiAgentEnv(MultiAgentEnv):
    """RLlib multi-agent env for ``env_config = {"game": name, "game_options": {...}}``."""

    def __init__(self, env_config: Mapping[str, Any] | None = None):
        super().__init__()
        env_config = dict(env_config or {})
        self.aec = envs.make(env_config["game"], wrapped=False, **dict(env_config.get("game_options") or {}))
        self.game = self.aec.game
        self.possible_agents = list(self.aec.possible_agents)
        self.agents = list(self.possible_agents)
        self.observation_spaces = {a: self.aec.observation_space(a) for a in self.possible_agents}
        self.action_spaces = {a: self.aec.action_space(a) for a in self.possible_agents}
        self._no_mask = np.zeros(self.game.num_actions, np.int8)
        self._seeds: np.random.Generator | None = None
        self.state = None
        self._played: set[int] = set()

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        seed = check_seed(seed)
        if seed is not None or self._seeds is None:
            self._seeds = np.random.default_rng(seed)
        self.state = self.game.new_initial_state(int(self._seeds.integers(2**63)))
        self._played = set()
        return self._on_move(), {}

    def step(self, action_dict: Mapping[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        state = self.state
        agent = self.possible_agents[state.current_player]
        if agent not in action_dict:
            raise ValueError(f"{agent} is on move but the action dict holds {sorted(action_dict)}")
        state.apply_action(int(action_dict[agent]))  # ValueError names the action and the phase
        if not state.is_terminal():
            obs = self._on_move()
            return obs, dict.fromkeys(obs, 0.0), {"__all__": False}, {"__all__": False}, {}
        truncated = state.is_truncated()
        returns, end_info = state.returns(), state.end_info()
        played = {self.possible_agents[p]: p for p in sorted(self._played)}
        names = list(played)
        obs = {a: {"observation": state.observation(p), "action_mask": self._no_mask} for a, p in played.items()}
        rewards = {a: float(returns[p]) for a, p in played.items()}
        terminated = {**dict.fromkeys(names, not truncated), "__all__": not truncated}
        truncateds = {**dict.fromkeys(names, truncated), "__all__": truncated}
        return obs, rewards, terminated, truncateds, dict.fromkeys(names, end_info)

    def _on_move(self) -> dict[str, dict[str, np.ndarray]]:
        p = self.state.current_player
        self._played.add(p)
        return {self.possible_agents[p]: {"observation": self.state.observation(p),
                                          "action_mask": self.state.action_mask()}}


class SeatMapping:
    """RLlib's ``policy_mapping_fn(agent_id, episode)``: the learner in one seat, opponents in the others.

    RLlib asks once per agent and episode; every answer for one episode derives from the episode id, so
    the agents of an episode agree on where the learner sits. ``"self"`` in the mix means one of the
    ``pool_size`` snapshot modules (uniformly); any other key is a fixed agent module.
    """

    def __init__(self, num_players: int, mix: Mapping[str, float], pool_size: int):
        probabilities = check_weights(mix)
        fixed = fixed_agent_ids(probabilities)
        self.num_players = num_players
        self.modules = [fixed.get(spec, SELF) for spec in probabilities]
        self.p = np.array(list(probabilities.values()))
        self.pool_size = pool_size

    def seating(self, episode_id: str) -> list[str]:
        """The module of every seat for one episode."""
        digest = hashlib.blake2b(str(episode_id).encode(), digest_size=8).digest()
        rng = np.random.default_rng(int.from_bytes(digest, "little"))
        seats = [str(self.modules[i]) for i in rng.choice(len(self.modules), size=self.num_players, p=self.p)]
        seats = [snapshot_id(int(rng.integers(self.pool_size))) if m == SELF else m for m in seats]
        seats[int(rng.integers(self.num_players))] = LEARNER
        return seats

    def __call__(self, agent_id: str, episode: Any = None, **kwargs: Any) -> str:
        return self.seating(episode.id_)[int(agent_id.rpartition("_")[2])]
