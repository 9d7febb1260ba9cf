"""Many single-seat games in one Gymnasium vector env: ``gymnasium.make_vec("tabletop/<game>-v0", num_envs=64)``.

:class:`SeatVectorEnv` holds ``num_envs`` :class:`~tabletop_rl.training.runtime.table.Table` s — the learner's
seat, its opponents and the engine state of each game — and no env object per game. A step applies the learner's
actions, plays every game's opponents together (:func:`~tabletop_rl.training.runtime.table.play_opponents`: one
forward pass per network per ply) and writes observations, masks, rewards and flags into arrays allocated once.

* Autoreset is ``SAME_STEP`` (``metadata["autoreset_mode"]``): a game that ends is dealt anew in the same step, so
  every returned observation is one the learner must act on and every mask has a legal action; the last
  observation and info of the ended game are in ``info["final_obs"]`` / ``info["final_info"]`` (flagged by
  ``info["_final_obs"]``), as Gymnasium's ``SyncVectorEnv`` gives them.
* Masks: ``info["action_mask"]`` (num_envs × num_actions, int8) and ``action_masks()`` (bool), what sb3-contrib's
  MaskablePPO reads.
* Seeds: ``reset(seed=s)`` seeds game i with ``s + i`` (or a list, one seed per game): game i then plays exactly
  the episodes of ``gymnasium.make("tabletop/<game>-v0", ...)`` reset with ``seed=s + i`` and given the same
  actions, whatever the opponents.
* Rewards, illegal actions (the episode ends with −1, nothing is played) and the end-of-episode info are those of
  the single env (docs/training.md, "Single-agent Gymnasium ids").
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from ... import envs
from ...envs.core.game import check_seed
from .opponents import OpponentMix, Weights, mix_factories
from .policy import MLPPolicy, PolicyInfo
from .single_seat import opponent_mix, seat_spaces
from .table import Table, play_opponents


class SeatVectorEnv(VectorEnv):
    """``num_envs`` games of ``game``, the learner in one seat of each, opponents drawn per game from the mix."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, game: str, num_envs: int, game_options: Mapping[str, Any] | None = None,
                 opponents: Mapping[str, float] | None = None, seat: int | str = "random",
                 network: Mapping[str, Any] | None = None, snapshot_deterministic: bool = False,
                 margin_reward: float = 0.0, copy: bool = True):
        if type(num_envs) is not int or num_envs < 1:
            raise ValueError(f"num_envs={num_envs!r} is not allowed; expected a whole number >= 1")
        self.game = envs.game_class(game)(**dict(game_options or {}))
        self.num_envs = num_envs
        self.single_observation_space, self.single_action_space = seat_spaces(self.game)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.render_mode = None
        self.copy = copy
        mix = {"random": 1.0} if opponents is None else opponents
        first = OpponentMix(self.game, mix, network, snapshot_deterministic)  # checks the mix, reads each file once
        self.network = network
        self.tables = [Table(self.game, first, seat, margin_reward)] + [
            Table(self.game, OpponentMix(self.game, mix, network, snapshot_deterministic, first.factories), seat,
                  margin_reward) for _ in range(num_envs - 1)]
        n, size, actions = num_envs, self.game.observation_size, self.game.num_actions
        self._observations = np.zeros((n, size), np.float32)
        self._masks = np.zeros((n, actions), np.int8)
        self._rewards = np.zeros(n, np.float64)
        self._terminations = np.zeros(n, np.bool_)
        self._truncations = np.zeros(n, np.bool_)
        self._index = np.arange(n)
        self._started = False
        self.ended: list[tuple[int, np.ndarray, dict[str, Any]]] = []  # the last step's (game, final obs, info)

    # ----------------------------------------------------------------- gymnasium API
    def reset(self, *, seed: int | Sequence[int | None] | None = None,
              options: dict | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal every game anew; ``seed`` seeds game i with ``seed + i``, a list gives each game its seed."""
        for table, s in zip(self.tables, self._seeds(seed), strict=True):
            table.seed(s)
            table.deal()
        self._settle(self.tables)
        for i in range(self.num_envs):
            self._write(i)
        self._started = True
        return self._out(self._observations), {"seat": np.array([t.seat for t in self.tables]),
                                               "action_mask": self._out(self._masks)}

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One decision of the learner in every game; opponents play until each game waits on the learner again."""
        if not self._started:
            raise RuntimeError("step() was called before reset()")
        actions = self._check(actions)
        legal = self._masks[self._index, actions].astype(bool)
        reasons = {}
        for i, table in enumerate(self.tables):
            if legal[i]:
                table.state.apply_action(int(actions[i]))
            else:
                reasons[i] = table.forfeit(int(actions[i]))
        play_opponents(self.tables)
        self._rewards[:] = 0.0
        self._terminations[:] = False
        self._truncations[:] = False
        infos: dict[str, Any] = {}
        self.ended = []
        for i, table in enumerate(self.tables):
            if not table.over():
                continue
            self._rewards[i], self._terminations[i], self._truncations[i] = table.outcome()
            info = table.end_info()
            if i in reasons:
                info.update(illegal_action=True, reason=reasons[i])
            self.ended.append((i, table.observation(), info))
            infos = self._add_info(infos, {"final_obs": self.ended[-1][1], "final_info": info}, i)
            table.deal()
        self._settle([self.tables[i] for i, _, _ in self.ended])
        for i in range(self.num_envs):
            self._write(i)
        infos["action_mask"] = self._out(self._masks)
        return (self._out(self._observations), self._out(self._rewards), self._out(self._terminations),
                self._out(self._truncations), infos)

    def action_masks(self) -> np.ndarray:
        """Every game's legal actions for the learner, bool (num_envs × num_actions): what MaskablePPO reads."""
        if not self._started:
            raise ValueError("action_masks() was called before reset()")
        return self._masks.astype(bool)

    def set_pool(self, pool: list[Weights]) -> None:
        """Refresh the self-play snapshots: each is made into a network once and shared by every game, so the games
        waiting on one snapshot are decided in one forward pass."""
        info = PolicyInfo.for_game(self.game, self.network) if pool and self.network else None
        policies = [MLPPolicy(weights, info) for weights in pool] if info else pool
        for table in self.tables:
            table.mix.set_pool(policies)

    # ----------------------------------------------------------------- internals
    def _seeds(self, seed: int | Sequence[int | None] | None) -> list[int | None]:
        if seed is None or isinstance(seed, int | np.integer) and not isinstance(seed, bool):
            seed = check_seed(seed)
            return [None if seed is None else seed + i for i in range(self.num_envs)]
        seeds = list(seed)
        if len(seeds) != self.num_envs:
            raise ValueError(f"reset(seed=...) got {len(seeds)} seeds for {self.num_envs} games; give one seed "
                             "(game i gets seed + i), one per game, or None")
        return [check_seed(s) for s in seeds]

    def _check(self, actions: Any) -> np.ndarray:
        """The learner's actions as an int array of shape (num_envs,); anything else is one line saying what is
        expected (an action outside the action space is a bug of the caller, not a move)."""
        array = np.asarray(actions)
        n, limit = self.num_envs, self.game.num_actions
        if array.shape != (n,) or array.dtype.kind not in "iu":
            raise ValueError(f"actions must be an integer array of shape ({n},), one action per game; got "
                             f"{type(actions).__name__} of shape {array.shape} and dtype {array.dtype}")
        if n and (array.min() < 0 or array.max() >= limit):
            bad = int(array[(array < 0) | (array >= limit)][0])
            raise ValueError(f"action {bad} is not in the action space {self.single_action_space} of {self.game.name}")
        return array

    def _settle(self, tables: list[Table]) -> None:
        """Play the opponents of freshly dealt games until each waits on its learner (dealing again a game that
        ended before the learner's first decision)."""
        while tables:
            play_opponents(tables)
            tables = [t for t in tables if not t.ready()]

    def _write(self, i: int) -> None:
        table = self.tables[i]
        self._observations[i] = table.observation()
        self._masks[i] = table.state.action_mask()

    def _out(self, array: np.ndarray) -> np.ndarray:
        return array.copy() if self.copy else array


def seat_vector_env(game: str, num_envs: int, opponent: str | os.PathLike | Mapping[str, float] = "random",
                    seat: int | str = "random", render_mode: str | None = None, **game_options: Any) -> SeatVectorEnv:
    """What ``gymnasium.make_vec("tabletop/<game>-v0", num_envs=N, ...)`` builds (the ids' ``vector_entry_point``):
    ``opponent`` and ``seat`` as for ``gymnasium.make`` (:func:`~tabletop_rl.training.runtime.single_seat.single_seat_env`),
    every other keyword an option of the game."""
    if render_mode is not None:
        raise ValueError(f"render_mode={render_mode!r}: the vector env does not render; render one game with "
                         "gymnasium.make(..., render_mode='ansi')")
    return SeatVectorEnv(game, num_envs, game_options, opponents=opponent_mix(opponent), seat=seat)

