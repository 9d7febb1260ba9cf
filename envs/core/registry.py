"""Name → game registry behind ``tabletop_rl.envs.make`` and ``tabletop_rl.envs.list_games``, with each game's
version: the number in its ids ``tabletop/<game>-v<version>`` (docs/versions.md)."""

from __future__ import annotations

import importlib

from .game import Game

# name -> (module path, version); modules are imported on first use so `import tabletop_rl` stays cheap, which is
# why the versions are kept here and not on the games' classes: registering the ids imports no game.
_GAMES: dict[str, tuple[str, int]] = {}


def register(name: str, module: str, version: int = 0) -> None:
    """Register game ``name``, whose package ``module`` has ``Game``, ``raw_env`` and ``env``, at ``version``: raise
    it whenever what an agent sees or gets changes (observations, masks, rewards, rules, option defaults, spaces;
    ``tests/test_game_versions.py`` checks it)."""
    if type(version) is not int or version < 0:
        raise ValueError(f"register({name!r}): version must be an integer >= 0, got {version!r}")
    _GAMES[name] = (module, version)


def unregister(name: str) -> None:
    """Forget a game registered with :func:`register` (a test's own game, say); unknown names are ignored."""
    _GAMES.pop(name, None)


def list_games() -> list[str]:
    return sorted(_GAMES)


def _entry(name: str) -> tuple[str, int]:
    if name not in _GAMES:
        raise ValueError(f"unknown game {name!r}; available games: {list_games()}")
    return _GAMES[name]


def game_module(name: str):
    return importlib.import_module(_entry(name)[0])


def game_class(name: str) -> type[Game]:
    return game_module(name).Game


def game_version(name: str) -> int:
    """The version of game ``name``: what an agent sees and gets in it is the same as long as this is."""
    return _entry(name)[1]


def env_id(name: str) -> str:
    """The Gymnasium and PettingZoo id of game ``name``, ``tabletop/<name>-v<version>``."""
    return f"tabletop/{name}-v{game_version(name)}"
