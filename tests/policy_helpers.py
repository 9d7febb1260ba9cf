"""Torch policies for tests, initialised from a seed."""

from __future__ import annotations

import numpy as np

from envs.core.game import Game


def seeded_torch_policy(game: Game, seed: int = 0, pi=(8,), vf=(8,), activation: str = "relu"):
    """sb3-contrib's MaskableActorCriticPolicy for ``game``, initialised from ``seed``.

    torch's global generator starts from a different seed in every process (torch.initial_seed()), so a
    policy built without a seed has different weights on every run; this one does not, and it leaves the
    global generator as it was.
    """
    import torch
    from gymnasium import spaces
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    from training.train import ACTIVATIONS

    net = {"pi": list(pi), "vf": list(vf), "activation": activation}
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        policy = MaskableActorCriticPolicy(
            spaces.Box(-np.inf, np.inf, (game.observation_size,), np.float32), spaces.Discrete(game.num_actions),
            lambda _: 0.0, net_arch={"pi": net["pi"], "vf": net["vf"]}, activation_fn=ACTIVATIONS[net["activation"]])
    policy.set_training_mode(False)
    return policy
