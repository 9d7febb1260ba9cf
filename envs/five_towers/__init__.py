"""Five Towers (Kasper Lapp), 2–5 players — the PettingZoo AEC environment.

Each round five cards are revealed; players bid once each, in turn, how many of them they can build
(PASS or a bid above the high bid H, at most k and at most what fits: F10–F12). The winner may tear down
one tower top, then takes exactly N display cards and places them on their towers (F15–F17). A card goes
on a smaller card of its type; 8 accepts anything, 9 goes on anything but a 0, a 0 seals the tower (F20).
Scores: tower heights, doubled for sealed towers, plus the tallest tower, minus triangular rubble (F27).

Actions, ``Discrete(22)`` (F33); every action outside the current phase is masked:

=========  ===========================================  =========
index      action                                       phase
=========  ===========================================  =========
0          PASS                                         BID
1–5        BID b = index                                BID
6          TEAR DOWN none                               TEARDOWN
7–11       TEAR DOWN the top of tower type ``index−7``  TEARDOWN
12–16      TAKE display slot ``index−12``               TAKE
17–21      PLACE the taken card of slot ``index−17``    PLACE
=========  ===========================================  =========

Types: 0 candy, 1 scary, 2 tree, 3 scrap, 4 sand. The observation (``Game(...).layout``, table below
for 2 players, and in ``docs/five_towers.md``) is egocentric: every per-seat field has one row per player,
row 0 being the observer, then the players to the left. Everything is public except the draw pile's order (F30, F31),
and the observation holds all of it, every tower card by card in order and every rubble card included; the draw
pile's contents are given per kind (``unseen``). Masks are exact and never lead to a dead end
(F25). Options: ``num_players`` (2–5), ``first_player``, ``final_partial_round``,
``reshuffle_includes_last_round``, ``zero_starts_tower``, ``rebuild_removed_tower``, ``tie_rule``,
``canonical_order``, ``auto_resolve_forced`` (§10). Rules: ``docs/rules/five_towers.md``.
"""

from ..core.aec import make_env_functions
from .bots import HeuristicAgent
from .game import Game, State

__all__ = ["Game", "HeuristicAgent", "State", "env", "raw_env"]

# the observation table is generated from the layout, so the docstring cannot drift from the code
raw_env, env = make_env_functions(Game, f"{__doc__}\nObservation, 2 players:\n\n{Game().layout.to_markdown()}\n",
                                  __name__)
