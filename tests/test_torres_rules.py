"""Scenario tests for the rules of ``docs/rules/torres.md`` (test names carry the rule ids).

Every worked example of the spec (W1–W5) is here, and each rule family: setup (T5–T10), turn's stack and
leftovers (T15–T21), actions (T25–T37), movement and doors (T26–T29), building (T30–T31), every card (T38–T48),
scoring and leap-frog (T50–T54), the king move (T55), the end (T57) and the master version (T58–T64).
Positions are built through the public API (``torres_helpers.build``: ``to_json`` → edit → ``from_json``)
and driven with ``apply_action``.
"""

from __future__ import annotations

import numpy as np
import pytest

from tabletop_rl.envs.core.game import TERMINAL, ChanceNeeded
from tabletop_rl.envs.torres import Game
from tabletop_rl.envs.torres.board import Board
from tabletop_rl.envs.torres.cards import CARD_NAMES, master_points
from tests.torres_helpers import (
    ACQUIRE,
    ADD_KNIGHT,
    AP_6,
    AP_7,
    BLOCK_UNDER_KNIGHT,
    DIAGONAL_MOVE,
    DOOR_CLIMB,
    END_TURN,
    EXTRA_BLOCK,
    JUMP_OVER,
    JUMP_UP_TWO,
    KEEP,
    MOVE_BLOCK,
    MOVE_FROM,
    PASS,
    PLACE_BLOCK,
    PLAY_CARD,
    RELOCATE_KNIGHT,
    RETURN_BOTTOM,
    RETURN_TOP,
    SCORE_STEP,
    SELECT,
    STACK,
    STACK_CURRENT,
    build,
    edited,
    expected_legal,
    name,
    play,
    sq,
)

START = [3, 18, 21, 31, 32, 42, 45, 60]  # T5
W1_ROWS = [". . . 1 . . . .",
           ". . . . . . . .",
           ". . 1 2 . 1 . .",
           ". . . .B . . . 1",
           "1 . . . . . . .",
           ". . 1 . . 1K . .",
           ". . . . . . . .",
           ". . . . 1R . . ."]
W1_IDS = [[3], [18, 19], [21], [31], [32], [42], [45], [60]]  # castle 1 = (2,2)–(2,3), the rest as in T5
W2_ROWS = ["1R 3 1 3 .",
           ". 2 . 1 ."]


def legal_selects(state) -> set[int]:
    return {a - SELECT for a in state.legal_actions() if SELECT <= a < STACK}


def targets(state, first: int, base: int = SELECT) -> set[int]:
    """Squares offered after ``first`` (a MOVE_FROM or a card's knight), on a copy."""
    copy = state.clone()
    copy.apply_action(first)
    return {a - base for a in copy.legal_actions() if base <= a < base + 64}


# ===================================================================== setup (T5–T10)
def test_T5_T7_start_castles_and_supply():
    state = Game().new_initial_state(0)
    b = state.board
    assert [s for s in range(64) if b.h[s]] == START and [b.cid[s] for s in START] == list(range(8))
    assert state.supply == 84 and state.phase == "D2 setup knight" and state.current_player == 0


@pytest.mark.parametrize("n", [2, 3, 4])
def test_T9_T10_knights_in_seat_order_then_the_king_by_the_last_seat(n):
    state = Game(num_players=n).new_initial_state(1)
    for p in range(n):
        assert state.current_player == p and state.phase.startswith("D2")
        free = legal_selects(state)
        assert free == set(START) - {s for ks in state.knights for s in ks}  # empty start castles only
        play(state, f"select {name(min(free))}")
    assert state.current_player == n - 1 and state.phase.startswith("D3")
    king = min(legal_selects(state))
    play(state, f"select {name(king)}")
    assert state.king == king and state.board.h[king] == 1
    assert state.phase_no == 1 and state.current_player == 0 and state.score == [0] * n  # T10
    assert state.phase.startswith("D3a") and state.stacks[0]  # phase-1 stacks dealt (T16)


def test_T5_start_castles_option_takes_lists_and_tuples_and_round_trips():
    squares = (0, 2, 9, 27, 36, 45, 54, 63)  # 0 and 9 touch diagonally only
    game = Game(start_castles=squares)
    assert game.options["start_castles"] == list(squares) == Game(start_castles=list(squares)).options["start_castles"]
    state = game.new_initial_state(0)
    assert [s for s in range(64) if state.board.h[s]] == sorted(squares)
    assert state.board.cid[9] == 2  # ids in the option's order


# ===================================================================== stacks (T15–T21), W5
def test_T15_T16_default_tables_and_dealing():
    for n, table in ((2, [3, 3, 3, 3]), (3, [3, 3, 2, 2]), (4, [2, 2, 2, 2])):
        state = Game(num_players=n).new_initial_state(0)
        while state.phase_no == 0:
            state.apply_action(state.legal_actions()[0])
        assert state.stacks == [table] * n and state.supply == 84 - n * sum(table)


def w5_turn(stacks: list[int], round_: int):
    """4 players, phase 1, Red (seat 0) starts a turn with this stack list."""
    return build(W1_ROWS, {"num_players": 4}, stacks={0: stacks, 1: [2] * 4, 2: [2] * 4, 3: [2] * 4},
                 turn_stack=-1, decision="D3a", round_=round_)


def test_W5_turn_1_only_the_first_of_equal_stacks_and_compulsory_spreading():
    state = w5_turn([2, 2, 2, 2], 1)
    assert state.legal_actions() == [STACK]  # D3a: all equal, only STACK(0)
    play(state, "stack 0")
    assert state.turn_stack == 2 and state.stacks[0] == [2, 2, 2] and state.phase == "D4 action"
    play(state, "place block (1,2)", "end turn")
    assert state.phase == "D11 leftover" and state.leftover == 1 and state.legal_actions() == [STACK]
    play(state, "stack 0")
    assert state.stacks[0] == [3, 2, 2] and state.current_player == 1 and state.supply == 92 - 10 - 2 - 24 - 6


def test_W5_turn_1_with_optional_spreading_also_offers_pass():
    state = build(W1_ROWS, {"num_players": 4, "forced_redistribution": False},
                  stacks={0: [2, 2, 2]}, turn_stack=2)
    play(state, "place block (1,2)", "end turn")
    assert state.legal_actions() == [STACK, PASS]
    supply = state.supply
    play(state, "pass")
    assert state.supply == supply + 1 and state.stacks[0] == [2, 2, 2] and state.current_player == 1


def test_W5_turn_2_leftovers_fill_the_room_then_return_to_the_supply():
    state = w5_turn([3, 2, 2], 2)
    assert state.legal_actions() == [STACK, STACK + 1]  # sizes 3 and 2
    play(state, "stack 1")
    assert state.turn_stack == 2 and state.stacks[0] == [3, 2]
    supply = state.supply
    play(state, "end turn")
    assert state.leftover == 2 and state.legal_actions() == [STACK + 1]  # only the 2 has room
    play(state, "stack 1")
    assert state.stacks[0] == [3, 3] and state.leftover == 0 and state.supply == supply + 1  # I1
    assert state.current_player == 1


def test_T18_no_stack_list_no_stack_decision_and_no_block():
    state = build(W1_ROWS, stacks={0: []}, turn_stack=-1)
    play(state, "end turn")  # seat 0's turn ends; seat 1 has no stacks either: straight to D4
    assert state.current_player == 1 and state.phase == "D4 action" and state.turn_stack == -1
    assert not any(PLACE_BLOCK <= a < SELECT for a in state.legal_actions())


def test_T16_short_supply_deals_clockwise_from_the_phase_first_player_and_skips_empty_stacks():
    # 85 blocks on the board leave 7 in the supply for phase 2 of table [[3], [3, 3], [3]]
    rows = ["5 5 5 5 5 5 5 5", "5 5 5 5 5 5 5 5", ". . . . . . . .", "1 . 1 . 1 . 1 .", ". . . . . . . 1K",
            ". . . . . . . .", ". . . . . . . .", ".R .B .G . . . . ."]
    state = build(rows, {"num_players": 3, "stack_table": [[3], [3, 3], [3]]}, player=2, turn_stack=-1,
                  round_=4, turn_no=2, round_start=0)
    assert state.supply == 7
    play(state, "end turn")  # the phase ends, nobody scores: the king move goes to the highest seat (T55)
    assert state.phase == "D12 king move" and state.current_player == 2
    play(state, "pass")
    assert state.phase_no == 2 and state.stacks == [[3, 3], [1], []] and state.supply == 0


def test_T20_clean_up_returns_unused_stacks():
    state = build(W1_ROWS, stacks={0: [], 1: [3]}, turn_stack=3, round_=4, turn_no=1, player=1,
                  round_start=0)
    supply = state.supply
    play(state, "end turn")  # 3 leftovers, no room in [3] → supply; then the phase ends: [3] returns too
    assert state.phase == "D12 king move" and state.stacks == [[], []] and state.supply == supply + 6


# ===================================================================== actions (T22–T37)
def test_T22_T23_costs_and_a_turn_of_just_end_turn():
    state = build(W1_ROWS, ap=1)
    legal = state.legal_actions()
    assert not any(ADD_KNIGHT <= a < PLACE_BLOCK for a in legal)  # 2 AP
    assert SCORE_STEP in legal and END_TURN in legal
    play(state, "score step")
    assert state.ap == 0 and state.legal_actions() == [END_TURN]


def test_T25_add_knight_next_to_an_own_knight_at_its_level_or_lower():
    rows = [". . . . .", ". 1 2R 3 .", ". . . . .", ". . . . .R"]
    state = build(rows)
    adds = {a - ADD_KNIGHT for a in state.legal_actions() if ADD_KNIGHT <= a < PLACE_BLOCK}
    # from (1,2) at level 2: not (1,3), which is higher; from the ground knight on (3,4): its 4 neighbours
    assert adds == {sq(0, 2), sq(1, 1), sq(2, 2), sq(2, 4), sq(3, 3), sq(3, 5), sq(4, 4)}
    play(state, "add knight (1,1)")
    assert state.ap == 3 and state.in_supply[0] == 3 and state.board.occ[sq(1, 1)] == 0
    state = edited(state, in_supply=[0, state.in_supply[1]])
    assert not any(ADD_KNIGHT <= a < PLACE_BLOCK for a in state.legal_actions())


def test_T27_steps_up_one_down_any_never_diagonal_blocked_by_pieces():
    rows = [". 3 . .",
            "2 2R 1B .",
            "3 1K . .",
            ". . . ."]
    board = build(rows).board
    # (0,1) one up; (1,0) level; (1,2) a knight, (2,1) the king; the diagonals (0,0), (2,0), (0,2) never
    assert board.step_targets(sq(1, 1)) == [sq(0, 1), sq(1, 0)]
    board = build([". . . .", ". 1R 3 .", "2 . . ."]).board
    assert board.step_targets(sq(1, 1)) == [sq(0, 1), sq(1, 0), sq(2, 1)]  # down to the ground, not up two
    state = build([". . . .", ". 1R 3 .", ". . . ."])
    assert sq(1, 2) not in targets(state, MOVE_FROM + sq(1, 1))


def test_T26_a_move_is_paid_at_select_and_cannot_be_withdrawn():
    state = build(W2_ROWS)
    play(state, "move from (0,0)")
    assert state.ap == 5 and state.phase == "D4a move destination"
    assert all(SELECT <= a < STACK for a in state.legal_actions())  # no END_TURN, no other action
    play(state, "select (1,0)")
    assert state.ap == 4 and state.knights[0] == [sq(1, 0)] and state.phase == "D4 action"


def test_T26_knights_without_destination_are_not_offered():
    rows = [". .B .", ".B 3R .B", ". .B ."]  # boxed in, and no castle to enter: no MOVE_FROM
    state = build(rows)
    assert not any(a < ADD_KNIGHT for a in state.legal_actions())


def test_W2_doors_any_door():
    state = build(W2_ROWS)
    assert state.legal_actions()[0] == 0  # MOVE_FROM((0,0)) = id 0 (T71)
    copy = play(state.clone(), "move from (0,0)")
    assert copy.legal_actions() == [194, 196, 200, 202, 203, 204, 209, 211]
    assert copy.legal_actions() == expected_legal(copy)


def test_W2_doors_monotone_tunnel_drops_1_3():
    state = build(W2_ROWS, {"door_model": "monotone_tunnel"})
    assert targets(state, MOVE_FROM) == {sq(0, 2), sq(0, 4), sq(1, 0), sq(1, 2), sq(1, 4), sq(2, 1), sq(2, 3)}


def test_T28_pieces_on_top_of_a_castle_do_not_block_the_passage():
    rows = ["1R 3B 1 3K .", ". 2B . 1 ."]  # the entry (0,1) and (1,1) occupied, the king on (0,3)
    state = build(rows)
    assert targets(state, MOVE_FROM) == {sq(0, 2), sq(1, 3), sq(1, 0), sq(1, 2), sq(2, 1), sq(0, 4), sq(1, 4),
                                         sq(2, 3)}


def test_T28_a_ground_square_between_two_castles_opens_both():
    rows = [". . . . .", "2 . .R . 2", "2 . . . 2"]  # the knight on the ground enters neither castle at L=0...
    state = build(rows)
    assert targets(state, MOVE_FROM + sq(1, 2)) == {sq(0, 2), sq(1, 1), sq(1, 3), sq(2, 2)}  # ...only steps
    rows = [". . . . .", "2 2 .R 2 2", "2 . . . 2"]  # now h(b) ≥ 1 on both sides: both castles open
    state = build(rows)
    got = targets(state, MOVE_FROM + sq(1, 2))
    assert {sq(0, 0), sq(0, 1), sq(2, 1), sq(0, 3), sq(0, 4), sq(2, 3)} <= got


# ===================================================================== building (T30–T31), W1
@pytest.mark.parametrize(("square", "legal"), [
    ((2, 2), True), ((2, 3), False), ((2, 4), False), ((1, 3), False), ((1, 2), True), ((3, 3), False),
    ((1, 4), False), ((2, 5), False), ((3, 5), True)])
def test_W1_block_targets(square, legal):
    state = build(W1_ROWS, castle_ids=W1_IDS)
    assert (PLACE_BLOCK + sq(*square) in state.legal_actions()) == legal


def test_W1_extending_raises_the_height_limit():
    state = build(W1_ROWS, castle_ids=W1_IDS)
    assert state.board.cid[sq(2, 3)] == 1 and state.board.area(1) == 2
    play(state, "place block (1,2)")
    assert state.board.area(1) == 3 and state.board.cid[sq(1, 2)] == 1
    play(state, "place block (2,3)")
    assert state.board.h[sq(2, 3)] == 3 and state.turn_stack == 1 and state.ap == 3


def test_T31_no_block_under_the_king_and_none_without_a_turn_stack():
    rows = ["1 1K 1 .", ". . . .", ". . . .R"]  # area 3: every square could rise to 2
    state = build(rows)
    legal = state.legal_actions()
    assert PLACE_BLOCK + sq(0, 1) not in legal and PLACE_BLOCK + sq(0, 0) in legal and PLACE_BLOCK + sq(0, 2) in legal
    state = build(rows, turn_stack=0)
    assert not any(PLACE_BLOCK <= a < SELECT for a in state.legal_actions())


def test_T30a_at_most_three_stack_blocks_per_turn():
    state = build(W1_ROWS, castle_ids=W1_IDS)
    play(state, "place block (1,2)", "place block (2,3)", "place block (3,5)")
    assert state.turn_stack == 0 and not any(PLACE_BLOCK <= a < SELECT for a in state.legal_actions())


# ===================================================================== cards (T32–T48)
def test_T32_common_acquire_takes_the_top_card_fresh_two_per_turn():
    state = build(W1_ROWS)
    deck = list(state.decks[0])
    play(state, "acquire")
    top = deck[-1]
    assert state.hands[0][top] == 1 and state.fresh[0][top] == 1 and state.decks[0] == deck[:-1]
    assert PLAY_CARD + top not in state.legal_actions()  # T34: fresh
    play(state, "acquire")
    assert ACQUIRE not in state.legal_actions() and state.ap == 3
    play(state, "end turn")
    assert state.fresh[0] == [0] * 10


def test_T32_empty_common_deck_blocks_acquire():
    state = build(W1_ROWS, hands={1: {t: 4 for t in range(10)}})  # every card in seat 1's hand
    assert state.decks == [[]] and ACQUIRE not in state.legal_actions()


def test_T32_personal_acquire_keep_one_return_the_others_in_any_order():
    state = build(W1_ROWS, {"action_deck": "personal"})
    deck = list(state.decks[0])
    top3 = sorted(deck[-3:])
    play(state, "acquire")
    assert state.phase == "D5 keep card" and state.looked == top3
    assert state.legal_actions() == [KEEP + t for t in top3]
    state.apply_action(KEEP + top3[1])
    assert state.hands[0][top3[1]] == 1 and state.fresh[0][top3[1]] == 1
    assert state.legal_actions() == [RETURN_TOP + top3[0], RETURN_TOP + top3[2], RETURN_BOTTOM + top3[0],
                                     RETURN_BOTTOM + top3[2]]
    state.apply_action(RETURN_BOTTOM + top3[2])
    state.apply_action(RETURN_TOP + top3[0])
    assert state.decks[0] == [top3[2], *deck[:-3], top3[0]] and state.phase == "D4 action"


def test_T32_a_personal_look_is_a_chance_event_over_the_cards_nobody_has_seen():
    """With given chance outcomes (OpenSpiel's chance nodes), each card looked at that its owner has not seen is a
    chance event over those cards, one copy each; a card returned on top or to the bottom comes back without one."""
    state = build(W1_ROWS, {"action_deck": "personal"}, hands={0: {0: 1, 1: 1, 2: 1}})  # deck: types 3–9
    with pytest.raises(ChanceNeeded) as needed:
        state.child(ACQUIRE, [])
    assert needed.value.event == "player 0 looks at a card"
    assert needed.value.outcomes == [(t, 1 / 7) for t in range(3, 10)]
    assert needed.value.names == [CARD_NAMES[t] for t in range(3, 10)]
    state = state.child(ACQUIRE, [9, 3, 5])
    assert state.looked == [3, 5, 9]
    play(state, f"keep {CARD_NAMES[5]}", f"return top {CARD_NAMES[9]}", f"return bottom {CARD_NAMES[3]}")
    assert (state.returned_top, state.returned_bottom) == ([1, 0], [1, 0])
    with pytest.raises(ChanceNeeded) as needed:  # 9 comes back first, then one of the four unseen
        state.child(ACQUIRE, [])
    assert needed.value.outcomes == [(t, 1 / 4) for t in (4, 6, 7, 8)]
    after = state.child(ACQUIRE, [8, 4])
    assert after.looked == [4, 8, 9] and (after.returned_top, after.returned_bottom) == ([0, 0], [1, 0])
    assert sorted(after.decks[0]) == [3, 6, 7] and after.decks[0][0] == 3


def test_T32_a_personal_deck_seen_to_the_bottom_is_drawn_without_chance():
    state = build(W1_ROWS, {"action_deck": "personal"}, hands={0: {t: 1 for t in range(6)}})  # deck: types 6–9
    state = state.child(ACQUIRE, [6, 7, 8])
    play(state, f"keep {CARD_NAMES[6]}", f"return bottom {CARD_NAMES[7]}", f"return bottom {CARD_NAMES[8]}")
    assert state.decks[0] == [8, 7, 9] and state.returned_bottom == [2, 0]
    with pytest.raises(ChanceNeeded) as needed:
        state.child(ACQUIRE, [])
    assert needed.value.outcomes == [(9, 1.0)]  # the one card unseen, then the two returned to the bottom
    after = state.child(ACQUIRE, [9])
    assert after.looked == [7, 8, 9] and after.decks[0] == [] and after.returned_bottom == [0, 0]


def test_T32_personal_acquire_with_fewer_than_three_cards():
    state = build(W1_ROWS, {"action_deck": "personal"}, hands={0: {t: 1 for t in range(9)}})
    (last,) = state.decks[0]
    play(state, "acquire")
    assert state.legal_actions() == [KEEP + last]  # D5 is asked even with one card (T69)
    state.apply_action(KEEP + last)
    assert state.phase == "D4 action" and state.decks[0] == []


def test_T34_one_card_per_turn_also_at_zero_ap_and_only_if_resolvable():
    rows = [". . . .", ". 1R . .", ". . . ."]
    state = build(rows, ap=0, hands={0: {AP_6: 1, AP_7: 1, JUMP_UP_TWO: 1}})
    legal = state.legal_actions()
    assert PLAY_CARD + AP_6 in legal and PLAY_CARD + AP_7 in legal
    assert PLAY_CARD + JUMP_UP_TWO not in legal  # no square two levels up
    play(state, "play ap 6")
    assert state.ap == 1 and state.played[0][AP_6] == 1
    assert not any(PLAY_CARD <= a < KEEP for a in state.legal_actions())


def test_T45_ap_cards_add_to_the_points_left():
    state = build(W1_ROWS, ap=5, hands={0: {AP_7: 1}})
    play(state, "play ap 7")
    assert state.ap == 7


def test_T40_jump_up_two_exact_and_up_to_two():
    rows = [". 3 . .", "2 1R 2 .", ". . . ."]
    state = build(rows, hands={0: {JUMP_UP_TWO: 1}})
    play(state, "play jump up two")
    assert state.phase == "D7 card source" and legal_selects(state) == {sq(1, 1)}
    play(state, "select (1,1)")
    assert legal_selects(state) == {sq(0, 1)}
    play(state, "select (0,1)")
    assert state.knights[0] == [sq(0, 1)] and state.ap == 5 and state.phase == "D4 action"
    state = build(rows, {"jump_up_two": "up_to_two"}, hands={0: {JUMP_UP_TWO: 1}})
    assert targets(play(state, "play jump up two"), SELECT + sq(1, 1)) == {sq(0, 1), sq(1, 0), sq(1, 2), sq(2, 1)}


def test_T41_block_under_knight_raise_and_sources():
    rows = ["1R 1 2 .", ". . . .", ". .B . ."]
    state = build(rows, hands={0: {BLOCK_UNDER_KNIGHT: 1}}, stacks={0: [2, 1]}, turn_stack=1)
    play(state, "play block under knight", "select (0,0)")
    assert state.phase == "D9 card stack" and state.legal_actions() == [STACK, STACK + 1, STACK_CURRENT]
    play(state, "stack 1")
    assert state.board.h[0] == 2 and state.stacks[0] == [2] and state.turn_stack == 1  # the 1 left the list
    state = build(rows, hands={0: {BLOCK_UNDER_KNIGHT: 1}}, stacks={0: []}, turn_stack=1)
    play(state, "play block under knight", "select (0,0)", "stack current")
    assert state.board.h[0] == 2 and state.turn_stack == 0  # stays the (empty) turn's stack
    full = build(["2R 2 .", ". . ."], hands={0: {BLOCK_UNDER_KNIGHT: 1}})  # area 2: no third level
    assert PLAY_CARD + BLOCK_UNDER_KNIGHT not in full.legal_actions()
    no_source = build(rows, hands={0: {BLOCK_UNDER_KNIGHT: 1}}, stacks={0: []}, turn_stack=0)
    assert PLAY_CARD + BLOCK_UNDER_KNIGHT not in no_source.legal_actions()


def test_T41_block_under_a_ground_knight_joins_one_castle_or_founds_one():
    rows = [". . . . .", ". 1 .R . .", ". . . . .", ". . . . .", ". . . .B ."]
    state = build(rows, hands={0: {BLOCK_UNDER_KNIGHT: 1}, 1: {BLOCK_UNDER_KNIGHT: 1}})
    play(state, "play block under knight", "select (1,2)", "stack current")
    assert state.board.cid[sq(1, 2)] == state.board.cid[sq(1, 1)] and state.board.area(state.board.cid[9]) == 2
    state = build(rows, hands={1: {BLOCK_UNDER_KNIGHT: 1}}, player=1)
    count = state.board.castle_count()
    play(state, "play block under knight", "select (4,3)", "stack current")
    assert state.board.castle_count() == count + 1 and state.board.cid[sq(4, 3)] == count  # a new id
    between = build([". . .", "1 .R 1", ". . ."], hands={0: {BLOCK_UNDER_KNIGHT: 1}})
    assert PLAY_CARD + BLOCK_UNDER_KNIGHT not in between.legal_actions()  # it would merge two castles


def test_T42_extra_block_from_the_supply_under_t31():
    state = build(W1_ROWS, castle_ids=W1_IDS, hands={0: {EXTRA_BLOCK: 1}}, turn_stack=0)
    supply = state.supply
    play(state, "play extra block")
    assert state.phase == "D8 card target"  # card 2: no D7 (T70)
    assert legal_selects(state) == {a - PLACE_BLOCK for a in build(W1_ROWS, castle_ids=W1_IDS).legal_actions()
                                    if PLACE_BLOCK <= a < SELECT}
    play(state, "select (1,2)")
    assert state.supply == supply - 1 and state.board.h[sq(1, 2)] == 1 and state.turn_stack == 0
    empty = build(W1_ROWS, hands={0: {EXTRA_BLOCK: 1}}, supply=0)
    assert PLAY_CARD + EXTRA_BLOCK not in empty.legal_actions()


def test_W2_T43_door_climb_adds_1_1():
    for model in ("any_door", "monotone_tunnel"):  # T43 applies whatever the door model
        state = build(W2_ROWS, {"door_model": model}, hands={0: {DOOR_CLIMB: 1}})
        play(state, "play door climb")
        assert targets(state, SELECT) == {sq(0, 2), sq(1, 3), sq(1, 0), sq(1, 2), sq(2, 1), sq(0, 4), sq(1, 4),
                                          sq(2, 3), sq(1, 1)}


def test_T44_diagonal_move():
    rows = ["2 . 3", ". 1R .", ".B . ."]
    state = build(rows, hands={0: {DIAGONAL_MOVE: 1}})
    assert targets(play(state, "play diagonal move"), SELECT + sq(1, 1)) == {sq(0, 0), sq(2, 2)}


def test_T46_move_block_rules():
    rows = [". . . . . . . .",
            ". 2 1 . . . 1 .",
            ". . . . . . . .",
            "1 . 1 1 1 . . 1",
            ". . . . . . . .",
            "1 . . . . . 1 .",
            ". . . . . . . 1K",
            "1R . . . . . . ."]
    state = build(rows, hands={0: {MOVE_BLOCK: 1}})
    play(state, "play move block")
    sources = legal_selects(state)
    assert sq(3, 3) not in sources  # (b): lifting the middle of (3,2)-(3,4) splits it
    assert sq(6, 7) not in sources and sq(7, 0) not in sources  # (a): the king, a knight
    assert {sq(1, 1), sq(1, 2), sq(3, 2), sq(3, 4), sq(0 + 1, 6)} <= sources
    # from the top of (1,1): B′ keeps castle (1,1)-(1,2) at area 2; (1,2) may rise to 2, not 3
    t = targets(state, SELECT + sq(1, 1))
    assert sq(1, 2) in t and sq(1, 0) in t and sq(2, 5) in t  # raise, extend, new castle
    assert sq(1, 1) not in t and sq(2, 1) in t
    # lifting (1,2) (h1) shrinks the castle to area 1 under a height of 2: only extending it again is legal
    assert targets(state, SELECT + sq(1, 2)) == {sq(0, 1), sq(1, 0), sq(2, 1)}
    before = state.board.castle_count()
    play(state, "select (1,6)", "select (4,5)")  # a lone block moves: its castle goes, a new one comes
    assert state.board.castle_count() == before and state.board.castles[1] is None
    assert state.board.cid[sq(4, 5)] == 9  # the smallest id never used (T2)


def test_T46_at_least_six_castles_remain():
    rows = ["1 . 1 . 1 . 1", ". . . . . . .", "1 . 1 . . . .", ". . . . . .R ."]  # exactly 6 castles
    state = build(rows, hands={0: {MOVE_BLOCK: 1}})
    play(state, "play move block", "select (0,0)")
    t = legal_selects(state)
    assert sq(1, 0) not in t  # extending (2,0) would leave 5 castles
    assert all(state.board.h[x] == 0 and state.board.touch[x] == -1 for x in t)  # only new castles keep 6
    assert sq(5, 5) in t


def test_T47_relocate_knight_as_if_added():
    rows = [". . . . .", ". 2R . . .", ". . . . .", ". . . 1R ."]
    state = build(rows, hands={0: {RELOCATE_KNIGHT: 1}})
    play(state, "play relocate knight")
    assert legal_selects(state) == {sq(1, 1), sq(3, 3)}
    assert targets(state, SELECT + sq(3, 3)) == {sq(0, 1), sq(1, 0), sq(1, 2), sq(2, 1)}
    alone = build([". 1R ."], hands={0: {RELOCATE_KNIGHT: 1}})
    assert PLAY_CARD + RELOCATE_KNIGHT not in alone.legal_actions()  # needs ≥ 2 own knights


def test_T48_jump_over_a_knight_never_the_king():
    rows = [". . . . .", ". . .B . .", ". .K 1R .G .", ". . . . .", ". . . . ."]
    state = build(rows, {"num_players": 3}, hands={0: {JUMP_OVER: 1}})
    # over Blue (1,2) to (0,2) and over Green (2,3) to (2,4); not over the king (2,1); nothing below
    assert targets(play(state, "play jump over"), SELECT + sq(2, 2)) == {sq(0, 2), sq(2, 4)}


# ===================================================================== scoring (T50–T54), W3, W4
# W3: the king's castle has area 4 (levels 1, 2, 4 and the king on 3); per row: phase, knights, total
W3 = [(1, [(0, 0), (0, 1)], 13),  # levels 1 and 2: 4×2 + 5
      (1, [(0, 1), (0, 2)], 16),  # levels 2 and 4: 4×4, no knight on level 1
      (2, [(0, 1), (0, 2)], 26),  # 16 + 10
      (2, [(0, 1), (0, 0)], 18),  # levels 2 and 1: 4×2 + 10
      (3, [(0, 1)], 8)]  # level 2 only


@pytest.mark.parametrize("phase, knights, total", W3)
def test_W3_king_bonus(phase, knights, total):
    state = build([" ".join(f"{h}R" if (0, c) in knights else str(h) for c, h in enumerate((1, 2, 4))) + " 3K"])
    assert state.castle_points()[0] + state.king_bonus(phase)[0] == total


def test_W3_two_knights_on_the_bonus_level_pay_once():
    state = build([". . . .", "2R 2R 1 1K"])  # area 4, phase 2: both on level 2
    assert state.castle_points()[0] == 8 and state.king_bonus(2)[0] == 10


def test_T51_level_zero_and_second_knights_score_nothing():
    state = build(["1R 2R . .R", ". . . ."])
    assert state.castle_points() == [4, 0]  # area 2 × level 2; the ground knight and the lower one nothing


def w4_state():
    rows = ["5B 3R 3B 1K 1",
            ". . . . .G",
            ". . . . .",
            ". . . . .",
            "2G 1 1 1 1"]
    return build(rows, {"num_players": 3}, player=2, turn_stack=-1, phase=3, round_=3, turn_no=2, round_start=0,
                 scores=[40, 55, 70])


def test_W4_scoring_order_and_leap_frog():
    state = w4_state()
    play(state, "end turn")
    assert state.current_player == TERMINAL and state.score == [71, 95, 81]
    assert state.score_log[-1] == [[15, 25, 10], [15, 15, 0], [0, 0, 0]]
    assert state.winners() == [1] and state.returns().tolist() == [-1.0, 1.0, 0.0]


def test_W4_score_step_leaps_over_occupied_scores():
    state = edited(w4_state(), score=[10, 11, 12], current_player=0, round_start=0)
    play(state, "score step")
    assert state.score == [13, 11, 12] and state.ap == 4


def test_T54_many_players_may_share_zero():
    state = build(W1_ROWS, {"num_players": 4})
    assert state.score == [0, 0, 0, 0]
    play(state, "score step")
    assert state.score == [1, 0, 0, 0]


# ===================================================================== king move (T55), turn order (T12)
def phase_end(rows, options=None, scores=None, **kw):
    """The last turn of phase 1 (seat n−1 to act, no stacks): END_TURN scores it."""
    n = (options or {}).get("num_players", 2)
    return build(rows, options, player=n - 1, turn_stack=-1, round_=4, turn_no=n - 1, round_start=0,
                 scores=scores, **kw)


KING_ROWS = ["1K 1 . 1 . 1R", ". . . . . .", "1 . 1 . 1B .", ". . . . . .", "1 . 1 . . ."]


def test_T55_lowest_scorer_moves_the_king_to_another_castle_or_passes():
    state = phase_end(KING_ROWS, scores=[20, 3])
    play(state, "end turn")
    assert state.phase == "D12 king move" and state.current_player == 1  # 3 + castle points < 20 + …
    squares = legal_selects(state)
    assert sq(0, 1) not in squares and sq(0, 0) not in squares  # the king's own castle; the king's square
    assert sq(0, 3) in squares and sq(2, 4) not in squares  # (2,4) holds Blue's knight
    assert state.legal_actions()[-1] == PASS
    play(state, "select (0,3)")
    assert state.king == sq(0, 3) and state.phase_no == 2 and state.current_player == 0


def test_T55_any_castle_scope_and_a_tie_at_zero_goes_to_the_highest_seat():
    rows = ["1K 1 . 1 . 1", ". . . . . .", "1 . 1 . 1 .", ". . .R . .B .", "1 . 1 . . ."]
    state = phase_end(rows, {"king_move_scope": "any_castle", "num_players": 3}, scores=[0, 0, 0])
    play(state, "end turn")
    assert state.current_player == 2 and sq(0, 1) in legal_selects(state)


def test_T55_no_square_only_pass_and_auto_resolved():
    rows = ["1K .", ". .", "1R .", ". .", "1B ."]
    state = phase_end(rows, castle_ids=None)
    play(state, "end turn")
    assert state.legal_actions() == [PASS]
    state = phase_end(rows, {"auto_resolve_forced": True})
    play(state, "end turn")
    assert state.phase_no == 2  # D12 with PASS alone was applied by the engine (T69)


@pytest.mark.parametrize("rule, starter", [("cyclic", 0), ("king_mover", 1)])
def test_T12_round_start_cyclic_or_king_mover(rule, starter):
    state = phase_end(KING_ROWS, {"phase_start": rule}, scores=[20, 3])
    play(state, "end turn", "pass")
    assert state.phase_no == 2 and state.round_start == state.phase_start == starter == state.current_player


def test_T57_end_after_phase_3_with_shared_ties():
    state = build(["1 . 1", ". . .", ". .R .B"], player=1, turn_stack=-1, phase=3, round_=4, turn_no=1,
                  round_start=0)
    play(state, "end turn")
    assert state.is_terminal() and state.scores() == [0, 0] and state.winners() == [0, 1]
    assert state.returns().tolist() == [0.0, 0.0] and state.end_info()["winners"] == [0, 1]


# ===================================================================== master version (T58–T64)
@pytest.mark.parametrize("n, per_seat", [(2, [4, 4]), (3, [3, 3, 2]), (4, [2, 2, 2, 2])])
def test_T60_master_start_blocks_in_turn_at_distance_three(n, per_seat):
    state = Game(action_deck="master", num_players=n).new_initial_state(2)
    placed = []
    counts = [0] * n
    while state.phase.startswith("D1"):
        legal = legal_selects(state)
        assert legal == {s for s in range(64) if all(abs(s // 8 - q // 8) + abs(s % 8 - q % 8) >= 3 for q in placed)}
        counts[state.current_player] += 1
        s = max(legal)
        play(state, f"select {name(s)}")
        placed.append(s)
    assert counts == per_seat and state.phase.startswith("D2") and state.current_player == 0
    assert [state.board.cid[s] for s in placed] == list(range(8)) and state.supply == 84
    assert legal_selects(state) == set(placed)  # T9 on these castles


def test_T61_master_hands_and_no_acquire():
    state = build(W1_ROWS, {"action_deck": "master"})
    assert state.hands == [[1] * 10, [1] * 10] and state.decks == []
    assert ACQUIRE not in state.legal_actions()
    state8 = build(W1_ROWS, {"action_deck": "master", "card_types": 8})
    assert state8.hands[0] == [1] * 8 + [0, 0]


def test_T62_master_rounds_start_with_the_leader():
    state = build(W1_ROWS, {"action_deck": "master", "num_players": 3}, player=2, turn_stack=-1, turn_no=2,
                  round_start=0, scores=[4, 9, 0])
    play(state, "end turn")
    assert state.round_no == 2 and state.round_start == 1 and state.current_player == 1
    zero = build(W1_ROWS, {"action_deck": "master", "num_players": 3}, player=0, turn_stack=-1, turn_no=2,
                 round_start=1)
    play(zero, "end turn")
    assert zero.round_start == 0  # all scores 0: seat 0


def board_of(rows):
    state = build(rows)
    return state.board


@pytest.mark.parametrize("card, phase, knights, points", [
    (0, 1, [[0, 7, 27], [56]], [2 * 2 + 2, 2]),  # M1: Red 2 on the border, Blue 1
    (0, 3, [[0], [63]], [10, 10]),  # shared majority: no extra
    (1, 2, [[0, 9, 7], [27]], [15 + 5, 5]),  # M2: Red 3 on the diagonals, Blue 1
    (6, 3, [[0, 2, 16, 18], [1]], [50, 0]),  # M7: a square of side 2
    (6, 2, [[0, 2, 16, 18], [1]], [0, 0]),  # only after phase 3
    (5, 3, [[0, 18, 36], [1, 12]], [50, 0]),  # M6: a diagonal row; Blue on no common line
    (5, 3, [[0], [1, 2]], [0, 50]),  # M6 needs master_min_knights = 2
    (3, 3, [[0, 1, 9], [5, 7]], [40, 0]),  # M4: neighbouring
])
def test_T64_master_cards(card, phase, knights, points):
    assert master_points(card, phase, knights, Board(), 2) == points


def test_T64_master_levels_and_castles():
    b = board_of(["1 2 3 . 1", ". . . . .", "1 . 1 . 1", ". . . . .", "2 2 . 1 1"])
    assert master_points(4, 3, [[0, 1, 2], [4, 16]], b, 2) == [40, 0]  # M5: levels 1, 2, 3; Blue 1 and 1
    assert master_points(7, 3, [[4, 16, 18], [32, 33]], b, 2) == [50, 50]  # M8: all on level 1 / all on 2
    assert master_points(2, 1, [[0, 4, 16, 18], [0]], b, 2) == [5, 0]  # M3: exactly 4 castles after phase 1


def test_T53_master_points_are_the_third_scoring_move():
    rows = ["1 . 1 . 1 . 1 .", ". . . . . . . .", "1K . 1 . . . . .", ". . . . . . . .",
            ".R . . . . . . .B"]
    state = build(rows, {"action_deck": "master", "master_card": "M1"}, player=1, turn_stack=-1, round_=4,
                  turn_no=1, round_start=0)
    play(state, "end turn")
    assert state.score_log[-1][2] == [2, 2]  # one border knight each: the majority is shared
    assert state.score == [2, 3]  # Blue leaps over Red's 2


def test_T63_min_knights_option():
    assert master_points(7, 3, [[5], [6, 7]], Board(), 1) == [50, 50]
    assert master_points(7, 3, [[5], [6, 7]], Board(), 2) == [0, 50]


# ===================================================================== determinism of the rules engine
def test_T69_chance_only_at_setup():
    a, b = Game().new_initial_state(9), Game().new_initial_state(9)
    assert a == b
    rng = np.random.default_rng(0)
    while not a.is_terminal():
        legal = a.legal_actions()
        action = legal[rng.integers(len(legal))]
        a.apply_action(action)
        b.apply_action(action)
        assert a.rng.bit_generator.state == b.rng.bit_generator.state
    assert a == b
