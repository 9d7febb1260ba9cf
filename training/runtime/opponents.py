"""Who sits in the other seats: a weighted mix of fixed agents and frozen snapshots of the learner.

* :class:`SnapshotPool` lives in the training process. Every N steps it keeps a numpy copy of the
  learner's weights (newest last, at most ``size``); the pool is part of every checkpoint.
* :class:`OpponentMix` lives in each env worker. Per episode it draws an agent for every opponent seat
  by the configured weights. The key ``"self"`` means a snapshot from the pool (uniform over it);
  any other key is an agent spec for :func:`tabletop_rl.training.runtime.agents.load_agent` (``random``, ``heuristic``,
  ``pretrained`` or a policy path). Snapshots play through the same numpy inference as every policy
  agent (:class:`~tabletop_rl.training.runtime.policy.MLPPolicy`), so env workers never need torch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from ...envs.core.agents import Agent, wants_view
from ...envs.core.game import Game
from .agents import agent_factory
from .policy import MLPPolicy, PolicyAgent, PolicyInfo, Weights

SELF = "self"


class SnapshotPool:
    """Frozen copies of the learner's policy weights, oldest first."""

    def __init__(self, size: int, snapshots: list[Weights] | None = None):
        if size < 1:
            raise ValueError(f"the snapshot pool needs size >= 1, got {size}")
        self.size = size
        self.snapshots: list[Weights] = list(snapshots or [])[-size:]

    def add(self, weights: Weights) -> None:
        """Keep ``weights`` (a copy the caller no longer changes, see ``checkpoint.weights_of``)."""
        self.snapshots.append(weights)
        del self.snapshots[:-self.size]


def check_weights(weights: Mapping[str, float], name: str = "opponent mix") -> dict[str, float]:
    """Non-negative weights with a positive total, normalised to probabilities; ``name`` for the message."""
    bad = {k: w for k, w in weights.items() if not isinstance(w, int | float) or w < 0}
    total = sum(w for w in weights.values() if isinstance(w, int | float))
    if not weights or bad or total <= 0:
        raise ValueError(f"{name} {dict(weights)} must map agent specs ('random', 'heuristic', "
                         f"'{SELF}', 'pretrained' or a checkpoint path) to weights >= 0 with a positive sum")
    return {k: w / total for k, w in weights.items() if w > 0}


def mix_factories(game: Game, names: Iterable[str]) -> dict[str, Callable[[int | None], Agent]]:
    """``seed -> agent`` for every agent spec of a mix but ``self``: each policy file read once."""
    return {name: agent_factory(name, game) for name in names if name != SELF}


class OpponentMix:
    """Draws one agent per opponent seat and episode; snapshots are set from the training process."""

    def __init__(self, game: Game, weights: Mapping[str, float], network: Mapping[str, Any] | None = None,
                 snapshot_deterministic: bool = False,
                 factories: Mapping[str, Callable[[int | None], Agent]] | None = None):
        """``factories`` (``mix_factories``) may be shared by many mixes: each file is then read once."""
        self.game = game
        probabilities = check_weights(weights)
        self.names = list(probabilities)
        self.p = np.array(list(probabilities.values()))
        self.snapshot_info = PolicyInfo.for_game(game, network) if network else None
        self.snapshot_deterministic = snapshot_deterministic
        self.snapshots: list[PolicyAgent] = []
        # files are read once here; reseed() only makes fresh agents from them
        self.factories = factories if factories is not None else mix_factories(game, self.names)
        self.reseed(np.random.default_rng())

    def reseed(self, rng: np.random.Generator) -> None:
        """Fresh agents whose randomness derives from ``rng`` (the env's generator)."""
        self.rng = np.random.default_rng(rng.integers(2**63))
        self.fixed: dict[str, Agent] = {name: make(int(self.rng.integers(2**63)))
                                        for name, make in self.factories.items()}
        self.snapshot_rng = np.random.default_rng(self.rng.integers(2**63))
        # A searching agent (with ``attach``) holds its seat's view: one of its own per opponent seat.
        self.per_seat: dict[tuple[str, int], Agent] = {
            (name, seat): self.factories[name](int(self.rng.integers(2**63)))
            for name, agent in self.fixed.items() if wants_view(agent)
            for seat in range(self.game.num_players)}
        for agent in self.snapshots:
            agent.rng = self.snapshot_rng

    def set_pool(self, pool: list[Weights | MLPPolicy]) -> None:
        """Take the pool's weights (called through ``VecEnv.env_method`` after each refresh), or networks already
        made from them (shared by many mixes: their games are then decided in one forward pass per snapshot)."""
        if pool and self.snapshot_info is None:
            raise ValueError("self-play snapshots need the network: OpponentMix(..., network=...)")
        self.snapshots = [PolicyAgent(w if isinstance(w, MLPPolicy) else MLPPolicy(w, self.snapshot_info),
                                      self.snapshot_deterministic, seed=self.snapshot_rng) for w in pool]

    def draw(self, seat: int = 0) -> tuple[str, Agent]:
        """``(name, agent)`` for opponent seat ``seat`` of a new episode."""
        name = self.names[self.rng.choice(len(self.names), p=self.p)]
        if name != SELF:
            return name, self.per_seat.get((name, seat), self.fixed[name])
        if not self.snapshots:
            raise RuntimeError("self-play opponents need a snapshot pool: call set_pool() first")
        index = int(self.rng.integers(len(self.snapshots)))
        return f"{SELF}[{index}]", self.snapshots[index]
