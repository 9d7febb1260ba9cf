"""The agent loader shared by training, evaluation and play (numpy only: no torch needed).

``load_agent(spec, game)`` turns a spec — ``random``, ``heuristic``, ``pretrained`` (the policy shipped in
``training/pretrained/<game>_<n>p.safetensors`` that was trained for the game's options), the path of a policy
file, checkpoint or run folder, or ``search`` with options — into an :class:`~tabletop_rl.envs.core.agents.Agent`
(docs/training.md, "Agents"). Policy files are read by :func:`tabletop_rl.training.runtime.policy.load_policy`:
nothing in a file is ever run.
"""

from __future__ import annotations

from collections.abc import Callable

from ...envs.core.agents import Agent, builtin_agent
from ...envs.core.game import Game
from .policy import PolicyAgent, PolicyFileError, load_policy
from .policy_paths import policy_path, train_command
from .search import search_factory


def agent_factory(spec: str, game: Game, deterministic: bool = True) -> Callable[[int | None], Agent]:
    """``seed -> agent`` for ``spec``: files are read once, however many agents (one per game, say) are made."""
    if spec in ("random", "heuristic"):
        return lambda seed: builtin_agent(spec, game, seed)
    if spec.partition(":")[0] == "search":
        return search_factory(spec, game, load_agent)
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
