"""Reference rules and scenario builders for the Five Towers tests (``docs/rules/five_towers.md``).

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


def ref_score(towers: list[list[int]], rubble: int) -> int:
    """F27 written out: base (doubled under a 0) + tallest tower − triangular rubble."""
    heights = [len(t) for t in towers if t]
    base = sum(len(t) * (2 if t[-1] == 0 else 1) for t in towers if t)
    return base + max(heights, default=0) - rubble * (rubble + 1) // 2


def conservation(state: State) -> Counter:
    """F36: every card's zone, counted per kind."""
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
    return count


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
    assert sum(conservation(state).values()) == sum(mult)
    return state


def play(state: State, *names: str) -> State:
    """Apply actions given by name (``"bid 2"``, ``"take slot 0"``…), checking each is legal; the state."""
    for name in names:
        state.apply_action(state.string_to_action(name))
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
