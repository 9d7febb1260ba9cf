"""Torres (Wolfgang Kramer & Michael Kiesling), 2–4 players — the PettingZoo AEC environment.

Players build castles of blocks on an 8×8 board and climb them with their knights. Each turn the active
player first picks the turn's block stack (D3a), then spends 5 action points (AP) on placing knights,
moving them (up one level, down any, or through a castle's doors), placing blocks from the turn's stack
(a castle's height never exceeds its area; castles never merge), buying and playing action cards, or
advancing on the score track. After each of the three phases every player scores, per castle, its area
times the level of their highest knight on it, plus a bonus on the king's castle; the lowest scorer may
then move the king (T1–T57). ``action_deck='master'`` plays the master version (T58–T64). Rules:
``docs/rules/torres.md``; more in ``docs/torres.md``.

Actions, ``Discrete(305)`` (T71); squares are indices ``8·row + column`` (T1), every action outside the
pending decision is masked:

==========  ===============================  ==========================================  ===============
index       action                           legal in                                    rules
==========  ===============================  ==========================================  ===============
0–63        MOVE_FROM(a): pick a knight      D4: own knight with a destination, ≥ 1 AP   T26
64–127      ADD_KNIGHT(t)                    D4: 2 AP, t next to an own knight below it  T25
128–191     PLACE_BLOCK(t)                   D4: turn's stack not empty, t raise/extend  T30, T31
192–255     SELECT(s): a square              D1–D3 setup, D4a move destination, D7/D8    T9, T26–T29,
                                             card squares, D12 king move                 T39–T48, T55, T60
256–259     STACK(k): stack list index k     D3a turn's stack, D9 card source, D11       T18, T19, T41
                                             leftover (equal sizes: lowest index only)
260         STACK_CURRENT                    D9: BLOCK_UNDER_KNIGHT from the turn's      T41
                                             stack
261         ACQUIRE                          D4: 1 AP, ≤ 2 per turn, deck not empty      T32
262–271     PLAY_CARD(x)                     D4: one per turn, not acquired this turn,   T34, T38
                                             resolvable
272–281     KEEP(x)                          D5: personal acquire, the card kept         T32
282–291     RETURN_TOP(x)                    D6: a looked-at card back on top            T32
292–301     RETURN_BOTTOM(x)                 D6: a looked-at card under the deck         T32
302         SCORE_STEP                       D4: 1 AP, one point (leap-frog)             T35, T54
303         END_TURN                         D4                                          T36
304         PASS                             D11 (``forced_redistribution=False``),      T19, T55
                                             D12 (king stays)
==========  ===============================  ==========================================  ===============

Cards x: 0 jump up two, 1 block under knight, 2 extra block, 3 door climb, 4 diagonal move, 5 AP 6,
6 AP 7, 7 move block, 8 relocate knight, 9 jump over (T38). A move is MOVE_FROM(a) then SELECT(c); a
card is PLAY_CARD(x), then SELECT its knight or source (D7) and its target (D8), or its stack (D9).
Masks never lead to a dead end (T26, T39).

The observation (``Game(...).layout``, table below for 2 players, and in ``docs/torres.md``) is egocentric:
every per-seat field has one row per player, row 0 being the observer, then the players to the left. It
holds the whole public position (T65) and the observer's own cards (T66), never the decks' order or other
players' hands (T67). ``State.global_state()`` is the full position for centralized critics.
"""

from ..core.aec import make_env_functions
from .bots import HeuristicAgent
from .game import Game, State

__all__ = ["Game", "HeuristicAgent", "State", "env", "raw_env"]

# the observation table is generated from the layout, so the docstring cannot drift from the code
raw_env, env = make_env_functions(Game, f"{__doc__}\nObservation, 2 players:\n\n{Game().layout.to_markdown()}\n",
                                  __name__)
