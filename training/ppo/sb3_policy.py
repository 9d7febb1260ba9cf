"""The policy MaskablePPO trains: sb3-contrib's ``MaskableActorCriticPolicy`` with our network
(:class:`~tabletop_rl.training.ppo.network.Extractor`: an optional shared trunk, sparse-input first layers) under
SB3's parameter names, so that its ``state_dict`` is a policy file's tensors (:meth:`TabletopPolicy.file_weights`),
Adam's fused kernel, and an optional critic that reads the global state in training only."""

from __future__ import annotations

from typing import Any

import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

from ..runtime.policy import Weights
from .network import Extractor, SparseInputLinear, build, load_weights, logits, mlp, torch_activation, weights_of

# SB3's own Adam settings for PPO, plus the fused kernel: the same algorithm in one pass over each tensor, 7x
# faster on the CPU than the per-tensor loop for a 2 x 256 x 4,746 first layer (docs/performance.md).
OPTIMIZER_KWARGS = {"eps": 1e-5, "fused": True}
ILLEGAL = -1e8  # an illegal action's logit: probability 0, and, unlike -inf, no 0 × inf in the gradients
CRITIC = "critic."  # the names of the global-state critic's tensors: in checkpoints, never in a policy file


class TabletopPolicy(MaskableActorCriticPolicy):
    """``network`` as a policy file names it (``{"shared": [...], "pi": [...], "vf": [...], "activation": ...}``).

    PPO's update reads the masked log-probabilities straight from the logits (SB3's masked distribution, built
    per minibatch, costs more than the network) and may add ``anchor_weight`` × KL(policy ‖ anchor), the
    anchor being a frozen policy (:meth:`set_anchor`: the one PPO started from).

    ``critic`` (``{"hidden": [...], "state_size": k}``) adds a critic over [observation | global state]: the
    observations SB3 hands over then end with the game's ``k`` global-state entries (``SB3SeatVecEnv`` of an env
    with ``global_state=True``). The actor and the file's value head read the observation part only; PPO's values
    (advantages, value loss) come from the critic, and the value head is pulled towards the critic's values
    (``distil_weight`` × their squared difference), so that a policy file keeps a critic of its own observation."""

    def __init__(self, *args: Any, network: dict[str, Any], critic: dict[str, Any] | None = None, **kwargs: Any):
        self.network = dict(network)
        self.critic_spec = dict(critic) if critic else None
        self.distil_weight = 0.0  # set by the trainer: PPO's vf_coef
        self.bf16 = False  # set by the trainer: the hidden layers in bfloat16 (config.bf16 on a CPU that has it)
        kwargs.setdefault("optimizer_kwargs", OPTIMIZER_KWARGS)
        super().__init__(*args, net_arch={"pi": list(network["pi"]), "vf": list(network["vf"])},
                         activation_fn=torch_activation(network["activation"]), **kwargs)
        self.anchor_weight = 0.0  # set by the trainer at every rollout
        self.anchor_kl: list[float] = []  # the mean KL of every minibatch since the trainer last read it
        self.ent_coef = 1.0  # PPO's, set by the trainer: the KL enters the loss through the entropy term
        object.__setattr__(self, "anchor", None)  # not a submodule: in neither the state_dict nor the optimizer

    def _build_mlp_extractor(self) -> None:
        spec = self.critic_spec
        self.observation_size = self.features_dim - (spec["state_size"] if spec else 0)
        self.mlp_extractor = Extractor(self.observation_size, self.network, sparse=True)
        self.critic: torch.nn.Sequential | None = None
        if spec:
            self.critic, width = mlp(self.features_dim, list(spec["hidden"]),
                                     torch_activation(self.network["activation"]), first=SparseInputLinear)
            self.critic.append(torch.nn.Linear(width, 1))

    def _get_constructor_parameters(self) -> dict[str, Any]:
        return {**super()._get_constructor_parameters(), "network": self.network, "critic": self.critic_spec}

    # ------------------------------------------------------------------ the policy file and the critic
    def file_weights(self) -> Weights:
        """A copy of the tensors a policy file holds: the actor and its value head, not the global-state critic."""
        return {name: w for name, w in weights_of(self).items() if not name.startswith(CRITIC)}

    def load_file_weights(self, weights: Weights) -> None:
        """Put a policy file's tensors in (names and shapes must match exactly); the critic is left as it is."""
        load_weights(self, {**weights, **self.critic_weights()})

    def critic_weights(self) -> Weights:
        """The global-state critic's tensors, named ``critic.…`` (none without it)."""
        return {name: w for name, w in weights_of(self).items() if name.startswith(CRITIC)}

    def load_critic_weights(self, weights: Weights) -> None:
        """Put the critic's tensors of :meth:`critic_weights` back (names and shapes must match exactly)."""
        load_weights(self.critic, {name.removeprefix(CRITIC): w for name, w in weights.items()})

    def init_critic(self) -> None:
        """Start the critic as the value head: the same layers, the global state's weights at 0, so that it gives
        the head's values until PPO teaches it what the state adds."""
        head = [m for m in (*self.mlp_extractor.shared_net, *self.mlp_extractor.value_net, self.value_net)
                if isinstance(m, torch.nn.Linear)]
        layers = [m for m in self.critic if isinstance(m, torch.nn.Linear)]
        if [tuple(m.weight.shape) for m in head[1:]] != [tuple(m.weight.shape) for m in layers[1:]]:
            raise ValueError(f"the critic's hidden sizes {self.critic_spec['hidden']} are not the value head's "
                             f"({[m.out_features for m in head[:-1]]}): it cannot start as a copy of it")
        with torch.no_grad():
            for source, target in zip(head, layers, strict=True):
                target.weight.zero_()
                target.weight[:, :source.in_features] = source.weight  # the first layer: the observation's columns
                target.bias.copy_(source.bias)

    def set_anchor(self, weights: Weights) -> None:
        """Hold the policy near ``weights`` (a policy file's tensors with this network) from now on."""
        anchor = torch.nn.Module()
        build(anchor, self.features_dim, int(self.action_space.n), self.network, sparse=True)
        load_weights(anchor, weights)
        anchor.requires_grad_(False)
        object.__setattr__(self, "anchor", anchor.eval())

    def _log_p(self, obs: torch.Tensor, action_masks: Any, head: bool = True,
               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """The observations, the masks, the masked log-probabilities of every action, PPO's values (the critic's,
        with one) and the value head's (None with a critic and not ``head``: the rollouts do not need it)."""
        features = self.extract_features(obs)
        observations = features[:, :self.observation_size] if self.critic is not None else features
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.bf16):
            if self.critic is None or head:
                latent_pi, latent_vf = self.mlp_extractor(observations)
            else:  # PPO's values come from the critic: the value head's branch is not run
                latent_pi, latent_vf = self.mlp_extractor.forward_actor(observations), None
        latent_pi, latent_vf = latent_pi.float(), None if latent_vf is None else latent_vf.float()
        masks = (torch.ones(len(features), int(self.action_space.n), dtype=torch.bool, device=features.device)
                 if action_masks is None else torch.as_tensor(action_masks, device=features.device).bool())
        log_p = torch.log_softmax(self.action_net(latent_pi).masked_fill(~masks, ILLEGAL), dim=-1)
        head_values = None if latent_vf is None else self.value_net(latent_vf)
        return observations, masks, log_p, head_values if self.critic is None else self.critic(features), head_values

    def predict_values(self, obs: torch.Tensor) -> torch.Tensor:
        """PPO's values of ``obs`` (the rollout's last observations, truncated games' final ones)."""
        if self.critic is None:
            return super().predict_values(obs)
        return self.critic(self.extract_features(obs))

    def forward(self, obs: torch.Tensor, deterministic: bool = False, action_masks: Any = None,
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Actions, values and the actions' log-probabilities for the rollouts, as SB3's, drawn from the masked
        logits by the Gumbel-max trick instead of SB3's masked distribution and torch's multinomial (slower)."""
        _, _, log_p, values, _ = self._log_p(obs, action_masks, head=False)
        if deterministic:
            actions = log_p.argmax(-1)
        else:  # the argmax of log p − log E, E ~ Exp(1), is a draw from p (an illegal action's −1e8 never wins)
            actions = (log_p - torch.empty_like(log_p).exponential_().log()).argmax(-1)
        return actions, values, log_p.gather(1, actions.view(-1, 1)).squeeze(1)

    def evaluate_actions(self, obs: torch.Tensor, actions: torch.Tensor, action_masks: torch.Tensor | None = None,
                         ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Values, log-probabilities of ``actions`` and entropies, as SB3's, over the legal actions only."""
        features, masks, log_p, values, head = self._log_p(obs, action_masks)
        p = log_p.exp()
        entropy = -torch.where(masks, p * log_p, 0.0).sum(-1)
        if self.critic is not None and self.distil_weight > 0:  # through the entropy term, as the KL below
            gap = (head - values.detach()).squeeze(-1).square()
            entropy = entropy - self.distil_weight / self.ent_coef * (gap - gap.detach())
        if self.anchor is not None and self.anchor_weight > 0:
            with torch.no_grad():
                anchor_log_p = torch.log_softmax(logits(self.anchor, features).masked_fill(~masks, ILLEGAL), dim=-1)
            kl = torch.where(masks, p * (log_p - anchor_log_p), 0.0).sum(-1)
            self.anchor_kl.append(kl.mean().item())
            # SB3's loss is ... - ent_coef × mean(entropy): a term worth 0 there whose gradient is that of
            # anchor_weight × mean(KL), so that the logged entropy stays the entropy.
            entropy = entropy - self.anchor_weight / self.ent_coef * (kl - kl.detach())
        return values, log_p.gather(1, actions.long().view(-1, 1)).squeeze(1), entropy
