"""Torres rules engine (``docs/rules/torres.md``; rule ids T1…T72 cited inline).

A game is a sequence of decision points D1–D12 (T70), each one flat action of ``Discrete(305)`` (T71;
tabled in the package docstring, ``envs/torres/__init__.py``). The board and its castles live in
:class:`~tabletop_rl.envs.torres.board.Board`, which keeps castle membership incrementally and caches the block
targets and door exits; this module holds the players, stacks, cards, turn order and scoring, and
drives the decisions. The observation is kept in ``observation.py``.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..core import options as opt
from ..core.game import TERMINAL, Fields
from ..core.game import Game as BaseGame
from ..core.game import State as BaseState
from . import observation as obs
from .actions import (
    ACQUIRE,
    ACTION,
    ADD_KNIGHT,
    CARD_SOURCE,
    CARD_STACK,
    CARD_TARGET,
    CHOOSE_STACK,
    DECISION_NAMES,
    END_TURN,
    KEEP,
    KEEP_CARD,
    KING_MOVE,
    LEFTOVER,
    MOVE_FROM,
    MOVE_TO,
    NUM_ACTIONS,
    PASS,
    PLACE_BLOCK,
    PLAY_CARD,
    PUBLIC_DECISIONS,
    RETURN_BOTTOM,
    RETURN_CARD,
    RETURN_TOP,
    SCORE_STEP,
    SELECT,
    SETUP_BLOCK,
    SETUP_KING,
    SETUP_KNIGHT,
    STACK,
    STACK_CURRENT,
)
from .board import DIST, EMPTY, KING, NONE, SQUARES, Board, square_name
from .cards import (
    AP_6,
    AP_7,
    BLOCK_UNDER_KNIGHT,
    CARD_NAMES,
    EXTRA_BLOCK,
    MASTER_NAMES,
    MOVE_BLOCK,
    NUM_CARD_TYPES,
    card_targets,
    master_points,
)

START_CASTLES = (3, 18, 21, 31, 32, 42, 45, 60)  # T5
KNIGHTS_PER_PLAYER = 6  # T3
AP_PER_TURN = 5  # T21
DEFAULT_STACKS = {  # T15
    2: ((3, 3, 3, 3), (3, 3, 3, 3), (3, 3, 3, 3)),
    3: ((3, 3, 2, 2), (3, 3, 2), (3, 3, 2)),
    4: ((2, 2, 2, 2), (2, 2, 2), (2, 2, 2)),
}
ROUNDS = {2: (4, 4, 4), 3: (4, 3, 3), 4: (4, 3, 3)}  # T11


def _int(v: Any) -> int | None:
    """``v`` as an int if it is an integer (numpy integers included, bools not), else None."""
    if isinstance(v, (bool, np.bool_)):
        return None
    try:
        return operator.index(v)
    except TypeError:
        return None


def _stack_table_ok(v: Any) -> bool:
    if v is None:
        return True
    if not isinstance(v, (list, tuple)) or len(v) != 3:
        return False
    return all(isinstance(phase, (list, tuple)) and len(phase) <= 4
               and all(_int(x) is not None and 1 <= _int(x) <= 3 for x in phase) for phase in v)


def _start_castles_ok(v: Any) -> bool:
    if not isinstance(v, (list, tuple)) or len(v) != 8:
        return False
    squares = [_int(x) for x in v]
    if any(s is None or not 0 <= s < SQUARES for s in squares) or len(set(squares)) != 8:
        return False
    return all(DIST[a][b] != 1 for a in squares for b in squares)


class Game(BaseGame):
    """Torres under one option set (§15)."""

    name = "torres"
    title = "Torres"
    option_schema = (
        opt.one_of("num_players", (2, 3, 4), 2, "number of players (T6)"),
        opt.one_of("action_deck", ("common", "personal", "master"), "common",
                   "one shuffled common deck; a personal deck per colour (look at 3, keep 1); or the master "
                   "version with every card in hand, player-placed start castles and a master card (T8, §11)"),
        opt.one_of("master_card", (None, *MASTER_NAMES), None,
                   "master card: drawn at random, or fixed (`master` only, T59)"),
        opt.integer("master_min_knights", 2, 1, KNIGHTS_PER_PLAYER,
                    "knights needed for the 'all your knights' master cards M4, M5, M6, M8 (`master` only, T63)"),
        opt.one_of("door_model", ("any_door", "monotone_tunnel"), "any_door",
                   "door passage: exit at the knight's level or lower through any door (T28), or never "
                   "climbing inside the castle (T29)"),
        opt.Option("stack_table", None, "None or a list of 3 lists (phases 1–3) of stack sizes 1–3, at most "
                   "one stack per round of the phase (4, 4, 4 with 2 players; 4, 3, 3 with 3–4)",
                   _stack_table_ok, "blocks dealt per phase: None = T15's table for the player count (T15)"),
        opt.boolean("forced_redistribution", True, "leftover blocks must be spread onto the stacks with room "
                    "(T19); False also allows PASS"),
        opt.one_of("king_move_scope", ("other_castle", "any_castle"), "other_castle",
                   "where the lowest scorer may move the king (T55)"),
        opt.one_of("phase_start", ("cyclic", "king_mover"), "cyclic",
                   "rounds always start with seat 0, or in phases 2–3 with the player offered the king move "
                   "(T12; the master version uses T62)"),
        opt.one_of("jump_up_two", ("exact", "up_to_two"), "exact", "JUMP_UP_TWO climbs exactly 2 levels, or up "
                   "to 2 (T40)"),
        opt.one_of("card_types", (10, 8), 10, "10 action-card types, or 8 without RELOCATE_KNIGHT and JUMP_OVER "
                   "(T38)"),
        opt.Option("start_castles", START_CASTLES, "8 distinct square indices 0–63, no two orthogonally "
                   "adjacent, as a list or tuple", _start_castles_ok,
                   "start castle squares, ids 0–7 in this order (T5; not used by the master version, T60)"),
        opt.boolean("auto_resolve_forced", False, "the engine applies a public-information decision that has a "
                    "single legal action (T69)"),
    )

    def _setup(self) -> None:
        o = self.options
        n = self.num_players = o["num_players"]
        self.num_actions = NUM_ACTIONS
        self.rounds = ROUNDS[n]
        table = o["stack_table"]
        if table is not None:
            table = [[_int(x) for x in phase] for phase in table]
            if any(len(phase) > r for phase, r in zip(table, self.rounds, strict=True)):
                raise ValueError(f"Torres: option stack_table={o['stack_table']!r} is not allowed with "
                                 f"num_players={n}; expected None or a list of 3 lists of stack sizes 1–3 with "
                                 f"at most {', '.join(map(str, self.rounds))} stacks (one per round of phases 1–3)")
            o["stack_table"] = table  # normalised as JSON gives it back, so a JSON round trip is exact
        self.stack_table = DEFAULT_STACKS[n] if table is None else tuple(map(tuple, table))
        o["start_castles"] = [_int(s) for s in o["start_castles"]]
        self.master = o["action_deck"] == "master"
        self.personal = o["action_deck"] == "personal"
        self.common = o["action_deck"] == "common"
        self.card_types = o["card_types"]
        self.tunnel = o["door_model"] == "monotone_tunnel"
        self.exact_jump = o["jump_up_two"] == "exact"
        self.any_castle = o["king_move_scope"] == "any_castle"
        self.auto = o["auto_resolve_forced"]
        # Chance outcomes: the card type drawn from the common deck or looked at in a personal deck (one nobody
        # has seen, T32), the master card (T59).
        self.num_chance_outcomes = NUM_CARD_TYPES if not self.master else 8 if o["master_card"] is None else 0
        self.perfect_information = self.master  # T65–T68: every card in hand and the master card are public
        # Decisions: the setup (T60 blocks, T9 knights and the king), two king moves (T55), and per turn at most
        # a stack (T18), a card with its source and target (T34, T70), an end (T36), three leftover blocks (T19)
        # and per action point (5, and 2 more from a card, T21, T45) two decisions (a move: knight, then square)
        # or four (a personal acquire: take, keep, return two; T32).
        turns = n * sum(self.rounds)
        self.max_game_length = (len(START_CASTLES) if self.master else 0) + n + 1 + 2 + \
            turns * (1 + 3 + 1 + 3 + (AP_PER_TURN + 2) * 4)
        obs.build_layouts(self)


class State(BaseState):
    """A Torres position; see the package docstring for the action layout and ``docs/torres.md``.

    Seats hold ``knights[p]`` (their squares, ascending), ``in_supply[p]``, ``score[p]``, ``stacks[p]`` (the
    stack list, largest first, T17), ``hands[p]`` / ``fresh[p]`` / ``played[p]`` (card counts by type).
    ``decks`` is ``[common deck]``, one deck per seat (personal) or empty (master); the top card is last. A
    personal deck holds, from the top, the ``returned_top[p]`` cards its owner returned on top (T32), the cards
    nobody has seen (in the generator's order), then the ``returned_bottom[p]`` cards returned to the bottom.
    """

    game: Game
    encoder = obs

    # ----------------------------------------------------------------- setup (§2, T58–T61)
    def _setup(self) -> None:
        g = self.game
        n, m = g.num_players, g.card_types
        self.board = Board()
        self.knights: list[list[int]] = [[] for _ in range(n)]
        self.in_supply = [KNIGHTS_PER_PLAYER] * n
        self.king = -1
        self.score = [0] * n
        self.supply = obs.TOTAL_BLOCKS
        self.stacks: list[list[int]] = [[] for _ in range(n)]
        self.turn_stack = -1  # T18: -1 while the turn has no turn's stack
        self.ap = 0
        self.card_played = False
        self.acquired = 0
        self.hands = [[0] * NUM_CARD_TYPES for _ in range(n)]
        self.fresh = [[0] * NUM_CARD_TYPES for _ in range(n)]
        self.played = [[0] * NUM_CARD_TYPES for _ in range(n)]
        self.decks: list[list[int]] = []
        self.looked: list[int] = []  # T32(b): the cards the active player looks at, ascending
        self.returned_top, self.returned_bottom = [0] * n, [0] * n
        self.master_card = -1
        if g.master:  # T59, T61
            fixed = g.options["master_card"]
            self.master_card = self._random_int(8, "master card") if fixed is None else MASTER_NAMES.index(fixed)
            self.hands = [[1] * m + [0] * (NUM_CARD_TYPES - m) for _ in range(n)]
        elif g.personal:  # T8(b)
            self.decks = [self._shuffled(list(range(m))) for _ in range(n)]
        else:  # T8(a)
            self.decks = [self._shuffled([t for t in range(m) for _ in range(4)])]
        self.card = -1  # the card being resolved
        self.selected = -1  # the knight of a move (D4a), the knight or source of a card (D8, D9)
        self.leftover = 0
        self.phase_no = self.round_no = self.turn_no = 0
        self.round_start = self.phase_start = 0
        self.king_mover = -1
        self.score_log: list[list[list[int]]] = []  # per scoring: castle points, king bonus, master points
        self.start_squares: list[int] = []
        self.current_player = 0
        if g.master:
            self.decision = SETUP_BLOCK  # T60
        else:
            for s in g.options["start_castles"]:  # T7
                self.board.add_block(s)
                self.start_squares.append(s)
            self.supply -= len(self.start_squares)
            self.decision = SETUP_KNIGHT
        obs.reset(self)
        self._resolve_forced()

    def outcome_to_string(self, event: str, outcome: int) -> str:
        return (MASTER_NAMES if event == "master card" else CARD_NAMES)[outcome]

    def _shuffled(self, cards: list[int]) -> list[int]:
        return [cards[i] for i in self.rng.permutation(len(cards))]

    # ----------------------------------------------------------------- decisions
    @property
    def phase(self) -> str:
        return "terminal" if self.current_player == TERMINAL else DECISION_NAMES[self.decision]

    def _legal_actions(self) -> list[int]:
        d, p, b = self.decision, self.current_player, self.board
        if d == ACTION:
            return self._action_menu(p)
        if d == MOVE_TO:  # T26
            return [SELECT + c for c in b.move_targets(self.selected, self.game.tunnel)]
        if d == CHOOSE_STACK:  # T18: one index per stack size
            return [STACK + k for k in _distinct(self.stacks[p])]
        if d == CARD_SOURCE:
            return [SELECT + s for s in self._card_sources(p, self.card)]
        if d == CARD_TARGET:
            return [SELECT + t for t in self._card_targets(p, self.card, self.selected)]
        if d == CARD_STACK:  # T41
            out = [STACK + k for k in _distinct(self.stacks[p])]
            return out + [STACK_CURRENT] if self.turn_stack > 0 else out
        if d == KEEP_CARD:  # T32(b)
            return [KEEP + t for t in self.looked]
        if d == RETURN_CARD:
            return [RETURN_TOP + t for t in self.looked] + [RETURN_BOTTOM + t for t in self.looked]
        if d == LEFTOVER:  # T19
            stacks = self.stacks[p]
            out = [STACK + k for k in _distinct(stacks) if stacks[k] < 3]
            return out if self.game.options["forced_redistribution"] else out + [PASS]
        if d == KING_MOVE:  # T55
            return [SELECT + s for s in self._king_squares()] + [PASS]
        if d == SETUP_BLOCK:  # T60
            placed = self.start_squares
            return [SELECT + s for s in range(SQUARES) if all(DIST[s][q] >= 3 for q in placed)]
        # SETUP_KNIGHT, SETUP_KING (T9)
        occ = b.occ
        return [SELECT + s for s in sorted(self.start_squares) if occ[s] == EMPTY]

    def _action_menu(self, p: int) -> list[int]:
        """D4 (T24): every action of the action phase that is legal now."""
        b, ap = self.board, self.ap
        own = self.knights[p]
        out = []
        if ap >= 1:  # T26: only knights with a destination
            out += map(MOVE_FROM.__add__, b.movable(own, self.game.tunnel))
        if ap >= 2 and self.in_supply[p]:  # T25
            out += map(ADD_KNIGHT.__add__, b.add_targets(own))
        if ap >= 1 and self.turn_stack > 0:  # T30, T31
            out += map(PLACE_BLOCK.__add__, b.block_targets())
        if ap >= 1 and self._can_acquire(p):  # T32
            out.append(ACQUIRE)
        if not self.card_played:  # T34
            hand, fresh = self.hands[p], self.fresh[p]
            out += [PLAY_CARD + t for t in range(NUM_CARD_TYPES) if hand[t] > fresh[t] and self._playable(p, t)]
        if ap >= 1:  # T35
            out.append(SCORE_STEP)
        out.append(END_TURN)  # T36
        return out

    def _can_acquire(self, p: int) -> bool:
        g = self.game
        if g.master or self.acquired >= 2:
            return False
        return bool(self.decks[p] if g.personal else self.decks[0])

    def _look(self, p: int) -> int:
        """T32(b): the top card of p's personal deck: a card p returned on top, else one nobody has seen (a chance
        event over those), else the top one of those p returned to the bottom."""
        deck = self.decks[p]
        if self.returned_top[p]:
            self.returned_top[p] -= 1
            return deck.pop()
        if len(deck) > self.returned_bottom[p]:
            return self._draw(deck, f"player {p} looks at a card", start=self.returned_bottom[p])
        self.returned_bottom[p] -= 1
        return deck.pop()

    # ----------------------------------------------------------------- cards (T38–T48)
    def _playable(self, p: int, card: int) -> bool:
        """T34: the card has at least one complete legal resolution now."""
        if card in (AP_6, AP_7):
            return True
        b = self.board
        if card == EXTRA_BLOCK:
            return self.supply > 0 and bool(b.block_targets())
        if card == BLOCK_UNDER_KNIGHT:
            return (self.turn_stack > 0 or bool(self.stacks[p])) and any(map(b.under_knight_ok, self.knights[p]))
        if card == MOVE_BLOCK:
            return self._any_block_move()
        return any(self._card_targets(p, card, a) for a in self.knights[p])

    def _any_block_move(self) -> bool:
        """T46 has a resolution. Fast path, exact when it says yes: an empty ground square touching no castle
        is a new-castle target for any source whose lifting leaves its castle valid — a square at height
        ≥ 2, a lone square, or a removable ground-level square of a castle lower than its new area."""
        b = self.board
        h, occ, touch, cid, castles = b.h, b.occ, b.touch, b.cid, b.castles
        if any(cid[t] < 0 and touch[t] == NONE and occ[t] == EMPTY for t in range(SQUARES)):
            for s in range(SQUARES):
                if h[s] and occ[s] == EMPTY:
                    area = len(castles[cid[s]])
                    if h[s] >= 2 or area == 1 or (b.castle_height(cid[s]) < area and b.connected_without(s)):
                        return True
        return any(b.move_block_targets(s) for s in range(SQUARES))

    def _card_sources(self, p: int, card: int) -> list[int]:
        """D7: the knights (or, for MOVE_BLOCK, the source squares) from which the card can be completed."""
        b = self.board
        if card == MOVE_BLOCK:
            return [s for s in range(SQUARES) if b.move_block_targets(s)]
        if card == BLOCK_UNDER_KNIGHT:
            return [a for a in self.knights[p] if b.under_knight_ok(a)]
        return [a for a in self.knights[p] if self._card_targets(p, card, a)]

    def _card_targets(self, p: int, card: int, a: int) -> list[int]:
        """D8: destinations of the card from a (its knight or source), ascending."""
        return card_targets(self.board, card, a, self.knights[p], self.game.exact_jump)

    def _king_squares(self) -> list[int]:
        """T55: empty castle squares of another castle (or of any castle with ``any_castle``)."""
        b = self.board
        cid, occ = b.cid, b.occ
        home = cid[self.king]
        any_castle = self.game.any_castle
        return [s for s in range(SQUARES) if cid[s] >= 0 and occ[s] == EMPTY and (any_castle or cid[s] != home)]

    # ----------------------------------------------------------------- applying actions
    def _apply(self, action: int) -> None:
        self._step(action)
        self._resolve_forced()

    def _resolve_forced(self) -> None:
        """T69: with ``auto_resolve_forced``, apply every public-information decision with one legal id."""
        if not self.game.auto:
            return
        while self.current_player != TERMINAL and self.decision in PUBLIC_DECISIONS:
            legal = self._legal_actions()
            if len(legal) != 1:
                return
            self._step(legal[0])

    def _step(self, a: int) -> None:
        p, d = self.current_player, self.decision
        self._dirty |= obs.STALE_CONTEXT  # at every decision: then _dirty alone tells whether anything is stale
        if d == ACTION:
            self._act(p, a)
        elif d == MOVE_TO:  # T26: the move is made and paid at SELECT
            self._move_knight(p, self.selected, a - SELECT)
            self.ap -= 1
            self.selected = -1
            self.decision = ACTION
        elif d == CHOOSE_STACK:  # T18
            self.turn_stack = self.stacks[p].pop(a - STACK)
            self._stale_seats |= 1 << p
            self.decision = ACTION
        elif d == CARD_SOURCE:
            self.selected = a - SELECT
            self.decision = CARD_STACK if self.card == BLOCK_UNDER_KNIGHT else CARD_TARGET
        elif d == CARD_TARGET:
            self._resolve_card(p, a - SELECT)
        elif d == CARD_STACK:  # T41: the block comes from a listed stack or the turn's stack
            if a == STACK_CURRENT:
                self.turn_stack -= 1
            else:
                stacks = self.stacks[p]
                stacks[a - STACK] -= 1
                if not stacks[a - STACK]:
                    del stacks[a - STACK]
                stacks.sort(reverse=True)
            self._stale_seats |= 1 << p
            self._stale_rows |= 1 << p  # the knight rose
            self._add_block(self.selected)
            self._card_done()
        elif d == KEEP_CARD:  # T32(b)
            t = a - KEEP
            self.looked.remove(t)
            self.hands[p][t] += 1
            self.fresh[p][t] += 1
            self._stale_seats |= 1 << p
            self._stale_cards |= 1 << p
            self.decision = RETURN_CARD if self.looked else ACTION
        elif d == RETURN_CARD:
            t = a - RETURN_BOTTOM if a >= RETURN_BOTTOM else a - RETURN_TOP
            self.looked.remove(t)
            if a >= RETURN_BOTTOM:
                self.decks[p].insert(0, t)
                self.returned_bottom[p] += 1
            else:
                self.decks[p].append(t)
                self.returned_top[p] += 1
            self._stale_seats |= 1 << p
            self._stale_cards |= 1 << p
            if not self.looked:
                self.decision = ACTION
        elif d == LEFTOVER:  # T19
            self._stale_seats |= 1 << p
            if a == PASS:
                self.supply += self.leftover
                self.leftover = 0
            else:
                stacks = self.stacks[p]
                stacks[a - STACK] += 1
                stacks.sort(reverse=True)
                self.leftover -= 1
            self._spread_leftovers()
        elif d == KING_MOVE:  # T55
            if a != PASS:
                self.board.set_occupant(self.king, EMPTY)
                self.king = a - SELECT
                self.board.set_occupant(self.king, KING)
                self._dirty |= obs.STALE_KING
            self._start_phase(self.phase_no + 1)
        elif d == SETUP_BLOCK:  # T60
            s = a - SELECT
            self._add_block(s)
            self.supply -= 1
            self.start_squares.append(s)
            if len(self.start_squares) == len(START_CASTLES):
                self.current_player, self.decision = 0, SETUP_KNIGHT
            else:
                self.current_player = len(self.start_squares) % self.game.num_players
        elif d == SETUP_KNIGHT:  # T9
            self.in_supply[p] -= 1
            self._stale_seats |= 1 << p
            self._put_knight(p, a - SELECT)
            if p == self.game.num_players - 1:
                self.decision = SETUP_KING
            else:
                self.current_player = p + 1
        else:  # SETUP_KING (T9), then T10
            self.king = a - SELECT
            self.board.set_occupant(self.king, KING)
            self._dirty |= obs.STALE_KING
            self._start_phase(1)

    def _act(self, p: int, a: int) -> None:
        """D4 (T24–T36)."""
        if a >= SELECT:  # ACQUIRE, PLAY_CARD, SCORE_STEP, END_TURN change the seat's own facts
            self._stale_seats |= 1 << p
        if a < ADD_KNIGHT:  # T26: the destination follows in D4a
            self.selected = a
            self.decision = MOVE_TO
        elif a < PLACE_BLOCK:  # T25
            self.ap -= 2
            self.in_supply[p] -= 1
            self._stale_seats |= 1 << p
            self._put_knight(p, a - ADD_KNIGHT)
        elif a < SELECT:  # T30
            self.ap -= 1
            self.turn_stack -= 1
            self._add_block(a - PLACE_BLOCK)
        elif a == ACQUIRE:  # T32
            self.ap -= 1
            self.acquired += 1
            self._stale_cards |= 1 << p
            if self.game.common:
                t = self._draw(self.decks[0], f"player {p} acquires")
                self.hands[p][t] += 1
                self.fresh[p][t] += 1
            else:
                self.looked = sorted(self._look(p) for _ in range(min(3, len(self.decks[p]))))
                self.decision = KEEP_CARD
        elif a < KEEP:  # T34
            t = a - PLAY_CARD
            self.hands[p][t] -= 1
            self.played[p][t] += 1
            self.card_played = True
            self._stale_cards = (1 << self.game.num_players) - 1  # everyone's unseen count drops
            if t == AP_6:  # T45
                self.ap += 1
            elif t == AP_7:
                self.ap += 2
            else:  # T70: card 2 goes straight to its target, the others first choose a knight or source
                self.card = t
                self.decision = CARD_TARGET if t == EXTRA_BLOCK else CARD_SOURCE
        elif a == SCORE_STEP:  # T35
            self.ap -= 1
            self._advance(p, 1)
        else:  # END_TURN (T36, T37)
            self.leftover = max(self.turn_stack, 0)
            self.turn_stack = -1
            self._spread_leftovers()

    def _resolve_card(self, p: int, t: int) -> None:
        """D8: the card's last decision; only now the board changes (T39)."""
        card, a = self.card, self.selected
        if card == EXTRA_BLOCK:  # T42
            self.supply -= 1
            self._add_block(t)
        elif card == MOVE_BLOCK:  # T46
            self._remove_block(a)
            self._add_block(t)
        else:  # the knight cards
            self._move_knight(p, a, t)
        self._card_done()

    def _card_done(self) -> None:
        self.card = self.selected = -1
        self.decision = ACTION

    # ----------------------------------------------------------------- board changes
    def _add_block(self, t: int) -> None:
        self._stale_castles.add(self.board.add_block(t))
        self._block_changed(t)

    def _remove_block(self, s: int) -> None:
        self._stale_castles.add(self.board.cid[s])
        self.board.remove_block(s)
        self._block_changed(s)

    def _block_changed(self, s: int) -> None:
        # Knights' levels and castles stay: blocks change only under no piece, except BLOCK_UNDER_KNIGHT
        # (which marks its seat's row), and castle ids are stable.
        self._stale_squares.add(s)

    def _put_knight(self, p: int, t: int) -> None:
        self.knights[p].append(t)
        self.knights[p].sort()
        self.board.set_occupant(t, p)
        self._stale_rows |= 1 << p

    def _move_knight(self, p: int, a: int, c: int) -> None:
        squares = self.knights[p]
        squares[squares.index(a)] = c
        squares.sort()
        self.board.set_occupant(a, EMPTY)
        self.board.set_occupant(c, p)
        self._stale_rows |= 1 << p

    # ----------------------------------------------------------------- turns, rounds, phases (T11–T21)
    def _spread_leftovers(self) -> None:
        """T19: a choice while a listed stack has room; otherwise the rest returns to the supply."""
        stacks = self.stacks[self.current_player]
        if self.leftover:
            if stacks and stacks[-1] < 3:
                self.decision = LEFTOVER
                return
            self.supply += self.leftover
            self.leftover = 0
        self._end_turn()

    def _end_turn(self) -> None:
        p = self.current_player
        self._stale_seats |= 1 << p
        if any(self.fresh[p]):
            self._stale_cards |= 1 << p
        self.fresh[p] = [0] * NUM_CARD_TYPES
        self.ap = self.acquired = 0
        self.card_played = False
        self.turn_no += 1
        n = self.game.num_players
        if self.turn_no < n:
            self._start_turn((self.round_start + self.turn_no) % n)
        elif self.round_no < self.game.rounds[self.phase_no - 1]:
            self.round_no += 1
            self._start_round()
        else:
            self._end_phase()

    def _start_turn(self, p: int) -> None:
        """T21."""
        self.current_player = p
        self._stale_seats |= 1 << p
        self.ap = AP_PER_TURN
        self.card_played = False
        self.acquired = 0
        self.turn_stack = -1
        self.decision = CHOOSE_STACK if self.stacks[p] else ACTION

    def _start_round(self) -> None:
        self.round_start = self._round_leader()
        self.turn_no = 0
        self._start_turn(self.round_start)

    def _round_leader(self) -> int:
        """T12 / T62: who starts the round now beginning."""
        g = self.game
        if g.master:  # T62: the leader once anyone scored
            return self.score.index(max(self.score)) if any(self.score) else 0
        if g.options["phase_start"] == "king_mover" and self.phase_no >= 2:
            return self.king_mover
        return 0

    def _start_phase(self, phase: int) -> None:
        """T14(3), T16: the phase's first player, then dealing clockwise from them."""
        g = self.game
        n = g.num_players
        self.phase_no, self.round_no = phase, 1
        first = self.phase_start = self._round_leader()
        for i in range(n):
            q = (first + i) % n
            for size in g.stack_table[phase - 1]:
                give = min(size, self.supply)
                if give:
                    self.supply -= give
                    self.stacks[q].append(give)
            self.stacks[q].sort(reverse=True)
        self._stale_seats = (1 << n) - 1
        self._start_round()

    def _end_phase(self) -> None:
        """T14: clean-up (T20), scoring (T50–T54), then the king move (T55) or the end (T57)."""
        n = self.game.num_players
        for q in range(n):
            self.supply += sum(self.stacks[q])
            self.stacks[q] = []
        self._stale_seats = (1 << n) - 1
        self._score_phase()
        if self.phase_no == 3:
            self.current_player = TERMINAL
            return
        self.king_mover = min(range(n), key=lambda q: (self.score[q], -q))  # ties (at 0): highest seat
        self.current_player = self.king_mover
        self.decision = KING_MOVE

    # ----------------------------------------------------------------- scoring (T50–T54, T64)
    def castle_points(self) -> list[int]:
        """T51 per player on the board as it stands."""
        b = self.board
        h, cid = b.h, b.cid
        out = []
        for squares in self.knights:
            best: dict[int, int] = {}
            for s in squares:
                c = cid[s]
                if c >= 0 and h[s] > best.get(c, 0):
                    best[c] = h[s]
            out.append(sum(b.area(c) * level for c, level in best.items()))
        return out

    def king_bonus(self, phase: int) -> list[int]:
        """T52: 5·phase for a knight on the king's castle at level exactly ``phase``."""
        b = self.board
        home = b.cid[self.king]
        return [5 * phase if any(b.cid[s] == home and b.h[s] == phase for s in squares) else 0
                for squares in self.knights]

    def _score_phase(self) -> None:
        """T53: castle points, then king bonuses, then master points, each clockwise from the phase's first
        player, each as one leap-frogging move."""
        g = self.game
        n, f = g.num_players, self.phase_no
        order = [(self.phase_start + i) % n for i in range(n)]
        steps = [self.castle_points(), self.king_bonus(f)]
        steps.append(master_points(self.master_card, f, self.knights, self.board, g.options["master_min_knights"])
                     if g.master else [0] * n)
        for points in steps:
            for p in order:
                self._advance(p, points[p])
        self.score_log.append(steps)

    def _advance(self, p: int, x: int) -> None:
        """T54 leap-frog: a move of x > 0 ends on a score nobody else holds."""
        if x <= 0:
            return
        others = self.score[:p] + self.score[p + 1:]
        s = self.score[p] + x
        while s in others:
            s += 1
        self.score[p] = s
        self._stale_seats |= 1 << p

    # ----------------------------------------------------------------- outcome (T57)
    def scores(self) -> list[int]:
        return list(self.score)

    def winners(self) -> list[int]:
        best = max(self.score)
        return [p for p, s in enumerate(self.score) if s == best]

    def end_info(self) -> dict[str, Any]:
        return {"scores": self.scores(), "winners": self.winners(), "scorings": self.score_log}

    # ----------------------------------------------------------------- information (T65–T68a)
    def sample_hidden(self, player: int, rng: np.random.Generator) -> State:
        """T68a: redraw what ``player`` cannot see, from a canonical (sorted) pool, keeping every public fact
        and the player's own cards."""
        g = self.game
        n, m = g.num_players, g.card_types
        state = self.clone()
        if g.common:
            pool = [t for t in range(m) for _ in range(4 - sum(row[t] for row in self.played) - self.hands[player][t])]
            pool = [pool[i] for i in rng.permutation(len(pool))]
            for q in range(n):
                if q != player:
                    size, fresh = sum(self.hands[q]), sum(self.fresh[q])
                    state.hands[q], state.fresh[q] = _counts(pool[:size]), _counts(pool[:fresh])
                    del pool[:size]
            state.decks = [pool]
        elif g.personal:  # every deck in a new order: nobody has seen any of it (T32)
            state.returned_top, state.returned_bottom = [0] * n, [0] * n
            for q in range(n):
                if q == player:  # own cards kept; the own deck's order is forgotten (T68)
                    state.decks[q] = _reorder(sorted(self.decks[q]), rng)
                    continue
                pool = _reorder([t for t in range(m) if not self.played[q][t]], rng)
                size, fresh = sum(self.hands[q]), sum(self.fresh[q])
                looking = len(self.looked) if q == self.current_player else 0
                state.hands[q], state.fresh[q] = _counts(pool[:size]), _counts(pool[:fresh])
                if looking:
                    state.looked = sorted(pool[size:size + looking])
                state.decks[q] = pool[size + looking:]
        state.rng = np.random.default_rng(int(rng.integers(2**63)))
        state._legal = None
        obs.reset(state)
        return state

    # ----------------------------------------------------------------- text
    def action_to_string(self, action: int) -> str:
        """T71: readable, unique action names."""
        if not 0 <= action < NUM_ACTIONS:
            return "out of range"
        if action < SELECT:
            verb = ("move from", "add knight", "place block")[action // 64]
            return f"{verb} {square_name(action % 64)}"
        if action < STACK:
            return f"select {square_name(action - SELECT)}"
        if action < STACK_CURRENT:
            return f"stack {action - STACK}"
        fixed = {STACK_CURRENT: "stack current", ACQUIRE: "acquire", SCORE_STEP: "score step", END_TURN: "end turn",
                 PASS: "pass"}
        if action in fixed:
            return fixed[action]
        for base, verb in ((RETURN_BOTTOM, "return bottom"), (RETURN_TOP, "return top"), (KEEP, "keep"),
                           (PLAY_CARD, "play")):
            if action >= base:
                return f"{verb} {CARD_NAMES[action - base]}"
        raise AssertionError(action)

    # ----------------------------------------------------------------- copy and JSON
    fields = Fields(
        values="king supply turn_stack ap card_played acquired master_card card selected leftover phase_no round_no "
               "turn_no round_start phase_start king_mover current_player decision",
        # score_log entries are never mutated
        copied="in_supply score looked returned_top returned_bottom start_squares score_log",
        rows="knights stacks hands fresh played decks",
    )
    derived = Fields(values="_dirty _stale_rows _stale_seats _stale_cards",
                     copied="board _x _stale_squares _stale_castles")

    def _to_dict(self) -> dict[str, Any]:
        b = self.board  # its occupancy follows from knights and king
        return {**super()._to_dict(), "h": b.h, "cid": b.cid, "next_id": b.next_id}

    def _after_load(self, data: dict[str, Any]) -> None:
        occ = [EMPTY] * SQUARES
        for p, squares in enumerate(self.knights):
            for s in squares:
                occ[s] = p
        if self.king >= 0:
            occ[self.king] = KING
        self.board = Board.from_arrays(data["h"], data["cid"], occ, data["next_id"])
        obs.reset(self)


def _distinct(stacks: list[int]) -> list[int]:
    """T18: indices of a sorted stack list, only the lowest index among equal sizes."""
    return [k for k in range(len(stacks)) if k == 0 or stacks[k] != stacks[k - 1]]


def _counts(cards: list[int]) -> list[int]:
    out = [0] * NUM_CARD_TYPES
    for t in cards:
        out[t] += 1
    return out


def _reorder(cards: list[int], rng: np.random.Generator) -> list[int]:
    return [cards[i] for i in rng.permutation(len(cards))]


Game.state_class = State
