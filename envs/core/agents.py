"""Built-in agents. Every agent — random, heuristic, trained policy, human — has one method,

    act(observation, action_mask) -> action

taking exactly what the PettingZoo env gives its seat. An agent therefore cannot use information its
player does not have: the observation is leak-tested, the engine state is never handed over.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from .game import Game


class Agent(Protocol):
    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int: ...


class RandomAgent:
    """Uniformly random over the legal actions."""

    def __init__(self, game: Game | None = None, seed: int | None = None):
        self.rng = np.random.default_rng(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = legal_actions(action_mask, "RandomAgent")
        return legal[self.rng.integers(len(legal))]


def legal_actions(action_mask: np.ndarray, agent: str) -> list[int]:
    """The actions an int8 mask allows, as ints; ``ValueError`` naming the agent if it allows none."""
    legal = np.flatnonzero(action_mask).tolist()
    if not legal:
        raise ValueError(f"{agent}.act: the action mask has no legal action")
    return legal


def builtin_agent(name: str, game: Game, seed: int | None = None) -> Agent:
    """``"random"`` or ``"heuristic"`` (the game package's ``HeuristicAgent``) for ``game``."""
    if name == "random":
        return RandomAgent(game, seed)
    if name == "heuristic":
        from .registry import game_module

        return game_module(game.name).HeuristicAgent(game, seed)
    raise ValueError(f"unknown built-in agent {name!r}; expected 'random' or 'heuristic'")
