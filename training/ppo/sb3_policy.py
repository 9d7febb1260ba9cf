"""The policy MaskablePPO trains: sb3-contrib's ``MaskableActorCriticPolicy`` with our network
(:class:`~tabletop_rl.training.ppo.network.Extractor`: an optional shared trunk, sparse-input first layers) under
SB3's parameter names, so that its ``state_dict`` is a policy file's tensors, and Adam's fused kernel."""

from __future__ import annotations

from typing import Any

import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

from ..runtime.policy import Weights
from .network import Extractor, build, load_weights, logits, torch_activation

# SB3's own Adam settings for PPO, plus the fused kernel: the same algorithm in one pass over each tensor, 7x
# faster on the CPU than the per-tensor loop for a 2 x 256 x 4,746 first layer (docs/performance.md).
OPTIMIZER_KWARGS = {"eps": 1e-5, "fused": True}
ILLEGAL = -1e8  # an illegal action's logit: probability 0, and, unlike -inf, no 0 × inf in the gradients


class TabletopPolicy(MaskableActorCriticPolicy):
    """``network`` as a policy file names it (``{"shared": [...], "pi": [...], "vf": [...], "activation": ...}``).

    PPO's update reads the masked log-probabilities straight from the logits (SB3's masked distribution, built
    per minibatch, costs more than the network) and may add ``anchor_weight`` × KL(policy ‖ anchor), the
    anchor being a frozen policy (:meth:`set_anchor`: the one PPO started from)."""

    def __init__(self, *args: Any, network: dict[str, Any], **kwargs: Any):
        self.network = dict(network)
        kwargs.setdefault("optimizer_kwargs", OPTIMIZER_KWARGS)
        super().__init__(*args, net_arch={"pi": list(network["pi"]), "vf": list(network["vf"])},
                         activation_fn=torch_activation(network["activation"]), **kwargs)
        self.anchor_weight = 0.0  # set by the trainer at every rollout
        self.anchor_kl: list[float] = []  # the mean KL of every minibatch since the trainer last read it
        self.ent_coef = 1.0  # PPO's, set by the trainer: the KL enters the loss through the entropy term
        object.__setattr__(self, "anchor", None)  # not a submodule: in neither the state_dict nor the optimizer

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = Extractor(self.features_dim, self.network, sparse=True)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        return {**super()._get_constructor_parameters(), "network": self.network}

    def set_anchor(self, weights: Weights) -> None:
        """Hold the policy near ``weights`` (a policy file's tensors with this network) from now on."""
        anchor = torch.nn.Module()
        build(anchor, self.features_dim, int(self.action_space.n), self.network, sparse=True)
        load_weights(anchor, weights)
        anchor.requires_grad_(False)
        object.__setattr__(self, "anchor", anchor.eval())

    def _log_p(self, obs: torch.Tensor, action_masks: Any,
               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """The features, the masks, the masked log-probabilities of every action and the values."""
        features = self.extract_features(obs)
        latent_pi, latent_vf = self.mlp_extractor(features)
        masks = (torch.ones(len(features), int(self.action_space.n), dtype=torch.bool, device=features.device)
                 if action_masks is None else torch.as_tensor(action_masks, device=features.device).bool())
        log_p = torch.log_softmax(self.action_net(latent_pi).masked_fill(~masks, ILLEGAL), dim=-1)
        return features, masks, log_p, self.value_net(latent_vf)

    def forward(self, obs: torch.Tensor, deterministic: bool = False, action_masks: Any = None,
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Actions, values and the actions' log-probabilities for the rollouts, as SB3's, drawn from the masked
        logits by the Gumbel-max trick instead of SB3's masked distribution and torch's multinomial (slower)."""
        _, _, log_p, values = self._log_p(obs, action_masks)
        if deterministic:
            actions = log_p.argmax(-1)
        else:  # the argmax of log p − log E, E ~ Exp(1), is a draw from p (an illegal action's −1e8 never wins)
            actions = (log_p - torch.empty_like(log_p).exponential_().log()).argmax(-1)
        return actions, values, log_p.gather(1, actions.view(-1, 1)).squeeze(1)

    def evaluate_actions(self, obs: torch.Tensor, actions: torch.Tensor, action_masks: torch.Tensor | None = None,
                         ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Values, log-probabilities of ``actions`` and entropies, as SB3's, over the legal actions only."""
        features, masks, log_p, values = self._log_p(obs, action_masks)
        p = log_p.exp()
        entropy = -torch.where(masks, p * log_p, 0.0).sum(-1)
        if self.anchor is not None and self.anchor_weight > 0:
            with torch.no_grad():
                anchor_log_p = torch.log_softmax(logits(self.anchor, features).masked_fill(~masks, ILLEGAL), dim=-1)
            kl = torch.where(masks, p * (log_p - anchor_log_p), 0.0).sum(-1)
            self.anchor_kl.append(kl.mean().item())
            # SB3's loss is ... - ent_coef × mean(entropy): a term worth 0 there whose gradient is that of
            # anchor_weight × mean(KL), so that the logged entropy stays the entropy.
            entropy = entropy - self.anchor_weight / self.ent_coef * (kl - kl.detach())
        return values, log_p.gather(1, actions.long().view(-1, 1)).squeeze(1), entropy
