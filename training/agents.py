"""The agent loader shared by training, evaluation and play.

``load_agent(spec, game)`` turns a short string into an :class:`~envs.core.agents.Agent`:

===============  =====================================================================
spec             agent
===============  =====================================================================
``random``       uniform over the legal actions
``heuristic``    the game package's ``HeuristicAgent``
``pretrained``   the policy shipped in ``training/pretrained/<game>.zip``
a path           a checkpoint or policy ``.zip`` written by ``training.train``, or a run directory
===============  =====================================================================

A checkpoint is a stable-baselines3 zip whose data carry a ``tabletop`` entry (game name, options,
steps), so a policy cannot silently be used for another game or an option set with other spaces.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.save_util import load_from_zip_file, save_to_zip_file

from envs.core.agents import Agent, builtin_agent
from envs.core.game import Game

PRETRAINED_DIR = Path(__file__).parent / "pretrained"
META_KEY = "tabletop"


def limit_torch_threads(n: int = 1) -> None:
    """Batch-1 inference is fastest single-threaded, and the machine is shared by env workers."""
    if torch.get_num_threads() != n:
        torch.set_num_threads(n)


class PolicyAgent:
    """A MaskablePPO policy as an agent: ``act(observation, action_mask) -> action``.

    Deterministic (arg-max over the legal actions) by default; with ``deterministic=False`` it samples
    from the masked distribution using its seeded generator (``seed`` may be a shared ``Generator``), so
    games stay reproducible.
    """

    def __init__(self, policy: MaskableActorCriticPolicy, deterministic: bool = True,
                 seed: int | np.random.Generator | None = None):
        self.policy = policy
        self.deterministic = deterministic
        self.rng = np.random.default_rng(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        mask = np.asarray(action_mask, dtype=bool)
        if not mask.any():
            raise ValueError("PolicyAgent.act: the action mask has no legal action")
        logits = np.where(mask, self.logits(observation), -np.inf)
        if self.deterministic:
            return int(np.argmax(logits))
        cdf = np.cumsum(np.exp(logits - logits.max()))  # illegal actions add 0: never drawn
        return int(np.searchsorted(cdf, self.rng.random() * cdf[-1], side="right"))

    def logits(self, observation: np.ndarray) -> np.ndarray:
        """Unmasked action logits. The actor network called directly: building SB3's masked distribution
        object costs five times more than the network itself at batch size 1."""
        policy = self.policy
        with torch.no_grad():
            x = torch.as_tensor(observation, dtype=torch.float32).reshape(1, -1)
            latent = policy.mlp_extractor.forward_actor(policy.pi_features_extractor(x))
            return policy.action_net(latent)[0].double().numpy()


def checkpoint_meta(game: Game, num_timesteps: int = 0) -> dict[str, Any]:
    """What a checkpoint records about its game (stored under ``META_KEY`` in the zip's data)."""
    return {"game": game.name, "options": dict(game.options), "num_timesteps": int(num_timesteps)}


def export_policy(policy: MaskableActorCriticPolicy, policy_kwargs: dict[str, Any], meta: dict[str, Any],
                  path: str | Path) -> None:
    """Write the policy alone (no optimizer, no rollout state): the small file that gets shipped."""
    buffer = io.BytesIO()
    data = {META_KEY: meta, "policy_kwargs": policy_kwargs,
            "observation_space": policy.observation_space, "action_space": policy.action_space}
    save_to_zip_file(buffer, data=data, params={"policy": policy.state_dict()})
    atomic_write(path, buffer.getvalue())


def atomic_write(path: str | Path, payload: bytes) -> None:
    """Write via a temporary file and rename, so a killed run never leaves half a file behind."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(payload)
    tmp.replace(path)


def load_policy(path: str | Path, game: Game | None = None) -> tuple[MaskableActorCriticPolicy, dict]:
    """The policy stored in a checkpoint / exported policy zip, and its metadata.

    With ``game``, refuse a policy trained for another game, or for options that change its spaces.
    """
    path = Path(path)
    try:
        data, params, _ = load_from_zip_file(path, device="cpu")
    except (OSError, ValueError, KeyError) as error:  # not a zip, or not one written by SB3
        raise ValueError(f"cannot read a policy from {path}: {error}") from None
    meta = (data or {}).get(META_KEY)
    if meta is None or "policy" not in params:
        raise ValueError(f"{path} is not a tabletop-rl checkpoint (it carries no game name and options)")
    if game is not None:
        _check_compatible(path, meta, data, game)
    policy = MaskableActorCriticPolicy(data["observation_space"], data["action_space"], lambda _: 0.0,
                                       **data["policy_kwargs"])
    policy.load_state_dict(params["policy"])
    policy.set_training_mode(False)
    return policy, meta


def _check_compatible(path: Path, meta: dict[str, Any], data: dict[str, Any], game: Game) -> None:
    trained_for = f"{meta['game']} with options {meta['options']}"
    if meta["game"] != game.name:
        raise ValueError(f"{path} holds a policy for {trained_for}; it cannot play {game.name}")
    obs_shape, n_actions = tuple(data["observation_space"].shape), int(data["action_space"].n)
    if obs_shape != (game.observation_size,) or n_actions != game.num_actions:
        raise ValueError(
            f"{path} holds a policy for {trained_for} (observation {obs_shape}, {n_actions} actions); "
            f"{game!r} has observation ({game.observation_size},) and {game.num_actions} actions")


def resolve_checkpoint(spec: str | Path) -> Path:
    """A run directory means its exported policy, or else its newest checkpoint."""
    path = Path(spec)
    if path.is_dir():
        candidates = [path / "policy.zip", *sorted((path / "checkpoints").glob("step_*.zip"), reverse=True)]
        for candidate in candidates:
            if candidate.is_file():
                return candidate
        raise ValueError(f"run directory {path} holds no policy.zip and no checkpoints/step_*.zip")
    return path


def policy_path(spec: str | Path, game: Game) -> Path:
    """The policy file behind ``"pretrained"`` or a checkpoint / run-directory path."""
    if spec == "pretrained":
        path = PRETRAINED_DIR / f"{game.name}.zip"
        if not path.is_file():
            shipped = sorted(p.stem for p in PRETRAINED_DIR.glob("*.zip"))
            raise ValueError(f"no pretrained policy is shipped for {game.name} "
                             f"(shipped: {shipped or 'none'}); "
                             f"train one with: python -m training.train --config configs/{game.name}.yaml")
        return path
    path = resolve_checkpoint(spec)
    if not path.is_file():
        raise ValueError(f"unknown agent {spec!r}: expected 'random', 'heuristic', 'pretrained' "
                         "or the path of a checkpoint / run directory")
    return path


def load_agent(spec: str, game: Game, seed: int | None = None, deterministic: bool = True) -> Agent:
    """``"random"``, ``"heuristic"``, ``"pretrained"`` or a checkpoint path → an agent for ``game``."""
    if spec in ("random", "heuristic"):
        return builtin_agent(spec, game, seed)
    path = policy_path(spec, game)
    limit_torch_threads()
    policy, _ = load_policy(path, game)
    return PolicyAgent(policy, deterministic=deterministic, seed=seed)
