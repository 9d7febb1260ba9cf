"""tabletop-rl: faithful multi-agent RL environments for tableau-building board and card games.

>>> import tabletop_rl
>>> tabletop_rl.list_games()
['five_towers', 'lost_cities', 'palazzo', 'torres']
>>> env = tabletop_rl.make("lost_cities")          # a PettingZoo AEC env, wrapped (PettingZoo conventions)
>>> raw = tabletop_rl.make("lost_cities", wrapped=False, n_colours=6)
>>> env.reset(seed=0)
>>> env.state()                                     # the global state vector, for centralized critics

* :mod:`tabletop_rl.envs` — the rules engines and their PettingZoo envs (the folder ``envs/`` of the repository).
* :mod:`tabletop_rl.training` — MaskablePPO and RLlib training, evaluation, play (the folder ``training/``):
  ``python -m tabletop_rl.training.train``, ``.evaluate``, ``.play``, ``.rllib``.

``import tabletop_rl`` also registers ``pettingzoo.make("aec", "tabletop/<game>-v0")`` and the single-agent
``gymnasium.make("tabletop/<game>-v0", opponent="heuristic")`` (one seat against built-in opponents).
"""

import os

# An installed copy holds envs/ and training/ inside this package (pyproject's package-dir); a source checkout
# has them next to it. Search the checkout then, so that its own folders are the ones imported, whatever else
# is installed.
if not os.path.isdir(os.path.join(__path__[0], "envs")):
    __path__.append(os.path.dirname(__path__[0]))

from . import envs, training  # noqa: E402
from .envs import TERMINAL, Game, State, game_class, list_games, make, register  # noqa: E402

__all__ = ["TERMINAL", "Game", "State", "envs", "game_class", "list_games", "make", "register", "training"]
