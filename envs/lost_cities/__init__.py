"""Lost Cities (Reiner Knizia), two players — the PettingZoo AEC environment.

See ``docs/lost_cities.md`` for the observation and action layout tables; the rules are
``../shared/rules/lost_cities.md``.
"""

from envs.core.aec import make_env_functions

from .bots import HeuristicAgent
from .game import Game, State

__all__ = ["Game", "HeuristicAgent", "State", "env", "raw_env"]

raw_env, env = make_env_functions(Game, __doc__, __name__)
