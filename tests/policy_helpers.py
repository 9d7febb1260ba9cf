"""Policy files for tests: random weights in the tabletop-rl format, and seeded torch policies."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tabletop_rl.envs.core.game import Game
from tabletop_rl.training.runtime.policy import PolicyInfo, save_policy


def network(pi=(8,), vf=(8,), activation: str = "relu", shared=()) -> dict:
    return {**({"shared": list(shared)} if shared else {}), "pi": list(pi), "vf": list(vf), "activation": activation}


def random_weights(info: PolicyInfo, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {name: rng.normal(0, 0.3, shape).astype(np.float32) for name, shape in info.tensor_shapes().items()}


def random_policy_file(path: Path, game: Game, seed: int = 0, **net) -> Path:
    """A valid policy file for ``game`` with random weights (``net``: shared, pi, vf, activation)."""
    info = PolicyInfo.for_game(game, network(**net), num_timesteps=7)
    path.parent.mkdir(parents=True, exist_ok=True)
    save_policy(path, random_weights(info, seed), info)
    return path


def seeded_torch_policy(game: Game | PolicyInfo, seed: int = 0, **net):
    """The policy MaskablePPO trains (:class:`~tabletop_rl.training.ppo.sb3_policy.TabletopPolicy`) for the sizes of
    ``game`` (or a policy file's info), initialised from ``seed``.

    torch's global generator starts from a different seed in every process (torch.initial_seed()), so a
    policy built without a seed has different weights on every run; this one does not, and it leaves the
    global generator as it was.
    """
    import torch
    from gymnasium import spaces

    from tabletop_rl.training.ppo.sb3_policy import TabletopPolicy

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        policy = TabletopPolicy(
            spaces.Box(-np.inf, np.inf, (game.observation_size,), np.float32), spaces.Discrete(game.num_actions),
            lambda _: 0.0, network=network(**net))
    policy.set_training_mode(False)
    return policy
