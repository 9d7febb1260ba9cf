"""RLlib RLModules that read the env's observation dict directly: the learner's masked actor-critic, its
frozen snapshots, and fixed agents (random, heuristic, shipped or saved policies) as non-trainable modules.

:class:`MaskedActorCritic` has exactly the network of the SB3 pipeline (built by
:func:`tabletop_rl.training.ppo.network.build`, SB3's parameter names: its ``state_dict()`` *is* a policy file's
tensors) with SB3's orthogonal initialisation.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.rl_module import RLModule
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.utils.torch_utils import FLOAT_MIN

from ... import envs
from ..ppo.network import build, logits, values
from ..runtime.agents import load_agent

OBSERVATION, MASK = "observation", "action_mask"


def orthogonal_init(module: torch.nn.Module, gain: float) -> None:
    """SB3's ``ActorCriticPolicy.init_weights``: orthogonal weights, zero biases."""
    for layer in module.modules():
        if isinstance(layer, torch.nn.Linear):
            torch.nn.init.orthogonal_(layer.weight, gain=gain)
            layer.bias.data.fill_(0.0)


class MaskedActor(TorchRLModule):
    """The network without RLlib's value-function API: what the frozen self-play snapshots are.

    Same parameters as :class:`MaskedActorCritic` (the learner's weights load as they are), but PPO's
    learner neither builds an optimizer for it nor computes values for its episodes.
    ``model_config = {"pi": [hidden sizes], "vf": [hidden sizes], "activation": "relu" | "tanh"}``.
    """

    def setup(self) -> None:
        build(self, self.observation_space[OBSERVATION].shape[0], self.action_space.n, self.model_config)
        for part, gain in ((self.mlp_extractor, np.sqrt(2)), (self.action_net, 0.01), (self.value_net, 1.0)):
            orthogonal_init(part, gain)

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        # The most negative float32, not -inf: a terminal observation has an all-zero mask, and an all -inf row
        # would make the softmax NaN, whose gradient leaks into the loss even where the loss masks that row out.
        return {Columns.ACTION_DIST_INPUTS: logits(self, obs[OBSERVATION]).masked_fill(obs[MASK] == 0, FLOAT_MIN)}


class MaskedActorCritic(MaskedActor, ValueFunctionAPI):
    """The learner: :class:`MaskedActor` with the value head exposed to PPO (``compute_values``)."""

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        return values(self, batch[Columns.OBS][OBSERVATION])


class AgentModule(RLModule):
    """A fixed agent as a non-trainable RLModule: ``load_agent(spec)`` acts on each seat's own observation.

    ``model_config = {"game": name, "game_options": {...}, "agent": spec, "seed": int or None}``, spec as for
    :func:`tabletop_rl.training.runtime.agents.load_agent` (``random``, ``heuristic``, ``pretrained`` or a policy path).
    """

    def setup(self) -> None:
        config = self.model_config
        game = envs.make(config["game"], wrapped=False, **dict(config.get("game_options") or {})).game
        self.agent = load_agent(config["agent"], game, seed=config.get("seed"))

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        observations, masks = np.asarray(obs[OBSERVATION]), np.asarray(obs[MASK])
        return {Columns.ACTIONS: np.array([self.agent.act(o, m) for o, m in zip(observations, masks, strict=True)])}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        raise NotImplementedError(f"{self.model_config['agent']!r} is a fixed agent: it is never trained")
