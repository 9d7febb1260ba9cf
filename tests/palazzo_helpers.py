"""Reference rules, the invariant checker and scenario builders for the Palazzo tests
(``docs/rules/palazzo.md``).

The reference functions are written from the spec, not from the engine: the tile table (P4), scoring
(P61), the reach formula (P22, P23a) as printed, every decision's mask (P72, with P23/P23a for payments)
and the invariants I1–I17. Positions are made only through the public API: take ``to_json()`` of a real
state, rewrite its ``"state"`` dict and load it with ``State.from_json``.
"""

from __future__ import annotations

import json
from functools import cache, lru_cache
from operator import le
from types import SimpleNamespace
from typing import Any

import numpy as np

from tabletop_rl.envs.core.game import TERMINAL, State
from tabletop_rl.envs.palazzo import Game, observation

# ===================================================================== components (P2, P4, P73)
CURRENCIES = "ABC"
KIND = {f"{c}{v}": 5 * i + v - 3 for i, c in enumerate(CURRENCIES) for v in range(3, 8)} | {"Z": 15}
COPIES = [3] * 15 + [10]
J_TABLE = ["1.1", "1.2", "1.3", "2.1", "2.2", "2.3", "3.1", "3.1", "3.2", "3.3", "4.1", "4.2", "4.3", "5.1", "5.2",
           "5.3"]  # P4
MATERIALS = "bsm"
RIDER = 48
TAKE_MONEY, TILES, RECONSTRUCT, BUY, AUCTION = 0, 1, 2, 3, 4
DONE, PASS, DEST_NEW, DEST_DISCARD = 75, 76, 125, 126
# P7, A1 by_floor, as listed in the spec
BY_FLOOR_STACKS = (list(range(0, 6)) + list(range(16, 22)) + list(range(32, 36)),
                   list(range(6, 12)) + list(range(22, 26)) + list(range(36, 42)),
                   list(range(12, 16)) + list(range(26, 32)) + list(range(42, 48)))


def material(t: int) -> int:
    return t // 16


def floor(t: int) -> int:
    return int(J_TABLE[t % 16][0])


def windows(t: int) -> int:
    return int(J_TABLE[t % 16][2])


def tile(name: str, nth: int = 0) -> int:
    """Tile id of ``b3.1`` (the ``nth`` of identical twins)."""
    m = MATERIALS.index(name[0])
    return 16 * m + [j for j, x in enumerate(J_TABLE) if x == name[1:]][nth]


def card(name: str) -> int:
    """Action CARD(k) / ADD_CARD(k) of a card name (P73)."""
    return 53 + KIND[name]


def group(value: int | str) -> int:
    """Action ADD_GROUP(v), or ADD_GROUP(Z) for ``"Z"`` (P73)."""
    return 74 if value == "Z" else 66 + value


def tile_action(t: int) -> int:
    return 5 + t


def dest(slot: int) -> int:
    return 77 + slot


def counts(names: list[str] | str) -> list[int]:
    """16 kind counts of card names (``"A5 A5 Z"`` or a list)."""
    out = [0] * 16
    for name in names.split() if isinstance(names, str) else names:
        out[KIND[name]] += 1
    return out


# ===================================================================== reference rules
@cache
def ref_palace(palace: tuple[int, ...]) -> int | None:
    """P61's score of a palace that satisfies I5 (non-empty, floors strictly rising, at most 5 tiles); None
    for an invalid one."""
    floors = [floor(t) for t in palace]
    if not palace or floors != sorted(set(floors)) or len(palace) > 5:
        return None
    return ref_score(list(palace))


def ref_score(palace: list[int]) -> int:
    """P61."""
    t = len(palace)
    w = sum(windows(x) for x in palace)
    mono = len({material(x) for x in palace}) == 1
    return {1: -5, 2: 0, 3: w + 3 * mono, 4: w + 3 + 3 * mono, 5: w + 6 + 6 * mono}[t]


@lru_cache(maxsize=1 << 16)
def _ref_reach(hand: tuple[int, ...], c: int, a: int) -> int:
    return ref_reach(hand, c, a)


def ref_reach(hand: list[int] | tuple[int, ...], c: int, a: int = 0) -> int:
    """R_a(H, c) exactly as P23a prints it (R_0 = R of P22); c = -1: the maximum over the currencies."""
    if c < 0:
        return max(ref_reach(hand, x, a) for x in range(3))

    def h(x: int, v: int) -> int:
        return hand[5 * x + v - 3]

    z = hand[15]
    total = 15 * (z // 3) + 2 * (z % 3) * (68 >= a)
    for v in range(3, 8):
        g = min(h(x, v) for x in range(3))
        total += 15 * g * (66 + v >= a) + v * (h(c, v) - g) * (50 + 5 * c + v >= a)
    return total


def ref_best_pay(hand: list[int]) -> int:
    """P24."""
    return _ref_reach(tuple(hand), -1, 0)


def unit_cards(b: int) -> list[int]:
    """Kinds a unit takes from the hand (P21)."""
    if b <= 68:
        return [b - 53]
    if b == 74:
        return [15, 15, 15]
    return [b - 69, b - 64, b - 59]


def unit_value(b: int) -> int:
    """P16, P18."""
    if b == 68:
        return 2
    return 3 + (b - 53) % 5 if b < 68 else 15


def unit_currency(b: int) -> int:
    """The currency a single currency card fixes (P17); -1 for certificates and groups."""
    return (b - 53) // 5 if b < 68 else -1


@lru_cache(maxsize=1 << 16)
def ref_payment_units(hand: tuple[int, ...], value: int, c: int, a: int, target: int, canonical: bool) -> list[int]:
    """P23 / P23a: the unit ids that may be added to a payment of value V, currency c (−1 unset), last unit a."""
    out = []
    for b in range(53, 75):
        rest = list(hand)
        for k in unit_cards(b):
            rest[k] -= 1
        if min(rest) < 0 or (canonical and b < a):
            continue
        cur = unit_currency(b)
        if cur >= 0 and c >= 0 and cur != c:
            continue
        new_c = cur if cur >= 0 else c
        if value + unit_value(b) + _ref_reach(tuple(rest), new_c, b if canonical else 0) >= target:
            out.append(b)
    return out


def expected_legal(s: State) -> list[int]:
    """P72's masks for the decision ``s`` asks, written out from the spec."""
    g, n, p = s.game, s.game.num_players, s.current_player
    canonical = g.options["canonical_order"]
    hand = s.hands[p]
    d = s.decision
    if d == 1:  # P12
        out = [TILES]
        if len(s.deck) + sum(s.discard) >= n + 1:
            out.append(TAKE_MONEY)
        if sum(hand) >= 1 and s.palaces[p]:
            out.append(RECONSTRUCT)
        return sorted(out)
    if d == 2:  # P27
        shown = [k for k in range(16) if s.display[k]]
        out = [53 + k for k in shown]
        if canonical and p == s.active and len(s.pickers) == n + 1:
            out = [53 + k for k in shown if s.display[k] >= 2 or any(x > k for x in shown)]
        elif canonical and p == s.active and len(s.pickers) == n:
            out = [53 + k for k in shown if k >= s.first_pick]
        return out
    price = max(g.options["min_tile_price"], 10 - len(s.supply))
    if d == 3:  # P35, P36
        return [BUY, AUCTION] if s.supply and ref_best_pay(hand) >= price else [AUCTION]
    if d == 4:  # P37
        if not s.selected:
            return [5 + t for t in sorted(s.supply)]
        first = s.selected[0]
        out = []
        if ref_best_pay(hand) >= 2 * s.price:
            out = [5 + t for t in sorted(s.supply) if t != first and (t > first or not canonical)]
        return out + [DONE]
    if d in (5, 6):  # P23, P23a, P44, P45
        a = s.pay_last if s.step_units else 0
        out = ref_payment_units(tuple(hand), s.pay_value, s.pay_currency, a, s.pay_target, canonical)
        if d == 6 and not s.step_units:
            return out + [PASS]
        return out + [DONE] if s.pay_value >= s.pay_target else out
    if d == 7:  # P41
        return [5 + t for t in sorted(s.quarries[s.mb])]
    if d == 8:  # P51
        t = s.pending[0]
        return [77 + i for i, pal in enumerate(s.palaces[p]) if floor(pal[-1]) < floor(t)] + [DEST_NEW, DEST_DISCARD]
    if d == 9:  # P56
        return sorted(5 + t for pal in s.palaces[p] for t in pal)
    if d == 10:  # P56, P58, P59
        t = s.recon_tile
        slot = next(i for i, pal in enumerate(s.palaces[p]) if t in pal)
        if len(s.palaces[p][slot]) >= 2:
            return [DEST_NEW]
        out = [77 + i for i, pal in enumerate(s.palaces[p]) if i != slot and all(floor(x) != floor(t) for x in pal)]
        if g.options["allow_noop_reconstruct"]:
            out.append(DEST_NEW)
        return out + [DEST_DISCARD]
    return [53 + k for k in range(16) if hand[k]]  # D11, P57


# ===================================================================== the invariants (§13)
def money_locations(s: State) -> list[int]:
    """I1: every copy of every kind, wherever it is."""
    total = [sum(x) for x in zip(s.discard, s.display, s.payment, *s.hands, *s.bids, strict=True)]
    for k in s.deck:
        total[k] += 1
    return total


def tile_places(s: State) -> list[int]:
    """I3: how many places hold each tile id (each must be exactly one)."""
    seen = [0] * 48
    places = [*s.stacks, s.supply, *s.quarries, s.pending, s.removed,
              *(pal for pals in s.palaces for pal in pals)]
    for place in places:
        for t in place:
            if t != RIDER:
                seen[t] += 1
    for t in s.pending:  # pending tiles have left the supply / quarry already
        assert t not in s.supply and all(t not in q for q in s.quarries)
    return seen


def snapshot(s: State) -> SimpleNamespace:
    """What :meth:`PalazzoChecker.transition` reads of the state before a step, much cheaper than a clone."""
    return SimpleNamespace(
        decision=s.decision, current_player=s.current_player, active=s.active, turn=s.turn, mb=s.mb,
        where=list(s.where), stack_sizes=[len(x) for x in s.stacks], quarries=[list(q) for q in s.quarries],
        pay_last=s.pay_last, step_units=s.step_units, selected=list(s.selected), first_pick=s.first_pick,
        pickers=len(s.pickers), high=s.high, pay_value=s.pay_value, known=[list(k) for k in s.known],
        unknown=[sum(h) - sum(k) for h, k in zip(s.hands, s.known, strict=True)])


class PalazzoChecker:
    """§13 invariants. ``position`` checks one state (also every ``sample_hidden`` result), ``transition``
    one step of a game (I6–I9, I11, I17, P70a). Masks are compared with :func:`expected_legal` everywhere."""

    AUTO = {1, 2, 7, 8, 9, 10}

    def __init__(self, game: Game, observation_every: int = 1):
        """``observation_every``: check the observation in full at every k-th position (it is the slow part)."""
        self.game = game
        self.observation_every = observation_every
        self.bounds = game.layout.bounds()
        self.n = game.num_players
        self.options = game.options
        self.live: State | None = None
        self.positions = self.transitions = 0
        self.seen_decisions: set[int] = set()

    # ----------------------------------------------------------------- one position
    def position(self, s: State) -> None:
        n, o = self.n, self.options
        self.positions += 1
        assert money_locations(s) == COPIES, "I1: money is not conserved"
        assert s.x3_out == (s.in_auction and not s.passed[s.active]), "I2: X3"
        assert tile_places(s) == [1] * 48, "I3: a tile is not in exactly one place"
        assert all(t in s.supply for t in s.selected), "I3: selected tiles stay on the supply until paid"
        riders = s.stacks[2].count(RIDER)
        assert riders + s.riders == 5 and RIDER not in s.stacks[0] + s.stacks[1], "I4: riders"
        assert (s.riders == 5) == (s.is_terminal() and not s.is_truncated()), "I4: game over iff 5 riders"
        for p in range(n):
            scores = [ref_palace(tuple(pal)) for pal in s.palaces[p]]
            assert None not in scores, f"I5: palaces {s.palaces[p]}"
            assert all(x in (-5, 0) or 3 <= x <= 27 for x in scores), "I14"
            assert s.score(p) == sum(scores), "P62: score"
            assert all(map(le, s.known[p], s.hands[p])) and min(s.known[p]) >= 0, "I15: K_q ⊆ hand_q"
            assert sum(s.hands[p]) - sum(s.known[p]) <= 4, "P70a: only dealt cards are unknown"
            if s.passed[p]:
                assert not any(s.bids[p]) and s.bid_value[p] == 0, "I9: a passed player holds no bid"
        if self.positions % self.observation_every == 0 or s.is_terminal():
            self._check_observation(s)
        if s.is_terminal():
            assert s.legal_actions() == []
            return
        assert s.stacks[2], "I6: stack III is empty while the game runs"
        legal = s.legal_actions()
        assert legal == expected_legal(s), f"P72: {s.phase} mask {legal} != {expected_legal(s)}\n{s}"
        self.seen_decisions.add(s.decision)
        if s.decision in (5, 6) and (s.decision == 5 or s.step_units):  # I10
            a = s.pay_last if o["canonical_order"] else 0
            reach = s.pay_value + ref_reach(s.hands[s.current_player], s.pay_currency, a)
            assert reach >= s.pay_target, "I10: an open payment cannot reach its target"
        if s.decision == 6:
            assert s.leader != s.current_player and not s.passed[s.current_player], "I9: the leader is asked"
            assert s.pay_target == s.high + 1
        if s.decision in (4, 5):
            assert s.price >= o["min_tile_price"] >= 0, "I12"
        if s.decision == 1:  # I13
            assert not s.pending and not any(s.display) and not s.in_auction and not any(s.payment)
            assert not s.x3_out and not any(map(any, s.bids)) and not s.selected
        if o["auto_resolve_forced"] and (s.decision in self.AUTO or (s.decision == 4 and not s.selected)):
            assert len(legal) >= 2, f"I16: a forced {s.phase} was exposed"

    def _check_observation(self, s: State) -> None:
        """The observation vector equals one rebuilt from scratch; each seat's view holds its hand, the others'
        known cards rotated, the cards it cannot locate, and the tiles where they are (P68–P70b)."""
        rebuilt = s.clone()
        observation.reset(rebuilt)
        assert np.array_equal(rebuilt._x, s._x), "the incrementally kept observation drifted"
        layout, n = self.game.layout, self.n
        low, high = self.bounds
        removed_public = self.options["removed_tiles_public"]
        hands, known = np.array(s.hands), np.array(s.known)
        for p in range(n):
            obs = s.observation(p)
            assert np.all((obs >= low) & (obs <= high)), "observation outside its bounds"
            f = layout.unpack(obs)
            order = [(p + i) % n for i in range(n)]  # row i of a seat field is the seat i places to p's left
            assert np.array_equal(np.rint(f["hand"] * COPIES), hands[p]), "my hand"
            assert np.array_equal(np.rint(f["known_cards"] * COPIES), known[order]), "P70a: K_q"
            assert np.array_equal(np.rint(f["unknown_cards"] * 4), (hands - known).sum(1)[order]), "P70a: U_q"
            unseen = np.bincount(s.deck, minlength=16) * (not s.deck_known) + (hands - known).sum(0) - \
                (hands[p] - known[p])
            assert np.array_equal(np.rint(f["unseen_cards"] * COPIES), unseen), "unseen cards"
            where = f["tile_location"].argmax(axis=1)
            for t in range(48):
                if t in s.supply:
                    assert where[t] == (2 if t in s.selected else 1)
                elif t in s.removed:
                    assert where[t] == (8 if removed_public else 0), "A5: removed tiles"
                elif any(t in stack for stack in s.stacks):
                    assert where[t] == 0
            if not s.is_terminal():
                assert f["to_act"][(s.current_player - p) % n] == 1 and f["decision"][s.decision - 1] == 1

    # ----------------------------------------------------------------- one step
    def transition(self, before: SimpleNamespace, a: int, after: State) -> None:
        """``before`` is a :func:`snapshot` of the state before action ``a``."""
        n, o = self.n, self.options
        self.transitions += 1
        if after is not self.live:  # a new game
            self.live = after
            self.auctioned = False
            self.quarry1_setup = before.quarries[1][0] if before.quarries[1] and before.turn == 0 else None
        if before.decision == 3 and a == AUCTION:
            self.auctioned = True
        # I6: draw order
        for s in (1, 2):
            if len(after.stacks[s]) < before.stack_sizes[s]:
                assert not after.stacks[s - 1], f"I6: drew from stack {s} while stack {s - 1} was not empty"
        # I7: a second-drawn tile lands on (q_MB + windows) mod 4
        if after.mb == before.mb:
            for q in range(4):
                for t in after.quarries[q]:
                    if before.where[t] == 0:
                        assert q == (before.mb + windows(t)) % 4 != before.mb, "I7"
        # I8
        if after.decision == 1 and not after.is_terminal():
            if self.auctioned:
                assert not after.quarries[after.mb], "I8: the master builder's quarry is not empty"
            elif self.quarry1_setup is not None:
                assert self.quarry1_setup in after.quarries[1], "I8: quarry 1 lost its setup tile"
        # I9: bids
        if before.decision == 6:
            if a == DONE:
                assert after.high > before.high and after.leader == before.current_player or not after.in_auction
            elif a != PASS and after.decision == 6 and after.current_player == before.current_player:
                assert after.pay_value == before.pay_value + unit_value(a), "P18: a unit's value"
        # I11
        if after.turn != before.turn:
            assert after.turn == before.turn + 1 and after.active == (before.active + 1) % n, "I11"
        # I17
        if o["canonical_order"]:
            if before.decision in (5, 6) and 53 <= a <= 74 and before.step_units:
                assert a >= before.pay_last, "I17: units out of order"
            if before.decision == 4 and before.selected and a != DONE:
                assert a - 5 > before.selected[0], "I17: second tile"
            if before.decision == 2 and before.current_player == before.active and before.pickers == n:
                assert a - 53 >= before.first_pick, "I17: second money pick"
        # P70a: unknown cards only ever become known or leave
        for p in range(n):
            assert sum(after.hands[p]) - sum(after.known[p]) <= before.unknown[p], "P70a: U_q grew"
        if before.decision == 2:
            p, k = before.current_player, a - 53
            assert after.known[p][k] >= before.known[p][k] + 1, "P70a: a picked card is known"


# ===================================================================== scenario builder
def build(options: dict[str, Any] | None = None, *, active: int = 0, hands: dict[int, str] | None = None,
          known: dict[int, str] | None = None, palaces: dict[int, list[list[int]]] | None = None,
          supply: list[int] = (), quarries: dict[int, list[int]] | None = None, mb: int = 0,
          stacks: list[list[int]] | None = None, removed: list[int] = (), riders: int = 0,
          discard: str = "", deck: str | None = None, display: str = "", rest_to: int | None = None, turn: int = 0,
          rest_removed: bool = False, seed: int = 0, **raw: Any) -> State:
    """A state at the start of ``active``'s turn (D1) with these components.

    ``hands`` / ``known`` map seats to card names (known defaults to the whole hand), ``deck`` lists the deck
    top first; the other cards go to the deck in a seeded order (or, with ``deck`` given, to the discard
    pile, or with ``rest_to`` to that seat's hand, known); ``display`` is a take-money display. ``stacks``
    lists items top first (``RIDER`` for a game-end tile); the tiles not placed anywhere go to the bottom of
    their by_floor stack (with ``rest_removed``, to the removed area), and the riders not drawn into stack
    III. ``raw`` overrides any field of the state's JSON (e.g. a mid-turn context)."""
    game = Game(**(options or {}))
    n = game.num_players
    base = game.new_initial_state(seed)
    rng = np.random.default_rng(seed)
    d = json.loads(base.to_json())
    st = d["state"]
    hands_c = [counts((hands or {}).get(p, "")) for p in range(n)]
    known_c = [counts((known or {}).get(p, (hands or {}).get(p, ""))) for p in range(n)]
    used = np.array(counts(discard)) + np.array(counts(deck or "")) + np.array(counts(display)) + \
        np.sum(hands_c, axis=0)
    rest = [k for k in range(16) for _ in range(COPIES[k] - int(used[k]))]
    assert min(rest, default=0) >= 0 and all(used[k] <= COPIES[k] for k in range(16)), "too many cards"
    disc = counts(discard)
    if rest_to is not None:
        for k in rest:
            hands_c[rest_to][k] += 1
            known_c[rest_to][k] += 1
        rest = []
    if deck is None:
        deck_list = [rest[i] for i in rng.permutation(len(rest))]
    else:
        deck_list = [KIND[x] for x in reversed(deck.split())]
        for k in rest:
            disc[k] += 1
    pals = [[list(x) for x in (palaces or {}).get(p, [])] for p in range(n)]
    quarry_lists = [list((quarries or {}).get(q, [])) for q in range(4)]
    placed = set(supply) | set(removed) | {t for q in quarry_lists for t in q} | \
        {t for pp in pals for pal in pp for t in pal}
    stack_lists = [list(reversed(s)) for s in stacks or []]
    stack_lists += [[] for _ in range(3 - len(stack_lists))]
    placed |= {t for s in stack_lists for t in s if t != RIDER}
    removed = list(removed)
    if rest_removed:
        removed += [t for t in range(48) if t not in placed]
        placed |= set(removed)
    member = [next(i for i, s in enumerate(BY_FLOOR_STACKS) if t in s) for t in range(48)]
    for i, s in enumerate(stack_lists):
        for t in s:
            if t != RIDER:
                member[t] = i
        bottom = [t for t in BY_FLOOR_STACKS[i] if t not in placed]
        s[:0] = [bottom[j] for j in rng.permutation(len(bottom))]
    missing = 5 - riders - stack_lists[2].count(RIDER)
    for _ in range(missing):
        stack_lists[2].insert(int(rng.integers(len(stack_lists[2]) + 1)), RIDER)
    where = [0] * 48
    for t in supply:
        where[t] = 1
    for q, tiles in enumerate(quarry_lists):
        for t in tiles:
            where[t] = 3 + q
    for t in removed:
        where[t] = 8
    for pp in pals:
        for pal in pp:
            for t in pal:
                where[t] = 9
    st.update(member=member, where=where, supply=sorted(supply), quarries=quarry_lists, mb=mb, riders=riders,
              removed=list(removed), palaces=pals, stacks=stack_lists, deck=deck_list, discard=disc,
              deck_known=False, hands=hands_c, known=known_c, active=active, current_player=active, decision=1,
              turn=turn, truncated=False, display=counts(display))
    st.update(raw)
    state = State.from_json(json.dumps(d))
    assert money_locations(state) == COPIES and tile_places(state) == [1] * 48
    return state


def play(state: State, *names: str | int) -> State:
    """Apply actions given by id or by name (``"take money"``, ``"card A5"``…), each checked legal."""
    for name in names:
        action = name if isinstance(name, int) else state.string_to_action(name)
        assert state.is_legal(action), f"{name!r} is not legal in {state.phase}: " + \
            ", ".join(state.action_to_string(a) for a in state.legal_actions())
        state.apply_action(action)
    return state


def legal_names(state: State) -> list[str]:
    return [state.action_to_string(a) for a in state.legal_actions()]


def is_running(state: State) -> bool:
    return state.current_player != TERMINAL
