"""Who sits in the other seats: a weighted mix of fixed agents and frozen snapshots of the learner.

* :class:`SnapshotPool` lives in the training process. Every N steps it copies the learner's weights
  (newest last, at most ``size``); the pool is part of every checkpoint.
* :class:`OpponentMix` lives in each env worker. Per episode it draws an agent for every opponent seat
  by the configured weights. The key ``"self"`` means a snapshot from the pool (uniform over it);
  any other key is an agent spec for :func:`training.agents.load_agent` (``random``, ``heuristic``,
  ``pretrained`` or a checkpoint path).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

from envs.core.agents import Agent
from envs.core.game import Game

from .agents import PolicyAgent, load_agent

SELF = "self"
StateDict = dict[str, torch.Tensor]


class SnapshotPool:
    """Frozen copies of the learner's policy weights, oldest first."""

    def __init__(self, size: int, snapshots: list[StateDict] | None = None):
        if size < 1:
            raise ValueError(f"the snapshot pool needs size >= 1, got {size}")
        self.size = size
        self.snapshots: list[StateDict] = list(snapshots or [])[-size:]

    def add(self, policy: torch.nn.Module) -> None:
        self.snapshots.append({k: v.detach().cpu().clone() for k, v in policy.state_dict().items()})
        del self.snapshots[:-self.size]


def check_weights(weights: Mapping[str, float]) -> dict[str, float]:
    """Non-negative weights with a positive total, normalised to probabilities."""
    bad = {k: w for k, w in weights.items() if not isinstance(w, int | float) or w < 0}
    total = sum(w for w in weights.values() if isinstance(w, int | float))
    if not weights or bad or total <= 0:
        raise ValueError(f"opponent mix {dict(weights)} must map agent specs ('random', 'heuristic', "
                         f"'{SELF}', 'pretrained' or a checkpoint path) to weights >= 0 with a positive sum")
    return {k: w / total for k, w in weights.items() if w > 0}


class OpponentMix:
    """Draws one agent per opponent seat and episode; snapshots are set from the training process."""

    def __init__(self, game: Game, weights: Mapping[str, float], observation_space: spaces.Box,
                 action_space: spaces.Discrete, policy_kwargs: dict[str, Any] | None = None,
                 snapshot_deterministic: bool = False):
        self.game = game
        probabilities = check_weights(weights)
        self.names = list(probabilities)
        self.p = np.array(list(probabilities.values()))
        self.spaces = observation_space, action_space
        self.policy_kwargs = policy_kwargs or {}
        self.snapshot_deterministic = snapshot_deterministic
        self.snapshots: list[MaskableActorCriticPolicy] = []
        self.reseed(np.random.default_rng())

    def reseed(self, rng: np.random.Generator) -> None:
        """Fresh agents whose randomness derives from ``rng`` (the env's generator)."""
        self.rng = np.random.default_rng(rng.integers(2**63))
        self.fixed: dict[str, Agent] = {name: load_agent(name, self.game, seed=int(self.rng.integers(2**63)))
                                        for name in self.names if name != SELF}
        self.snapshot_rng = np.random.default_rng(self.rng.integers(2**63))
        for agent in self.snapshots:
            agent.rng = self.snapshot_rng

    def set_pool(self, state_dicts: list[StateDict]) -> None:
        """Load the pool's weights (called through ``VecEnv.env_method`` after each refresh)."""
        while len(self.snapshots) < len(state_dicts):
            policy = MaskableActorCriticPolicy(*self.spaces, lambda _: 0.0, **self.policy_kwargs)
            policy.set_training_mode(False)
            self.snapshots.append(PolicyAgent(policy, self.snapshot_deterministic, seed=self.snapshot_rng))
        del self.snapshots[len(state_dicts):]
        for agent, weights in zip(self.snapshots, state_dicts, strict=True):
            agent.policy.load_state_dict(weights)

    def draw(self) -> tuple[str, Agent]:
        """``(name, agent)`` for one opponent seat of a new episode."""
        name = self.names[self.rng.choice(len(self.names), p=self.p)]
        if name != SELF:
            return name, self.fixed[name]
        if not self.snapshots:
            raise RuntimeError("self-play opponents need a snapshot pool: call set_pool() first")
        index = int(self.rng.integers(len(self.snapshots)))
        return f"{SELF}[{index}]", self.snapshots[index]
