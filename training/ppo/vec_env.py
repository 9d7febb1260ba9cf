"""The batched vector env as a Stable-Baselines3 ``VecEnv``: what the trainer steps with ``vec_env: batched``.

SB3 speaks its own vector protocol (``step_async``/``step_wait``, one info dict per env with the last observation
of an ended episode in ``terminal_observation``, ``env_method`` for what its algorithms ask of every env). This
adapter gives it :class:`~tabletop_rl.training.runtime.vector_env.SeatVectorEnv`'s games without an env object
per game: ``env_method("action_masks")`` — which MaskablePPO calls before every step — returns one
(num_envs × num_actions) array, and ``env_method("set_pool", pool)`` hands the self-play snapshots to every game
at once. Seeds follow ``DummyVecEnv``'s rule (``seed(s)`` gives env i ``s + i`` at the next reset), so a run
deals the same games as it would with one ``SingleSeatEnv`` per env. With an env made with ``global_state=True``,
every observation SB3 sees is [observation | global state] (terminal observations too), for a policy whose critic
reads the state and whose actor reads the observation part only (``TabletopPolicy``'s ``critic``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv

from ..runtime.vector_env import SeatVectorEnv

METHODS = ("action_masks", "set_pool")  # what SB3 and the trainer call through env_method


class SB3SeatVecEnv(VecEnv):
    """``env``'s games, one SB3 env each."""

    def __init__(self, env: SeatVectorEnv):
        self.env = env
        self._actions: np.ndarray | None = None
        space = env.single_observation_space
        if env.global_state:  # the state's values are not bounded like the observation's: SB3 does not check them
            size = space.shape[0] + env.game.state_layout.size
            space = spaces.Box(-np.inf, np.inf, (size,), np.float32)
        super().__init__(env.num_envs, space, env.single_action_space)

    def reset(self) -> np.ndarray:
        observations, info = self.env.reset(seed=self._seeds)
        self._reset_seeds()
        self.reset_infos = [{"seat": int(seat)} for seat in info["seat"]]
        return self._with_states(observations)

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        observations, rewards, terminated, truncated, _ = self.env.step(self._actions)
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for i, final_observation, final_info in self.env.ended:
            if self.env.global_state:
                final_observation = np.concatenate([final_observation, final_info["state"]])
            infos[i] = {**final_info, "terminal_observation": final_observation,
                        "TimeLimit.truncated": bool(truncated[i] and not terminated[i])}
        return self._with_states(observations), rewards.astype(np.float32), terminated | truncated, infos

    def _with_states(self, observations: np.ndarray) -> np.ndarray:
        return np.concatenate([observations, self.env.states()], 1) if self.env.global_state else observations

    def close(self) -> None:
        self.env.close()

    # ----------------------------------------------------------------- what SB3 asks of "every env"
    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> Any:
        """``action_masks`` as one (num_envs × num_actions) bool array (``np.stack`` of it is itself);
        ``set_pool`` for every game at once."""
        self._all(indices, method_name)
        if method_name not in METHODS:
            raise AttributeError(f"the batched env has no method {method_name!r} to call per env; it has {METHODS}")
        result = getattr(self.env, method_name)(*method_args, **method_kwargs)
        return result if method_name == "action_masks" else [result] * self.num_envs

    def has_attr(self, attr_name: str) -> bool:
        return attr_name in METHODS or hasattr(self.env, attr_name)

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        return [getattr(self.env, attr_name)] * len(self._all(indices, attr_name))

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        raise AttributeError(f"set_attr({attr_name!r}): the batched env's games share their attributes")

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False] * len(self._all(indices, "env_is_wrapped"))

    def _all(self, indices: Any, what: str) -> Sequence[int]:
        chosen = list(self._get_indices(indices))
        if chosen != list(range(self.num_envs)):
            raise ValueError(f"{what}: the batched env's games are addressed all at once, not by indices {indices}")
        return chosen
