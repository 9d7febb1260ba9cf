"""The policy MaskablePPO trains: sb3-contrib's ``MaskableActorCriticPolicy`` with our network
(:class:`~tabletop_rl.training.ppo.network.Extractor`: an optional shared trunk, sparse-input first layers) under
SB3's parameter names, so that its ``state_dict`` is a policy file's tensors, and Adam's fused kernel."""

from __future__ import annotations

from typing import Any

from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

from .network import Extractor, torch_activation

# SB3's own Adam settings for PPO, plus the fused kernel: the same algorithm in one pass over each tensor, 7x
# faster on the CPU than the per-tensor loop for a 2 x 256 x 4,746 first layer (docs/performance.md).
OPTIMIZER_KWARGS = {"eps": 1e-5, "fused": True}


class TabletopPolicy(MaskableActorCriticPolicy):
    """``network`` as a policy file names it (``{"shared": [...], "pi": [...], "vf": [...], "activation": ...}``)."""

    def __init__(self, *args: Any, network: dict[str, Any], **kwargs: Any):
        self.network = dict(network)
        kwargs.setdefault("optimizer_kwargs", OPTIMIZER_KWARGS)
        super().__init__(*args, net_arch={"pi": list(network["pi"]), "vf": list(network["vf"])},
                         activation_fn=torch_activation(network["activation"]), **kwargs)

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = Extractor(self.features_dim, self.network, sparse=True)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        return {**super()._get_constructor_parameters(), "network": self.network}
