"""The learner's view of any registered game: a Gymnasium env in which it plays one seat against the others,
played inside ``step()`` by agents of an :class:`~tabletop_rl.training.runtime.opponents.OpponentMix` that see
only their own seat's observation. It is the env the SB3 pipeline trains in and, through :func:`single_seat_env`,
the Gymnasium id ``tabletop/<game>-v0`` (``import tabletop_rl`` registers it). Why one seat, the rewards, masks,
illegal actions and seeding are described in docs/training.md.
"""

from __future__ import annotations

import operator
import os
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np

from ... import envs
from ...envs.core import picture
from ...envs.core.game import check_seed
from .opponents import SELF, OpponentMix, Weights
from .table import ILLEGAL_REWARD, Table, play_opponents, settle


class SingleSeatEnv(gym.Env):
    """One seat of ``game`` for the learner; the other seats are played inside ``step()`` (one
    :class:`~tabletop_rl.training.runtime.table.Table`, driven on the engine itself)."""

    metadata = {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": 1}

    def __init__(self, game: str, game_options: Mapping[str, Any] | None = None,
                 opponents: Mapping[str, float] | None = None, seat: int | str = "random",
                 network: Mapping[str, Any] | None = None, snapshot_deterministic: bool = False,
                 margin_reward: float = 0.0, skip_forced: bool = False, outcome_reward: float = 1.0,
                 outcome: str = "pairwise", render_mode: str | None = None):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode={render_mode!r} is not supported; use one of "
                             f"{self.metadata['render_modes']} or None")
        if render_mode == "rgb_array":
            picture.require()
        self.render_mode = render_mode
        self.game = envs.game_class(game)(**dict(game_options or {}))
        self.observation_space, self.action_space = seat_spaces(self.game)
        mix = {"random": 1.0} if opponents is None else opponents  # an empty mix is refused, not taken for random
        self.table = Table(self.game, OpponentMix(self.game, mix, network, snapshot_deterministic), seat,
                           margin_reward, skip_forced, outcome_reward, outcome)
        self.opponents = self.table.mix

    @property
    def seat(self) -> int:
        """The learner's seat in the current episode."""
        return self.table.seat

    @property
    def seated(self) -> dict[str, tuple[str, Any]]:
        """The opponents of the current episode: ``{"player_i": (spec, agent)}`` for every other seat."""
        return {f"player_{p}": s for p, s in enumerate(self.table.seated) if s is not None}

    @property
    def game_state(self):
        """The engine state of the current episode (for analysis: the learner sees only its observation)."""
        return self.table.state

    # ----------------------------------------------------------------- gymnasium API
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        table = self.table
        table.seed(check_seed(seed))  # check_seed: Gymnasium alone takes True as 1 and refuses numpy integers
        # Gymnasium's Env.reset(seed) would make these: the table's generator is the env's
        self._np_random, self._np_random_seed = table.np_random, table.np_random_seed
        table.deal()
        settle([table])
        self._render_human()
        return table.observation(), self._info({"seat": table.seat, "action_mask": table.mask()})

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        table = self.table
        if table.state is None or table.over():
            raise RuntimeError("step() was called after the episode ended; call reset() to start a new episode")
        action = in_action_space(action, self.game, self.action_space)
        reason = table.play(action)
        if reason is not None:
            return table.observation(), ILLEGAL_REWARD, True, False, {**table.end_info(), "illegal_action": True,
                                                                      "reason": reason}
        play_opponents([table])
        self._render_human()
        if not table.over():
            return table.observation(), 0.0, False, False, self._info({"action_mask": table.mask()})
        return (table.observation(), *table.outcome(), table.end_info())

    def _info(self, info: dict[str, Any]) -> dict[str, Any]:
        """``info`` with, when forced decisions are skipped, how many were played for the learner since its last
        observation."""
        if self.table.skip_forced:
            info["forced"] = self.table.forced
        return info

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as bool (all False once the episode is over); what sb3-contrib's MaskablePPO
        asks every env of a VecEnv for (``env_method("action_masks")``)."""
        if self.table.state is None:
            raise ValueError("action_masks() was called before reset()")
        return self.table.mask().astype(bool)

    def render(self) -> str | np.ndarray | None:
        """The table as the learner's seat sees it: ``State.render_text(viewer=seat)``, or its picture
        ``State.render_rgb(viewer=seat)`` in ``rgb_array`` mode."""
        if self.render_mode is None:
            raise ValueError("render() needs a render_mode: gymnasium.make(..., render_mode='ansi', 'human' or "
                             "'rgb_array')")
        if self.table.state is None:
            raise ValueError("render() was called before reset()")
        if self.render_mode == "rgb_array":
            return self.table.state.render_rgb(viewer=self.seat)
        text = self.table.state.render_text(viewer=self.seat)
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    # ----------------------------------------------------------------- called from the training process
    def set_pool(self, pool: list[Weights]) -> None:
        """Refresh the self-play snapshots (numpy weights); used through ``VecEnv.env_method("set_pool", ...)``."""
        self.opponents.set_pool(pool)

    def _render_human(self) -> None:
        if self.render_mode == "human":
            self.render()


def seat_spaces(game) -> tuple[gym.spaces.Box, gym.spaces.Discrete]:
    """One seat's observation and action spaces (those of the PettingZoo env's ``observation`` part)."""
    low, high = game.layout.bounds()
    return (gym.spaces.Box(low, high, shape=(game.observation_size,), dtype=np.float32),
            gym.spaces.Discrete(game.num_actions))


def in_action_space(action: Any, game, space: gym.spaces.Discrete) -> int:
    """``action`` as an int; anything outside the action space is no move at all but a bug of the caller.
    (What ``action_space.contains`` checks, at a tenth of its cost: this runs at every step.)"""
    try:
        index = operator.index(action)  # ints, numpy integers; not floats, strings or 1-element arrays
    except TypeError:
        index = -1
    if isinstance(action, bool) or not 0 <= index < game.num_actions:
        raise ValueError(f"action {action!r} is not in the action space {space} of {game.name}")
    return index


def single_seat_env(game: str, opponent: str | os.PathLike | Mapping[str, float] = "random",
                    seat: int | str = "random", skip_forced: bool = False, render_mode: str | None = None,
                    **game_options: Any) -> SingleSeatEnv:
    """What ``gymnasium.make("tabletop/<game>-v0", ...)`` builds (``import tabletop_rl`` registers the ids).

    ``opponent`` plays every other seat: ``"random"``, ``"heuristic"``, ``"pretrained"``, the path of a
    policy file / checkpoint / run directory (see :func:`tabletop_rl.training.runtime.agents.load_agent`), or a
    weighted mix of those, ``{"heuristic": 3, "random": 1}`` (drawn per seat and episode). ``seat`` is the
    learner's seat, ``"random"`` (drawn per episode) or a number. ``skip_forced=True`` plays the learner's
    decisions that have exactly one legal action for it (``info["forced"]`` counts them): the same games, fewer
    steps. Every other keyword is an option of the game.
    All of it is checked (and every opponent loaded) here, so a mistake fails at ``gymnasium.make`` with a
    message.
    """
    return SingleSeatEnv(game, game_options, opponents=opponent_mix(opponent), seat=seat, skip_forced=skip_forced,
                         render_mode=render_mode)


def opponent_mix(opponent: str | os.PathLike | Mapping[str, float]) -> dict[str, float]:
    """The ``opponent`` argument of the Gymnasium ids as a mix ``{spec: weight}``; ``self`` is refused (it exists
    only inside training, where the learner's snapshots are)."""
    mix = dict(opponent) if isinstance(opponent, Mapping) else {opponent: 1.0}
    mix = {os.fspath(spec) if isinstance(spec, os.PathLike) else spec: weight for spec, weight in mix.items()}
    if not all(isinstance(spec, str) for spec in mix):
        raise ValueError(f"opponent={opponent!r}: expected an agent spec ('random', 'heuristic', 'pretrained' "
                         "or a policy path) or a mapping of specs to weights")
    if SELF in mix:
        raise ValueError(f"opponent '{SELF}' (snapshots of the learner) exists only inside tabletop_rl.training.train; "
                         "use 'random', 'heuristic', 'pretrained' or a policy path")
    return mix
