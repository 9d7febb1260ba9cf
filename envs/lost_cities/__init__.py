"""Lost Cities (Reiner Knizia), two players — the PettingZoo AEC environment.

Agents ``player_0`` and ``player_1``. A turn is two consecutive decisions by the same agent: the card step
(play a card on one of your expeditions or discard it) and the draw step (the draw pile or the top of a
discard pile, but not the pile you just discarded to) (L11–L22). Rewards are terminal: +1 / −1 / 0, zero
for both when the turn cap truncates the episode (L29). Options: ``n_colours`` (5, 6), ``rounds``,
``first_player``, ``next_round_starter``, ``match_tie``, ``max_turns_per_round``; rules:
``docs/rules/lost_cities.md``; more in ``docs/lost_cities.md``.

Actions, ``Discrete(2K + 1 + C)`` with C colours and K = 10·C card kinds, kind ``k = 10·colour + r``
(``r = 0`` wager, ``r = value − 1``); 106 actions with 5 colours, 127 with 6 (L36):

===============  =================================  ===========================================================
index            action                             legal iff
===============  =================================  ===========================================================
``0 … K−1``      PLAY kind ``a``                    card step, held (L18), fits the expedition (L19)
``K … 2K−1``     DISCARD kind ``a − K``             card step, held (L18, L20)
``2K``           DRAW_DECK                          draw step (L22)
``2K+1 … 2K+C``  DRAW_PILE colour ``a − 2K − 1``    draw step, pile non-empty, not just discarded to (L21, L22)
===============  =================================  ===========================================================

The observation is egocentric and holds only what its player may know (L30–L34); with 5 colours:
"""

from ..core.aec import make_env_functions
from .bots import HeuristicAgent
from .game import Game, State

__all__ = ["Game", "HeuristicAgent", "State", "env", "raw_env"]

# the observation table is generated from the layout, so the docstring cannot drift from the code
raw_env, env = make_env_functions(Game, f"{__doc__}\n{Game().layout.to_markdown()}\n", __name__)
