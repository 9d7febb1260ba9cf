"""Palazzo (Reiner Knizia), 2–4 players — the PettingZoo AEC environment.

On a turn the active player takes money (reveal n + 1 cards; he picks two, every other player one), draws
two tiles and then buys from the supply or auctions the master builder's next quarry, or pays one card to
reconstruct a palace (P12). Payments use one currency plus certificates and groups of three (P16–P23).
Palaces are stacks of tiles with rising floors; they score by tile count, windows and a one-material
bonus (P49, P61). The game ends when the fifth game-end tile is drawn (P60); ties go to the larger single
payment the hand can form (P63).

Actions, ``Discrete(127)`` (P73). Every decision D1–D11 (P72) is one step of the seat that makes it —
money picks, bids, distribution picks and the placement of tiles go to their owners (P14); every action
outside the current decision is masked:

=========  ==========================================  ===================================================
index      action                                      decision (rules)
=========  ==========================================  ===================================================
0          TAKE_MONEY                                  D1 (P12, P25: deck + discard ≥ n + 1)
1          TILES                                       D1 (P12, P30–P34: always)
2          RECONSTRUCT                                 D1 (P12, P55: a card in hand and a palace)
3          BUY                                         D3 (P35, P36: a supply tile and BestPay ≥ p)
4          AUCTION                                     D3 (P35, P40: always)
5–52       TILE(id), id = index − 5                    D4 select a supply tile (P37), D7 pick from the
                                                       lot (P41), D9 the tile to move (P56)
53–68      CARD(k), k = index − 53                     ADD_CARD in D5 / D6 (P21–P23a), D2 money pick
                                                       (P27), D11 the card paying a reconstruct (P57)
69–73      ADD_GROUP(v), v = index − 66                D5 / D6: [Av Bv Cv] worth 15 (P16, P21)
74         ADD_GROUP(Z)                                D5 / D6: [Z Z Z] worth 15 (P16, P21)
75         DONE                                        D4 (buy one tile, P37), D5 (V ≥ T, P38), D6 (after
                                                       an addition, V ≥ T: raise, P44)
76         PASS                                        D6 before the step's first addition (P45)
77–124     DEST(slot), slot = index − 77               D8 on top of that palace (P51), D10 INSERT (P56)
125        DEST(NEW)                                   D8 a new palace (P51), D10 REMOVE (P56, P59)
126        DEST(DISCARD)                               D8 discard the tile (P51), D10 DISCARD (P56)
=========  ==========================================  ===================================================

Money kinds ``k = 5·currency + value − 3`` (A = 0, B = 1, C = 2; values 3–7) and ``k = 15`` for the
certificate Z (P2); tile ids ``16·material + j`` (brick, sandstone, marble; j orders floor.windows, P4).
With ``canonical_order`` (default) the units of one payment or bidding step, the active player's two
money picks and the two bought tiles go in ascending id (P23a, P27, P37).

The observation (``Game(...).layout``, table below for 4 players, and in ``docs/palazzo.md``) is egocentric:
every per-seat field has one row per player, row 0 being the observer, then the players to the left. It
holds everything public — palaces slot by slot (``DEST(slot)`` = 77 + slot), every tile's location, the
money display and discard pile, bids, the open payment's V, c*, T, and per player the cards known from
public history to be in the hand (P70a) — plus the observer's own hand; never the opponents' unknown
cards, the deck's order or the stacks (P69). ``State.global_state()`` (``Game.state_layout``) is the whole
position for centralized critics. Options: ``num_players`` (2–4), ``first_player``, ``stack_split``,
``min_tile_price``, ``reshuffle_timing``, ``allow_noop_reconstruct``, ``removed_tiles_public``,
``max_turns`` (truncation), ``canonical_order``, ``auto_resolve_forced`` (§14). Rules:
``docs/rules/palazzo.md``.
"""

from ..core.aec import make_env_functions
from .bots import HeuristicAgent
from .game import Game, State

__all__ = ["Game", "HeuristicAgent", "State", "env", "raw_env"]

# the observation table is generated from the layout, so the docstring cannot drift from the code
raw_env, env = make_env_functions(Game, f"{__doc__}\nObservation, 4 players:\n\n{Game().layout.to_markdown()}\n",
                                  __name__)
