"""tabletop-rl environments: faithful rules engines as PettingZoo AEC environments.

This folder is the package ``tabletop_rl.envs`` (``tabletop_rl.make`` is its ``make``):

>>> import tabletop_rl
>>> env = tabletop_rl.make("lost_cities")          # wrapped, PettingZoo conventions
>>> raw = tabletop_rl.make("lost_cities", wrapped=False, n_colours=6)

``import tabletop_rl`` also registers ``pettingzoo.make("aec", env_id(name))`` (here) and the single-agent
``gymnasium.make(env_id(name), opponent="heuristic")`` (in ``tabletop_rl``: the env is in ``training``), where
``env_id("lost_cities")`` is ``"tabletop/lost_cities-v0"``: the number is the game's version (docs/versions.md).

``tabletop_rl.load_record(path)`` reads a game record and replays it (``record.states()``; docs/records.md).
"""

from __future__ import annotations

from typing import Any

if __name__ != "tabletop_rl.envs":  # a second copy under another name would have its own registry and classes
    raise ImportError(f"import tabletop_rl (or tabletop_rl.envs), not {__name__}: this folder is the package "
                      "tabletop_rl.envs")

from .core.game import TERMINAL, Game, State
from .core.record import Record, RecordError, load_record
from .core.registry import env_id, game_class, game_module, game_version, list_games, register
from .core.versions import VersionWarning

__all__ = ["TERMINAL", "Game", "Record", "RecordError", "State", "VersionWarning", "env_id", "game_class",
           "game_version", "list_games", "load_record", "make", "register"]

# Each game's version: raise it (and say why in CHANGELOG.md) whenever what an agent sees or gets changes;
# tests/test_game_versions.py fails until it is raised (docs/versions.md).
register("lost_cities", "tabletop_rl.envs.lost_cities", version=0)
register("five_towers", "tabletop_rl.envs.five_towers", version=0)
register("palazzo", "tabletop_rl.envs.palazzo", version=0)
register("torres", "tabletop_rl.envs.torres", version=0)


def make(name: str, wrapped: bool = True, render_mode: str | None = None, **options: Any):
    """A PettingZoo AEC env of game ``name``: ``env()`` (wrapped) or, with ``wrapped=False``, ``raw_env()``."""
    module = game_module(name)
    return (module.env if wrapped else module.raw_env)(render_mode=render_mode, **options)


def _register_with_pettingzoo() -> None:
    """Make ``pettingzoo.make("aec", env_id(name))`` work where PettingZoo has a registry (≥ 1.26)."""
    try:
        from pettingzoo import register as pz_register
    except ImportError:
        return
    for name in list_games():
        pz_register("aec", env_id(name), entry_point=f"tabletop_rl.envs.{name}:env")


_register_with_pettingzoo()
