"""Where a policy file is: the shipped ones (``training/pretrained/<game>_<n>p.safetensors``, one per set of game
options), a run folder's exported policy or newest complete checkpoint, or a path; and what to say when none fits.
Numpy only, like the rest of :mod:`tabletop_rl.training.runtime`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from ...envs.core.game import Game
from .policy import PolicyFileError, PolicyInfo, read_policy_info
from .printed_commands import command

PRETRAINED_DIR = Path(__file__).parents[1] / "pretrained"  # training/pretrained
CONFIGS_DIR = Path(__file__).parents[2] / "configs"  # the checkout's configs/, which train_command names
SUFFIX = ".safetensors"


def train_command(game: Game) -> str:
    """How to train a policy of one's own for ``game`` and its options (said where a pretrained one is missing);
    a config that imitates the shipped policy imitates the heuristic instead, as none fits these options."""
    changed = non_default_options(game, game.options)
    options = ["--set", f"game_options={json.dumps(changed)}"] if changed else []
    if config_teacher(game.name) == "pretrained":
        options += ["--set", "warm_start.teacher=heuristic"]
    return command("tabletop_rl.training.train", "--config", f"configs/{game.name}.yaml", *options)


def config_teacher(name: str) -> str | None:
    """``warm_start.teacher`` of ``configs/<name>.yaml`` (None without the file, as in an installed package)."""
    try:
        doc = yaml.safe_load((CONFIGS_DIR / f"{name}.yaml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    warm_start = doc.get("warm_start") if isinstance(doc, dict) else None
    return warm_start.get("teacher") if isinstance(warm_start, dict) else None


def _defaults(game: Game) -> dict[str, Any]:
    return {o.name: o.default for o in game.option_schema}


def non_default_options(game: Game, options: dict[str, Any]) -> dict[str, Any]:
    """The entries of ``options`` (a game's, or those a policy was trained for) that differ from ``game``'s
    defaults; an option a policy file does not name (added since) had its default."""
    defaults = _defaults(game)
    return {k: v for k, v in options.items() if k in defaults and not _same(v, defaults[k])}


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)  # a tuple and a list from JSON agree


def shipped_policies(game_name: str) -> list[tuple[Path, PolicyInfo]]:
    """The policies in ``training/pretrained`` for a game (any options), with what each was trained for."""
    found = [(path, read_policy_info(path)) for path in sorted(PRETRAINED_DIR.glob(f"{game_name}_*{SUFFIX}"))]
    return [(path, info) for path, info in found if info.game == game_name]


def trained_for(info: PolicyInfo, game: Game) -> bool:
    """Was the policy trained for exactly ``game``'s options (defaults filling what its file does not name)?"""
    defaults = _defaults(game)
    return all(_same(info.options.get(k, defaults[k]), v) for k, v in game.options.items())


def describe_options(game: Game, options: dict[str, Any]) -> str:
    """``3 players``, ``2 players with action_deck='personal'``: a game's or a policy's options, in short."""
    changed = non_default_options(game, options)
    players = changed.pop("num_players", None) or _defaults(game).get("num_players", game.num_players)
    rest = ", ".join(f"{k}={v!r}" for k, v in changed.items())
    return f"{players} players" + (f" with {rest}" if rest else "")


def fitting_pretrained(game: Game) -> Path | None:
    """The shipped policy trained for ``game``'s options, if there is one."""
    return next((path for path, info in shipped_policies(game.name) if trained_for(info, game)), None)


def pretrained_path(game: Game) -> Path:
    """The shipped policy trained for ``game``'s options; else a one-line ``ValueError`` saying what exists."""
    path = fitting_pretrained(game)
    if path is not None:
        return path
    shipped = shipped_policies(game.name)
    if not shipped:
        raise ValueError(f"no pretrained policy is shipped for {game.name}; train one with: {train_command(game)}")
    exists = ", ".join(f"{describe_options(game, info.options)} ({path.name})" for path, info in shipped)
    raise ValueError(f"no pretrained {game.name} policy was trained for {describe_options(game, game.options)}; "
                     f"shipped: {exists}; give a policy file's path to play one anyway, or train one with: "
                     f"{train_command(game)}")


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
        return pretrained_path(game)
    path = Path(spec)
    if not path.exists():
        if len(path.parts) == 1 and not path.suffix:  # a bare word: a mistyped agent name, not a file
            raise ValueError(f"unknown agent {str(spec)!r}: expected 'random', 'heuristic', 'pretrained', 'search', "
                             f"the path of a policy file{SUFFIX} / run directory, or your own agent's "
                             "module:callable / file.py:callable")
        raise PolicyFileError(f"no such file: {path}")
    return resolve_checkpoint(path)
