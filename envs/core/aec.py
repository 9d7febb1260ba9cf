"""One PettingZoo ``AECEnv`` for every engine.

Game packages never re-implement AEC bookkeeping: they call :func:`make_env_functions` with their
``Game`` class and get the ``raw_env`` class and the wrapped ``env`` function PettingZoo users expect.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers.order_enforcing import AECOrderEnforcingIterable, AECOrderEnforcingIterator

from . import picture
from .game import Game, State, check_seed
from .registry import game_version

RENDER_MODES = ("ansi", "human", "rgb_array")


# Dead agents are stepped with None while ``agents`` is non-empty (PettingZoo's protocol); once every agent is
# removed, a step is a bug of the caller (PettingZoo's wrapper would only warn and ignore it).
GAME_OVER = "step() was called after the game is over; call reset() to start a new game"


class TabletopEnv(AECEnv):
    """AEC environment driven by a :class:`~tabletop_rl.envs.core.game.State`.

    * Agents are ``player_0 … player_{n-1}``; ``agent_selection`` is always the engine's
      ``current_player``, so a seat may act several times in a row (multi-step turns, auctions).
    * ``observe(agent)`` returns ``{"observation": float32 vector, "action_mask": int8 vector}``; the
      mask is all zeros for agents not on move and is mirrored in ``infos[agent]["action_mask"]``.
    * Rewards are terminal only: ``State.returns()`` (zero-sum, in [-1, 1]) when the game ends.
      A turn cap ends the episode with ``truncations`` set and zero rewards.
    * ``state()`` / ``state_space``: the global state for centralized critics (``State.global_state``).
    * ``env.unwrapped.game_state`` is the engine state (``tabletop_rl.envs.core.game.State``), for analysis and search;
      ``env.unwrapped.game_seed`` its seed: ``game.new_initial_state(game_seed)`` is the game's first position.
    * ``reset(seed=s)`` makes the whole episode reproducible; a later ``reset()`` without a seed
      continues the same seeded sequence of games. A seed is None or a non-negative integer.
    * Once every agent has been stepped out (``agents`` is empty), ``step()`` raises ``AssertionError``
      (PettingZoo's error for steps out of order): call ``reset()``.
    * ``render()`` shows the whole table, hidden cards included: ``ansi`` returns its text, ``human`` prints it,
      ``rgb_array`` returns its picture (``State.render_rgb``; needs the ``render`` extra, checked at creation).
    """

    game_class: type[Game]
    metadata = {"render_modes": list(RENDER_MODES), "is_parallelizable": False, "render_fps": 1}

    def __init__(self, render_mode: str | None = None, **options: Any):
        super().__init__()
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode={render_mode!r} is not supported; use one of {RENDER_MODES} or None")
        if render_mode == "rgb_array":
            picture.require()  # here rather than at the first frame: the missing extra is named at once
        self.game = self.game_class(**options)
        self.render_mode = render_mode
        self.metadata = {**type(self).metadata, "name": f"{self.game.name}_v{game_version(self.game.name)}"}

        n, size = self.game.num_players, self.game.observation_size
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agent_name_mapping = {agent: i for i, agent in enumerate(self.possible_agents)}
        low, high = self.game.layout.bounds()
        self.observation_spaces = {
            agent: spaces.Dict({
                "observation": spaces.Box(low, high, shape=(size,), dtype=np.float32),
                "action_mask": spaces.Box(0, 1, shape=(self.game.num_actions,), dtype=np.int8),
            })
            for agent in self.possible_agents
        }
        self.action_spaces = {agent: spaces.Discrete(self.game.num_actions) for agent in self.possible_agents}
        state_layout = self.game.state_layout
        self.state_space = spaces.Box(*state_layout.bounds(), shape=(state_layout.size,), dtype=np.float32)
        self.game_state: State | None = None
        self.game_seed: int | None = None
        self._episode_seeds: np.random.Generator | None = None

    # ----------------------------------------------------------------- spaces
    def observation_space(self, agent: str) -> spaces.Dict:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Discrete:
        return self.action_spaces[agent]

    # ----------------------------------------------------------------- AEC API
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start a new game. Game options are constructor arguments; ``options`` here is accepted (PettingZoo's
        api_test passes one) and ignored."""
        seed = check_seed(seed)
        if seed is not None or self._episode_seeds is None:
            self._episode_seeds = np.random.default_rng(seed)
        self.game_seed = int(self._episode_seeds.integers(2**63))
        self.game_state = self.game.new_initial_state(self.game_seed)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {agent: {"action_mask": np.zeros(self.game.num_actions, np.int8)} for agent in self.agents}
        self._actor: str | None = None
        self._sync()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        info = self.infos.get(agent)
        mask = info["action_mask"] if info is not None else np.zeros(self.game.num_actions, np.int8)
        return {"observation": self.game_state.observation(self.agent_name_mapping[agent]), "action_mask": mask}

    def step(self, action: Any) -> None:
        if not self.agents:
            raise AssertionError(GAME_OVER)
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self.game_state.apply_action(action)  # ValueError names the action and the phase if illegal
        self._cumulative_rewards[agent] = 0.0
        self._sync()
        if self.render_mode == "human":
            self.render()

    def _sync(self) -> None:
        """Copy the engine's turn, masks and (at the end) outcome into the AEC dictionaries."""
        state = self.game_state
        terminal = state.is_terminal()
        actor = None if terminal else self.possible_agents[state.current_player]
        if self._actor is not None and self._actor != actor:
            self.infos[self._actor]["action_mask"] = np.zeros(self.game.num_actions, np.int8)
        if terminal:
            truncated = state.is_truncated()
            returns, extra = state.returns(), state.end_info()
            for i, agent in enumerate(self.agents):
                self.rewards[agent] = float(returns[i])
                self.terminations[agent] = not truncated
                self.truncations[agent] = truncated
                self.infos[agent].update(extra)
            self._actor = None
            self._accumulate_rewards()
            return
        self._actor = self.agent_selection = actor
        self.infos[actor]["action_mask"] = state.action_mask()

    def state(self) -> np.ndarray:
        """The global state (``State.global_state``): the whole position, hidden cards included, seats in
        table order, the same whichever agent is selected; in ``state_space``. For centralized critics only:
        agents must act on ``observe(agent)``."""
        if self.game_state is None:
            raise ValueError("state() was called before reset()")
        return self.game_state.global_state()

    # ----------------------------------------------------------------- rendering
    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            raise ValueError("render() needs a render_mode; create the env with render_mode='ansi', "
                             "'human' or 'rgb_array'")
        if self.game_state is None:
            raise ValueError("render() was called before reset()")
        if self.render_mode == "rgb_array":
            return self.game_state.render_rgb()
        text = self.game_state.render_text()
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    def close(self) -> None:
        pass


class _DirectBookkeeping:
    """Mixin for PettingZoo's inner wrappers: read the AEC bookkeeping straight from the bare env.

    ``BaseWrapper`` forwards every attribute it lacks through one ``__getattr__`` call per layer, and the
    standard wrappers read ``agent_selection``, ``terminations``, … many times per step: with three layers
    that costs more than a whole game step. These read-only properties skip the chain (each an
    ``operator.attrgetter``, C code, not a Python function); the wrappers' behaviour is unchanged (they write
    through ``env.unwrapped`` anyway). ``OrderEnforcingWrapper``, the outermost, keeps its own ``__getattr__``
    so its "reset first" errors still fire.
    """

    def __init__(self, env: AECEnv, *args: Any, **kwargs: Any):
        super().__init__(env, *args, **kwargs)
        self._bare = env.unwrapped


for _name in ("agent_selection", "agents", "terminations", "truncations", "rewards", "infos",
              "_cumulative_rewards"):
    setattr(_DirectBookkeeping, _name, property(operator.attrgetter(f"_bare.{_name}")))


class TerminateIllegalWrapper(_DirectBookkeeping, wrappers.TerminateIllegalWrapper):
    """PettingZoo's ``TerminateIllegalWrapper`` with direct bookkeeping reads: its ``observe`` and ``step`` are
    PettingZoo's (1.25–1.27) written against the bare env, the hottest code of the wrapped env."""

    def observe(self, agent: str) -> Any:
        # PettingZoo's observe (remember the observation and info of the agent to act), reading the bare env
        obs = self.env.observe(agent)
        bare = self._bare
        if agent == bare.agent_selection:
            self._prev_obs = obs
            self._prev_info = bare.infos.get(agent, {})
        return obs

    def step(self, action: Any) -> None:
        # PettingZoo's step, line for line, with the bookkeeping read once from the bare env
        bare = self._bare
        agent = bare.agent_selection
        if self._prev_obs is None:
            self.observe(agent)
        if isinstance(self._prev_obs, dict):
            assert "action_mask" in self._prev_obs, (
                f"`action_mask` not found in dictionary observation: {self._prev_obs}. Action mask must either be "
                "in `observation['action_mask']` or `info['action_mask']` to use TerminateIllegalWrapper.")
            mask = self._prev_obs["action_mask"]
        else:
            assert self._prev_info is not None
            assert "action_mask" in self._prev_info, (
                f"`action_mask` not found in info for non-dictionary observation: {self._prev_info}. Action mask "
                "must either be in observation['action_mask'] or info['action_mask'] to use "
                "TerminateIllegalWrapper.")
            mask = self._prev_info["action_mask"]
        self._prev_obs = None
        self._prev_info = None
        done = bare.terminations[agent] or bare.truncations[agent]
        if self._terminated and done:
            bare._was_dead_step(action)
        elif not done and not mask[action]:
            EnvLogger.warn_on_illegal_move()
            bare._cumulative_rewards[agent] = 0
            bare.terminations = dict.fromkeys(bare.agents, True)
            bare.truncations = dict.fromkeys(bare.agents, True)
            bare.rewards = dict.fromkeys(bare.truncations, 0)
            bare.rewards[agent] = float(self._illegal_value)
            bare._accumulate_rewards()
            bare._deads_step_first()
            self._terminated = True
        else:
            self.env.step(action)


class AssertOutOfBoundsWrapper(_DirectBookkeeping, wrappers.AssertOutOfBoundsWrapper):
    """PettingZoo's ``AssertOutOfBoundsWrapper`` with direct bookkeeping reads."""

    def __init__(self, env: AECEnv):
        super().__init__(env)
        self._num_actions = self._bare.game.num_actions

    def step(self, action: Any) -> None:
        # a plain int in range is in every agent's Discrete(num_actions): skip gymnasium's contains(), which
        # costs more than a game step; anything else gets PettingZoo's own check
        if type(action) is int and 0 <= action < self._num_actions:
            self.env.step(action)
        else:
            super().step(action)


class _OrderEnforcingIterator(AECOrderEnforcingIterator):
    """PettingZoo's ``agent_iter`` iterator (stop when no agent is left, insist on a step between two agents),
    reading the bare env's ``agents`` and ``agent_selection`` instead of through the wrappers' ``__getattr__``."""

    def __next__(self) -> str:
        env = self.env
        bare = env._bare
        if not bare.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        assert env._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
        env._has_updated = False
        return bare.agent_selection


class _OrderEnforcingIterable(AECOrderEnforcingIterable):
    def __iter__(self) -> _OrderEnforcingIterator:
        return _OrderEnforcingIterator(self.env, self.max_iter)


class OrderEnforcingWrapper(wrappers.OrderEnforcingWrapper):
    """PettingZoo's ``OrderEnforcingWrapper``, refusing what the bare env refuses before any wrapper changes
    its own state: a bad seed, and a step after the game is over (which PettingZoo only warns about).

    Its hot paths — ``step``, ``last`` and ``agent_iter`` — read the bare env's bookkeeping once reset instead
    of through ``__getattr__`` (seven chained calls per decision otherwise); before a reset they are
    PettingZoo's own, errors included, and every other attribute still goes through ``__getattr__``."""

    def __init__(self, env: AECEnv):
        super().__init__(env)
        self._bare = env.unwrapped

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        super().reset(seed=check_seed(seed), options=options)

    def step(self, action: Any) -> None:
        # PettingZoo's step, but a step after the end raises instead of warning
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        if not self._bare.agents:
            raise AssertionError(GAME_OVER)
        self._has_updated = True
        self.env.step(action)

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._has_reset:
            return super().last(observe)  # PettingZoo's "cannot be accessed before reset"
        bare = self._bare
        agent = bare.agent_selection
        assert agent is not None
        observation = self.env.observe(agent) if observe else None
        return (observation, bare._cumulative_rewards[agent], bare.terminations[agent], bare.truncations[agent],
                bare.infos[agent])

    def agent_iter(self, max_iter: int = 2**63) -> _OrderEnforcingIterable:
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return _OrderEnforcingIterable(self, max_iter)


def make_env_functions(game_class: type[Game], doc: str, module: str) -> tuple[type[TabletopEnv], Any]:
    """``raw_env`` (the bare AEC class) and ``env`` (with PettingZoo's standard wrappers) for a game.

    ``module`` is the package that exports them, so that pickle can find ``raw_env`` by name.
    """
    raw_env = type("raw_env", (TabletopEnv,), {"game_class": game_class, "__doc__": doc, "__module__": module})

    def env(render_mode: str | None = None, **options: Any) -> AECEnv:
        """The wrapped env: an illegal move ends the episode with reward -1 for its author."""
        wrapped = raw_env(render_mode=render_mode, **options)
        wrapped = TerminateIllegalWrapper(wrapped, illegal_reward=-1)
        wrapped = AssertOutOfBoundsWrapper(wrapped)
        return OrderEnforcingWrapper(wrapped)

    env.__doc__ = doc
    env.__module__ = module
    return raw_env, env
