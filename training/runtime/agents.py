"""The agent loader shared by training, evaluation and play (numpy only: no torch needed).

``load_agent(spec, game)`` turns a spec — ``random``, ``heuristic``, ``pretrained`` (the policy shipped in
``training/pretrained/<game>.safetensors``), the path of a policy file, checkpoint or run folder, or ``search``
with options — into an :class:`~tabletop_rl.envs.core.agents.Agent` (docs/training.md, "Agents"). Policy files
are read by :func:`tabletop_rl.training.runtime.policy.load_policy`: nothing in a file is ever run.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ...envs.core.agents import Agent, builtin_agent
from ...envs.core.game import Game
from ..shell import command
from .policy import PolicyAgent, PolicyFileError, load_policy

PRETRAINED_DIR = Path(__file__).parents[1] / "pretrained"  # training/pretrained
SUFFIX = ".safetensors"


def train_command(game: Game) -> str:
    """How to train a policy of one's own for ``game`` (said where a pretrained one is missing)."""
    return command("tabletop_rl.training.train", "--config", f"configs/{game.name}.yaml")


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
                             f"train one with: {train_command(game)}")
        return path
    path = Path(spec)
    if not path.exists():
        if len(path.parts) == 1 and not path.suffix:  # a bare word: a mistyped agent name, not a file
            raise ValueError(f"unknown agent {str(spec)!r}: expected 'random', 'heuristic', 'pretrained', 'search' "
                             f"or the path of a policy file{SUFFIX} / run directory")
        raise PolicyFileError(f"no such file: {path}")
    return resolve_checkpoint(path)


def agent_factory(spec: str, game: Game, deterministic: bool = True) -> Callable[[int | None], Agent]:
    """``seed -> agent`` for ``spec``: files are read once, however many agents (one per game, say) are made."""
    if spec in ("random", "heuristic"):
        return lambda seed: builtin_agent(spec, game, seed)
    if spec.partition(":")[0] == "search":
        from .search import search_factory

        return search_factory(spec, game)
    try:
        policy = load_policy(policy_path(spec, game), game)
    except PolicyFileError as error:
        if spec != "pretrained":
            raise
        raise PolicyFileError(f"{error}; train one with: {train_command(game)}") from None
    return lambda seed: PolicyAgent(policy, deterministic=deterministic, seed=seed)


def load_agent(spec: str, game: Game, seed: int | None = None, deterministic: bool = True) -> Agent:
    """``"random"``, ``"heuristic"``, ``"pretrained"``, a policy path or a ``search`` spec → an agent for ``game``."""
    return agent_factory(spec, game, deterministic)(seed)
