"""tabletop-rl: faithful multi-agent RL environments for tableau-building board and card games.

>>> import tabletop_rl
>>> tabletop_rl.list_games()
['five_towers', 'lost_cities', 'palazzo', 'torres']
>>> tabletop_rl.__version__, tabletop_rl.env_id("lost_cities")   # what to cite: docs/versions.md
>>> env = tabletop_rl.make("lost_cities")          # a PettingZoo AEC env, wrapped (PettingZoo conventions)
>>> raw = tabletop_rl.make("lost_cities", wrapped=False, n_colours=6)
>>> env.reset(seed=0)
>>> env.state()                                     # the global state vector, for centralized critics
>>> record = tabletop_rl.load_record("runs/games/lost_cities-20260101-120000.json")  # a played game
>>> for state, decision in record.states(): ...     # every position, with the decision taken there

* :mod:`tabletop_rl.envs` — the rules engines and their PettingZoo envs (the folder ``envs/`` of the repository).
* :mod:`tabletop_rl.training` — MaskablePPO and RLlib training, evaluation, play (the folder ``training/``):
  ``python -m tabletop_rl.training.train``, ``.evaluate``, ``.play``, ``.replay``, ``.expert_iteration``, ``.rllib``.

``import tabletop_rl`` also registers ``pettingzoo.make("aec", env_id(game))`` and the single-agent
``gymnasium.make(env_id(game), opponent="heuristic")`` (one seat against built-in opponents), where ``env_id(game)``
is ``tabletop/<game>-v<version>``, the version of the game (``game_version(game)``).
"""

import importlib.util
import os
import sys


def _map(name: str) -> None:
    """``tabletop_rl.<name>`` from the folder ``<name>/`` of a source checkout, next to this package's folder.

    An installed copy holds envs/ and training/ inside this package (pyproject's package-dir); a checkout (or an
    editable install of one) has them next to it. Exactly these two folders are mapped: ``tabletop_rl.tests``
    and the like do not import."""
    full = f"{__name__}.{name}"
    if full not in sys.modules:  # a reload must not make second copies
        folder = os.path.join(os.path.dirname(__path__[0]), name)
        spec = importlib.util.spec_from_file_location(full, os.path.join(folder, "__init__.py"),
                                                      submodule_search_locations=[folder])
        module = importlib.util.module_from_spec(spec)
        sys.modules[full] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[full]
            raise
    globals()[name] = sys.modules[full]


if not os.path.isdir(os.path.join(__path__[0], "envs")):
    _map("envs")
    _map("training")

from . import envs, training  # noqa: E402
from .envs import (  # noqa: E402
    TERMINAL,
    Game,
    Record,
    RecordError,
    State,
    VersionWarning,
    env_id,
    game_class,
    game_version,
    list_games,
    load_record,
    make,
    register,
)
from .envs.core.versions import PACKAGE_VERSION  # noqa: E402

__version__ = PACKAGE_VERSION  # pyproject.toml's version (docs/versions.md)


def _register_with_gymnasium() -> None:
    """Make ``gymnasium.make(env_id(game), opponent=..., seat=..., **options)`` work: one seat against
    built-in opponents (``tabletop_rl.training.runtime.single_seat.single_seat_env``, imported only when an env is
    made), and ``gymnasium.make_vec`` of the same id: many such games in one batched vector env
    (``tabletop_rl.training.runtime.vector_env.seat_vector_env``). Here, not in ``envs``: the engines know nothing of
    ``training``."""
    import gymnasium

    for name in list_games():
        if env_id(name) not in gymnasium.registry:  # a reload must not warn
            gymnasium.register(env_id(name), entry_point="tabletop_rl.training.runtime.single_seat:single_seat_env",
                               vector_entry_point="tabletop_rl.training.runtime.vector_env:seat_vector_env",
                               kwargs={"game": name})


_register_with_gymnasium()

__all__ = ["TERMINAL", "Game", "Record", "RecordError", "State", "VersionWarning", "env_id", "envs", "game_class",
           "game_version", "list_games", "load_record", "make", "register", "training"]
