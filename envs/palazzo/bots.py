"""A heuristic Palazzo player (work in progress)."""

from __future__ import annotations

import numpy as np

from envs.core.game import Game


class HeuristicAgent:
    def __init__(self, game: Game, seed: int | None = None):
        self.game = game

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(np.flatnonzero(action_mask)[0])
