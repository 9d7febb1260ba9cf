"""Reference rules, the invariant checker and scenario builders for the Five Towers tests
(``docs/rules/five_towers.md``).

The reference functions are written from the spec, not from the engine: F20 as its pseudo-code, F23 by
brute force over every order of every type's cards, F24/F25 by brute force over every tear-down option
and every subset of the display. Positions are made only through the public API: take ``to_json()`` of a
real state, rewrite its ``"state"`` dict and load it with ``State.from_json`` (every card stays in
exactly one zone, F36).
"""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from itertools import combinations, permutations
from typing import Any

import numpy as np

from tabletop_rl.envs.core.game import State
from tabletop_rl.envs.five_towers import Game

CANDY, SCARY, TREE, SCRAP, SAND = range(5)  # F2
DUPLICATED = (0, 2, 5, 7, 10, 12)  # F3
BLOCKED = "blocked"  # a torn-away type with rebuild_removed_tower=False (F15, F20)
PASS, TEAR_NONE, TEAR, TAKE, PLACE = 0, 6, 7, 12, 17  # F33


def kind(t: int, v: int) -> int:
    """F3: ``16·type + value``."""
    return 16 * t + v


def multiplicity(num_players: int) -> list[int]:
    """F3: one card per kind, two of the "4+" values with 4–5 players."""
    return [2 if num_players >= 4 and k % 16 in DUPLICATED else 1 for k in range(80)]


# ===================================================================== reference rules
def ref_can_place(top: int | str | None, value: int, zero_starts: bool) -> bool:
    """F20, as the spec's pseudo-code; ``top`` is None (no tower), BLOCKED or the top value."""
    if top == BLOCKED:
        return False
    if top is None:
        return value != 0 or zero_starts
    if top == 0:
        return False
    if top == 8:
        return True
    if value == 9:
        return True
    return value < top


@cache
def ref_type_fits(top: int | str | None, values: tuple[int, ...], zero_starts: bool) -> bool:
    """F23 for one type, by brute force over every order."""
    for order in set(permutations(values)):
        current, ok = top, True
        for v in order:
            if not ref_can_place(current, v, zero_starts):
                ok = False
                break
            current = v
        if ok:
            return True
    return False


def ref_placeable(tops: list, cards: list[int], zero_starts: bool) -> bool:
    """F23: every type's cards of ``cards`` (kinds) fit on ``tops[type]`` in some order."""
    by_type: dict[int, list[int]] = {}
    for k in cards:
        by_type.setdefault(k // 16, []).append(k % 16)
    return all(ref_type_fits(tops[t], tuple(sorted(vals)), zero_starts) for t, vals in by_type.items())


def ref_tops(state: State, p: int) -> list:
    """p's tower tops in the reference encoding."""
    return [tower[-1] if tower else (BLOCKED if state.blocked[p][t] else None)
            for t, tower in enumerate(state.towers[p])]


def ref_options(state: State, p: int) -> dict[int, list]:
    """F22: option (−1 for NONE, else the torn type) → the tops after it."""
    rebuild = state.game.options["rebuild_removed_tower"]
    tops = ref_tops(state, p)
    out = {-1: tops}
    for t, tower in enumerate(state.towers[p]):
        if tower and tower[-1] != 0:
            after = list(tops)
            after[t] = tower[-2] if len(tower) > 1 else (None if rebuild else BLOCKED)
            out[t] = after
    return out


def ref_option_max(state: State, p: int, display: list[int]) -> dict[int, int]:
    """F24 per option: the largest N with an N-subset of ``display`` that fits (brute force)."""
    zs = state.game.options["zero_starts_tower"]
    out = {}
    for option, tops in ref_options(state, p).items():
        out[option] = max(size for size in range(len(display) + 1)
                          if any(ref_placeable(tops, list(x), zs) for x in combinations(display, size)))
    return out


def ref_nmax(state: State, p: int) -> int:
    """F24: Nmax(p) on the current display."""
    return max(ref_option_max(state, p, display_cards(state)).values())


def display_cards(state: State) -> list[int]:
    return [state.display[s] for s in range(state.k)]


def expected_legal(state: State) -> list[int]:
    """F25 (a)–(d) and F26 written out by brute force from the spec."""
    o = state.game.options
    zs, canonical = o["zero_starts_tower"], o["canonical_order"]
    p = state.current_player
    phase = state.phase
    if phase == "bid":  # F25(a)
        return [PASS, *range(state.high + 1, min(state.k, ref_nmax(state, p)) + 1)]
    w, n = state.winner, state.take_n
    if phase == "teardown":  # F25(b)
        best = ref_option_max(state, w, display_cards(state))
        return sorted(TEAR_NONE if t < 0 else TEAR + t for t, m in best.items() if m >= n)
    tops = ref_tops(state, w)
    taken = [s for s in range(state.k) if state.status[s] == 1]
    if phase == "take":  # F25(c)
        untaken = [s for s in range(state.k) if state.status[s] == 0]
        legal = []
        for s in untaken:
            if canonical and taken and s < max(taken):
                continue
            others = [r for r in untaken if r != s and (not canonical or r > s)]
            need = n - len(taken) - 1
            if any(ref_placeable(tops, [state.display[x] for x in (*taken, s, *rest)], zs)
                   for rest in combinations(others, need)):
                legal.append(TAKE + s)
        return legal
    legal = []  # F25(d)
    for s in taken:
        c = state.display[s]
        t = c // 16
        if canonical:
            if t != min(state.display[r] // 16 for r in taken):
                continue
            if any(r < s and state.display[r] == c for r in taken):
                continue
        rest = tuple(sorted(state.display[r] % 16 for r in taken if r != s and state.display[r] // 16 == t))
        if ref_can_place(tops[t], c % 16, zs) and ref_type_fits(c % 16, rest, zs):
            legal.append(PLACE + s)
    return legal


def ref_towers_score(towers: list[list[int]], rubble: int) -> int:
    """F27 written out: base (doubled under a 0) + tallest tower − triangular rubble."""
    heights = [len(t) for t in towers if t]
    base = sum(len(t) * (2 if t[-1] == 0 else 1) for t in towers if t)
    return base + max(heights, default=0) - rubble * (rubble + 1) // 2


def ref_score(state: State, player: int) -> int:
    """F27: ``player``'s score, from its towers and rubble."""
    return ref_towers_score(state.towers[player], len(state.rubble[player]))


def check_conservation(state: State) -> None:
    """F36: every card is in exactly one zone, as many copies of each kind as the deck holds (F3)."""
    count = Counter(state.draw)
    for s in range(state.k):
        if state.status[s] in (0, 1):  # in the display or taken; placed cards are in a tower
            count[state.display[s]] += 1
    for k, c in enumerate(state.discard):
        count[k] += c
    for p in range(state.num_players):
        for t, tower in enumerate(state.towers[p]):
            count.update(kind(t, v) for v in tower)
        count.update(state.rubble[p])
    expected = dict(enumerate(multiplicity(state.num_players)))
    assert count == expected, f"F36: cards are not conserved: extra {dict(count - Counter(expected))}, " \
        f"missing {dict(Counter(expected) - count)}"


# ===================================================================== invariants (§9)
class Checker:
    """§9 invariants. ``position`` looks at one state (also every ``sample_hidden`` result); ``transition``
    follows one game and checks each round against its start (F38–F40, F42, F43)."""

    def __init__(self, game: Game):
        self.game = game
        self.n = game.num_players
        self.options = game.options
        self.live: State | None = None
        self.rounds_checked = 0

    @staticmethod
    def snapshot(state: State) -> State:
        return state.clone()

    # ----------------------------------------------------------------- one position
    def position(self, s: State) -> None:
        check_conservation(s)
        zs = self.options["zero_starts_tower"]
        for p in range(self.n):
            for t, tower in enumerate(s.towers[p]):  # F37
                below = None
                for i, v in enumerate(tower):
                    assert ref_can_place(below, v, zs), f"F37: tower {t} of player {p}: {tower}"
                    assert v != 0 or i == len(tower) - 1, f"F37: a 0 inside tower {tower}"
                    below = v
                if s.blocked[p][t]:
                    assert not tower and not self.options["rebuild_removed_tower"], "F15: blocked tower"
            assert all(k % 16 for k in s.rubble[p]), f"F38: a 0 in the rubble {s.rubble[p]}"
            assert s.score(p) == ref_score(s, p), "F44: score"
        legal = s.legal_actions()
        obs = self.game.layout.unpack(s.observation(0))
        assert np.array_equal(obs["unseen"], np.bincount(s.draw, minlength=80)), "F31: unseen counts"
        assert np.allclose(obs["score"], np.array(s.scores()) / 100), "F27: score field"
        if s.is_terminal():
            left = len(s.draw)
            assert left == 0 or (not self.options["final_partial_round"] and 1 <= left <= 4), "F42: draw pile"
            assert s.round <= self.game.max_rounds, "F29: too many rounds"
            return
        assert legal == expected_legal(s), f"F25: {s.phase} mask {legal} != {expected_legal(s)}\n{s}"
        if s.phase == "bid":
            assert s.current_player == (s.start + s.bid_pos) % self.n, "F10: bidding order"
        else:
            assert s.current_player == s.winner and s.take_n == s.high >= 1, "F13: the winner builds N = H"
        if self.options["auto_resolve_forced"]:
            assert len(legal) >= 2, "F35: a forced decision was exposed"

    # ----------------------------------------------------------------- one step
    def transition(self, before: State, a: int, after: State) -> None:
        if after is not self.live:  # a new game (the live state object changes)
            self.live, self.round_start = after, before
            self.wins = [0] * self.n
            self.pass1_taken = 0
            self.decisions = 0
        assert after.pass_no >= before.pass_no, "F42: back to pass 1"
        for p in range(self.n):
            assert after.rubble[p][:len(before.rubble[p])] == before.rubble[p], "F38: rubble only grows"
            for t, tower in enumerate(before.towers[p]):
                if tower and tower[-1] == 0:
                    assert after.towers[p][t] == tower, "F37: a sealed tower changed"
        self.decisions += 1
        if before.phase == "bid":  # F39
            p = before.current_player
            assert before.bids[p] == -1, "F39: a second opportunity in one round"
            assert a == 0 or before.high < a <= before.k, "F39: bids strictly increase, at most k"
        if after.round == before.round and not after.is_terminal():
            if not self.options["auto_resolve_forced"] and before.phase == "bid" and a == before.k:
                assert after.phase == "teardown" and after.winner == before.current_player, "F12"
            return
        self._round_end(before, a, after)

    def _round_end(self, before: State, a: int, after: State) -> None:
        """F38, F40, F42, F43 when a round (or the game) ended with this step."""
        g, start = self.game, self.round_start
        assert self.decisions <= self.n + 11, "F29: too many decisions in one round"
        self.decisions = 0
        if not self.options["auto_resolve_forced"]:  # every decision seen: check the round itself
            if before.phase == "bid":  # F13: nobody bid
                assert a == 0 and before.high == 0
                assert after.towers == start.towers and after.rubble == start.rubble
                winner, taken = -1, 0
            else:
                assert before.phase == "place"
                winner, taken, tore = before.winner, before.take_n, before.teardown > 0
                self.wins[winner] += 1
                cards = [sum(map(len, s.towers[winner])) for s in (start, after)]
                assert cards[1] == cards[0] - tore + taken, "F40: the winner's tower cards"
                grown = len(after.rubble[winner]) - len(start.rubble[winner])
                assert grown == tore, "F38: at most one rubble card per round, from a tear-down"
                for p in range(self.n):
                    if p != winner:
                        assert (after.towers[p], after.rubble[p]) == (start.towers[p], start.rubble[p]), "F40"
                    assert len(after.rubble[p]) <= self.wins[p], "F38: rubble > rounds won"
            if after.pass_no == start.pass_no and after.round == start.round + 1:  # no reshuffle between
                assert sum(after.discard) == sum(start.discard) + start.k - taken, "F40: the discard pile"
            if start.pass_no == 1:
                self.pass1_taken += taken
        if before.pass_no == 1 and after.pass_no == 2:  # F42: the reshuffle ends pass 1
            if self.options["reshuffle_includes_last_round"]:
                assert before.round == g.deck_size // 5, "F42: pass 1 lasts deck/5 rounds"
                if not self.options["auto_resolve_forced"] and not after.is_terminal():
                    assert len(after.draw) + after.k == g.deck_size - self.pass1_taken, "F42: P2"
            else:
                assert after.round == g.deck_size // 5, "F42: pass 1 lasts deck/5 rounds"
        if not after.is_terminal():
            assert after.start == (after.first_player + after.round - 1) % self.n, "F43: start player"
            assert after.round <= g.max_rounds, "F29"
            if after.pass_no == 1:
                assert len(after.draw) == g.deck_size - 5 * after.round, "F9: pass 1 reveals five per round"
        self.round_start = after.clone()
        self.rounds_checked += 1


# ===================================================================== scenario builder
def build(options: dict[str, Any] | None = None, *, display: list[int], towers: dict | None = None,
          rubble: dict | None = None, blocked: dict | None = None, start: int = 0, round_: int = 1,
          draw: list[int] | None = None, pass_no: int = 1, seed: int = 0) -> State:
    """A state in the BID phase of round ``round_`` with this display (slot order) and start player.

    ``towers`` is ``{seat: {type: [values bottom→top]}}``, ``rubble`` ``{seat: [kinds]}``, ``blocked``
    ``{seat: [types]}``. The unused cards make up the draw pile in a seeded order; with ``draw`` (next
    card first) they go to the discard pile instead.
    """
    options = dict(options or {})
    game = Game(**options)
    n = game.num_players
    base = game.new_initial_state(seed)
    d = json.loads(base.to_json())
    used = Counter(display) + Counter(draw or [])
    tower_lists = [[[] for _ in range(5)] for _ in range(n)]
    for p, per_type in (towers or {}).items():
        for t, values in per_type.items():
            tower_lists[p][t] = list(values)
            used.update(kind(t, v) for v in values)
    rubble_lists = [list((rubble or {}).get(p, [])) for p in range(n)]
    for r in rubble_lists:
        used.update(r)
    mult = multiplicity(n)
    assert all(used[k] <= mult[k] for k in used), f"scenario uses more cards than the deck holds: {used}"
    rest = [k for k in range(80) for _ in range(mult[k] - used[k])]
    rest = [rest[i] for i in base.rng.permutation(len(rest))]
    discard = [0] * 80
    if draw is None:
        draw = rest
    else:
        for k in rest:
            discard[k] += 1
        draw = list(reversed(draw))  # the engine draws from the end of its list
    k = len(display)
    d["state"].update(
        draw=draw, discard=discard, display=list(display) + [-1] * (5 - k), status=[0] * k + [-1] * (5 - k),
        k=k, bids=[-1] * n, bid_pos=0, high=0, high_bidder=-1, winner=-1, take_n=0, teardown=-1, taken=0,
        placed=0, phase_id=0, current_player=start, start=start, first_player=(start - round_ + 1) % n,
        round=round_, pass_no=pass_no, towers=tower_lists, rubble=rubble_lists,
        blocked=[[t in (blocked or {}).get(p, []) for t in range(5)] for p in range(n)], history=[])
    state = State.from_json(json.dumps(d))
    check_conservation(state)
    return state


def play(state: State, *names: str) -> State:
    """Apply actions given by name (``"bid 2"``, ``"take slot 0"``…), checking each is legal; the state."""
    for name in names:
        state.apply_action(state.string_to_action(name))
    return state


FEASIBILITY_TOWERS = {0: {CANDY: [10], SCARY: [7, 0], TREE: [12, 8, 3]}}
FEASIBILITY_DISPLAY = [kind(TREE, 11), kind(CANDY, 9), kind(TREE, 6), kind(SCARY, 2), kind(SAND, 4)]


def feasibility(options=None, bid=None):
    """The §5 worked-feasibility position, 2 players, p = seat 0 to bid first; with ``bid``, p wins it."""
    state = build(options, display=FEASIBILITY_DISPLAY, towers=FEASIBILITY_TOWERS)
    if bid is not None:
        play(state, f"bid {bid}")
        if state.phase == "bid":
            play(state, "pass")
    return state


# ===================================================================== information (F30)
def public_facts(state: State, player: int) -> dict[str, Any]:
    """F30: what every player sees, hence also ``player`` (nobody has private cards, F31). Facts of a round
    (display, bids, start player) are gone once the game is over."""
    running = not state.is_terminal()
    return {
        "towers": state.towers, "rubble": [sorted(r) for r in state.rubble], "blocked": state.blocked,
        "display": [(state.display[s], state.status[s]) for s in range(state.k)],
        "discard": state.discard, "draw_pile_size": len(state.draw), "pass": state.pass_no, "round": state.round,
        "start_player": state.start if running else None, "bids": state.bids, "high_bid": state.high,
        "high_bidder": state.high_bidder, "winner": state.winner, "take_count": state.take_n,
        "teardown": state.teardown, "phase": state.phase, "to_act": state.current_player,
    }


def _tower_ok(values: list[int], zero_starts: bool) -> bool:
    """F37: every card of the tower fits on the one below it (F20)."""
    below = None
    for v in values:
        if not ref_can_place(below, v, zero_starts):
            return False
        below = v
    return True


def public_swaps(state: State, rng, count: int) -> list[State]:
    """Up to ``count`` positions that differ from ``state`` only in public cards: two cards of one type and
    different values trade places between towers (any seat, any height), rubble piles and the discard pile,
    every tower staying legal (F20). The draw pile and the round are untouched."""
    d = json.loads(state.to_json())
    s = d["state"]
    zero_starts = state.game.options["zero_starts_tower"]
    places = []  # (zone, seat, type or None, index), kind
    for p, towers in enumerate(s["towers"]):
        for t, tower in enumerate(towers):
            places += [(("tower", p, t, j), kind(t, v)) for j, v in enumerate(tower)]
    for p, rubble in enumerate(s["rubble"]):
        places += [(("rubble", p, None, j), k) for j, k in enumerate(rubble)]
    places += [(("discard", None, None, k), k) for k, c in enumerate(s["discard"]) if c]
    out = []
    for i in rng.permutation(len(places)):
        for j in rng.permutation(len(places)):
            (a, ka), (b, kb) = places[i], places[j]
            if len(out) == count:
                return out
            if ka // 16 != kb // 16 or ka == kb:
                continue
            new = json.loads(json.dumps(d))
            _put(new["state"], a, ka, kb)
            _put(new["state"], b, kb, ka)
            towers, rubble = new["state"]["towers"], new["state"]["rubble"]
            if all(_tower_ok(tower, zero_starts) for row in towers for tower in row) and \
                    all(k % 16 for pile in rubble for k in pile):  # F37, F38: legal towers, no 0 in rubble
                out.append(State.from_json(json.dumps(new)))
    return out


def _put(s: dict[str, Any], place: tuple, old: int, new: int) -> None:
    """Replace card ``old`` by ``new`` at ``place`` of the serialised state ``s``."""
    zone, p, t, j = place
    if zone == "tower":
        s["towers"][p][t][j] = new % 16
    elif zone == "rubble":
        s["rubble"][p][j] = new
    else:
        s["discard"][old] -= 1
        s["discard"][new] += 1
