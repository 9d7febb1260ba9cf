"""The policy network in torch, built one way for every torch user: SB3's actor-critic MLP under SB3's
parameter names (the tensors of a policy file, :mod:`tabletop_rl.training.runtime.policy`), its forward pass,
the copy of its weights to numpy and back, and torch's thread count. The imitation fitter, the checkpoints
and RLlib's modules use it; SB3 builds the same network from ``torch_activation``."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ..runtime.policy import ACTIVATIONS, PolicyInfo, Weights, limit_blas_threads


def torch_activation(name: str) -> type[torch.nn.Module]:
    """The torch module of the activation ``name`` (``network.activation``, one of ``runtime.policy.ACTIVATIONS``)."""
    return getattr(torch.nn, ACTIVATIONS[name].torch)


class MatmulLinear(torch.nn.Linear):
    """``torch.nn.Linear`` computed as ``x @ W.T + b``, as the numpy inference does, instead of one fused
    ``addmm``: the same function, rounded differently in the last bits. Expert iteration fits with it, as it
    always has (the same seed gives the same weights, bit for bit)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.weight.T + self.bias


def mlp(in_size: int, hidden: list[int], activation: type[torch.nn.Module],
        linear: type[torch.nn.Linear] = torch.nn.Linear) -> tuple[torch.nn.Sequential, int]:
    """Linear + activation per hidden size (SB3's ``MlpExtractor`` branch), and its output size."""
    layers: list[torch.nn.Module] = []
    for size in hidden:
        layers += [linear(in_size, size), activation()]
        in_size = size
    return torch.nn.Sequential(*layers), in_size


def build(module: torch.nn.Module, observation_size: int, num_actions: int, network: dict[str, Any],
          linear: type[torch.nn.Linear] = torch.nn.Linear) -> None:
    """Give ``module`` the actor-critic MLP of ``network`` (``{"pi": [...], "vf": [...], "activation": ...}``)
    under SB3's names: ``mlp_extractor.policy_net`` and ``mlp_extractor.value_net`` (no shared layer), then
    ``action_net`` and ``value_net``."""
    activation = torch_activation(network["activation"])
    module.mlp_extractor = torch.nn.Module()
    module.mlp_extractor.policy_net, pi_out = mlp(observation_size, list(network["pi"]), activation, linear)
    module.mlp_extractor.value_net, vf_out = mlp(observation_size, list(network["vf"]), activation, linear)
    module.action_net = linear(pi_out, num_actions)
    module.value_net = linear(vf_out, 1)


class ActorCritic(torch.nn.Module):
    """The network of a policy file as a torch module (its weights: :func:`load_weights`)."""

    def __init__(self, info: PolicyInfo, linear: type[torch.nn.Linear] = torch.nn.Linear):
        super().__init__()
        build(self, info.observation_size, info.num_actions, info.network, linear)


def logits(net: torch.nn.Module, obs: torch.Tensor) -> torch.Tensor:
    """The action logits of any module with SB3's names (SB3's policy, :class:`ActorCritic`, RLlib's modules)."""
    return net.action_net(net.mlp_extractor.policy_net(obs))


def masked_logits(net: torch.nn.Module, obs: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """Logits with the illegal actions at -inf: cross-entropy over the legal ones, as the masked distribution
    computes it (building sb3's masked distribution per batch costs several times the network itself)."""
    return logits(net, obs).masked_fill(~masks, float("-inf"))


def values(net: torch.nn.Module, obs: torch.Tensor) -> torch.Tensor:
    """The state values, shape (batch,)."""
    return net.value_net(net.mlp_extractor.value_net(obs)).squeeze(-1)


def weights_of(net: torch.nn.Module) -> Weights:
    """A copy of a torch network's parameters as float32 numpy arrays, under their state_dict names."""
    return {k: v.detach().cpu().numpy().astype(np.float32, copy=True) for k, v in net.state_dict().items()}


def load_weights(net: torch.nn.Module, weights: Weights) -> None:
    """Copy numpy weights into a torch network (names and shapes must match exactly)."""
    net.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in weights.items()})


def limit_threads(n: int = 1) -> None:
    """torch's and numpy's BLAS threads, for the learner and the opponents' numpy policies: more threads thrash
    on a shared, busy CPU (the rollouts run batch-8 forward passes, the opponents one observation)."""
    if torch.get_num_threads() != n:
        torch.set_num_threads(n)
    limit_blas_threads(n)
