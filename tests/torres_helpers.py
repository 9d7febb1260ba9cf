"""Reference rules, scenario builder and invariant checks for the Torres tests (``docs/rules/torres.md``).

The reference functions are written from the spec's text, not from the engine: castles are recomputed as
connected components of the heights (T2), every target set is found by testing every square against the
rule's conditions, MOVE_BLOCK by building the final board of every (source, target) pair (T46).
:func:`expected_legal` is the whole mask of T70 from these. Positions are built through the public API
only: take ``to_json()`` of a real state, rewrite its ``"state"`` dict and load it with
``State.from_json``.
"""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

from tabletop_rl.envs.core.game import TERMINAL
from tabletop_rl.envs.core.game import State as BaseState
from tabletop_rl.envs.torres import Game, State

# T71
MOVE_FROM, ADD_KNIGHT, PLACE_BLOCK, SELECT, STACK = 0, 64, 128, 192, 256
STACK_CURRENT, ACQUIRE, PLAY_CARD, KEEP, RETURN_TOP, RETURN_BOTTOM = 260, 261, 262, 272, 282, 292
SCORE_STEP, END_TURN, PASS = 302, 303, 304
# T38
JUMP_UP_TWO, BLOCK_UNDER_KNIGHT, EXTRA_BLOCK, DOOR_CLIMB, DIAGONAL_MOVE, AP_6, AP_7, MOVE_BLOCK = range(8)
RELOCATE_KNIGHT, JUMP_OVER = 8, 9
SEATS = "RBGY"


def sq(r: int, c: int) -> int:
    """T1: square index of (r, c)."""
    return 8 * r + c


def rc(s: int) -> tuple[int, int]:
    return divmod(s, 8)


def _orth(s: int) -> tuple[int, ...]:
    r, c = rc(s)
    return tuple(sq(r + dr, c + dc) for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1))
                 if 0 <= r + dr < 8 and 0 <= c + dc < 8)


ORTH = [_orth(s) for s in range(64)]


def orth(s: int) -> tuple[int, ...]:
    """T1: the orthogonally adjacent squares."""
    return ORTH[s]


def diag(s: int) -> list[int]:
    r, c = rc(s)
    return [sq(r + dr, c + dc) for dr in (-1, 1) for dc in (-1, 1) if 0 <= r + dr < 8 and 0 <= c + dc < 8]


# ===================================================================== reference geometry (T2, T25–T31, T40–T48)
def components(h: list[int]) -> list[set[int]]:
    """T2: castles as maximal orthogonally connected sets of squares with h ≥ 1, in scan order."""
    seen: set[int] = set()
    out = []
    for s in range(64):
        if h[s] and s not in seen:
            group, todo = {s}, [s]
            while todo:
                x = todo.pop()
                for y in ORTH[x]:
                    if h[y] and y not in group:
                        group.add(y)
                        todo.append(y)
            seen |= group
            out.append(group)
    return out


def castle_of(h: list[int]) -> dict[int, frozenset[int]]:
    """Square → its castle (as a frozenset of squares)."""
    out = {}
    for group in components(h):
        frozen = frozenset(group)
        for s in group:
            out[s] = frozen
    return out


def occupied(state: State) -> set[int]:
    return {s for ks in state.knights for s in ks} | ({state.king} if state.king >= 0 else set())


def ref_block_targets(h: list[int], taken: set[int]) -> set[int]:
    """T31: empty; raise within the area, or a ground square touching exactly one castle."""
    castle = castle_of(h)
    out = set()
    for t in range(64):
        if t in taken:
            continue
        if h[t]:
            if h[t] + 1 <= len(castle[t]):
                out.add(t)
        elif len({castle[x] for x in orth(t) if h[x]}) == 1:
            out.add(t)
    return out


def ref_door_targets(h: list[int], taken: set[int], a: int, climb: bool = False) -> set[int]:
    """T28 (and T43 with ``climb``): exits facing a door of a castle enterable at the knight's level."""
    castle = castle_of(h)
    level = h[a]
    out = set()
    for b in orth(a):
        if h[b] >= level + 1:
            group = castle[b]
            for c in range(64):
                if c == a or c in taken or (h[c] > level and not climb):
                    continue
                if any(d in group and h[d] >= h[c] + 1 for d in orth(c)):
                    out.add(c)
    return out


def ref_tunnel_targets(h: list[int], taken: set[int], a: int) -> set[int]:
    """T29: T(s) by fixed-point iteration over the castle; exits at most T(s) next to s."""
    castle = castle_of(h)
    level = h[a]
    out = set()
    for b in orth(a):
        if h[b] < level + 1:
            continue
        group = castle[b]
        entries = [e for e in orth(a) if e in group and h[e] >= level + 1]
        tunnel = {s: -1 for s in group}
        for e in entries:
            tunnel[e] = max(tunnel[e], min(level, h[e] - 1))
        changed = True
        while changed:
            changed = False
            for s in group:
                for y in orth(s):
                    if y in group and tunnel[y] >= 0 and min(tunnel[y], h[s] - 1) > tunnel[s]:
                        tunnel[s] = min(tunnel[y], h[s] - 1)
                        changed = True
        for c in range(64):
            if c != a and c not in taken and any(y in group and tunnel[y] >= 0 and h[c] <= tunnel[y]
                                                 for y in orth(c)):
                out.add(c)
    return out


def ref_move_targets(state: State, a: int) -> set[int]:
    """T26: steps (T27) and door targets (T28 or T29)."""
    h, taken = list(state.board.h), occupied(state)
    steps = {c for c in orth(a) if c not in taken and h[c] <= h[a] + 1}
    doors = ref_tunnel_targets(h, taken, a) if state.game.options["door_model"] == "monotone_tunnel" \
        else ref_door_targets(h, taken, a)
    return steps | doors


def ref_add_targets(h: list[int], taken: set[int], knights: list[int]) -> set[int]:
    """T25: empty, next to one of ``knights`` standing at a level ≥ h(t)."""
    return {t for t in range(64) if t not in taken and any(k in orth(t) and h[k] >= h[t] for k in knights)}


def ref_move_block_targets(h: list[int], taken: set[int], s: int) -> set[int]:
    """T46 by building B′ and the final board of every target."""
    if not h[s] or s in taken:
        return set()
    before = castle_of(h)[s]
    lifted = list(h)
    lifted[s] -= 1
    if h[s] == 1:
        rest = before - {s}
        if rest and not any(rest == group for group in map(frozenset, components(lifted))):
            return set()  # (b): the castle would split
    castles_after_lift = components(lifted)
    out = set()
    for t in range(64):
        if t == s or t in taken:
            continue
        if not lifted[t] and len({frozenset(g) for g in castles_after_lift if set(orth(t)) & g}) > 1:
            continue  # (c): a ground square touching two castles
        final = list(lifted)
        final[t] += 1
        groups = components(final)
        if len(groups) >= 6 and all(max(final[x] for x in g) <= len(g) for g in groups):
            out.add(t)
    return out


def ref_under_knight_ok(h: list[int], a: int) -> bool:
    """T41 (a)/(b)."""
    if h[a]:
        return h[a] + 1 <= len(castle_of(h)[a])
    castle = castle_of(h)
    return len({castle[x] for x in orth(a) if h[x]}) <= 1


def ref_card_targets(state: State, card: int, a: int) -> set[int]:
    """D8 of a knight card from a (T40, T43, T44, T47, T48)."""
    g = state.game
    h, taken = list(state.board.h), occupied(state)
    p = state.current_player
    if card == JUMP_UP_TWO:
        exact = g.options["jump_up_two"] == "exact"
        return {c for c in orth(a) if c not in taken and (h[c] == h[a] + 2 if exact else h[c] <= h[a] + 2)}
    if card == DOOR_CLIMB:
        return ref_door_targets(h, taken, a, climb=True)
    if card == DIAGONAL_MOVE:
        return {c for c in diag(a) if c not in taken and h[c] <= h[a] + 1}
    if card == RELOCATE_KNIGHT:
        return ref_add_targets(h, taken, [k for k in state.knights[p] if k != a])
    if card == JUMP_OVER:
        knights = {s for ks in state.knights for s in ks}
        out = set()
        for mid in orth(a):
            land = 2 * mid - a
            if mid in knights and 0 <= land < 64 and land in orth(mid) and rc(land)[0] - rc(mid)[0] == \
                    rc(mid)[0] - rc(a)[0] and land not in taken and h[land] <= h[a] + 1:
                out.add(land)
        return out
    if card == EXTRA_BLOCK:
        return ref_block_targets(h, taken)
    return ref_move_block_targets(h, taken, a)


def ref_card_playable(state: State, card: int) -> bool:
    """T34: at least one complete legal resolution."""
    p = state.current_player
    h, taken = list(state.board.h), occupied(state)
    if card in (AP_6, AP_7):
        return True
    if card == EXTRA_BLOCK:
        return state.supply > 0 and bool(ref_block_targets(h, taken))
    if card == BLOCK_UNDER_KNIGHT:
        return (state.turn_stack > 0 or bool(state.stacks[p])) and any(ref_under_knight_ok(h, a)
                                                                       for a in state.knights[p])
    if card == MOVE_BLOCK:
        return any(ref_move_block_targets(h, taken, s) for s in range(64))
    return any(ref_card_targets(state, card, a) for a in state.knights[p])


def _lowest_of_each_size(stacks: list[int], room_only: bool = False) -> list[int]:
    return [STACK + k for k in range(len(stacks)) if (k == 0 or stacks[k] != stacks[k - 1])
            and (not room_only or stacks[k] < 3)]


def expected_legal(state: State) -> list[int]:
    """T70's masks from the reference rules."""
    g = state.game
    o = g.options
    p = state.current_player
    h, taken = list(state.board.h), occupied(state)
    d = state.phase.split()[0]
    if d == "D1":
        return [SELECT + s for s in range(64) if all(abs(rc(s)[0] - rc(q)[0]) + abs(rc(s)[1] - rc(q)[1]) >= 3
                                                     for q in state.start_squares)]
    if d in ("D2", "D3"):
        return sorted(SELECT + s for s in state.start_squares if s not in taken)
    if d == "D3a":
        return _lowest_of_each_size(state.stacks[p])
    if d == "D4":
        out = []
        ap = state.ap
        if ap >= 1:
            out += [MOVE_FROM + a for a in sorted(state.knights[p]) if ref_move_targets(state, a)]
        if ap >= 2 and state.in_supply[p]:
            out += [ADD_KNIGHT + t for t in sorted(ref_add_targets(h, taken, state.knights[p]))]
        if ap >= 1 and state.turn_stack > 0:
            out += [PLACE_BLOCK + t for t in sorted(ref_block_targets(h, taken))]
        deck = [] if o["action_deck"] == "master" else state.decks[p if o["action_deck"] == "personal" else 0]
        if ap >= 1 and o["action_deck"] != "master" and state.acquired < 2 and deck:
            out.append(ACQUIRE)
        if not state.card_played:
            out += [PLAY_CARD + x for x in range(10)
                    if state.hands[p][x] - state.fresh[p][x] > 0 and ref_card_playable(state, x)]
        if ap >= 1:
            out.append(SCORE_STEP)
        return out + [END_TURN]
    if d == "D4a":
        return [SELECT + c for c in sorted(ref_move_targets(state, state.selected))]
    if d == "D5":
        return [KEEP + x for x in sorted(state.looked)]
    if d == "D6":
        return [RETURN_TOP + x for x in sorted(state.looked)] + [RETURN_BOTTOM + x for x in sorted(state.looked)]
    if d == "D7":
        card = state.card
        if card == MOVE_BLOCK:
            return [SELECT + s for s in range(64) if ref_move_block_targets(h, taken, s)]
        if card == BLOCK_UNDER_KNIGHT:
            return [SELECT + a for a in sorted(state.knights[p]) if ref_under_knight_ok(h, a)]
        return [SELECT + a for a in sorted(state.knights[p]) if ref_card_targets(state, card, a)]
    if d == "D8":
        return [SELECT + t for t in sorted(ref_card_targets(state, state.card, state.selected))]
    if d == "D9":
        return _lowest_of_each_size(state.stacks[p]) + ([STACK_CURRENT] if state.turn_stack > 0 else [])
    if d == "D11":
        return _lowest_of_each_size(state.stacks[p], room_only=True) + ([] if o["forced_redistribution"] else [PASS])
    assert d == "D12", d
    castle = castle_of(h)
    home = castle[state.king]
    any_castle = o["king_move_scope"] == "any_castle"
    return [SELECT + s for s in range(64) if h[s] and s not in taken and (any_castle or castle[s] != home)] + [PASS]


# ===================================================================== scenario builder
def parse_board(rows: list[str]) -> tuple[list[int], dict[int, list[int]], int]:
    """Rows of whitespace-separated cells, top row first, missing cells ground: ``.`` ground, a number the
    height, followed by a piece letter R/B/G/Y (seats 0–3) or K (king), e.g. ``2R`` or ``.B``."""
    h = [0] * 64
    knights: dict[int, list[int]] = {}
    king = -1
    for r, row in enumerate(rows):
        for c, cell in enumerate(row.split()):
            s = sq(r, c)
            digits = "".join(ch for ch in cell if ch.isdigit())
            h[s] = int(digits) if digits else 0
            piece = cell[-1]
            if piece == "K":
                king = s
            elif piece in SEATS:
                knights.setdefault(SEATS.index(piece), []).append(s)
    return h, knights, king


def build(rows: list[str], options: dict[str, Any] | None = None, *, player: int = 0, ap: int = 5,
          turn_stack: int = 3, stacks: dict[int, list[int]] | None = None,
          hands: dict[int, dict[int, int]] | None = None, fresh: dict[int, dict[int, int]] | None = None,
          scores: list[int] | None = None, phase: int = 1, round_: int = 1, decision: str = "D4", seed: int = 0,
          castle_ids: list[list[int]] | None = None, **state_fields: Any) -> State:
    """A state of ``options`` with this board, ``player`` to act in ``decision`` (default D4) of phase
    ``phase``, round ``round_``. Castle ids follow scan order of each castle's first square unless
    ``castle_ids`` lists the squares of id 0, 1, …. Unplaced blocks stay in the supply; hands are taken
    out of the deck(s) (every card stays in exactly one place, I9); other fields of the state dict may be
    overridden through ``state_fields``."""
    game = Game(**(options or {}))
    n = game.num_players
    base = game.new_initial_state(seed)
    d = json.loads(base.to_json())
    h, knights, king = parse_board(rows)
    groups = [sorted(g) for g in components(h)] if castle_ids is None else castle_ids
    cid = [-1] * 64
    for i, group in enumerate(groups):
        for s in group:
            cid[s] = i
    assert all((cid[s] >= 0) == (h[s] > 0) for s in range(64)), "castle_ids must cover the castle squares"
    stacks_ = [sorted((stacks or {}).get(q, []), reverse=True) for q in range(n)]
    hand_rows = [[0] * 10 for _ in range(n)]
    for q, cards in (hands or {}).items():
        for t, k in cards.items():
            hand_rows[q][t] = k
    fresh_rows = [[0] * 10 for _ in range(n)]
    for q, cards in (fresh or {}).items():
        for t, k in cards.items():
            fresh_rows[q][t] = k
    st = d["state"]
    decks = st["decks"]
    if game.options["action_deck"] == "common":
        deck = list(decks[0])
        for q in range(n):
            for t in range(10):
                for _ in range(hand_rows[q][t]):
                    deck.remove(t)
        decks = [deck]
    elif game.options["action_deck"] == "personal":
        decks = [[t for t in deck if not hand_rows[q][t]] for q, deck in enumerate(decks)]
    else:
        hand_rows = [[int(t < game.card_types) for t in range(10)] for _ in range(n)] if hands is None else hand_rows
    used = sum(h) + sum(map(sum, stacks_)) + max(turn_stack, 0)
    st.update(
        h=h, cid=cid, next_id=len(groups), knights=[sorted(knights.get(q, [])) for q in range(n)],
        in_supply=[6 - len(knights.get(q, [])) for q in range(n)], king=king, supply=92 - used,
        stacks=stacks_, turn_stack=turn_stack, ap=ap, card_played=False, acquired=0, hands=hand_rows,
        fresh=fresh_rows, played=[[0] * 10 for _ in range(n)], decks=decks, looked=[], card=-1, selected=-1,
        leftover=0, phase_no=phase, round_no=round_, turn_no=0, round_start=player, phase_start=0,
        king_mover=-1, score=scores or [0] * n, current_player=player, start_squares=[],
        decision=DECISIONS.index(decision), score_log=[])
    st.update(state_fields)
    state = BaseState.from_json(json.dumps(d))
    assert isinstance(state, State)
    return state


DECISIONS = ("D1", "D2", "D3", "D3a", "D4", "D4a", "D5", "D6", "D7", "D8", "D9", "D11", "D12")


def edited(state: State, **state_fields: Any) -> State:
    """A copy of ``state`` with these fields of its JSON state dict replaced."""
    d = json.loads(state.to_json())
    d["state"].update(state_fields)
    return BaseState.from_json(json.dumps(d))


def play(state: State, *names: str) -> State:
    """Apply actions by name (``"move from (3,3)"``, ``"select (2,3)"``…), each checked legal; the state."""
    for name in names:
        state.apply_action(state.string_to_action(name))
    return state


def name(s: int) -> str:
    return f"({s // 8},{s % 8})"


# ===================================================================== invariants (§14)
def check_conservation(s: State) -> None:
    """I1: every block, I2: every knight, I9: every card in exactly one place (one of each type per colour
    outside the common deck), and no more returned cards in a personal deck than it holds."""
    g = s.game
    on_stacks = sum(map(sum, s.stacks)) + max(s.turn_stack, 0) + s.leftover
    assert sum(s.board.h) + s.supply + on_stacks == 92 and s.supply >= 0, "I1: blocks"
    assert all(len(k) + supply == 6 for k, supply in zip(s.knights, s.in_supply, strict=True)), "I2: knights"
    m = g.card_types  # per type: 4 in all (common), 1 per colour; none of the types left out (T38)
    copies = [4 if g.common else 1] * m + [0] * (10 - m)
    fresh, hands = [x for row in s.fresh for x in row], [x for row in s.hands for x in row]
    assert all(f <= k for f, k in zip(fresh, hands, strict=True)), "I9: more fresh cards than cards"
    if g.common:
        total = list(map(sum, zip(*s.hands, *s.played, strict=True)))
        for t in s.decks[0]:
            total[t] += 1
        assert total == copies, f"I9: common cards {total}"
        return
    for p in range(g.num_players):
        own = list(map(sum, zip(s.hands[p], s.played[p], strict=True)))
        for t in (s.decks[p] if g.personal else []) + (s.looked if p == s.current_player else []):
            own[t] += 1
        assert own == copies, f"I9: cards of seat {p}: {own}"
        seen = (s.returned_top[p], s.returned_bottom[p])  # T32(b): the returned cards still in the deck
        assert min(seen) >= 0 and sum(seen) <= (len(s.decks[p]) if g.personal else 0), f"I9: seat {p} returned {seen}"


class Checker:
    """I1–I15. ``position`` looks at one state (also every ``sample_hidden`` result); ``transition`` follows
    one game action by action (I4's castle count, I5, I8, I9's per-turn limits, I10, I13, I14). With
    ``masks=True`` every mask is compared with :func:`expected_legal`; every ``observation_every``-th position
    the incrementally kept observation vectors are compared with those of a copy loaded from JSON (written
    from scratch), and every ``apply_every``-th position every legal action is applied to a clone (I11)."""

    def __init__(self, game: Game, masks: bool = False, observation_every: int = 5, apply_every: int = 100):
        self.game = game
        self.n = game.num_players
        self.masks = masks
        self.observation_every = observation_every
        self.apply_every = apply_every
        self.live: State | None = None
        self.games = self.turns_seen = self.positions = 0
        self.board_key: tuple | None = None
        self.castle_count = 0

    @staticmethod
    def snapshot(state: State) -> SimpleNamespace:
        """What :meth:`transition` needs of the position before an action (cheaper than a clone)."""
        return SimpleNamespace(
            score=list(state.score), h=list(state.board.h), castles=state.board.castle_count(), king=state.king,
            knights=[list(k) for k in state.knights], phase=state.phase, card=state.card,
            current_player=state.current_player, hands=[list(x) for x in state.hands],
            fresh=[list(x) for x in state.fresh], card_played=state.card_played)

    def position(self, s: State) -> None:
        n, o = self.n, self.game.options
        b = s.board
        h, cid = b.h, b.cid
        check_conservation(s)
        if s.phase_no:
            assert all(1 <= len(k) <= 6 for k in s.knights), "I2: knights after setup"
        key = (tuple(h), tuple(cid))
        if key != self.board_key:  # most actions move no block: check the castles when the blocks changed
            self.board_key = key
            self.castle_count = len(self._castles(s))
        if s.phase_no:
            assert self.castle_count >= 6, "I4: fewer than 6 castles"
        pieces = [x for ks in s.knights for x in ks] + ([s.king] if s.king >= 0 else [])
        assert len(pieces) == len(set(pieces)), "I5: two pieces on a square"
        assert all(b.occ[x] == p for p in range(n) for x in s.knights[p]), "I5: occupants"
        assert sum(x != -1 for x in b.occ) == len(pieces), "I5: occupants"
        if s.phase_no:
            assert s.king >= 0 and h[s.king] >= 1, "I5: the king stands on a castle"
        assert 0 <= s.ap <= 7, "I6: AP"
        assert -1 <= s.turn_stack <= 3, "I7: turn's stack"
        for p in range(n):
            assert all(1 <= x <= 3 for x in s.stacks[p]) and s.stacks[p] == sorted(s.stacks[p], reverse=True), "I7"
            if s.phase_no and not s.is_terminal():
                has_turn_stack = s.turn_stack >= 0 and p == s.current_player
                assert len(s.stacks[p]) + has_turn_stack <= self._turns_left(s, p), "I7: more stacks than turns"
        if s.is_terminal() or s.phase.startswith("D12"):
            assert not any(s.stacks), "I7: stacks after the clean-up (T20)"
        positive = [x for x in s.score if x > 0]
        assert len(positive) == len(set(positive)), "I8: two positive scores equal"
        self.positions += 1
        if self.observation_every and self.positions % self.observation_every == 0:
            fresh = BaseState.from_json(s.to_json())
            for p in range(n):
                assert (fresh.observation(p) == s.observation(p)).all(), "the kept observation drifted"
        if s.is_terminal():
            return
        legal = s.legal_actions()
        assert legal, "I11: no legal action"
        if self.masks:
            expected = expected_legal(s)
            assert legal == expected, f"mask of {s.phase}: {legal} != reference {expected}\n{s.render_text()}"
        if self.apply_every and self.positions % self.apply_every == 0:
            for a in legal:
                s.clone().apply_action(a)  # I11: raises if a legal id does not apply
        decision = s.phase.split()[0]
        if o["auto_resolve_forced"] and decision in ("D1", "D2", "D3", "D3a", "D4a", "D7", "D8", "D9", "D11", "D12"):
            assert len(legal) >= 2, f"I15: a forced {s.phase} was exposed"
        if decision == "D4":
            assert not any(STACK <= a <= STACK_CURRENT for a in legal), "I13: STACK in D4"
        if decision == "D4a":
            assert legal and all(SELECT <= a < STACK for a in legal), "I11: D4a offers a SELECT"

    @staticmethod
    def _castles(s: State) -> list[set[int]]:
        """I3, I4: each castle (component) carries one id of its own, the engine's area, height ≤ area."""
        b = s.board
        h, cid = b.h, b.cid
        groups = components(h)
        seen_ids = set()
        for group in groups:
            ids = {cid[x] for x in group}
            assert len(ids) == 1, f"I4: one castle, several ids {ids}"
            c = ids.pop()
            assert c not in seen_ids and 0 <= c < 16, "I4: an id on two castles"
            seen_ids.add(c)
            assert max(h[x] for x in group) <= len(group), "I3: height above area"
            assert b.area(c) == len(group)
        assert all(c == -1 for c, height in zip(cid, h, strict=True) if not height), "I4: a ground square with an id"
        return groups

    def _turns_left(self, s: State, p: int) -> int:
        """Turns p still has in this phase, the current one included."""
        n = self.n
        rounds_left = self.game.rounds[s.phase_no - 1] - s.round_no
        order = [(s.round_start + i) % n for i in range(n)]
        return rounds_left + (p in order[s.turn_no:])

    def transition(self, before: SimpleNamespace, a: int, after: State) -> None:
        """Checks across one action; ``before`` is a :meth:`snapshot` of the position before."""
        if after is not self.live:
            self.live = after
            self.games += 1
            self.turns = [0] * self.n
            self.placed = self.card_blocks = 0
            self.turn_id = None
        assert all(y >= x for x, y in zip(before.score, after.score, strict=True)), "I8: a score decreased"
        ah = after.board.h
        if before.king >= 0 and after.king == before.king:
            assert ah[after.king] == before.h[before.king], "I5: the king's square changed height"
        # the card whose effect this action (with forced follow-ups, T69) may have completed
        card = a - PLAY_CARD if before.phase.startswith("D4 ") and PLAY_CARD <= a < KEEP else before.card
        occupied_before = {x for ks in before.knights for x in ks} | {before.king}
        for x in occupied_before:
            if x >= 0 and ah[x] > before.h[x]:
                assert card == BLOCK_UNDER_KNIGHT and x in before.knights[before.current_player], \
                    "I5: a block under a piece"
        if before.castles != after.board.castle_count():
            assert before.phase.startswith("D1") or card in (BLOCK_UNDER_KNIGHT, MOVE_BLOCK), \
                f"I4: castle count changed in {before.phase}"
        turn = (after.phase_no, after.round_no, after.turn_no)
        if after.phase_no and turn != self.turn_id and not after.is_terminal():
            if after.phase.split()[0] in ("D3a", "D4", "D4a", "D5", "D6", "D7", "D8", "D9", "D11"):
                self.turn_id = turn
                self.turns[after.current_player] += 1
                self.placed = self.card_blocks = 0
                if after.phase.startswith("D4 ") and after.turn_stack < 0:
                    assert not after.stacks[after.current_player], "I13: a turn skipped its stack choice"
        if before.phase.startswith("D4 ") and PLACE_BLOCK <= a < SELECT:
            self.placed += 1
            assert self.placed <= 3, "I14: more than 3 stack blocks in a turn"
        if after.phase_no and not PLACE_BLOCK <= a < SELECT and sum(ah) > sum(before.h):
            self.card_blocks += 1
            assert self.card_blocks <= 1, "I14: more than 1 card block in a turn"
        if before.phase.startswith("D4 ") and PLAY_CARD <= a < KEEP:
            p = before.current_player
            assert not before.card_played and before.hands[p][a - PLAY_CARD] > before.fresh[p][a - PLAY_CARD], \
                "I9: a fresh card or a second card played"
        assert after.acquired <= 2, "I9: more than 2 cards acquired"
        if after.current_player == TERMINAL:
            expected = 12 if self.n == 2 else 10
            assert self.turns == [expected] * self.n, f"I10: turns {self.turns}"
            self.turns_seen += sum(self.turns)
