"""Name → game registry behind ``tabletop_rl.envs.make`` and ``tabletop_rl.envs.list_games``."""

from __future__ import annotations

import importlib

from .game import Game

# name -> module path; modules are imported on first use so `import tabletop_rl` stays cheap.
_GAMES: dict[str, str] = {}


def register(name: str, module: str) -> None:
    _GAMES[name] = module


def unregister(name: str) -> None:
    """Forget a game registered with :func:`register` (a test's own game, say); unknown names are ignored."""
    _GAMES.pop(name, None)


def list_games() -> list[str]:
    return sorted(_GAMES)


def game_module(name: str):
    if name not in _GAMES:
        raise ValueError(f"unknown game {name!r}; available games: {list_games()}")
    return importlib.import_module(_GAMES[name])


def game_class(name: str) -> type[Game]:
    return game_module(name).Game
