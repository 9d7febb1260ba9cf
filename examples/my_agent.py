"""Your own agent in every command: name a factory as ``path/to/file.py:callable`` (or ``package.module:callable``).

    python -m tabletop_rl.training.evaluate lost_cities examples/my_agent.py:highest heuristic --games 20
    python -m tabletop_rl.training.play lost_cities --opponent examples/my_agent.py:Mostly
    python -m tabletop_rl.web examples/my_agent.py:highest examples/my_agent.py:Mostly

The factory is called as ``factory(game=game, seed=seed)``: ``game`` is the engine's ``Game`` (``game.name``,
``game.options``, ``game.num_players``, ``game.num_actions``), ``seed`` an integer (or None). It returns an object
with ``act(observation, action_mask) -> int`` or a plain function of those two; they are what
``env.observe(agent)`` gives the agent's seat, and the answer must be one of the legal actions (docs/training.md).
"""

import numpy as np


def highest(game, seed):
    """A plain function: always the legal action with the highest index."""
    return lambda observation, action_mask: int(np.flatnonzero(action_mask)[-1])


class Mostly:
    """An object with ``act``, its own generator seeded: the highest legal action, one time in ten a random one."""

    def __init__(self, game, seed):
        self.rng = np.random.default_rng(seed)

    def act(self, observation, action_mask):
        legal = np.flatnonzero(action_mask)
        return int(legal[-1] if self.rng.random() > 0.1 else self.rng.choice(legal))
