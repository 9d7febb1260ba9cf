"""The agent loader shared by training, evaluation and play (numpy only: no torch needed).

``load_agent(spec, game)`` turns a short string into an :class:`~tabletop_rl.envs.core.agents.Agent`:

===============  =====================================================================
spec             agent
===============  =====================================================================
``random``       uniform over the legal actions
``heuristic``    the game package's ``HeuristicAgent``
``pretrained``   the policy shipped in ``training/pretrained/<game>.safetensors``
a path           a policy file (``.safetensors``) or checkpoint written by ``tabletop_rl.training.train``, or a run
                 directory (its ``policy.safetensors``, else its newest checkpoint)
===============  =====================================================================

Policy files are read by :func:`tabletop_rl.training.policy.load_policy`, which refuses anything but the tabletop-rl
safetensors format (nothing in a file is ever run) and a policy trained for another game or for options
that change its spaces.
"""

from __future__ import annotations

from pathlib import Path

from tabletop_rl.envs.core.agents import Agent, builtin_agent
from tabletop_rl.envs.core.game import Game

from .policy import PolicyAgent, PolicyFileError, load_policy

PRETRAINED_DIR = Path(__file__).parent / "pretrained"
SUFFIX = ".safetensors"


def resolve_checkpoint(spec: str | Path) -> Path:
    """A run directory means its exported policy, or else its newest complete checkpoint."""
    path = Path(spec)
    if path.is_dir():
        # a checkpoint is complete once its .json (written last) exists
        checkpoints = sorted((path / "checkpoints").glob("step_*.json"), reverse=True)
        for candidate in [path / f"policy{SUFFIX}", *(c.with_suffix(SUFFIX) for c in checkpoints)]:
            if candidate.is_file():
                return candidate
        raise PolicyFileError(f"run directory {path} holds no policy{SUFFIX} and no complete checkpoint")
    return path


def policy_path(spec: str | Path, game: Game) -> Path:
    """The policy file behind ``"pretrained"`` or a policy / checkpoint / run-directory path."""
    if spec == "pretrained":
        path = PRETRAINED_DIR / f"{game.name}{SUFFIX}"
        if not path.is_file():
            shipped = sorted(p.stem for p in PRETRAINED_DIR.glob(f"*{SUFFIX}"))
            raise ValueError(f"no pretrained policy is shipped for {game.name} "
                             f"(shipped: {shipped or 'none'}); "
                             f"train one with: python -m tabletop_rl.training.train --config configs/{game.name}.yaml")
        return path
    path = Path(spec)
    if not path.exists():
        if len(path.parts) == 1 and not path.suffix:  # a bare word: a mistyped agent name, not a file
            raise ValueError(f"unknown agent {str(spec)!r}: expected 'random', 'heuristic', 'pretrained' "
                             f"or the path of a policy file{SUFFIX} / run directory")
        raise PolicyFileError(f"no such file: {path}")
    return resolve_checkpoint(path)


def load_agent(spec: str, game: Game, seed: int | None = None, deterministic: bool = True) -> Agent:
    """``"random"``, ``"heuristic"``, ``"pretrained"`` or a policy path → an agent for ``game``."""
    if spec in ("random", "heuristic"):
        return builtin_agent(spec, game, seed)
    try:
        policy = load_policy(policy_path(spec, game), game)
    except PolicyFileError as error:
        if spec != "pretrained":
            raise
        raise PolicyFileError(f"{error}; train one with: python -m tabletop_rl.training.train --config "
                              f"configs/{game.name}.yaml") from None
    return PolicyAgent(policy, deterministic=deterministic, seed=seed)
