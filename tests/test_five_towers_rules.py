"""Scenario tests for the rules of ``docs/rules/five_towers.md`` (test names carry the rule ids).

Every worked example of the spec is here (§5 worked scores a–d, worked feasibility with every listed mask,
worked bidding). Positions are built through the public API only (``to_json`` → edit →
``State.from_json``, see ``five_towers_helpers``) and driven with ``apply_action``.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tabletop_rl.envs.core.game import TERMINAL
from tabletop_rl.envs.five_towers import Game
from tabletop_rl.envs.five_towers.game import BLOCKED as ENGINE_BLOCKED
from tabletop_rl.envs.five_towers.game import NO_TOWER, can_place, longest_fit, tower_score
from tabletop_rl.envs.five_towers.observation import SEAT_FIELDS
from tests.five_towers_helpers import (
    BLOCKED,
    CANDY,
    FEASIBILITY_DISPLAY,
    FEASIBILITY_TOWERS,
    PASS,
    PLACE,
    SAND,
    SCARY,
    SCRAP,
    TAKE,
    TEAR,
    TEAR_NONE,
    TREE,
    build,
    check_conservation,
    feasibility,
    kind,
    multiplicity,
    play,
    ref_can_place,
    ref_nmax,
    ref_towers_score,
    ref_type_fits,
)


# ===================================================================== components (F1–F5)
@pytest.mark.parametrize(("n", "size"), [(2, 80), (3, 80), (4, 110), (5, 110)])
def test_F3_deck_per_player_count(n, size):
    game = Game(num_players=n)
    state = game.new_initial_state(1)
    assert game.deck_size == size and sum(multiplicity(n)) == size
    check_conservation(state)  # F36: exactly the cards of F3
    assert game.num_actions == 22 and state.num_players == n  # F33, F1


# ===================================================================== legality predicates (F20–F23)
def _engine_top(top):
    return NO_TOWER if top is None else ENGINE_BLOCKED if top == BLOCKED else top


@pytest.mark.parametrize("zero_starts", [True, False])
def test_F20_placement_predicate_matches_the_pseudo_code(zero_starts):
    for top in [None, BLOCKED, *range(16)]:
        for value in range(16):
            assert can_place(_engine_top(top), value, zero_starts) == ref_can_place(top, value, zero_starts)


def test_F20_special_values():
    zs = True
    assert can_place(8, 15, zs) and can_place(8, 0, zs) and can_place(8, 8, zs)  # an 8 accepts everything
    assert can_place(3, 9, zs) and can_place(15, 9, zs) and not can_place(0, 9, zs)  # a 9 fits but on a 0
    assert not can_place(7, 7, zs) and not can_place(7, 12, zs) and can_place(7, 6, zs)  # strictly smaller
    assert not any(can_place(0, v, zs) for v in range(16))  # F21: a 0 seals its tower
    assert can_place(NO_TOWER, 0, True) and not can_place(NO_TOWER, 0, False)  # zero_starts_tower
    assert not any(can_place(ENGINE_BLOCKED, v, zs) for v in range(16))


def test_F23_greedy_orders_are_not_exact():
    """Top 10 and cards {8, 12}: descending fails (12 on 10), but 8 then 12 works."""
    assert not can_place(10, 12, True)
    assert longest_fit(10, (8, 12), True) == 2
    assert ref_type_fits(10, (8, 12), True)


@pytest.mark.parametrize("zero_starts", [True, False])
def test_F23_longest_fit_matches_a_brute_force_over_orders(zero_starts):
    """Exhaustive for up to 3 cards of a type on every top, then random multisets of 4–5 cards."""
    rng = np.random.default_rng(23)
    samples = [c for size in range(4) for c in itertools.combinations_with_replacement(range(16), size)]
    samples += [tuple(sorted(rng.integers(0, 16, size))) for size in (4, 5) for _ in range(150)]
    for top in [None, BLOCKED, *range(16)]:
        for values in samples:
            fits = longest_fit(_engine_top(top), values, zero_starts)
            assert (fits == len(values)) == ref_type_fits(top, values, zero_starts), (top, values)
            assert fits == max(len(sub) for r in range(len(values) + 1)
                               for sub in itertools.combinations(values, r)
                               if ref_type_fits(top, sub, zero_starts)), (top, values)


# ===================================================================== scoring (F27, F28, F44)
WORKED_SCORES = {  # §5: (towers {type: bottom→top}, rubble size, score)
    "a": ({CANDY: [13, 11, 9, 5, 0], SAND: [15, 12, 8, 14, 10, 3], TREE: [7, 2], SCARY: [4]}, 2, 22),
    "b": ({SCRAP: [11, 8, 15, 9, 6, 2, 0], CANDY: [5]}, 0, 22),
    "c": ({}, 3, -6),
    "d": ({TREE: [0]}, 0, 3),
}


@pytest.mark.parametrize("name", WORKED_SCORES)
def test_F27_worked_scores(name):
    towers, rubble, expected = WORKED_SCORES[name]
    for values in towers.values():  # every tower shown is legal under F20
        assert all(ref_can_place(below, v, True) for below, v in zip([None, *values], values, strict=False))
    rubble_kinds = [kind(SCARY, 1 + i) for i in range(rubble)]
    state = build(display=[kind(SAND, 1)], towers={0: towers}, rubble={0: rubble_kinds})
    assert state.score(0) == expected == ref_towers_score([towers.get(t, []) for t in range(5)], rubble)
    assert tower_score([(len(v), v[-1]) for v in towers.values()], rubble) == expected
    assert state.scores() == [expected, 0]
    obs = state.game.layout.unpack(state.observation(1))
    assert obs["score"][1] == pytest.approx(expected / 100)  # row 1 of seat 1's view is seat 0


def test_F27_rubble_penalty_is_triangular():
    assert [ref_towers_score([], r) for r in range(6)] == [0, -1, -3, -6, -10, -15]
    assert [tower_score([], r) for r in range(6)] == [0, -1, -3, -6, -10, -15]


def test_F28_tied_players_share_the_rank_and_the_returns():
    """Last round of pass 2, everybody passes: the game ends; seats 0 and 2 tie for first."""
    towers = {0: {CANDY: [9, 5]}, 1: {CANDY: [3]}, 2: {TREE: [15, 14]}}
    display = [kind(SAND, v) for v in (1, 2, 3, 4, 5)]
    state = build({"num_players": 3}, display=display, towers=towers, draw=[], pass_no=2)
    play(state, "pass", "pass", "pass")
    assert state.is_terminal() and state.scores() == [4, 2, 4]
    assert state.ranks() == [1, 3, 1]
    assert state.returns().tolist() == [0.5, -1.0, 0.5]
    assert state.end_info()["ranks"] == [1, 3, 1]


# ===================================================================== worked feasibility (F22–F25)
def test_F24_worked_feasibility_nmax_per_tear_down_option():
    state = feasibility()
    assert state.nmax_options[0] == [2, 2, -1, 4, -1, -1]  # NONE 2, TEAR Candy 2, Scary no, TEAR Tree 4
    assert state.nmax(0) == ref_nmax(state, 0) == 4
    assert state.legal_actions() == [PASS, 1, 2, 3, 4]  # BID 5 is masked
    assert state.game.layout.unpack(state.observation(0))["max_bid"][0] == pytest.approx(4 / 5)


def test_F25_worked_feasibility_N4_forced_line():
    state = feasibility(bid=4)
    assert (state.phase, state.current_player, state.take_n) == ("teardown", 0, 4)
    assert state.legal_actions() == [TEAR + TREE]
    play(state, "tear down tree")
    for slot in (0, 1, 2, 4):  # canonical take: each forced, slot 3 (Scary 2) never legal
        assert state.legal_actions() == [TAKE + slot]
        state.apply_action(TAKE + slot)
    assert state.legal_actions() == [PLACE + 1]  # Candy first (lowest type)
    play(state, "place slot 1")
    assert state.legal_actions() == [PLACE + 0]  # Tree 11 before Tree 6: placing 6 first strands the 11
    play(state, "place slot 0", "place slot 2")
    assert state.legal_actions() == [PLACE + 4]
    play(state, "place slot 4")
    assert state.towers[0][CANDY] == [10, 9] and state.towers[0][TREE] == [12, 8, 11, 6]
    assert state.towers[0][SAND] == [4] and state.towers[0][SCARY] == [7, 0]
    assert state.rubble[0] == [kind(TREE, 3)]
    assert state.discard[kind(SCARY, 2)] == 1 and sum(state.discard) == 1  # F18


def test_F25_worked_feasibility_N3_take_mask():
    state = feasibility(bid=3)
    assert state.legal_actions() == [TEAR + TREE]
    play(state, "tear down tree")
    assert state.legal_actions() == [TAKE + 0, TAKE + 1]  # slot 2 first would need Scary 2


@pytest.mark.parametrize(("rebuild", "expected"), [(True, [TEAR_NONE, TEAR + CANDY, TEAR + TREE]),
                                                    (False, [TEAR_NONE, TEAR + TREE])])
def test_F25_worked_feasibility_N2_tear_down_mask(rebuild, expected):
    state = feasibility({"rebuild_removed_tower": rebuild}, bid=2)
    assert state.legal_actions() == expected


def test_F26_worked_feasibility_without_canonical_order():
    """Any untaken slot of some fitting set, any taken card of any type that keeps the rest placeable."""
    state = feasibility({"canonical_order": False}, bid=4)
    play(state, "tear down tree")
    assert state.legal_actions() == [TAKE + s for s in (0, 1, 2, 4)]
    play(state, "take slot 4", "take slot 2", "take slot 0", "take slot 1")
    assert state.legal_actions() == [PLACE + 0, PLACE + 1, PLACE + 4]  # not Tree 6 (slot 2) first
    play(state, "place slot 4", "place slot 0")
    assert state.legal_actions() == [PLACE + 1, PLACE + 2]


def test_F26_canonical_order_reaches_the_same_end_states():
    """Every end state of a round reachable without canonical order is reachable with it (and back)."""
    def end_states(canonical: bool) -> set:
        out = set()
        stack = [feasibility({"canonical_order": canonical}, bid=3)]
        while stack:
            s = stack.pop()
            if s.phase not in ("teardown", "take", "place"):
                out.add((str(s.towers), str(s.rubble), str(s.discard)))
                continue
            for a in s.legal_actions():
                c = s.clone()
                c.apply_action(a)
                stack.append(c)
        return out
    assert end_states(True) == end_states(False) and len(end_states(True)) > 1


# ===================================================================== worked bidding (F10–F13)
def test_F10_to_F13_worked_bidding():
    state = Game(num_players=3, first_player=2).new_initial_state(5)
    assert state.current_player == 2 and state.k == 5 and state.nmax(1) == 5  # no towers: all five fit
    play(state, "pass")
    assert state.current_player == 0
    play(state, "bid 2")
    assert state.current_player == 1 and state.legal_actions() == [PASS, 3, 4, 5]
    play(state, "bid 4")
    assert (state.phase, state.winner, state.take_n, state.current_player) == ("teardown", 1, 4, 1)
    assert state.bids == [2, 4, 0]


def test_F12_a_bid_of_k_stops_the_bidding():
    state = Game(num_players=3, first_player=2).new_initial_state(5)
    play(state, "pass", "bid 5")
    assert (state.phase, state.winner, state.take_n) == ("teardown", 0, 5)
    assert state.bids == [5, -1, 0]  # seat 1 never acted
    obs = state.game.layout.unpack(state.observation(1))
    assert obs["bid"][0].tolist() == [1, 0, 0, 0, 0, 0, 0]  # seat 1 itself: not acted


def test_F11_bids_are_capped_by_nmax():
    """Seat 1 holds the feasibility towers (Nmax 4): after a bid of 2 only 3 and 4 remain."""
    towers = {1: FEASIBILITY_TOWERS[0]}
    state = build({"num_players": 3}, display=FEASIBILITY_DISPLAY, towers=towers, start=2)
    play(state, "pass", "bid 2")
    assert state.current_player == 1 and state.legal_actions() == [PASS, 3, 4]


def test_F13_a_round_without_bids_discards_the_display():
    state = Game(num_players=2, first_player=0).new_initial_state(3)
    display = [state.display[s] for s in range(5)]
    towers = str(state.towers)
    play(state, "pass", "pass")
    assert [state.discard[k] for k in display] == [1] * 5 and sum(state.discard) == 5
    assert str(state.towers) == towers and state.rubble == [[], []]
    assert (state.round, state.start, state.current_player, state.phase) == (2, 1, 1, "bid")  # F18


# ===================================================================== tear-down, take, place (F14–F17)
def test_F15_F21_a_sealed_tower_cannot_be_torn_down():
    state = build(display=[kind(SAND, 5), kind(SAND, 3)], towers={0: {SCARY: [7, 0], CANDY: [4]}})
    play(state, "bid 1", "pass")
    assert state.legal_actions() == [TEAR_NONE, TEAR + CANDY]


@pytest.mark.parametrize("rebuild", [True, False])
def test_F15_rebuild_removed_tower(rebuild):
    """Tearing down a one-card tower removes it; a taken card of that type may restart it only if allowed."""
    state = build({"rebuild_removed_tower": rebuild}, display=[kind(CANDY, 12), kind(SAND, 3)],
                  towers={0: {CANDY: [2]}})
    assert state.nmax_options[0][0] == 1 and state.nmax_options[0][1 + CANDY] == (2 if rebuild else 1)
    play(state, "bid 1", "pass")
    play(state, "tear down candy")
    assert state.towers[0][CANDY] == [] and state.blocked[0][CANDY] == (not rebuild)
    assert state.rubble[0] == [kind(CANDY, 2)] and state.score(0) == -1
    expected = [TAKE + 0, TAKE + 1] if rebuild else [TAKE + 1]
    assert state.legal_actions() == expected
    obs = state.game.layout.unpack(state.observation(0))
    assert obs["tower_blocked"][0, CANDY] == (not rebuild) and obs["teardown"].tolist() == [0, 1, 0, 0, 0, 0]


def test_F15_blocked_type_never_fits_again():
    state = build({"rebuild_removed_tower": False}, display=[kind(CANDY, 12), kind(CANDY, 3)],
                  blocked={0: [CANDY]})
    assert state.nmax(0) == 0 and state.legal_actions() == [PASS]
    assert state.nmax(1) == 2


def test_F15_a_needless_tear_down_is_allowed():
    state = build(display=[kind(SAND, 5)], towers={0: {CANDY: [9, 4]}})
    play(state, "bid 1")  # k = 1: the bid of k ends the bidding
    assert state.legal_actions() == [TEAR_NONE, TEAR + CANDY]
    play(state, "tear down candy", "take slot 0", "place slot 0")
    assert state.towers[0][CANDY] == [9] and state.rubble[0] == [kind(CANDY, 4)]


def test_F17_order_among_cards_of_one_type():
    """Tree top 10, Tree 9 and Tree 8 taken: 9 then 8 leaves an 8, 8 then 9 leaves a 9; both legal."""
    state = build(display=[kind(TREE, 9), kind(TREE, 8)], towers={0: {TREE: [10]}})
    play(state, "bid 2", "tear down none", "take slot 0", "take slot 1")
    assert state.legal_actions() == [PLACE + 0, PLACE + 1]
    a = play(state.clone(), "place slot 0", "place slot 1")
    b = play(state.clone(), "place slot 1", "place slot 0")
    assert a.towers[0][TREE] == [10, 9, 8] and b.towers[0][TREE] == [10, 8, 9]


def test_F20_zero_starts_tower_option():
    state = build({"zero_starts_tower": False}, display=[kind(TREE, 0), kind(SAND, 3)])
    assert state.nmax(0) == 1
    play(state, "bid 1", "pass", "tear down none")
    assert state.legal_actions() == [TAKE + 1]
    assert build(display=[kind(TREE, 0), kind(SAND, 3)]).nmax(0) == 2


def test_F16_F25_duplicate_cards_in_the_110_card_deck():
    """Two identical Tree 5s: canonically only the lower slot may be placed first; both fit (5 on 8)."""
    state = build({"num_players": 4}, display=[kind(TREE, 5), kind(SAND, 1), kind(TREE, 5)],
                  towers={0: {TREE: [15, 8]}})
    assert state.nmax(0) == 2  # 5 on 8, then 5 on 5 is illegal; Sand 1 starts a tower
    play(state, "bid 2", "pass", "pass", "pass", "tear down none")
    assert state.legal_actions() == [TAKE + 0, TAKE + 1]
    both = build({"num_players": 4, "canonical_order": False}, display=[kind(TREE, 5), kind(TREE, 9),
                                                                          kind(TREE, 5)],
                 towers={0: {TREE: [15, 8]}})
    assert both.nmax(0) == 3  # 5, 9, 5
    play(both, "bid 3", "tear down none", "take slot 2", "take slot 0", "take slot 1")  # bid of k: no passes
    assert both.legal_actions() == [PLACE + 0, PLACE + 2]  # either 5 first; the 9 first strands a 5
    canonical = build({"num_players": 4}, display=[kind(TREE, 5), kind(TREE, 9), kind(TREE, 5)],
                      towers={0: {TREE: [15, 8]}})
    play(canonical, "bid 3", "tear down none", "take slot 0", "take slot 1", "take slot 2")
    assert canonical.legal_actions() == [PLACE + 0]  # the identical card in slot 2 waits


# ===================================================================== deck cycle and end (F9, F19, F29)
def _five(t: int) -> list[int]:
    return [kind(t, v) for v in (1, 2, 3, 4, 5)]


@pytest.mark.parametrize("timing", [True, False])
def test_F9_reshuffle_timing(timing):
    """Pass 1's last round: the reveal empties the draw pile. Everybody passes."""
    options = {"reshuffle_includes_last_round": timing}
    if timing:  # default: the reshuffle waits until the next round needs cards
        state = build(options, display=_five(CANDY), draw=[], round_=16)
        assert state.pass_no == 1 and state.draw == []
        play(state, "pass", "pass")  # all 80 cards are reshuffled, round 17 reveals five of them
        assert state.pass_no == 2 and state.round == 17 and len(state.draw) == 75 and sum(state.discard) == 0
    else:
        state = build(options, display=_five(CANDY), draw=_five(SAND), round_=15)
        play(state, "pass", "pass")  # round 16 reveals the last five cards and reshuffles at once
        assert state.round == 16 and state.pass_no == 2 and len(state.draw) == 75
        assert sum(state.discard) == 0
        play(state, "pass", "pass")  # the five unused cards of round 16 are never drawn again
        assert state.pass_no == 2 and sum(state.discard) == 5
        assert all(state.discard[k] == 1 for k in _five(SAND))


@pytest.mark.parametrize("partial", [True, False])
def test_F9_final_partial_round(partial):
    """Pass 2 leaves 3 cards after this round."""
    state = build({"final_partial_round": partial}, display=_five(CANDY), draw=_five(SAND)[:3], pass_no=2,
                  round_=30)
    play(state, "pass", "pass")
    if partial:
        assert state.k == 3 and state.legal_actions() == [PASS, 1, 2, 3]  # bids capped at k
        play(state, "bid 3")
        assert state.phase == "teardown"  # a bid of k stops the bidding
        play(state, "tear down none", "take slot 0", "take slot 1", "take slot 2")
        play(state, "place slot 2", "place slot 1", "place slot 0")  # Sand 3, 2, 1
        assert state.is_terminal() and state.draw == []  # F19
    else:
        assert state.is_terminal() and len(state.draw) == 3 and state.round == 30  # F29: unused cards stay


def test_F19_the_game_ends_when_pass_two_runs_out():
    state = build(display=_five(CANDY), draw=[], pass_no=2, round_=28)
    play(state, "bid 2", "pass", "tear down none", "take slot 0", "take slot 1", "place slot 1")
    assert not state.is_terminal()
    play(state, "place slot 0")
    assert state.is_terminal() and state.current_player == TERMINAL and state.phase == "terminal"
    assert state.legal_actions() == [] and not state.action_mask().any()
    assert sum(state.discard) == 3 + (80 - 5) and state.end_info()["rounds"] == 28


def test_F9_an_empty_discard_pile_at_reshuffle_ends_the_game():
    """Pass 1's last round puts the last five cards into towers: the reshuffle finds nothing."""
    full = list(range(15, -1, -1))
    towers = {0: {CANDY: full, SCARY: full, TREE: full, SAND: [0]},
              1: {SCRAP: full, SAND: list(range(15, 5, -1))}}
    state = build(display=[kind(SAND, v) for v in (5, 4, 3, 2, 1)], towers=towers, draw=[], round_=16)
    play(state, "pass", "bid 5", "tear down none", *[f"take slot {s}" for s in range(5)],
         *[f"place slot {s}" for s in range(5)])
    assert state.is_terminal() and state.pass_no == 2 and state.draw == [] and sum(state.discard) == 0
    assert state.round == 16 and state.towers[1][SAND] == list(range(15, 0, -1))


# ===================================================================== start player (F7, F18, F43)
@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_F43_start_player_rotates(n):
    for first in ["random", n - 1]:
        state = Game(num_players=n, first_player=first).new_initial_state(11)
        if first != "random":
            assert state.first_player == first
        rng = np.random.default_rng(n)
        for _ in range(60):
            if state.phase == "bid" and state.bid_pos == 0:
                assert state.start == state.current_player == (state.first_player + state.round - 1) % n
            legal = state.legal_actions()
            state.apply_action(legal[rng.integers(len(legal))])


def test_F7_random_first_player_comes_from_the_seed():
    game = Game(num_players=5)
    firsts = {game.new_initial_state(seed).first_player for seed in range(40)}
    assert firsts == set(range(5))
    assert game.new_initial_state(7).first_player == game.new_initial_state(7).first_player


# ===================================================================== forced decisions (F35)
@pytest.mark.parametrize("n", [2, 4])
def test_F35_auto_resolve_forced_records_forced_decisions(n):
    auto = Game(num_players=n, auto_resolve_forced=True)
    manual = Game(num_players=n)
    rng = np.random.default_rng(n)
    state = auto.new_initial_state(5)
    while not state.is_terminal():
        assert len(state.legal_actions()) >= 2  # the engine never stops at a forced decision
        legal = state.legal_actions()
        state.apply_action(legal[rng.integers(len(legal))])
    forced = [h for h in state.history if h[2]]
    assert forced and len(forced) < len(state.history)
    replay = manual.new_initial_state(5)  # every decision, forced ones included, replays on the default
    for player, action, was_forced in state.history:
        assert replay.current_player == player
        assert (len(replay.legal_actions()) == 1) == bool(was_forced)
        replay.apply_action(action)
    assert replay.is_terminal() and replay.towers == state.towers and replay.scores() == state.scores()


# ===================================================================== information (F30, F31, F45)
def test_F31_observation_is_egocentric_and_the_same_for_everybody():
    state = feasibility(bid=4)
    play(state, "tear down tree", "take slot 0")
    layout = state.game.layout
    n = state.num_players
    views = [layout.unpack(state.observation(p)) for p in range(n)]
    for p in range(n):
        for name, value in views[p].items():
            expected = np.roll(views[0][name], -p, axis=0) if name in SEAT_FIELDS else views[0][name]
            assert np.array_equal(value, expected), (p, name)
    me = views[0]
    assert me["to_act"].tolist() == [1, 0] and me["winner"].tolist() == [1, 0]
    assert me["phase"].tolist() == [0, 0, 1, 0] and me["take_count"].argmax() == 4
    assert me["display_status"][0].tolist() == [0, 1, 0] and me["display_status"][3].tolist() == [1, 0, 0]
    assert me["display_type"][1].argmax() == CANDY and me["display_value"][1].argmax() == 9
    assert me["tower_top"][0, TREE].argmax() == 8 and me["tower_below"][0, TREE].argmax() == 12
    assert me["tower_sealed"][0].tolist() == [0, 1, 0, 0, 0]
    assert me["tower_height"][0, TREE] == pytest.approx(2 / 16) and me["rubble"][0] == pytest.approx(0.1)
    assert views[1]["tower_top"][1, TREE].argmax() == 8  # seat 0 is row 1 for seat 1
    counts = np.bincount(state.draw, minlength=80)
    assert np.array_equal(me["unseen"], counts) and me["draw_pile"][0] == pytest.approx(len(state.draw) / 80)


def test_F30_towers_in_order_and_rubble_piles_are_observed():
    """Issue 8's pair: seat 0 Tree [15, 12, 8, 3] with seat 1's rubble {Tree 14}, against seat 0 Tree
    [14, 12, 8, 3] with rubble {Tree 15}. Same tops, heights, scores and rubble counts; F30 lets everybody
    see the difference, so every observation must show it."""
    display = [kind(SAND, 4), kind(CANDY, 9)]
    a = build(display=display, towers={0: {TREE: [15, 12, 8, 3]}}, rubble={1: [kind(TREE, 14)]})
    b = build(display=display, towers={0: {TREE: [14, 12, 8, 3]}}, rubble={1: [kind(TREE, 15)]})
    assert a.draw == b.draw and a.scores() == b.scores()
    for p in range(2):
        assert not np.array_equal(a.observation(p), b.observation(p)), f"seat {p} cannot tell them apart"
    seen = a.game.layout.unpack(a.observation(1))  # seat 1's view: seat 0 is row 1
    assert np.allclose(seen["tower_cards"][1, TREE, :5] * 16 - 1, [15, 12, 8, 3, -1])
    assert seen["rubble_cards"][0, kind(TREE, 14)] == 1 and seen["rubble_cards"].sum() == 1


def test_F45_shuffling_the_draw_pile_changes_no_observation():
    state = feasibility()
    other = state.clone()
    other.draw = list(reversed(other.draw))
    for p in range(2):
        assert np.array_equal(state.observation(p), other.observation(p))
        assert state.render_text(p) == other.render_text(p)
    assert state.render_text() != other.render_text()  # only the omniscient view shows the order


# ===================================================================== options
@pytest.mark.parametrize(("options", "name", "allowed"), [
    ({"num_players": 1}, "num_players", "2, 3, 4, 5"),
    ({"num_players": 6}, "num_players", "2, 3, 4, 5"),
    ({"first_player": 2}, "first_player", "0..1"),
    ({"num_players": 4, "first_player": 4}, "first_player", "0..3"),
    ({"first_player": "left"}, "first_player", "'random'"),
    ({"first_player": True}, "first_player", "'random'"),
    ({"tie_rule": "split"}, "tie_rule", "'shared'"),
    ({"canonical_order": 1}, "canonical_order", "True or False"),
    ({"auto_resolve_forced": "yes"}, "auto_resolve_forced", "True or False"),
    ({"final_partial_round": None}, "final_partial_round", "True or False"),
    ({"reshuffle_includes_last_round": 0}, "reshuffle_includes_last_round", "True or False"),
    ({"zero_starts_tower": "no"}, "zero_starts_tower", "True or False"),
    ({"rebuild_removed_tower": 1.0}, "rebuild_removed_tower", "True or False"),
    ({"players": 3}, "players", "num_players"),
], ids=lambda x: repr(x)[:40])
def test_bad_options_name_the_option_and_the_allowed_values(options, name, allowed):
    with pytest.raises(ValueError) as error:
        Game(**options)
    message = str(error.value)
    assert "Five Towers" in message and name in message and allowed in message, message
