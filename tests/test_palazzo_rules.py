"""Scenario tests for the rules of ``docs/rules/palazzo.md`` (test names carry the rule ids).

Every worked example E1–E12 is here, with every mask it lists, plus tests per rule for setup, money and
payments (the reach formula brute-forced against all payments of small hands, the masks against every
completion), tiles, buying, auctions and distributions, building, reconstruction, scoring, the turn cap,
hand knowledge and the engine switches. Positions are built through the public API only (``to_json`` →
edit → ``State.from_json``, see ``palazzo_helpers.build``) and driven with ``apply_action``.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tabletop_rl.envs.core.game import TERMINAL
from tabletop_rl.envs.palazzo import Game
from tabletop_rl.envs.palazzo.game import FLOOR, MATERIAL, WINDOWS, palace_score
from tabletop_rl.envs.palazzo.payments import best_pay, legal_units, reach
from tests.palazzo_helpers import (
    AUCTION,
    BUY,
    BY_FLOOR_STACKS,
    COPIES,
    DEST_DISCARD,
    DEST_NEW,
    DONE,
    KIND,
    PASS,
    RECONSTRUCT,
    RIDER,
    TAKE_MONEY,
    build,
    card,
    counts,
    dest,
    expected_legal,
    floor,
    group,
    legal_names,
    material,
    money_locations,
    play,
    ref_best_pay,
    ref_palace_score,
    ref_reach,
    tile,
    tile_action,
    unit_cards,
    unit_currency,
    unit_value,
    windows,
)


def hand_of(state, p: int) -> str:
    return " ".join(k for k, i in KIND.items() for _ in range(state.hands[p][i]))


# ===================================================================== components and setup (P1–P11)
def test_P4_tile_table_and_twins():
    for t in range(48):
        assert (FLOOR[t], WINDOWS[t], MATERIAL[t]) == (floor(t), windows(t), material(t))
    assert [sum(FLOOR[t] == f for t in range(48)) for f in range(1, 6)] == [9, 9, 12, 9, 9]
    for twin in (6, 22, 38):  # identical in play, distinct ids
        assert (FLOOR[twin], WINDOWS[twin], MATERIAL[twin]) == (FLOOR[twin + 1], WINDOWS[twin + 1],
                                                                 MATERIAL[twin + 1]) == (3, 1, twin // 16)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_P2_P8_P9_P10_setup(n):
    state = Game(num_players=n).new_initial_state(3)
    assert money_locations(state) == COPIES and sum(COPIES) == 55  # P2
    assert [len(s) for s in state.stacks] == [11, 16, 21] and state.stacks[2].count(RIDER) == 5  # P8, P30
    assert len(state.supply) == 1 and [len(q) for q in state.quarries] == [1, 1, 1, 1] and state.mb == 0  # P9
    assert all(BY_FLOOR_STACKS[0].count(t) for t in state.supply + sum(state.quarries, []))
    assert [sum(h) for h in state.hands] == [4] * n and len(state.deck) == 55 - 4 * n  # P10
    assert state.known == [[0] * 16] * n and not any(state.discard) and not state.x3_out  # P70a, P3
    assert state.phase == "D1 action" and state.current_player == state.active and state.turn == 0


def test_P7_stack_splits():
    for s, ids in enumerate(BY_FLOOR_STACKS):  # A1 by_floor, exactly as listed
        assert sorted(t for t in range(48) if Game().new_initial_state(0).member[t] == s) == ids
    for seed in range(5):
        member = Game(stack_split="by_floor_shuffled").new_initial_state(seed).member
        per_stack = [sorted(floor(t) for t in range(48) if member[t] == s) for s in range(3)]
        assert per_stack == [[1] * 9 + [2] * 7, [2] * 2 + [3] * 12 + [4] * 2, [4] * 7 + [5] * 9]
        member = Game(stack_split="random").new_initial_state(seed).member
        assert [member.count(s) for s in range(3)] == [16, 16, 16]
    shuffled = {tuple(Game(stack_split="by_floor_shuffled").new_initial_state(s).member) for s in range(5)}
    assert len(shuffled) > 1


def test_P11_first_player():
    assert {Game(first_player=2).new_initial_state(s).active for s in range(5)} == {2}
    assert len({Game().new_initial_state(s).active for s in range(20)}) == 4  # A6: drawn by the generator


# ===================================================================== money and payments (P16–P24)
def _payments(hand: list[int], c: int):
    """Every legal payment (P16–P19) from ``hand`` whose single currency cards are of currency c (or none):
    yields its value. Groups, certificate groups, single certificates and singles enumerated exhaustively."""
    h = lambda x, v: hand[5 * x + v - 3]  # noqa: E731
    z = hand[15]
    group_ranges = [range(min(h(x, v) for x in range(3)) + 1) for v in range(3, 8)]
    for groups in itertools.product(*group_ranges):
        for zg in range(z // 3 + 1):
            for zs in range(z - 3 * zg + 1):
                singles = [range(h(c, v) - groups[v - 3] + 1) for v in range(3, 8)] if c >= 0 else [[0]] * 5
                for s in itertools.product(*singles):
                    yield 15 * sum(groups) + 15 * zg + 2 * zs + sum(n * v for n, v in zip(s, range(3, 8),
                                                                                         strict=True))


def _hands(max_size: int):
    kinds = range(16)
    for size in range(max_size + 1):
        for combo in itertools.combinations_with_replacement(kinds, size):
            hand = [combo.count(k) for k in range(16)]
            if all(hand[k] <= COPIES[k] for k in range(16)):
                yield hand


def test_P22_P24_reach_formula_equals_the_best_of_all_payments_of_small_hands():
    rng = np.random.default_rng(0)
    hands = list(_hands(3))
    for _ in range(150):  # and larger random hands, with groups and certificate groups
        hands.append([int(x) for x in rng.integers(0, 2, 15)] + [int(rng.integers(0, 8))])
    hands += [counts("A3 B3 C3 A3 A3 B3 C3 Z Z Z Z Z Z Z"), counts("A7 B7 C7 A7 A6 A5 B4 C4 A4 Z Z")]
    for hand in hands:
        for c in range(3):
            best = max(_payments(hand, c))
            assert reach(hand, c) == ref_reach(hand, c) == best, (hand, c)
        assert best_pay(hand) == ref_best_pay(hand) == max(max(_payments(hand, c)) for c in range(3))


def _completions(hand: list[int], c: int, low: int, need: int, canonical: bool) -> bool:
    """Brute force of P23 / P23a: can units (each of id ≥ ``low`` if canonical) reach ``need``?"""
    if need <= 0:
        return True
    for b in range(53, 75):
        if canonical and b < low:
            continue
        cur = unit_currency(b)
        if cur >= 0 and c >= 0 and cur != c:
            continue
        rest = list(hand)
        for k in unit_cards(b):
            rest[k] -= 1
        if min(rest) >= 0 and _completions(rest, cur if cur >= 0 else c, b, need - unit_value(b), canonical):
            return True
    return False


@pytest.mark.parametrize("canonical", [True, False])
def test_P23_P23a_masks_are_exactly_the_units_that_some_completion_follows(canonical):
    rng = np.random.default_rng(1 + canonical)
    for _ in range(400):
        hand = [int(x) for x in rng.integers(0, 2, 15)] + [int(rng.integers(0, 5))]
        c = int(rng.integers(-1, 3))
        a = int(rng.choice([0, 0, 55, 60, 68, 70])) if canonical else 0
        need = int(rng.integers(0, 40))
        expected = []
        for b in range(53, 75):
            cur = unit_currency(b)
            rest = list(hand)
            for k in unit_cards(b):
                rest[k] -= 1
            if min(rest) < 0 or (canonical and b < a) or (cur >= 0 and c >= 0 and cur != c):
                continue
            if _completions(rest, cur if cur >= 0 else c, b, need - unit_value(b), canonical):
                expected.append(b)
        assert legal_units(hand, c, a, canonical, need) == expected, (hand, c, a, need)


def test_P23a_every_payment_is_reachable_in_ascending_order_and_never_gets_stuck():
    """Enter payments unit by unit through the engine's masks (T = 12, P38): every multiset of units that
    reaches T, sorted by id, passes every mask; after each step some unit or DONE stays legal (I10)."""
    hand = "A3 A4 A7 B3 B4 C3 C4 Z Z Z"
    for units in itertools.combinations_with_replacement([card("A3"), card("A4"), card("A7"), card("B4"),
                                                          card("Z"), group(3), group(4), group("Z")], 3):
        need = counts(hand)
        for b in units:
            for k in unit_cards(b):
                need[k] -= 1
        currencies = {unit_currency(b) for b in units} - {-1}
        if min(need) < 0 or len(currencies) > 1 or sum(unit_value(b) for b in units) < 12:
            continue
        state = _buy_payment(hand, target=12)
        for b in units:
            assert state.legal_actions(), "stuck"
            play(state, b)
        play(state, "done")
        assert state.decision == 8


def _buy_payment(hand: str, target: int, options: dict | None = None):
    """A D5 state of player 0 with T = ``target`` (p = target / 2, two tiles selected)."""
    supply = list(range(16, 16 + 10 - target // 2))
    state = build(options or {"num_players": 2}, hands={0: hand}, supply=supply[:-1], stacks=[[supply[-1], 35]],
                  turn=2)
    play(state, "tiles", "buy", tile_action(supply[0]), tile_action(supply[1]))
    assert state.decision == 5 and state.pay_target == target
    return state


def test_E2_payment_values_and_legality():
    def paid(hand: str, *units: int) -> int:
        state = _buy_payment(hand, target=0)
        play(state, *units)
        return state.pay_value

    assert paid("A4 B4 C4", group(4)) == 15
    state = play(_buy_payment("A4 B4 C4", 0), card("A4"))
    assert card("B4") not in state.legal_actions() and card("C4") not in state.legal_actions()  # mixed currency
    assert paid("Z Z A5 B5 C5", card("Z"), card("Z"), group(5)) == 19  # the two Z are singles
    state = play(_buy_payment("A5 B3", 0), card("A5"))
    assert card("B3") not in state.legal_actions()  # A5 B3: two currencies
    state = play(_buy_payment("A4 A4 B4", 0), card("A4"), card("A4"))
    assert state.legal_actions() == [DONE] and state.pay_value == 8  # no group without C4, no B4 single
    assert group(4) not in _buy_payment("A4 A4 B4", 0).legal_actions()
    assert paid("A7 A7 A7", card("A7"), card("A7"), card("A7")) == 21
    assert paid("Z Z Z", group("Z")) == 15 and paid("Z Z Z", card("Z"), card("Z"), card("Z")) == 6
    assert paid("A6 A3 Z A7 B7 C7", card("A3"), card("A6"), card("Z"), group(7)) == 26
    assert paid("A4 A4 B4 C4", card("A4"), group(4)) == 19


def _e3(canonical: bool):
    """E3: supply of 4 tiles after the draw, p = 6, two tiles selected, T = 12, hand {A7, A6, B5, Z}."""
    state = build({"num_players": 2, "canonical_order": canonical}, hands={0: "A7 A6 B5 Z"}, supply=[16, 17, 18],
                  stacks=[[19, 33]])
    play(state, "tiles", "buy")
    assert state.price == 6 and best_pay(state.hands[0]) == 15  # R(H, A) = 15, R(H, B) = 7, R(H, C) = 2
    assert [reach(state.hands[0], c) for c in range(3)] == [15, 7, 2]
    play(state, "tile 16 s1.1")
    assert tile_action(17) in state.legal_actions()  # BestPay 15 ≥ 2p = 12
    return play(state, "tile 17 s1.2")


def test_E3_masks_in_a_payment_canonical_order():
    state = _e3(True)
    assert state.pay_target == 12 and state.legal_actions() == [card("A6")]
    play(state, "card A6")
    assert state.legal_actions() == [card("A7")]  # Z next would leave 8 + 0 < 12
    play(state, "card A7")
    assert state.pay_value == 13 and state.legal_actions() == [card("Z"), DONE]
    play(state, "card Z")
    assert state.pay_value == 15 and state.legal_actions() == [DONE]
    play(state, "done")
    assert state.decision == 8 and sorted(state.pending) == [16, 17] and state.discard == counts("A6 A7 Z")


def test_E3_masks_in_a_payment_free_order():
    state = _e3(False)
    assert state.legal_actions() == [card("A6"), card("A7"), card("Z")]  # B5 (5 + 2 < 12) and DONE masked
    play(state, "card A7", "card Z")
    assert state.pay_value == 9 and state.legal_actions() == [card("A6")]
    play(state, "card A6")
    assert state.legal_actions() == [DONE] and state.pay_value == 15  # 3 overpaid, no change
    orders = set()
    for order in itertools.permutations(["card A6", "card A7", "card Z"]):
        orders.add(play(_e3(False), *order, "done").to_json())
    assert len(orders) == 1  # all six orders reach the same position


# ===================================================================== take money (P25–P29)
def test_E9_take_money_with_a_reshuffle():
    state = build({"num_players": 3}, active=2, deck="A5 Z", discard="B4 B5 B6 B7 C3 C4 C5 C6 C7", rest_to=0)
    assert TAKE_MONEY in state.legal_actions()  # deck 2 + discard 9 = 11 ≥ n + 1 = 4
    play(state, "take money")
    assert sum(state.display) == 4 and state.display[KIND["A5"]] == state.display[KIND["Z"]] == 1
    assert len(state.deck) == 7 and not any(state.discard) and state.deck_known  # P26, P28 on_draw
    assert state.pickers == [2, 2, 0, 1]


@pytest.mark.parametrize("canonical", [True, False])
def test_E9_picks_in_canonical_order(canonical):
    state = build({"num_players": 3, "canonical_order": canonical}, active=2, display="A5 A5 Z C7",
                  decision=2, pickers=[2, 2, 0, 1])
    first = [card("A5"), card("C7")] + ([] if canonical else [card("Z")])
    assert state.legal_actions() == sorted(first)  # not Z: the only card of the highest kind (P27)
    play(state, "card A5")
    assert state.legal_actions() == [card("A5"), card("C7"), card("Z")]
    play(state, "card Z")
    assert state.current_player == 0 and state.legal_actions() == [card("A5"), card("C7")]
    play(state, "card C7")
    assert state.current_player == 1 and state.legal_actions() == [card("A5")]  # asked, not auto-resolved
    play(state, "card A5")
    assert state.turn == 1 and state.active == 0 and hand_of(state, 2) == "A5 Z"
    assert state.known[2] == counts("A5 Z") and state.known[0] == counts("C7")  # P70a: picks are public


@pytest.mark.parametrize(("timing", "deck_after", "discard_after"), [("on_draw", 0, 3), ("on_empty", 3, 0)])
def test_P28_reshuffle_timing(timing, deck_after, discard_after):
    """The deck runs out on the last reveal: on_draw waits for the next draw, on_empty reshuffles at once."""
    state = build({"num_players": 2, "reshuffle_timing": timing}, deck="A3 A4 A5", discard="B3 B4 B5", rest_to=1)
    play(state, "take money")
    assert len(state.deck) == deck_after and sum(state.discard) == discard_after
    assert state.deck_known == (timing == "on_empty")


@pytest.mark.parametrize(("left", "legal"), [(3, False), (4, True)])
def test_P12_P25_take_money_needs_n_plus_one_cards(left, legal):
    every = [k for k in KIND for _ in range(COPIES[KIND[k]])]
    state = build({"num_players": 3}, hands={1: " ".join(every[:-left])}, known={1: ""}, deck=" ".join(every[-left:]))
    assert len(state.deck) + sum(state.discard) == left and (TAKE_MONEY in state.legal_actions()) == legal


# ===================================================================== tiles (P30–P34)
def test_E4_second_tile_lands_by_windows_and_the_auction_move():
    for mb, targets in ((2, (3, 0, 1)), (0, (1, 2, 3))):  # never the master builder's quarry
        for w, q in zip((1, 2, 3), targets, strict=True):
            t = tile(f"b1.{w}")
            state = build({"num_players": 2}, mb=mb, stacks=[[20, t]])
            play(state, "tiles")
            assert t in state.quarries[q] and state.supply == [20]
    state = build({"num_players": 2}, mb=2, quarries={0: [32], 1: [33, 34, 35, 36]}, stacks=[[20, 1]])
    play(state, "tiles")  # b1.2 (2 windows) lands on quarry 0
    assert state.quarries[0] == [32, 1] and not state.quarries[3]
    play(state, "auction")
    assert state.mb == 0 and state.in_auction and state.quarries[1] == [33, 34, 35, 36]  # P40


def test_E5_a_buy_turn():
    state = build({"num_players": 3}, active=1, mb=1, hands={1: "A5 B5 C5"}, supply=[16, 17, 18], stacks=[[4, 28]])
    play(state, "tiles")
    assert state.supply == [4, 16, 17, 18] and state.quarries[0] == [28]  # (1 + 3) mod 4 = 0
    play(state, "buy")
    assert state.price == 6
    play(state, "tile 4 b2.2", "tile 16 s1.1")
    assert state.pay_target == 12
    play(state, "group [A5 B5 C5]", "done")
    assert state.pending == [16, 4] and state.current_player == 1  # floor 1 first (P53)
    play(state, "new palace", "palace 0")
    assert state.palaces[1] == [[16, 4]] and state.turn == 1 and state.active == 2


def test_E5_rider_first_leaves_the_supply_unchanged():
    state = build({"num_players": 3}, active=1, mb=1, hands={1: "A5 B5 C5"}, supply=[16, 17, 18],
                  stacks=[[], [], [RIDER, 28, RIDER]], rest_removed=True, riders=3)
    play(state, "tiles")
    assert state.riders == 4 and state.supply == [16, 17, 18] and state.quarries[0] == [28]
    play(state, "buy")
    assert state.price == 7  # P36: 10 − 3


def test_P30_a_turns_second_draw_continues_into_the_next_stack():
    state = build({"num_players": 2}, stacks=[[0], [6, 7]], rest_removed=True)
    play(state, "tiles")
    assert state.supply == [0] and 6 in state.quarries[(0 + 1) % 4] and state.stacks[1] == [7]


@pytest.mark.parametrize("first", [True, False])
def test_P32_P33_P60_the_fifth_rider_ends_the_game_at_once(first):
    items = [RIDER, 47] if first else [47, RIDER]
    state = build({"num_players": 2}, hands={0: "A3", 1: "A7 B7 C7"}, palaces={1: [[0, 3, 6]]},
                  stacks=[[], [], items], rest_removed=True, riders=4)
    play(state, "tiles")
    assert state.is_terminal() and not state.is_truncated() and state.riders == 5 and state.phase == "terminal"
    assert state.stacks[2] == ([47] if first else [])  # the second item is not drawn after a first rider
    assert state.returns().tolist() == [-1.0, 1.0] and state.legal_actions() == []


# ===================================================================== buy (P35–P39)
def test_P35_P36_buy_needs_a_supply_tile_and_bestpay_at_least_p():
    state = build({"num_players": 2}, hands={0: "A3 B4"}, supply=[16, 17], stacks=[[18, 33]])
    play(state, "tiles")
    assert state.legal_actions() == [AUCTION]  # p = 7 > BestPay 4
    state = build({"num_players": 2}, hands={0: "A3 A4"}, supply=[16, 17], stacks=[[18, 33]])
    play(state, "tiles")
    assert state.legal_actions() == [BUY, AUCTION]  # BestPay 7 = p
    state = build({"num_players": 2}, hands={0: "A7 B7 C7"}, stacks=[[], [], [RIDER, 40]], rest_removed=True)
    play(state, "tiles")
    assert state.supply == [] and state.legal_actions() == [AUCTION]  # no supply tile


@pytest.mark.parametrize(("supply", "minimum", "price"), [(11, 0, 0), (12, 0, 0), (12, 3, 3), (4, 3, 6)])
def test_P36_A2_price_floor(supply, minimum, price):
    tiles = list(range(supply - 1))
    state = build({"num_players": 2, "min_tile_price": minimum}, hands={0: "A7 B7 C7"}, supply=tiles,
                  stacks=[[supply - 1, 40] if supply - 1 < 40 else [16, 40]])
    play(state, "tiles", "buy")
    assert state.price == price


def test_P37_P38_second_tile_needs_2p_and_a_greater_id_and_t_zero_pays_nothing():
    state = build({"num_players": 2}, hands={0: "A5 A6"}, supply=[16, 17, 18], stacks=[[19, 33]])
    play(state, "tiles", "buy", "tile 17 s1.2")  # p = 6, BestPay 11 < 12
    assert state.legal_actions() == [DONE]
    state = build({"num_players": 2}, hands={0: "A5 A7"}, supply=[16, 17, 18], stacks=[[19, 33]])
    play(state, "tiles", "buy", "tile 17 s1.2")
    assert state.legal_actions() == [tile_action(18), tile_action(19), DONE]  # canonical: greater ids
    state = build({"num_players": 2, "canonical_order": False}, hands={0: "A5 A7"}, supply=[16, 17, 18],
                  stacks=[[19, 33]])
    play(state, "tiles", "buy", "tile 17 s1.2")
    assert state.legal_actions() == [tile_action(16), tile_action(18), tile_action(19), DONE]
    state = build({"num_players": 2}, supply=list(range(16, 26)), stacks=[[26, 33]])
    play(state, "tiles", "buy", "tile 16 s1.1", "done")
    assert state.pay_target == 0 and state.legal_actions() == [DONE]  # P38: T = 0, empty hand
    play(state, "done")
    assert state.pending == [16]


# ===================================================================== auctions and distributions (P40–P48)
def test_E6_an_auction():
    state = build({"num_players": 3}, hands={0: "A7 A4 Z", 1: "B5 C3", 2: "A6 B6 C6 Z B7 B4"},
                  quarries={1: [16, 33]}, decision=3)
    play(state, "auction")
    assert state.x3_out and state.high == 3 and state.leader == 0 and state.current_player == 1  # step 1
    assert state.legal_actions() == [card("B5"), PASS]  # step 2: C3 masked (reach 3 < 4)
    play(state, "card B5", "done")
    assert state.high == 5 and state.leader == 1 and state.current_player == 2
    assert group(6) in state.legal_actions()
    play(state, "group [A6 B6 C6]", "done")  # step 3
    assert state.high == 15 and state.current_player == 0
    assert state.pay_value == 3 and state.pay_target == 16
    assert state.legal_actions() == [card("A4"), PASS]  # step 4: only this order (canonical)
    play(state, "card A4", "card A7", "card Z", "done")
    assert state.high == 16 and state.leader == 0 and state.bid_value[0] == 16
    assert state.current_player == 1 and state.legal_actions() == [PASS]  # step 5: C3 has the wrong currency
    play(state, "pass")
    assert hand_of(state, 1) == "B5 C3" and state.known[1][KIND["B5"]] == 1  # back to the hand, publicly
    assert state.current_player == 2 and state.pay_value == 15 and state.pay_currency == -1
    play(state, "card Z", "done")  # step 6
    assert state.high == 17 and state.leader == 2
    assert state.current_player == 0 and state.legal_actions() == [PASS]  # step 7: empty hand
    play(state, "pass")
    assert hand_of(state, 0) == "A4 A7 Z" and not state.x3_out
    assert state.decision == 8 and state.current_player == 2 and state.pending == [16, 33]  # step 8
    assert state.discard == counts("A6 B6 C6 Z") and hand_of(state, 2) == "B4 B7"
    play(state, "new palace", "discard tile")
    assert state.turn == 1 and state.active == 1 and state.current_player == 1  # the left neighbour of P0


def test_E6_canonical_order_off_allows_any_order_of_the_raise():
    state = build({"num_players": 3, "canonical_order": False}, hands={0: "A7 A4 Z", 1: "B5 C3",
                                                                        2: "A6 B6 C6 Z B7 B4"},
                  quarries={1: [16, 33]}, decision=3)
    play(state, "auction", "card B5", "done", "group [A6 B6 C6]", "done")
    assert state.legal_actions() == [card("A4"), card("A7"), card("Z"), PASS]
    play(state, "card Z", "card A7", "card A4", "done")
    assert state.high == 16


def test_E7_the_rulebooks_auction_recomputed():
    state = build({"num_players": 2}, hands={0: "A4 B4 C4 B6 Z Z Z A7", 1: "A3 B3 C3 A5 A5 A6"},
                  quarries={1: [16]}, decision=3)
    play(state, "auction", "group [A3 B3 C3]", "done")
    assert state.high == 15 and state.pay_target == 16
    play(state, "group [A4 B4 C4]", "done")
    assert state.high == 18
    play(state, "card A5", "card A5", "done")
    assert state.high == 25 and state.pay_target == 26
    assert group("Z") in state.legal_actions()  # she could add [Z Z Z] (33)
    play(state, "card B6", "card Z", "done")
    assert state.high == 26 and state.bid_currency[0] == 1  # currency B
    play(state, "card A6", "done")
    assert state.high == 31 and hand_of(state, 0) == "A7 Z Z"
    assert state.legal_actions() == [PASS]  # A7 wrong currency, no [Z Z Z], 26 + 4 = 30 < 32
    play(state, "pass")
    assert hand_of(state, 0) == "A4 A7 B4 B6 C4 Z Z Z" and not state.x3_out and state.current_player == 1
    assert state.discard == counts("A3 B3 C3 A5 A5 A6") and state.pending == [16]


def test_E8_a_distribution():
    state = build({"num_players": 2}, active=1, quarries={1: [16, 17, 18, 19, 20]}, decision=3)
    play(state, "auction")
    assert state.phase == "D7 distribution pick" and state.current_player == 1
    assert state.legal_actions() == [tile_action(t) for t in (16, 17, 18, 19, 20)]
    play(state, "tile 18 s1.3", "new palace")
    assert state.current_player == 0 and state.legal_actions() == [tile_action(t) for t in (16, 17, 19, 20)]
    play(state, "tile 16 s1.1", "new palace")
    assert sorted(state.removed) == [17, 19, 20] and state.quarries[1] == [] and state.turn == 1
    assert state.palaces == [[[16]], [[18]]] and state.current_player == 0  # P0 is next anyway


def test_P41_everybody_gets_a_tile_and_may_discard_it():
    state = build({}, active=2, quarries={1: [16, 17, 18, 19]}, decision=3)
    play(state, "auction")
    for p in (2, 3, 0, 1):
        assert state.current_player == p
        play(state, state.legal_actions()[0], "discard tile")
    assert sorted(state.removed) == [16, 17, 18, 19] and state.turn == 1


def test_P40_an_empty_auction_ends_the_turn_and_the_master_builder_stays():
    state = build({"num_players": 2}, mb=1, decision=3)
    play(state, "auction")
    assert state.mb == 1 and state.turn == 1 and state.active == 1 and not state.in_auction


def test_P47_everybody_passes_and_the_active_player_pays_nothing():
    state = build({"num_players": 3}, active=1, hands={0: "A7", 2: "Z"}, quarries={1: [16]}, decision=3)
    play(state, "auction")
    assert state.current_player == 2  # P43: left of the active player
    play(state, "pass")
    assert state.current_player == 0
    play(state, "pass")
    assert state.decision == 8 and state.current_player == 1 and not any(state.discard) and not state.x3_out


def test_P43_P45_passed_players_are_skipped_and_pass_is_only_before_an_addition():
    state = build({"num_players": 3}, hands={0: "A3 A4 A5", 1: "B7", 2: "C5 C6"}, quarries={1: [16]}, decision=3)
    play(state, "auction", "pass")  # P1 passes
    assert state.current_player == 2
    play(state, "card C5")
    assert PASS not in state.legal_actions() and DONE in state.legal_actions()
    play(state, "done")
    assert state.current_player == 0  # P1 is skipped
    play(state, "card A3")
    assert state.legal_actions() == [card("A4"), card("A5"), DONE]  # V = 3 + 3 = 6 ≥ T = 6
    play(state, "done")
    assert state.current_player == 2 and state.leader == 0  # the leader is never asked


# ===================================================================== building (P49–P54)
def test_E11_placement_order():
    state = build({"num_players": 3}, active=2, palaces={2: [[16]]}, quarries={1: [19, 41, 8]}, decision=3)
    play(state, "auction", "pass", "pass")
    assert state.current_player == 2 and state.pending == [19, 8, 41]  # s2.1, b3.2 (id 8), m3.3 (id 41)
    assert state.legal_actions() == [dest(0), DEST_NEW, DEST_DISCARD]
    play(state, "palace 0", "palace 0")
    assert state.palaces[2] == [[16, 19, 8]] and state.pending == [41]
    assert state.legal_actions() == [DEST_NEW, DEST_DISCARD]  # floor 3 is taken
    f = state.game.layout.unpack(state.observation(2))
    assert f["tile_focus"][41] == 1 and f["tile_focus"].sum() == 1


def test_P51_P53_a_palace_made_in_this_batch_takes_later_tiles():
    state = build({"num_players": 2}, quarries={1: [33, 35, 44]}, decision=3)
    play(state, "auction", "pass")
    assert state.pending == [33, 35, 44]
    play(state, "new palace", "palace 0", "palace 0")
    assert state.palaces[0] == [[33, 35, 44]] and state.score(0) == 2 + 1 + 3 + 3  # W 6 + mono 3


# ===================================================================== reconstruct (P55–P59)
def test_E10_reconstruct_insert():
    state = build({"num_players": 2}, hands={0: "A3 Z"}, palaces={0: [[1, 6], [4]]})
    play(state, "reconstruct")
    assert state.legal_actions() == [tile_action(t) for t in (1, 4, 6)]
    play(state, "tile 6 b3.1")
    assert state.legal_actions() == [DEST_NEW]  # P58: no straight move into another palace
    state = build({"num_players": 2}, hands={0: "A3 Z"}, palaces={0: [[1, 6], [4]]})
    play(state, "reconstruct", "tile 4 b2.2")
    assert state.legal_actions() == [dest(0), DEST_DISCARD]
    play(state, "palace 0")
    assert state.palaces[0] == [[1, 4, 6]] and state.decision == 11
    assert state.legal_actions() == [card("A3"), card("Z")]  # D11: any card
    play(state, "card Z")
    assert state.discard[KIND["Z"]] == 1 and hand_of(state, 0) == "A3" and state.turn == 1


def test_E1_rulebook_tip_one_insert_gains_13():
    state = build({"num_players": 2}, hands={0: "A3"}, palaces={0: [[6], [3, 12]]})
    assert state.score(0) == -5
    play(state, "reconstruct", "tile 6 b3.1", "palace 1", "card A3")
    assert state.palaces[0] == [[3, 6, 12]] and state.score(0) == 8


def test_P56_remove_from_the_middle_and_insert_at_the_bottom():
    state = build({"num_players": 2}, hands={0: "A3", 1: "A4"}, palaces={0: [[0, 4, 8], [33]]})
    play(state, "reconstruct", "tile 4 b2.2", "new palace", "card A3")
    assert state.palaces[0] == [[0, 8], [33], [4]]  # the rest of the palace stays valid
    state = build({"num_players": 2}, hands={0: "A3"}, palaces={0: [[4, 8], [33]]})
    play(state, "reconstruct", "tile 33 m1.2", "palace 0", "card A3")
    assert state.palaces[0] == [[33, 4, 8]]  # P56: inserted below, the floors keep rising


def test_P56_P50_discarding_a_single_tile_palace_shifts_the_later_slots():
    state = build({"num_players": 2}, hands={0: "A3"}, palaces={0: [[16], [33], [19, 24]]})
    play(state, "reconstruct", "tile 16 s1.1")
    assert state.legal_actions() == [dest(2), DEST_DISCARD]  # [33] already has a floor 1
    play(state, "discard tile", "card A3")
    assert state.palaces[0] == [[33], [19, 24]] and 16 in state.removed
    f = state.game.layout.unpack(state.observation(0))
    assert round(float(f["tile_slot"][19]) * 48) == 2 and f["tile_slot"][16] == 0  # slot 1, stored + 1


@pytest.mark.parametrize("noop", [False, True])
def test_P59_A4_noop_reconstruct(noop):
    state = build({"num_players": 2, "allow_noop_reconstruct": noop}, hands={0: "A3"}, palaces={0: [[16], [33]]})
    play(state, "reconstruct", "tile 16 s1.1")
    assert (DEST_NEW in state.legal_actions()) == noop
    if noop:
        play(state, "new palace", "card A3")
        assert state.palaces[0] == [[33], [16]]  # a paid pass: the palace moves to the last slot


def test_P12_reconstruct_needs_a_card_and_a_palace():
    assert RECONSTRUCT not in build({"num_players": 2}, palaces={0: [[16]]}).legal_actions()
    assert RECONSTRUCT not in build({"num_players": 2}, hands={0: "Z"}).legal_actions()
    assert RECONSTRUCT in build({"num_players": 2}, hands={0: "Z"}, palaces={0: [[16]]}).legal_actions()


# ===================================================================== scoring and the end (P60–P66)
E1 = {"S1": ([44], -5), "S2": ([0, 15], 0), "S3": ([1, 25, 45], 6), "S4": ([32, 36, 38, 47], 13),
      "S5": ([2, 20, 40, 27, 14], 17), "S6": ([17, 19, 22, 28, 29], 20), "S7": ([3, 6, 12], 8)}


@pytest.mark.parametrize("name", E1)
def test_E1_P61_the_rulebooks_scoring_examples(name):
    palace, score = E1[name]
    assert palace_score(palace) == ref_palace_score(palace) == score


def test_E1_all_seven_palaces_in_one_state_score_59():
    state = build({"num_players": 2}, palaces={0: [p for p, _ in E1.values()]})
    assert state.score(0) == 59 and state.scores() == [59, 0]


def _tied_end(hand0: str, hand1: str):
    state = build({"num_players": 2}, hands={0: hand0, 1: hand1}, palaces={0: [E1["S6"][0]], 1: [[1, 3, 6, 12, 13]]},
                  stacks=[[], [], [RIDER]], rest_removed=True, riders=4)
    return play(state, "tiles")


def test_E12_P63_P64_tie_break_by_bestpay():
    state = _tied_end("A7 A6 B7 Z", "A3 B3 C3 Z Z Z")
    assert state.scores() == [20, 20] and state.ranking_key() == [(20, 15), (20, 30)]
    assert state.returns().tolist() == [-1.0, 1.0] and state.end_info()["winners"] == [1]


def test_P63_equal_bestpay_means_co_winners():
    state = _tied_end("A7 A6 B7 Z", "A7 A6 B7 Z")
    assert state.returns().tolist() == [0.0, 0.0] and state.end_info()["winners"] == [0, 1]


def test_P66_the_turn_cap_truncates_before_a_turn_starts():
    state = build({"num_players": 2, "max_turns": 3}, hands={0: "A3"}, turn=2)
    while state.current_player != TERMINAL:
        play(state, state.legal_actions()[0])
    assert state.is_truncated() and state.turn == 3 and not state.returns().any()
    assert state.end_info()["winners"] == [] and state.phase == "terminal"


# ===================================================================== information (P68–P70b)
def test_P70a_known_cards_follow_public_movements():
    state = build({"num_players": 2}, active=1, hands={0: "A3 A4 A5 B6", 1: "C7 C6"}, known={0: "", 1: ""},
                  quarries={1: [16]}, decision=3)
    play(state, "auction", "card A3", "card A4", "done")  # P0's cards leave his hand: U shrinks
    assert state.known[0] == [0] * 16 and sum(state.hands[0]) == 2
    play(state, "card C6")
    play(state, "done")  # P1 raises to 9
    play(state, "pass")  # P0 passes: A3, A4 come back publicly
    assert state.known[0] == counts("A3 A4")
    f = state.game.layout.unpack(state.observation(1))
    assert np.array_equal(np.rint(f["known_cards"][1] * COPIES), counts("A3 A4"))
    assert f["unknown_cards"][1] * 4 == 2  # A5 and B6 are still unknown to P1


def test_A5_removed_tiles_are_hidden_when_not_public():
    for public in (True, False):
        state = build({"num_players": 2, "removed_tiles_public": public}, removed=[16, 33])
        f = state.game.layout.unpack(state.observation(1))
        assert f["removed_count"][0] * 48 == 2
        assert (f["tile_location"][16].argmax() == 8) == public and (f["tile_location"][16].argmax() == 0) != public
        assert ("s1.1" in state.render_text(1)) == public


def test_P69_unseen_cards_of_a_seat():
    state = build({"num_players": 2}, hands={0: "A3 A4", 1: "B5 B6 Z"}, known={1: "Z"}, deck="C7 C6",
                  discard="")
    f = state.game.layout.unpack(state.observation(0))
    unseen = np.rint(f["unseen_cards"] * COPIES).astype(int).tolist()
    assert unseen == [a + b for a, b in zip(counts("B5 B6"), counts("C7 C6"), strict=True)]


# ===================================================================== auto_resolve_forced (P74, I16)
def test_P74_public_forced_decisions_are_applied_hidden_ones_are_asked():
    state = build({"num_players": 2, "auto_resolve_forced": True}, hands={0: "A3"}, palaces={0: [[1, 6]]},
                  deck="Z", rest_to=1)
    assert state.phase == "D1 action" and len(state.legal_actions()) == 2  # TILES, RECONSTRUCT
    play(state, "reconstruct", "tile 6 b3.1")  # D10: REMOVE is the only option, applied by the engine
    assert state.phase == "D11 reconstruct payment" and state.legal_actions() == [card("A3")]  # still asked
    assert state.palaces[0] == [[1], [6]]
    state = build({"num_players": 2, "auto_resolve_forced": True}, active=1, deck="Z", rest_to=1,
                  stacks=[[], [], [16, RIDER, 20, 21, RIDER]], rest_removed=True, riders=3)
    play(state, "tiles", "auction")  # an empty auction ends P1's turn; P0 may only draw tiles (D1)
    assert state.active == 0 and state.phase == "D3 buy or auction" and state.supply == [16, 20]


def test_P74_pass_only_bids_are_still_asked():
    state = build({"num_players": 2, "auto_resolve_forced": True}, hands={1: "C4"}, quarries={1: [16]},
                  decision=3)
    play(state, "auction")
    assert state.current_player == 1 and state.legal_actions() == [card("C4"), PASS]
    state = build({"num_players": 2, "auto_resolve_forced": True}, quarries={1: [16]}, decision=3)
    play(state, "auction")
    assert state.current_player == 1 and state.legal_actions() == [PASS]  # D6 reads the hand: asked (P74)


def test_expected_legal_reference_agrees_on_the_examples():
    state = _e3(True)
    assert state.legal_actions() == expected_legal(state)
    assert legal_names(state) == ["card A6"]
