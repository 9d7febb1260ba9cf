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

    def evaluate_actions(self, obs: torch.Tensor, actions: torch.Tensor, action_masks: torch.Tensor | None = None,
                         ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Values, log-probabilities of ``actions`` and entropies, as SB3's, over the legal actions only."""
        features = self.extract_features(obs)
        latent_pi, latent_vf = self.mlp_extractor(features)
        if action_masks is None:
            masks = torch.ones(len(obs), int(self.action_space.n), dtype=torch.bool, device=features.device)
        else:
            masks = torch.as_tensor(action_masks, device=features.device).bool()
        log_p = torch.log_softmax(self.action_net(latent_pi).masked_fill(~masks, ILLEGAL), dim=-1)
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
        return self.value_net(latent_vf), log_p.gather(1, actions.long().view(-1, 1)).squeeze(1), entropy
