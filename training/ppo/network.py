"""The policy network in torch, built one way for every torch user: SB3's actor-critic MLP under SB3's
parameter names (the tensors of a policy file, :mod:`tabletop_rl.training.runtime.policy`), its forward pass,
the copy of its weights to numpy and back, and torch's thread count. The imitation fitter, the checkpoints
and RLlib's modules use it; SB3 builds the same network from ``torch_activation``."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ..runtime.policy import ACTIVATIONS, SPARSE_SHARE, PolicyInfo, Weights, limit_blas_threads


def torch_activation(name: str) -> type[torch.nn.Module]:
    """The torch module of the activation ``name`` (``network.activation``, one of ``runtime.policy.ACTIVATIONS``)."""
    return getattr(torch.nn, ACTIVATIONS[name].torch)


def native_bf16() -> bool:
    """Whether this CPU multiplies bfloat16 natively (AVX512-BF16 or AMX); elsewhere torch emulates it, slower
    than float32."""
    return torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported()


class MatmulLinear(torch.nn.Linear):
    """``torch.nn.Linear`` computed as ``x @ W.T + b``, as the numpy inference does, instead of one fused
    ``addmm``: the same function, rounded differently in the last bits. Expert iteration fits with it, as it
    always has (the same seed gives the same weights, bit for bit)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.weight.T + self.bias


def sparse_columns(x: torch.Tensor) -> torch.Tensor | None:
    """The features nonzero in some row of the batch ``x``, when they are at most ``SPARSE_SHARE`` of all (then
    gathering them is faster than the dense product); None otherwise."""
    if x.dim() != 2:
        return None
    columns = x.square().sum(0).nonzero().squeeze(1)  # the fastest of the exact tests measured (no cancellation)
    return columns if len(columns) <= SPARSE_SHARE * x.shape[1] else None


class SparseInputLinear(torch.nn.Linear):
    """A first layer over observations that are mostly zeros (one-hot fields): only the weight columns of the
    features that are nonzero somewhere in the batch take part (gather, then multiply and sum), which is the dense
    layer's result up to rounding, and its gradient reaches only those columns (the others' is zero). ``columns``
    (:func:`sparse_columns` of ``x``, None: dense) is computed here unless the caller, with several layers reading
    the same batch, gives it."""

    def forward(self, x: torch.Tensor, columns: Any = ...) -> torch.Tensor:
        if columns is ...:
            columns = sparse_columns(x)
        if columns is None:
            return super().forward(x)
        return torch.nn.functional.linear(x.index_select(1, columns), self.weight.index_select(1, columns), self.bias)


def mlp(in_size: int, hidden: list[int], activation: type[torch.nn.Module],
        linear: type[torch.nn.Linear] = torch.nn.Linear, first: type[torch.nn.Linear] | None = None,
        ) -> tuple[torch.nn.Sequential, int]:
    """Linear + activation per hidden size (SB3's ``MlpExtractor`` branch), and its output size; the first layer
    of class ``first`` when given."""
    layers: list[torch.nn.Module] = []
    for size in hidden:
        layers += [(first if first and not layers else linear)(in_size, size), activation()]
        in_size = size
    return torch.nn.Sequential(*layers), in_size


class Extractor(torch.nn.Module):
    """SB3's ``MlpExtractor`` (``policy_net`` and ``value_net``) after an optional trunk both read, ``shared_net``
    (``network["shared"]``: one first layer over the observation instead of two). With ``sparse``, the layers that
    read the observation are :class:`SparseInputLinear`."""

    def __init__(self, observation_size: int, network: dict[str, Any],
                 linear: type[torch.nn.Linear] = torch.nn.Linear, sparse: bool = False):
        super().__init__()
        activation = torch_activation(network["activation"])
        shared = list(network.get("shared", []))
        first = SparseInputLinear if sparse else None
        self.shared_net, width = mlp(observation_size, shared, activation, linear, first)
        first = None if shared else first
        self.policy_net, self.latent_dim_pi = mlp(width, list(network["pi"]), activation, linear, first)
        self.value_net, self.latent_dim_vf = mlp(width, list(network["vf"]), activation, linear, first)
        self.readers = [net for net in (self.shared_net, self.policy_net, self.value_net)
                        if len(net) and isinstance(net[0], SparseInputLinear)]  # the layers that read the observation

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        columns = sparse_columns(features) if self.readers else None  # found once for the layers that read them
        trunk = self._run(self.shared_net, features, columns)
        return self._run(self.policy_net, trunk, columns), self._run(self.value_net, trunk, columns)

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return self.policy_net(self.shared_net(features))

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return self.value_net(self.shared_net(features))

    def _run(self, net: torch.nn.Sequential, x: torch.Tensor, columns: torch.Tensor | None) -> torch.Tensor:
        if net not in self.readers:
            return net(x)
        for i, layer in enumerate(net):
            x = layer(x, columns) if i == 0 else layer(x)
        return x


def build(module: torch.nn.Module, observation_size: int, num_actions: int, network: dict[str, Any],
          linear: type[torch.nn.Linear] = torch.nn.Linear, sparse: bool = False) -> None:
    """Give ``module`` the actor-critic MLP of ``network`` (``{"shared": [...], "pi": [...], "vf": [...],
    "activation": ...}``, ``shared`` optional) under SB3's names: ``mlp_extractor`` (:class:`Extractor`), then
    ``action_net`` and ``value_net``."""
    module.mlp_extractor = Extractor(observation_size, network, linear, sparse)
    module.action_net = linear(module.mlp_extractor.latent_dim_pi, num_actions)
    module.value_net = linear(module.mlp_extractor.latent_dim_vf, 1)


class ActorCritic(torch.nn.Module):
    """The network of a policy file as a torch module (its weights: :func:`load_weights`)."""

    def __init__(self, info: PolicyInfo, linear: type[torch.nn.Linear] = torch.nn.Linear):
        super().__init__()
        build(self, info.observation_size, info.num_actions, info.network, linear)


def logits(net: torch.nn.Module, obs: torch.Tensor) -> torch.Tensor:
    """The action logits of any module with SB3's names (SB3's policy, :class:`ActorCritic`, RLlib's modules)."""
    return net.action_net(net.mlp_extractor.forward_actor(obs))


def masked_logits(net: torch.nn.Module, obs: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """Logits with the illegal actions at -inf: cross-entropy over the legal ones, as the masked distribution
    computes it (building sb3's masked distribution per batch costs several times the network itself)."""
    return logits(net, obs).masked_fill(~masks, float("-inf"))


def values(net: torch.nn.Module, obs: torch.Tensor) -> torch.Tensor:
    """The state values, shape (batch,)."""
    return net.value_net(net.mlp_extractor.forward_critic(obs)).squeeze(-1)


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
