"""tabletop-rl environments: faithful rules engines as PettingZoo AEC environments.

This folder is the package ``tabletop_rl.envs`` (``tabletop_rl.make`` is its ``make``):

>>> import tabletop_rl
>>> env = tabletop_rl.make("lost_cities")          # wrapped, PettingZoo conventions
>>> raw = tabletop_rl.make("lost_cities", wrapped=False, n_colours=6)

``import tabletop_rl`` also registers ``pettingzoo.make("aec", "tabletop/<game>-v0")`` (here) and the single-agent
``gymnasium.make("tabletop/<game>-v0", opponent="heuristic")`` (in ``tabletop_rl``: the env is in ``training``).

``tabletop_rl.load_record(path)`` reads a game record and replays it (``record.states()``; docs/records.md).
"""

from __future__ import annotations

from typing import Any

if __name__ != "tabletop_rl.envs":  # a second copy under another name would have its own registry and classes
    raise ImportError(f"import tabletop_rl (or tabletop_rl.envs), not {__name__}: this folder is the package "
                      "tabletop_rl.envs")

from .core.game import TERMINAL, Game, State
from .core.record import Record, RecordError, load_record
from .core.registry import game_class, game_module, list_games, register

__all__ = ["TERMINAL", "Game", "Record", "RecordError", "State", "game_class", "list_games", "load_record", "make",
           "register"]

register("lost_cities", "tabletop_rl.envs.lost_cities")
register("five_towers", "tabletop_rl.envs.five_towers")
register("palazzo", "tabletop_rl.envs.palazzo")
register("torres", "tabletop_rl.envs.torres")


def make(name: str, wrapped: bool = True, render_mode: str | None = None, **options: Any):
    """A PettingZoo AEC env of game ``name``: ``env()`` (wrapped) or, with ``wrapped=False``, ``raw_env()``."""
    module = game_module(name)
    return (module.env if wrapped else module.raw_env)(render_mode=render_mode, **options)


def _register_with_pettingzoo() -> None:
    """Make ``pettingzoo.make("aec", "tabletop/<game>-v0")`` work where PettingZoo has a registry (≥ 1.26)."""
    try:
        from pettingzoo import register as pz_register
    except ImportError:
        return
    for name in list_games():
        pz_register("aec", f"tabletop/{name}-v0", entry_point=f"tabletop_rl.envs.{name}:env")


_register_with_pettingzoo()
