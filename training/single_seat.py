"""The learner's view of any registered game: a gymnasium env in which it plays one seat.

Why not PettingZoo's SB3 tutorial wrapper: there, one network plays every seat through a single
``step()`` stream, so the reward of the seat that loses at the end is never paired with that seat's
last decision, and GAE bootstraps each seat's value from positions where the *opponent* is on move.
Here the learner owns exactly one seat per episode:

* ``reset()`` picks the learner's seat (uniformly at random, or a fixed seat), draws an agent for every
  other seat from the :class:`~training.opponents.OpponentMix`, and plays them until the learner is
  on move. ``step(a)`` applies the learner's action and again plays every other seat until the learner
  is on move or the game is over — so consecutive learner observations are always its own decisions.
* The reward is 0 until the end, then the learner's return (``State.returns()``, zero-sum in [-1, 1]),
  whether it won or lost and whichever seat it had. A turn cap ends the episode with ``truncated=True``
  and reward 0. Optional shaping, ``margin_reward=w``, adds ``w × margin`` at the end, margin = own
  score − mean of the other seats' scores (rewards winning big, not just winning).
* Opponents receive exactly ``env.observe(their seat)`` — their own observation vector and mask, never
  the engine state — so they cannot see the learner's hidden information.
* ``action_masks()`` is the learner's legal-action mask as bool, for sb3-contrib's ``MaskablePPO``.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Mapping
from typing import Any

import gymnasium as gym
import numpy as np

import envs
from envs.core.match import score_margins

from .opponents import OpponentMix, Weights

MAX_RESETS = 100  # deals in a row that end before the learner's first decision: surely a bug


class SingleSeatEnv(gym.Env):
    """One seat of ``game`` for the learner; the other seats are played inside ``step()``."""

    metadata = {"render_modes": []}

    def __init__(self, game: str, game_options: Mapping[str, Any] | None = None,
                 opponents: Mapping[str, float] | None = None, seat: int | str = "random",
                 network: Mapping[str, Any] | None = None, snapshot_deterministic: bool = False,
                 margin_reward: float = 0.0):
        self.aec = envs.make(game, wrapped=False, **dict(game_options or {}))
        self.game = self.aec.game
        n = self.game.num_players
        if not (seat == "random" or (type(seat) is int and 0 <= seat < n)):
            raise ValueError(f"seat={seat!r} is not allowed; expected 'random' or a seat 0..{n - 1}")
        self.seat_choice = seat
        self.margin_reward = margin_reward
        first = self.aec.possible_agents[0]
        self.observation_space = self.aec.observation_space(first)["observation"]
        self.action_space = self.aec.action_space(first)
        self.opponents = OpponentMix(self.game, opponents or {"random": 1.0}, network, snapshot_deterministic)
        self.seat = 0
        self.learner = first
        self.seated: dict[str, tuple[str, Any]] = {}

    # ----------------------------------------------------------------- gymnasium API
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        if seed is not None:
            self.opponents.reseed(self.np_random)
        for _ in range(MAX_RESETS):
            n = self.game.num_players
            self.seat = int(self.np_random.integers(n)) if self.seat_choice == "random" else self.seat_choice
            self.learner = self.aec.possible_agents[self.seat]
            self.seated = {agent: self.opponents.draw() for agent in self.aec.possible_agents
                           if agent != self.learner}
            self.aec.reset(seed=int(self.np_random.integers(2**63)))
            self._play_opponents()
            if not self._over():
                return self._observation(), {"seat": self.seat}
        raise RuntimeError(f"{MAX_RESETS} games of {self.game.name} in a row ended before seat {self.seat} "
                           "had a decision")

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        if self._over():
            raise RuntimeError("step() called after the episode ended; call reset()")
        self.aec.step(int(action))  # an illegal action raises ValueError: masks must be honoured
        self._play_opponents()
        if not self._over():
            return self._observation(), 0.0, False, False, {}
        learner, info = self.learner, self._end_info()
        reward = float(self.aec.rewards[learner])
        if self.margin_reward and self.aec.terminations[learner]:
            reward += self.margin_reward * info["margin"]
        return (self._observation(), reward, bool(self.aec.terminations[learner]),
                bool(self.aec.truncations[learner]), info)

    def action_masks(self) -> np.ndarray:
        return self.aec.observe(self.learner)["action_mask"].astype(bool)

    # ----------------------------------------------------------------- called from the training process
    def set_pool(self, pool: list[Weights]) -> None:
        """Refresh the self-play snapshots (numpy weights); used through ``VecEnv.env_method("set_pool", ...)``."""
        self.opponents.set_pool(pool)

    # ----------------------------------------------------------------- internals
    def _over(self) -> bool:
        return self.aec.terminations[self.learner] or self.aec.truncations[self.learner]

    def _observation(self) -> np.ndarray:
        return self.aec.observe(self.learner)["observation"]

    def _play_opponents(self) -> None:
        aec = self.aec
        while not self._over() and aec.agent_selection != self.learner:
            seat_view = aec.observe(aec.agent_selection)  # that seat's own observation and mask only
            _, agent = self.seated[aec.agent_selection]
            aec.step(agent.act(seat_view["observation"], seat_view["action_mask"]))

    def _end_info(self) -> dict[str, Any]:
        """Seat, opponents and the score margin (own score minus the mean of the others')."""
        info = {"seat": self.seat, "opponents": [name for name, _ in self.seated.values()]}
        scores = self.aec.infos[self.learner].get("scores")
        if scores is not None:
            info.update(scores=list(scores), margin=float(score_margins(scores)[self.seat]))
        return info


def env_factory(in_worker: bool = False, **kwargs: Any) -> Callable[[], SingleSeatEnv]:
    """A picklable constructor for ``SubprocVecEnv`` / ``DummyVecEnv``.

    In a worker process Ctrl-C / SIGTERM are ignored: the training process catches them, checkpoints,
    then closes the workers.
    """
    def make() -> SingleSeatEnv:
        if in_worker:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        return SingleSeatEnv(**kwargs)

    return make
