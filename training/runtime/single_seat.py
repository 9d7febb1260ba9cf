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
from ...envs.core.agents import attach_view
from ...envs.core.game import check_seed
from ...envs.core.match import score_margins
from .opponents import SELF, OpponentMix, Weights

MAX_RESETS = 100  # deals in a row that end before the learner's first decision: surely a bug
ILLEGAL_REWARD = -1.0  # PettingZoo's illegal-move convention (TerminateIllegalWrapper(illegal_reward=-1))


class SingleSeatEnv(gym.Env):
    """One seat of ``game`` for the learner; the other seats are played inside ``step()``."""

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 1}

    def __init__(self, game: str, game_options: Mapping[str, Any] | None = None,
                 opponents: Mapping[str, float] | None = None, seat: int | str = "random",
                 network: Mapping[str, Any] | None = None, snapshot_deterministic: bool = False,
                 margin_reward: float = 0.0, render_mode: str | None = None):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode={render_mode!r} is not supported; use one of "
                             f"{self.metadata['render_modes']} or None (the learner's view as text; the "
                             "PettingZoo env's rgb_array picture shows every hand)")
        self.render_mode = render_mode
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
        mix = {"random": 1.0} if opponents is None else opponents  # an empty mix is refused, not taken for random
        self.opponents = OpponentMix(self.game, mix, network, snapshot_deterministic)
        self.seat = 0
        self.learner = first
        self.seated: dict[str, tuple[str, Any]] = {}
        self.forfeited = False  # the learner ended the episode with an illegal action

    # ----------------------------------------------------------------- gymnasium API
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        seed = check_seed(seed)  # Gymnasium alone takes True as 1 and refuses numpy integers
        super().reset(seed=seed)
        if seed is not None:
            self.opponents.reseed(self.np_random)
        self.forfeited = False
        for _ in range(MAX_RESETS):
            n = self.game.num_players
            self.seat = int(self.np_random.integers(n)) if self.seat_choice == "random" else self.seat_choice
            self.learner = self.aec.possible_agents[self.seat]
            self.seated = {agent: self.opponents.draw(seat) for seat, agent in enumerate(self.aec.possible_agents)
                           if agent != self.learner}
            self.aec.reset(seed=int(self.np_random.integers(2**63)))
            for agent, (_, opponent) in self.seated.items():  # a searching opponent gets its seat's view
                attach_view(opponent, lambda: self.aec.game_state, self.aec.agent_name_mapping[agent])
            self._play_opponents()
            if not self._over():
                self._render_human()
                return self._observation(), {"seat": self.seat, "action_mask": self._mask()}
        raise RuntimeError(f"{MAX_RESETS} games of {self.game.name} in a row ended before seat {self.seat} "
                           "had a decision")

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        if self._over():
            raise RuntimeError("step() was called after the episode ended; call reset() to start a new episode")
        action = self._in_action_space(action)
        if not self.aec.infos[self.learner]["action_mask"][action]:
            return self._forfeit(action)
        self.aec.step(action)
        self._play_opponents()
        self._render_human()
        if not self._over():
            return self._observation(), 0.0, False, False, {"action_mask": self._mask()}
        learner, info = self.learner, self._end_info()
        reward = float(self.aec.rewards[learner])
        if self.margin_reward and self.aec.terminations[learner]:
            reward += self.margin_reward * info["margin"]
        return (self._observation(), reward, bool(self.aec.terminations[learner]),
                bool(self.aec.truncations[learner]), info)

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as bool (all False once the episode is over); what sb3-contrib's MaskablePPO
        asks every env of a VecEnv for (``env_method("action_masks")``)."""
        if self.aec.game_state is None:
            raise ValueError("action_masks() was called before reset()")
        return self._mask().astype(bool)

    def render(self) -> str | None:
        """The table as the learner's seat sees it (``State.render_text(viewer=seat)``)."""
        if self.render_mode is None:
            raise ValueError("render() needs a render_mode: gymnasium.make(..., render_mode='ansi' or 'human')")
        if self.aec.game_state is None:
            raise ValueError("render() was called before reset()")
        text = self.aec.game_state.render_text(viewer=self.seat)
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    # ----------------------------------------------------------------- called from the training process
    def set_pool(self, pool: list[Weights]) -> None:
        """Refresh the self-play snapshots (numpy weights); used through ``VecEnv.env_method("set_pool", ...)``."""
        self.opponents.set_pool(pool)

    # ----------------------------------------------------------------- internals
    def _over(self) -> bool:
        return self.forfeited or self.aec.terminations[self.learner] or self.aec.truncations[self.learner]

    def _in_action_space(self, action: Any) -> int:
        """``action`` as an int; anything outside the action space is no move at all but a bug of the caller.
        (What ``action_space.contains`` checks, at a tenth of its cost: this runs at every step.)"""
        try:
            index = operator.index(action)  # ints, numpy integers; not floats, strings or 1-element arrays
        except TypeError:
            index = -1
        if isinstance(action, bool) or not 0 <= index < self.game.num_actions:
            raise ValueError(f"action {action!r} is not in the action space {self.action_space} of "
                             f"{self.game.name}")
        return index

    def _mask(self) -> np.ndarray:
        """A fresh int8 copy of the learner's mask: callers keep and may modify what they are given."""
        if self.forfeited:
            return np.zeros(self.game.num_actions, np.int8)
        return self.aec.infos[self.learner]["action_mask"].copy()

    def _forfeit(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        """PettingZoo's illegal-move convention: nothing is played; the episode ends with -1 for the learner."""
        state = self.aec.game_state
        reason = (f"action {action} ({state.action_to_string(action)}) is illegal for seat {self.seat} in phase "
                  f"{state.phase!r}: the episode ends with reward {ILLEGAL_REWARD}")
        self.forfeited = True
        info = {**self._end_info(), "illegal_action": True, "reason": reason}
        return self._observation(), ILLEGAL_REWARD, True, False, info

    def _render_human(self) -> None:
        if self.render_mode == "human":
            self.render()

    def _observation(self) -> np.ndarray:
        return self.aec.observe(self.learner)["observation"]

    def _play_opponents(self) -> None:
        aec = self.aec
        while not self._over() and aec.agent_selection != self.learner:
            seat_view = aec.observe(aec.agent_selection)  # that seat's own observation and mask only
            _, agent = self.seated[aec.agent_selection]
            aec.step(agent.act(seat_view["observation"], seat_view["action_mask"]))

    def _end_info(self) -> dict[str, Any]:
        """Seat, opponents, the (all-zero) mask and the score margin (own score minus the mean of the others')."""
        info = {"seat": self.seat, "opponents": [name for name, _ in self.seated.values()],
                "action_mask": self._mask()}
        scores = self.aec.infos[self.learner].get("scores")
        if scores is not None:
            info.update(scores=list(scores), margin=float(score_margins(scores)[self.seat]))
        return info


def single_seat_env(game: str, opponent: str | os.PathLike | Mapping[str, float] = "random",
                    seat: int | str = "random", render_mode: str | None = None, **game_options: Any) -> SingleSeatEnv:
    """What ``gymnasium.make("tabletop/<game>-v0", ...)`` builds (``import tabletop_rl`` registers the ids).

    ``opponent`` plays every other seat: ``"random"``, ``"heuristic"``, ``"pretrained"``, the path of a
    policy file / checkpoint / run directory (see :func:`tabletop_rl.training.runtime.agents.load_agent`), or a
    weighted mix of those, ``{"heuristic": 3, "random": 1}`` (drawn per seat and episode). ``seat`` is the
    learner's seat, ``"random"`` (drawn per episode) or a number; every other keyword is an option of the game.
    All of it is checked (and every opponent loaded) here, so a mistake fails at ``gymnasium.make`` with a
    message.
    """
    mix = dict(opponent) if isinstance(opponent, Mapping) else {opponent: 1.0}
    mix = {os.fspath(spec) if isinstance(spec, os.PathLike) else spec: weight for spec, weight in mix.items()}
    if not all(isinstance(spec, str) for spec in mix):
        raise ValueError(f"opponent={opponent!r}: expected an agent spec ('random', 'heuristic', 'pretrained' "
                         "or a policy path) or a mapping of specs to weights")
    if SELF in mix:
        raise ValueError(f"opponent '{SELF}' (snapshots of the learner) exists only inside tabletop_rl.training.train; "
                         "use 'random', 'heuristic', 'pretrained' or a policy path")
    return SingleSeatEnv(game, game_options, opponents=mix, seat=seat, render_mode=render_mode)
