"""Scenario tests for every rule of ``docs/rules/lost_cities.md`` (test names carry the rule ids).

Positions are built through the public API only (``to_json`` → edit → ``State.from_json``, see
``lost_cities_helpers``) and then driven with ``apply_action``; results are read through
``legal_actions``, ``observation`` (unpacked with ``game.layout``), ``scores``, ``returns`` and ``end_info``.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from tabletop_rl import envs
from tabletop_rl.envs.core.game import TERMINAL, State
from tabletop_rl.envs.lost_cities import Game
from tabletop_rl.envs.lost_cities.game import MAX_TURNS_PER_ROUND
from tests.lost_cities_helpers import (
    BLUE,
    GREEN,
    PURPLE,
    RED,
    WHITE,
    YELLOW,
    build,
    cards,
    check_conservation,
    check_observation,
    draw_deck,
    hand_counts,
    kind,
    last_draw,
    obs,
    ref_expedition_score,
    state_dict,
)

K5 = 50  # kinds with 5 colours (L4)
DECK5 = 2 * K5  # DRAW_DECK with 5 colours (L36)


def discard(k: int, K: int = K5) -> int:
    return K + k


def take_pile(c: int, K: int = K5) -> int:
    return 2 * K + 1 + c


def first_seed(predicate, **options) -> int:
    return next(s for s in range(1000) if predicate(Game(**options).new_initial_state(s)))


# ===================================================================== §1–2 components and setup
def test_L1_two_players_seats_0_and_1():
    game = Game()
    assert game.num_players == 2
    env = envs.make("lost_cities", wrapped=False)
    assert env.possible_agents == ["player_0", "player_1"]
    assert Game().new_initial_state(0).current_player in (0, 1)


@pytest.mark.parametrize("n_colours, deck", [(5, 44), (6, 56)])
def test_L2_L3_L6_L7_deal(n_colours, deck):
    state = Game(n_colours=n_colours).new_initial_state(11)
    d = state_dict(state)
    assert [len(h) for h in d["hands"]] == [8, 8]  # L6
    assert len(d["deck"]) == deck
    check_conservation(state)  # L3: 3 wagers + 2..10 per colour, 60 or 72 cards
    all_cards = d["deck"] + d["hands"][0] + d["hands"][1]
    assert len(all_cards) == 12 * n_colours
    assert {k // 10 for k in all_cards} == set(range(n_colours))  # purple only with 6 colours
    # L7: empty piles and expeditions, turn 0, known cards 0
    assert d["piles"] == [[]] * n_colours
    assert d["expeditions"] == [[[]] * n_colours] * 2
    assert d["turn"] == 0 and d["step"] == 0 and d["round"] == 1
    assert d["known"] == [[0] * 10 * n_colours] * 2


@pytest.mark.parametrize("name, value", [
    ("n_colours", 4), ("n_colours", 7), ("n_colours", "5"), ("rounds", 0), ("rounds", 1.5),
    ("first_player", 2), ("first_player", True), ("first_player", "oldest"),
    ("next_round_starter", "loser"), ("match_tie", "sudden_death"), ("colours", 5),
])
def test_L2_L8_L9_L10_L27_bad_option_values_fail_at_construction(name, value):
    with pytest.raises(ValueError, match=name):
        Game(**{name: value})


def test_L4_kind_numbering():
    s = Game(n_colours=6).new_initial_state(0)
    assert s.action_to_string(kind(BLUE, 7)) == "play blue 7" and kind(BLUE, 7) == 16
    assert s.action_to_string(kind(RED, "W")) == "play red wager" and kind(RED, "W") == 40
    assert s.action_to_string(kind(RED, 10)) == "play red 10" and kind(RED, 10) == 49
    assert s.action_to_string(kind(PURPLE, 2)) == "play purple 2" and kind(PURPLE, 2) == 51
    assert s.game.num_kinds == 60 and Game().num_kinds == 50


def test_L6_deal_depends_only_on_the_seed():
    game = Game()
    assert game.new_initial_state(5).to_json() == Game().new_initial_state(5).to_json()
    deals = {json.dumps(state_dict(game.new_initial_state(s))["hands"]) for s in range(5)}
    assert len(deals) == 5


@pytest.mark.parametrize("first", [0, 1])
def test_L8_fixed_first_player(first):
    for seed in range(5):
        state = Game(first_player=first).new_initial_state(seed)
        assert state.current_player == first
        assert obs(state, first)["match"][3] == 1  # "I started this round" (L34g)


def test_L8_random_first_player_uses_the_seeded_generator():
    starters = [Game().new_initial_state(s).current_player for s in range(40)]
    assert set(starters) == {0, 1}
    assert starters == [Game().new_initial_state(s).current_player for s in range(40)]


# ===================================================================== §3 turn and round flow
def test_L11_L12_L13_L15_card_step_then_draw_step_by_the_same_player():
    state = Game().new_initial_state(3)
    for _ in range(6):  # three full turns
        p = state.current_player
        assert state.phase == "card"
        assert all(a < DECK5 for a in state.legal_actions())  # L12: play or discard, no pass
        assert hand_counts(state, p).sum() == 8 and hand_counts(state, 1 - p).sum() == 8  # L15
        assert list(obs(state, p)["hand_sizes"]) == [1, 1]
        state.apply_action(state.legal_actions()[-1])  # a discard
        assert state.current_player == p and state.phase == "draw"  # L11: same player draws
        assert all(a >= DECK5 for a in state.legal_actions())
        assert hand_counts(state, p).sum() == 7 and hand_counts(state, 1 - p).sum() == 8
        assert list(obs(state, p)["hand_sizes"]) == [7 / 8, 1]
        assert list(obs(state, 1 - p)["hand_sizes"]) == [1, 7 / 8]
        draw_deck(state)
        assert hand_counts(state, p).sum() == 8
        assert state.current_player == 1 - p and state.phase == "card"  # L14d


def test_L12_play_appends_to_own_expedition_and_discard_tops_the_pile():
    state = build(hands=(cards(RED, "W 4 7"), cards(WHITE, "2 3 4 5 6 7 8 9")),
                  expeditions={(0, RED): cards(RED, "W")},
                  piles={RED: cards(RED, "2")})
    state.apply_action(kind(RED, 4))
    assert state_dict(state)["expeditions"][0][RED] == cards(RED, "W 4")
    draw_deck(state)
    state.apply_action(state.legal_actions()[-1])  # seat 1 discards, draws
    draw_deck(state)
    state.apply_action(discard(kind(RED, 7)))
    assert state_dict(state)["piles"][RED][-2:] == cards(RED, "2 7")  # pushed on top, face up


def test_L14a_each_draw_step_adds_one_turn():
    state = build(hands=(cards(RED, "4"), cards(WHITE, "7")), piles={GREEN: cards(GREEN, "5")}, turn=17)
    state.apply_action(discard(kind(RED, 4)))
    assert state_dict(state)["turn"] == 17  # the card step does not count
    draw_deck(state)
    assert state_dict(state)["turn"] == 18
    state.apply_action(discard(kind(WHITE, 7)))
    state.apply_action(take_pile(GREEN))  # a pile draw counts too
    assert state_dict(state)["turn"] == 19


@pytest.mark.parametrize("drawer", [0, 1])
def test_L14b_emptying_the_draw_pile_ends_the_round_at_once(drawer):
    # Seat 0 started; if the starter takes the last card the other seat has had one turn fewer.
    state = last_draw(scores=(5, -3), current_player=drawer, starter=0)
    draw_deck(state)
    assert state.is_terminal() and not state.is_truncated()
    assert state.current_player == TERMINAL and state.legal_actions() == []
    assert state.scores() == [5, -3]
    assert list(state.returns()) == [1, -1]
    with pytest.raises(ValueError, match="after the game ended"):
        draw_deck(state)


@pytest.mark.parametrize("n_colours, cap_option, cap", [
    (5, "auto", 308), (6, "auto", 392), (5, 44, 44), (6, 56, 56), (5, 150, 150),
])
def test_L14c_L29_truncation_when_the_turn_counter_reaches_the_cap(n_colours, cap_option, cap):
    options = {"n_colours": n_colours, "max_turns_per_round": cap_option}
    K = 10 * n_colours
    # one turn before the cap nothing happens …
    state = build(options, deck_size=10, step="draw", turn=cap - 2)
    state.apply_action(2 * K)
    assert not state.is_terminal() and state_dict(state)["turn"] == cap - 1
    # … and the draw that makes the counter equal the cap truncates (L14c), deck not empty
    state.apply_action(state.legal_actions()[-1])
    state.apply_action(2 * K)
    assert state.is_terminal() and state.is_truncated()
    assert state.current_player == TERMINAL and state.legal_actions() == []
    assert state_dict(state)["turn"] == cap


def test_L29_truncation_by_a_pile_draw_and_the_unfinished_round_is_not_scored():
    options = {"rounds": 3}
    state = build(options, expeditions={(0, RED): cards(RED, "9 10")}, piles={BLUE: cards(BLUE, "4")},
                  deck_size=12, step="draw", turn=307, round=2, starter=1, cumulative=[10, 5],
                  round_scores=[[10, 5]])
    state.apply_action(take_pile(BLUE))  # a pile draw keeps the deck (L17), the cap still fires
    assert state.is_terminal() and state.is_truncated()
    assert list(state.returns()) == [0, 0]  # no winner although seat 0 leads
    assert state.scores() == [10, 5]  # only the completed round counts
    info = state.end_info()
    assert info["round_scores"] == [[10, 5]]
    assert info["provisional_round_scores"] == [-1, 0]  # (19 − 20) for the red 9 10


def test_L29_no_cap_with_None():
    state = build({"max_turns_per_round": None}, step="draw", turn=5000)
    draw_deck(state)
    assert not state.is_terminal() and state_dict(state)["turn"] == 5001
    o = obs(state, 0)
    assert o["cap_progress"][0] == 0 and o["turn_cap"][0] == 0  # no cap to see coming (L34g)
    assert o["turn"][0] == pytest.approx(5001 / (5001 + 44))  # squashed below 1: no cap bounds it


def test_L34g_the_turn_cap_is_observable_from_turn_0():
    """Two games that differ only in the cap differ in every observation already at turn 0, and the
    turn fields stay inside their (finite) bounds up to the cap."""
    caps = ["auto", 44, 45, 100, MAX_TURNS_PER_ROUND, None]
    seen = set()
    for cap in caps:
        game = Game(max_turns_per_round=cap)
        state = game.new_initial_state(3)
        assert state_dict(state)["turn"] == 0
        views = [state.observation(p) for p in (0, 1)]
        seen.update(v.tobytes() for v in views)
        o = game.layout.unpack(views[0])
        assert o["cap_progress"][0] == 0 and o["turn"][0] == 0
        expected = {"auto": 1, None: 0}[cap] if cap in ("auto", None) else 308 / cap  # default cap / cap
        assert o["turn_cap"][0] == pytest.approx(expected)
        low, high = game.layout.bounds()
        assert np.isfinite(low).all() and np.isfinite(high).all()
        if cap is not None:
            at_cap = game.layout.unpack(build({"max_turns_per_round": cap}, turn=game.turn_cap).observation(0))
            assert at_cap["cap_progress"][0] == 1 and at_cap["turn"][0] == high[game.layout["turn"].start]
    assert len(seen) == 2 * len(caps)


@pytest.mark.parametrize("n_colours, value, ok", [
    (5, 43, False), (5, 44, True), (6, 55, False), (6, 56, True), (5, 0, False), (5, -1, False),
    (5, 1.5, False), (5, "none", False), (5, True, False), (5, None, True), (6, "auto", True),
])
def test_L29_cap_option_validation(n_colours, value, ok):
    if ok:
        Game(n_colours=n_colours, max_turns_per_round=value)
    else:
        with pytest.raises(ValueError, match="max_turns_per_round"):
            Game(n_colours=n_colours, max_turns_per_round=value)


@pytest.mark.parametrize("n_colours, cap_option, cap", [(5, "auto", 308), (6, "auto", 392), (5, 44, 44)])
def test_L14b_L50_the_emptying_draw_on_the_cap_turn_ends_the_round_normally(n_colours, cap_option, cap):
    options = {"n_colours": n_colours, "max_turns_per_round": cap_option}
    state = last_draw(options, scores=(-4, 6), turn=cap - 1)
    draw_deck(state)
    assert state.is_terminal() and not state.is_truncated()  # L14b before L14c
    assert state.scores() == [-4, 6] and list(state.returns()) == [-1, 1]
    assert "provisional_round_scores" not in state.end_info()
    # inside a match the next round simply starts (turn counter back to 0)
    state = last_draw({**options, "rounds": 2}, scores=(-4, 6), turn=cap - 1)
    draw_deck(state)
    assert not state.is_terminal() and state_dict(state)["round"] == 2 and state_dict(state)["turn"] == 0


def test_L16_L45_a_legal_action_always_exists_and_discard_and_deck_are_always_legal():
    # Worst case for plays: every held card is below the top of its column.
    hand = cards(YELLOW, "2 3") + cards(BLUE, "2 3") + cards(WHITE, "2 3") + cards(GREEN, "2 3")
    exps = {(0, c): cards(c, "10") for c in (YELLOW, BLUE, WHITE, GREEN)}
    state = build(hands=(hand, None), expeditions=exps)
    assert state.legal_actions() == sorted(discard(k) for k in hand)
    state.apply_action(discard(kind(YELLOW, 2)))
    assert state.legal_actions() == [DECK5]  # every other pile is empty here


def test_L17_a_pile_draw_leaves_the_draw_pile_unchanged():
    state = build(piles={WHITE: cards(WHITE, "6")}, deck_size=30, step="draw")
    before = obs(state, 0)["draw_pile"][0]
    state.apply_action(take_pile(WHITE))
    assert obs(state, 1)["draw_pile"][0] == before == pytest.approx(30 / 44)
    assert len(state_dict(state)["deck"]) == 30 and state_dict(state)["turn"] == 1


# ===================================================================== §4 legality predicates
def test_L18_only_held_kinds_can_be_played_or_discarded():
    hand = cards(RED, "W 5") + cards(BLUE, "3 9") + cards(GREEN, "W W 2 4")
    state = build(hands=(hand, None))
    held = set(hand)
    legal = state.legal_actions()
    assert {a % K5 for a in legal} == held
    before = state.to_json()
    for k in (kind(RED, 6), kind(WHITE, "W"), kind(YELLOW, 10)):
        for action in (k, discard(k)):
            with pytest.raises(ValueError, match=r"illegal for player 0 in phase card"):
                state.apply_action(action)
    assert state.to_json() == before  # a failed call leaves the state unchanged


@pytest.mark.parametrize("column, card, legal", [
    ("", "W", True), ("", "2", True), ("", "10", True),
    ("W", "W", True), ("W W", "W", True), ("W", "3", True),  # several wagers (L19)
    ("3", "W", False), ("W 5", "W", False),  # wagers only before numbers
    ("3", "2", False), ("3", "4", True), ("3", "9", True),  # increasing, gaps allowed
    ("3 5", "4", False), ("3 5", "9", True), ("W W 2 3 4", "10", True), ("9", "10", True),
    ("10", "2", False), ("10", "9", False),
])
def test_L19_can_play(column, card, legal):
    k = kind(GREEN, card)
    state = build(hands=([k], None), expeditions={(0, GREEN): cards(GREEN, column)})
    assert (k in state.legal_actions()) is legal
    assert discard(k) in state.legal_actions()  # L20 regardless
    if not legal:
        with pytest.raises(ValueError, match="illegal"):
            state.apply_action(k)


def test_L19_equal_values_are_rejected_even_in_a_corrupted_state():
    # L19 says v > max(nums); each number exists once, so an equal value cannot arise legally. A hand
    # that holds a copy of the column's top (JSON edited past L3) must still not be allowed to play it.
    state = build(hands=([kind(GREEN, 6)], None), expeditions={(0, GREEN): cards(GREEN, "5")})
    data = json.loads(state.to_json())
    data["state"]["hands"][0][data["state"]["hands"][0].index(kind(GREEN, 6))] = kind(GREEN, 5)
    corrupted = State.from_json(json.dumps(data))
    assert kind(GREEN, 5) not in corrupted.legal_actions()
    assert discard(kind(GREEN, 5)) in corrupted.legal_actions()


def test_L19_several_wagers_follow_each_other_then_numbers_close_them():
    state = build(hands=(cards(BLUE, "W W W 4 6"), cards(RED, "2 3 4 5 6 7 8 9")))
    for n in range(1, 4):
        state.apply_action(kind(BLUE, "W"))
        draw_deck(state)
        state.apply_action(state.legal_actions()[-1])  # seat 1 discards its highest kind
        draw_deck(state)
        assert state_dict(state)["expeditions"][0][BLUE] == [kind(BLUE, "W")] * n
    assert kind(BLUE, "W") not in state.legal_actions()  # none left in hand
    state.apply_action(kind(BLUE, 6))
    draw_deck(state)
    state.apply_action(state.legal_actions()[-1])
    draw_deck(state)
    assert kind(BLUE, 4) not in state.legal_actions()
    assert state_dict(state)["expeditions"][0][BLUE] == cards(BLUE, "W W W 6")


def test_L19_only_the_players_own_expedition_matters():
    state = build(hands=(cards(YELLOW, "W 3"), None), expeditions={(1, YELLOW): cards(YELLOW, "9 10")})
    assert {kind(YELLOW, "W"), kind(YELLOW, 3)} <= set(state.legal_actions())
    state.apply_action(kind(YELLOW, 3))
    assert state_dict(state)["expeditions"] == [
        [cards(YELLOW, "3"), [], [], [], []], [cards(YELLOW, "9 10"), [], [], [], []]]


def test_L20_every_held_kind_can_be_discarded():
    hand = cards(RED, "W W 2") + cards(WHITE, "7 8") + cards(GREEN, "3") + cards(YELLOW, "W 10")
    exps = {(0, RED): cards(RED, "5"), (0, WHITE): cards(WHITE, "9"), (0, YELLOW): cards(YELLOW, "4")}
    state = build(hands=(hand, None), expeditions=exps)
    legal = state.legal_actions()
    assert [a - K5 for a in legal if K5 <= a < DECK5] == sorted(set(hand))
    assert [a for a in legal if a < K5] == [kind(YELLOW, 10), kind(GREEN, 3)]


def test_L21_L44_the_just_discarded_colour_is_forbidden_only_for_this_draw_step():
    blue7 = kind(BLUE, 7)
    state = build(hands=([blue7, kind(RED, 2)], cards(GREEN, "W 3")),
                  piles={YELLOW: cards(YELLOW, "5"), BLUE: cards(BLUE, "2")})
    state.apply_action(discard(blue7))
    assert state.legal_actions() == [DECK5, take_pile(YELLOW)]  # blue forbidden, yellow open
    assert list(obs(state, 0)["forbidden"]) == [0, 0, 1, 0, 0, 0]
    assert list(obs(state, 1)["forbidden"]) == [0, 0, 1, 0, 0, 0]
    before = state.to_json()
    with pytest.raises(ValueError, match=r"action 102 \(draw blue\) is illegal .* phase draw"):
        state.apply_action(take_pile(BLUE))
    assert state.to_json() == before
    draw_deck(state)
    # the opponent may take the card on their next turn (after a play or a discard of another colour)
    for opponent_card_step in (kind(GREEN, 3), discard(kind(GREEN, "W"))):
        s = state.clone()
        s.apply_action(opponent_card_step)
        assert take_pile(BLUE) in s.legal_actions()
    s = state.clone()
    s.apply_action(discard(kind(GREEN, "W")))
    s.apply_action(take_pile(BLUE))
    assert hand_counts(s, 1)[blue7] == 1
    # … and the same player on a later turn, if it is still on top
    state.apply_action(kind(GREEN, 3))
    draw_deck(state)
    state.apply_action(kind(RED, 2))
    assert list(obs(state, 0)["forbidden"]) == [1, 0, 0, 0, 0, 0]  # none
    assert take_pile(BLUE) in state.legal_actions()
    state.apply_action(take_pile(BLUE))
    assert hand_counts(state, 0)[blue7] == 1


def test_L44_after_a_play_every_non_empty_pile_is_allowed():
    state = build(hands=(cards(RED, "8"), None),
                  piles={RED: cards(RED, "4"), WHITE: cards(WHITE, "W"), PURPLE: cards(PURPLE, "2")},
                  options={"n_colours": 6})
    state.apply_action(kind(RED, 8))
    K = 60
    assert state.legal_actions() == [2 * K, take_pile(WHITE, K), take_pile(RED, K), take_pile(PURPLE, K)]


def test_L22_empty_piles_cannot_be_drawn():
    state = build(hands=(cards(RED, "8"), None))
    state.apply_action(kind(RED, 8))
    assert state.legal_actions() == [DECK5]
    with pytest.raises(ValueError, match="illegal"):
        state.apply_action(take_pile(GREEN))


# ===================================================================== §5 scoring
TEST_VECTORS = [
    ("", 0), ("W", -40), ("W W", -60), ("W W W", -80), ("2", -18), ("3", -17), ("10", -10),
    ("W 5", -30), ("W 10", -20), ("W W 10", -30), ("W W W 10", -40), ("2 8 10", 0),
    ("W W 2 3 4", -33), ("W W W 3 4 5 6", -8), ("2 3 4 5 6 7 8 9", 44), ("3 4 5 6 7 8 9 10", 52),
    ("W W W 2 3 4 5 6", 20), ("W 4 5 6 7 8 9 10", 78), ("W W 4 5 6 7 8 9", 77),
    ("2 3 4 5 6 7 8 9 10", 54), ("W W W 2 3 4 5 6 7 8 9 10", 156),
]


@pytest.mark.parametrize("seat", [0, 1])
@pytest.mark.parametrize("row", range(len(TEST_VECTORS)), ids=[v[0] or "empty" for v in TEST_VECTORS])
def test_L23_L46_score_test_vectors(row, seat):
    spec, score = TEST_VECTORS[row]
    colour = row % 5
    column = cards(colour, spec)
    assert ref_expedition_score(column) == score  # the table agrees with the formula
    state = build(expeditions={(seat, colour): column}, deck_size=1, step="draw", current_player=1 - seat,
                  turn=50)
    expected = [0, 0]
    expected[seat] = score
    assert state.provisional_scores() == expected
    assert obs(state, seat)["scores"][2] == pytest.approx(score / 100)  # provisional, mine first
    assert state.scores() == [0, 0]  # nothing is scored before the round ends
    draw_deck(state)
    assert state.is_terminal() and state.scores() == expected
    assert state.end_info()["round_scores"] == [expected]
    assert list(state.returns()) == [np.sign(expected[0] - expected[1]), np.sign(expected[1] - expected[0])]


WORKED_ROUND = {
    (0, YELLOW): cards(YELLOW, "W 4 6"), (0, BLUE): cards(BLUE, "3"),
    (0, GREEN): cards(GREEN, "W W 5 7 8 10"), (0, RED): cards(RED, "2 3 4 5 6 7 9 10"),
}


def test_L23_L24_worked_round_score_is_39():
    # L24: cards in hands score nothing, so give seat 0 a hand of high cards it never played.
    state = build(expeditions=WORKED_ROUND, hands=(cards(WHITE, "W 8 9 10"), None),
                  deck_size=1, step="draw", turn=44)
    assert [ref_expedition_score(WORKED_ROUND[(0, c)]) for c in (YELLOW, BLUE, GREEN, RED)] == [-20, -17, 30, 46]
    assert state.provisional_scores() == [39, 0]
    draw_deck(state)
    assert state.scores() == [39, 0] and list(state.returns()) == [1, -1]


@pytest.mark.parametrize("n_colours", [5, 6])
def test_L25_lowest_round_score_is_minus_80_per_colour(n_colours):
    exps = {(0, c): cards(c, "W W W") for c in range(n_colours)}
    state = build({"n_colours": n_colours}, expeditions=exps, deck_size=1, step="draw")
    assert state.provisional_scores() == [-80 * n_colours, 0]
    draw_deck(state)
    assert state.scores() == [-80 * n_colours, 0]


@pytest.mark.parametrize("first_player", ["random", 1])
def test_L9_L10_L26_L27_L28_worked_three_round_match(first_player):
    options = {"rounds": 3, "next_round_starter": "cumulative_leader", "first_player": first_player}
    seed = first_seed(lambda s: s.current_player == 1, **options)
    state = Game(**options).new_initial_state(seed)
    assert state.current_player == 1  # round 1: seat 1 starts
    # Round 1: 39 (the worked round) : 12 (white 5 8 9 10)
    state = build(base=state, expeditions={**WORKED_ROUND, (1, WHITE): cards(WHITE, "5 8 9 10")},
                  deck_size=1, step="draw", current_player=0, turn=43)
    draw_deck(state)
    assert not state.is_terminal() and state.scores() == [39, 12]
    assert state_dict(state)["round"] == 2
    assert state.current_player == 0 and state.phase == "card"  # round 2: the leader, seat 0, starts
    # Round 2: −5 : 22 → 34 : 34
    state = last_draw(base=state, scores=(-5, 22), current_player=1)
    draw_deck(state)
    assert state.scores() == [34, 34] and state_dict(state)["round"] == 3
    assert state.current_player == 1  # tie: seat 0 started round 2, so seat 1 starts round 3
    # Round 3: 10 : 25 → 44 : 59
    state = last_draw(base=state, scores=(10, 25), current_player=0)
    draw_deck(state)
    assert state.is_terminal() and not state.is_truncated()
    assert state.scores() == [44, 59]
    assert list(state.returns()) == [-1, 1]  # seat 1 wins
    assert state.end_info() == {"scores": [44, 59], "round_scores": [[39, 12], [-5, 22], [10, 25]]}


# ===================================================================== §6 rounds, match end
@pytest.mark.parametrize("rule, prev_starter, cumulative, round_score, expected", [
    ("cumulative_leader", 0, [0, 0], (10, 5), 0),
    ("cumulative_leader", 1, [0, 0], (10, 5), 0),
    ("cumulative_leader", 0, [0, 0], (5, 10), 1),
    ("cumulative_leader", 1, [0, 0], (5, 10), 1),
    ("cumulative_leader", 0, [0, 0], (7, 7), 1),  # tie: the previous non-starter
    ("cumulative_leader", 1, [0, 0], (7, 7), 0),
    ("cumulative_leader", 1, [20, 0], (0, 15), 0),  # the cumulative total decides, not the round
    ("cumulative_leader", 0, [3, 10], (9, 2), 1),  # 12 : 12 tie after a round won by seat 0
    ("alternate", 0, [0, 0], (10, 5), 1),
    ("alternate", 1, [0, 0], (5, 10), 0),
    ("alternate", 0, [0, 0], (7, 7), 1),
    ("alternate", 1, [30, 0], (10, 0), 0),
])
def test_L9_L49_next_round_starter(rule, prev_starter, cumulative, round_score, expected):
    options = {"rounds": 3, "next_round_starter": rule}
    state = last_draw(options, scores=round_score, starter=prev_starter, current_player=1 - prev_starter,
                      round=2, cumulative=cumulative, round_scores=[cumulative])
    draw_deck(state)
    assert state.scores() == [cumulative[0] + round_score[0], cumulative[1] + round_score[1]]
    assert state.current_player == expected and state.phase == "card"
    assert obs(state, expected)["match"][3] == 1 and obs(state, 1 - expected)["match"][3] == 0


def test_L26_L7_the_next_round_is_set_up_without_a_decision():
    state = last_draw({"rounds": 2}, scores=(8, 3), piles={RED: cards(RED, "W")},
                      known={(1, kind(WHITE, "W")): 1}, hands=(None, [kind(WHITE, "W")]))
    draw_deck(state)
    d = state_dict(state)
    assert d["round"] == 2 and d["turn"] == 0 and d["step"] == 0
    assert state.current_player == 0 and state.phase == "card"  # the new starter acts at once
    assert [len(h) for h in d["hands"]] == [8, 8] and len(d["deck"]) == 44
    assert d["piles"] == [[]] * 5 and d["expeditions"] == [[[]] * 5] * 2
    assert d["known"] == [[0] * 50] * 2  # L7/L33: reset at the round start
    assert state.provisional_scores() == [0, 0] and state.scores() == [8, 3]
    check_conservation(state)


def test_L27_tied_match_is_a_draw_by_default():
    state = last_draw(scores=(7, 7))
    draw_deck(state)
    assert state.is_terminal() and not state.is_truncated()
    assert list(state.returns()) == [0, 0]
    assert state.end_info()["scores"] == [7, 7]


def test_L27_extra_rounds_until_the_totals_differ():
    options = {"rounds": 1, "match_tie": "extra_rounds"}
    state = last_draw(options, scores=(7, 7), starter=1, current_player=0)
    draw_deck(state)
    assert not state.is_terminal()
    assert state_dict(state)["round"] == 2 and state_dict(state)["extra_rounds"] == 1
    assert state.current_player == 0  # L9 tie: seat 1 started, so seat 0 starts the extra round
    assert obs(state, 0)["match"][1] == pytest.approx(1 / 5)  # extra rounds played / 5 (L34g)
    state = last_draw(base=state, scores=(0, 3), current_player=1)
    draw_deck(state)
    assert state.is_terminal() and state.scores() == [7, 10] and list(state.returns()) == [-1, 1]
    assert state.end_info()["round_scores"] == [[7, 7], [0, 3]]


@pytest.mark.parametrize("rule", ["cumulative_leader", "alternate"])
def test_L27_at_most_five_extra_rounds_then_a_draw(rule):
    options = {"rounds": 2, "match_tie": "extra_rounds", "next_round_starter": rule, "first_player": 0}
    state = Game(**options).new_initial_state(0)
    starters = []
    for r in range(7):  # 2 regular rounds + 5 extra rounds, all tied
        assert not state.is_terminal()
        starters.append(state.current_player)
        state = last_draw(base=state, scores=(r, r) if r % 2 else (-r, -r), current_player=1 - starters[-1])
        draw_deck(state)
        assert state_dict(state)["extra_rounds"] == min(r, 5)
    assert state.is_terminal() and not state.is_truncated()
    assert list(state.returns()) == [0, 0]
    assert len(state.end_info()["round_scores"]) == 7
    assert starters == [0, 1, 0, 1, 0, 1, 0]  # every tie hands the start to the other seat


def test_L27_extra_rounds_are_not_played_without_a_tie():
    state = last_draw({"rounds": 1, "match_tie": "extra_rounds"}, scores=(1, 0))
    draw_deck(state)
    assert state.is_terminal() and list(state.returns()) == [1, -1]


# ===================================================================== §7 information
def observation_scene(**kw):
    hand0 = cards(RED, "6 7") + cards(YELLOW, "W 9") + cards(WHITE, "2 3 4 5")
    hand1 = cards(GREEN, "W 7 8") + cards(BLUE, "5 6 7 8")  # seat 1 is in its draw step: 7 cards
    return build({"rounds": 3}, hands=(hand0, hand1),
                 expeditions={(1, GREEN): cards(GREEN, "W 4"), (0, YELLOW): cards(YELLOW, "2 5")},
                 piles={BLUE: cards(BLUE, "3 W 9"), RED: cards(RED, "10")},
                 known={(0, kind(RED, 6)): 1, (1, kind(GREEN, 7)): 1},
                 current_player=1, step="draw", forbidden=BLUE, turn=10,
                 round=2, starter=1, cumulative=[30, -12], round_scores=[[30, -12]], **kw)


def test_L30_L34_observation_fields_hold_the_public_information():
    state = observation_scene()
    o1, o0 = obs(state, 1), obs(state, 0)
    me = np.zeros(50)
    me[cards(GREEN, "W 7 8") + cards(BLUE, "5 6 7 8")] = 1
    assert (o1["hand"] == me).all()  # L34a, egocentric: seat 1's own hand
    assert (o0["hand"] == hand_counts(state, 0)).all()
    assert set(np.flatnonzero(o1["my_expeditions"])) == {30, 33}  # L34b
    assert set(np.flatnonzero(o1["opp_expeditions"])) == {1, 4}
    assert (o0["my_expeditions"] == o1["opp_expeditions"]).all()
    # L34c: full ordered piles, bottom → top (blue 3, blue wager, blue 9; red 10)
    order = o1["discard_order"]
    assert order[BLUE][:4] == pytest.approx([0.3, 0.1, 0.9, 0])
    assert order[RED][:2] == pytest.approx([1.0, 0]) and order[YELLOW].sum() == 0
    assert (o0["discard_order"] == order).all()
    assert set(np.flatnonzero(o1["discard_tops"])) == {kind(BLUE, 9), kind(RED, 10)}
    assert o1["discard_counts"][kind(BLUE, "W")] == 1 and o1["discard_counts"].sum() == 4
    assert o1["draw_pile"][0] == pytest.approx((60 - 15 - 4 - 4) / 44)  # L34d
    # L34e: the opponent's known cards and hand size
    assert set(np.flatnonzero(o1["opp_known"])) == {kind(RED, 6)}
    assert set(np.flatnonzero(o0["opp_known"])) == {kind(GREEN, 7)}
    assert list(o1["hand_sizes"]) == [7 / 8, 1] and list(o0["hand_sizes"]) == [1, 7 / 8]
    # L34f: whose turn, which step, the forbidden pile
    assert o1["to_move"][0] == 1 and o0["to_move"][0] == 0
    assert list(o1["step"]) == [0, 1] and list(o0["step"]) == [0, 1]
    assert list(o1["forbidden"]) == [0, 0, 1, 0, 0, 0]
    # L34g: round/rounds, extra round, 1/rounds, I started; turn/cap, the cap (1 = the default), turn/44
    assert o1["match"] == pytest.approx([2 / 3, 0, 1 / 3, 1]) and o0["match"] == pytest.approx([2 / 3, 0, 1 / 3, 0])
    for o in (o0, o1):
        assert [o["cap_progress"][0], o["turn_cap"][0], o["turn"][0]] == pytest.approx([10 / 308, 1, 10 / 44])
    # L34h: cumulative scores then provisional round scores (green W 4 = −32, yellow 2 5 = −13), mine first
    assert o1["scores"] == pytest.approx([-0.12, 0.30, -0.32, -0.13])
    assert o0["scores"] == pytest.approx([0.30, -0.12, -0.13, -0.32])


def test_L34_every_field_matches_its_recomputation_in_the_scene():
    state = observation_scene()
    for p in (0, 1):
        check_observation(state, p)


def test_L32_unseen_is_the_draw_pile_plus_the_opponents_unknown_cards():
    state = observation_scene()
    d = state_dict(state)
    deck = np.bincount(d["deck"], minlength=50)
    for p in (0, 1):
        opp = 1 - p
        expected = deck + hand_counts(state, opp) - np.array(d["known"][opp])
        assert (obs(state, p)["unseen"] == expected).all()


def test_L31_L32_L47_observation_ignores_the_opponents_unknown_cards_and_the_deck_order():
    state = observation_scene()
    data = json.loads(state.to_json())
    s = data["state"]
    # swap one unknown card of seat 1 (not the known green 7) with a draw-pile card, and reverse the deck
    i = s["hands"][1].index(kind(BLUE, 5))
    s["hands"][1][i], s["deck"][0] = s["deck"][0], s["hands"][1][i]
    s["deck"].reverse()
    other = State.from_json(json.dumps(data))
    check_conservation(other)
    assert (other.observation(0) == state.observation(0)).all()
    assert (other.observation(1) != state.observation(1)).any()  # seat 1 sees its own hand change
    # swapping seat 0's hand instead is visible to seat 0 only
    data = json.loads(state.to_json())
    s = data["state"]
    i = s["hands"][0].index(kind(WHITE, 2))
    s["hands"][0][i], s["deck"][0] = s["deck"][0], s["hands"][0][i]
    other = State.from_json(json.dumps(data))
    assert (other.observation(1) == state.observation(1)).all()
    assert (other.observation(0) != state.observation(0)).any()


def test_L33_known_cards_bookkeeping_with_the_wager_floor_example():
    red_w = kind(RED, "W")
    # seat 1 holds an unseen red wager; a red wager lies on the red pile; seat 0 discards a yellow card
    state = build(hands=(cards(YELLOW, "4 5 6"), [red_w] + cards(BLUE, "7 8") + cards(WHITE, "2 3 4 5 6")),
                  piles={RED: [red_w], BLUE: cards(BLUE, "2")})
    state.apply_action(discard(kind(YELLOW, 4)))
    draw_deck(state)  # deck draws change nothing
    assert obs(state, 0)["opp_known"].sum() == 0
    state.apply_action(discard(kind(BLUE, 8)))  # seat 1: discarding an unknown card keeps 0 (floor)
    state.apply_action(take_pile(RED))
    assert obs(state, 0)["opp_known"][red_w] == 1 and hand_counts(state, 1)[red_w] == 2
    assert obs(state, 1)["opp_known"].sum() == 0  # seat 0 is not affected
    state.apply_action(kind(YELLOW, 5))
    draw_deck(state)
    state.apply_action(red_w)  # seat 1 plays one of its two red wagers
    assert obs(state, 0)["opp_known"][red_w] == 0  # no longer sure: max(0, 1 − 1)
    assert hand_counts(state, 1)[red_w] == 1  # L47: known (0) ≤ true count (1)
    draw_deck(state)
    state.apply_action(kind(YELLOW, 6))
    draw_deck(state)
    state.apply_action(red_w)  # the other one: still 0, never negative
    assert state_dict(state)["known"][1][red_w] == 0


def test_L33_L47_a_number_taken_from_a_pile_is_known_exactly_until_it_leaves_the_hand():
    blue7 = kind(BLUE, 7)
    state = build(hands=(cards(YELLOW, "4 5"), cards(RED, "3 9")), piles={BLUE: [blue7]})
    state.apply_action(kind(YELLOW, 4))
    state.apply_action(take_pile(BLUE))
    assert obs(state, 1)["opp_known"][blue7] == 1 and hand_counts(state, 0)[blue7] == 1
    state.apply_action(discard(kind(RED, 9)))
    draw_deck(state)
    state.apply_action(blue7)  # playing it clears the record
    assert obs(state, 1)["opp_known"][blue7] == 0


# ===================================================================== §8 actions
@pytest.mark.parametrize("n_colours, size", [(5, 106), (6, 127)])
def test_L36_action_space_size(n_colours, size):
    game = Game(n_colours=n_colours)
    assert game.num_actions == size
    env = envs.make("lost_cities", wrapped=False, n_colours=n_colours)
    assert env.action_space("player_0").n == size


def test_L36_worked_action_example():
    blue7 = kind(BLUE, 7)
    assert blue7 == 16
    state = build(hands=([blue7], None), piles={BLUE: cards(BLUE, "4")})
    names = {16: "play blue 7", 66: "discard blue 7", 100: "draw pile", 102: "draw blue"}
    for action, name in names.items():
        assert state.action_to_string(action) == name
        assert state.string_to_action(name) == action
        assert state.string_to_action("  " + name.upper().replace(" ", "   ")) == action
    played = state.clone()
    played.apply_action(16)
    assert obs(played, 0)["my_expeditions"][16] == 1
    assert played.legal_actions() == [100, 102]
    played.apply_action(102)
    assert hand_counts(played, 0)[kind(BLUE, 4)] == 1
    state.apply_action(66)
    assert obs(state, 1)["discard_tops"][16] == 1
    assert state.legal_actions() == [100]  # blue is forbidden (L21)


@pytest.mark.parametrize("n_colours", [5, 6])
def test_L36_action_strings_round_trip(n_colours):
    state = Game(n_colours=n_colours).new_initial_state(0)
    names = [state.action_to_string(a) for a in range(state.game.num_actions)]
    assert len(set(names)) == len(names)
    for a, name in enumerate(names):
        assert state.string_to_action(name) == a
    with pytest.raises(ValueError, match="no action"):
        state.string_to_action("play orange 3")


def test_L36_L38_out_of_range_and_non_integer_actions_are_rejected():
    state = Game().new_initial_state(0)
    before = state.to_json()
    with pytest.raises(ValueError, match=r"action 106 is out of range.*phase card"):
        state.apply_action(106)
    with pytest.raises(ValueError, match="not an integer"):
        state.apply_action("draw pile")
    assert state.to_json() == before


def test_L37_L38_env_agent_order_and_masks():
    env = envs.make("lost_cities", wrapped=False)
    env.reset(seed=4)
    actor = env.agent_selection
    other = "player_1" if actor == "player_0" else "player_0"
    assert not env.observe(other)["action_mask"].any()
    mask = env.observe(actor)["action_mask"]
    assert mask.dtype == np.int8 and (mask == env.infos[actor]["action_mask"]).all()
    assert list(np.flatnonzero(mask)) == env.unwrapped.game_state.legal_actions()
    env.step(int(np.flatnonzero(mask)[-1]))  # a discard
    assert env.agent_selection == actor  # the draw step belongs to the same agent (L37)
    env.step(DECK5)
    assert env.agent_selection == other
    assert not env.infos[actor]["action_mask"].any()


# ===================================================================== §9 invariants
def play_random_match(options, seed, max_steps=5000):
    """Uniform random legal play with the L33/L35/L39–L47 invariants checked at every decision."""
    game = Game(**options)
    C, K = game.n_colours, game.num_kinds
    state = game.new_initial_state(seed)
    rng = np.random.default_rng(seed)
    shadow = np.zeros((2, K), np.int64)  # L33 recomputed from public actions
    deck_draws = pile_draws = 0
    prev = state_dict(state)
    for _ in range(max_steps):
        if state.is_terminal():
            return state, prev
        d = state_dict(state)
        p = state.current_player
        assert p in (0, 1)  # L35: no chance player
        legal = state.legal_actions()
        mask = state.action_mask()
        assert legal and list(np.flatnonzero(mask)) == legal  # L45
        check_conservation(state)  # L39
        hands = [np.bincount(d["hands"][q], minlength=K) for q in (0, 1)]
        assert [h.sum() for h in hands] == [8 - (state.phase == "draw" and q == p) for q in (0, 1)]  # L40
        for exp in d["expeditions"]:  # L41
            for c, col in enumerate(exp):
                assert all(k // 10 == c for k in col)
                ranks = [k % 10 for k in col]
                wagers = ranks.count(0)
                assert ranks[:wagers] == [0] * wagers
                assert ranks[wagers:] == sorted(set(ranks[wagers:])) and 0 not in ranks[wagers:]
        for c, pile in enumerate(d["piles"]):  # L42
            assert all(k // 10 == c for k in pile)
            old = prev["piles"][c]
            assert pile == old or pile[:-1] == old or pile == old[:-1]
        # L43: draw-pile size; L14a: turns = deck draws + pile draws
        assert len(d["deck"]) == game.initial_draw_pile - deck_draws > 0
        assert d["turn"] == deck_draws + pile_draws
        # L33/L47: known = the public bookkeeping, ≤ the true count, and exact for held numbers
        assert (np.array(d["known"]) == shadow).all()
        for q in (0, 1):
            assert (shadow[q] <= hands[q]).all()
            check_observation(state, q, d)  # L34: the incremental tables never drift from the position
        if state.phase == "card":
            assert {a - K for a in legal if K <= a < 2 * K} == set(np.flatnonzero(hands[p]))  # L20/L45
        else:
            assert 2 * K in legal  # L45
            if d["forbidden"] >= 0:
                assert 2 * K + 1 + d["forbidden"] not in legal  # L44
            else:
                assert legal == [2 * K] + [2 * K + 1 + c for c in range(C) if d["piles"][c]]
        action = legal[rng.integers(len(legal))]
        if action < 2 * K:
            shadow[p][action % K] = max(0, shadow[p][action % K] - 1)
        elif action == 2 * K:
            deck_draws += 1
        else:
            pile_draws += 1
            shadow[p][d["piles"][action - 2 * K - 1][-1]] += 1
        round_before, totals_before = d["round"], state.scores()
        prev = d
        state.apply_action(action)
        if state.is_terminal() and state.is_truncated():
            return state, prev
        if not state.is_terminal() and state_dict(state)["round"] == round_before:
            continue
        # L14b/L26/L46: the round ended; its score is recomputed from the final expeditions
        assert deck_draws == game.initial_draw_pile
        ended = [sum(ref_expedition_score(col) for col in d["expeditions"][q]) for q in (0, 1)]
        assert state.end_info()["round_scores"][-1] == ended
        assert state.scores() == [totals_before[q] + ended[q] for q in (0, 1)]
        assert state.scores() == [sum(r[q] for r in state.end_info()["round_scores"]) for q in (0, 1)]
        shadow[:] = 0
        deck_draws = pile_draws = 0
        prev = state_dict(state)
    raise AssertionError("random match did not end")


@pytest.mark.parametrize("n_colours, seed", [(5, 1), (6, 2)])
def test_L39_to_L47_invariants_under_random_play(n_colours, seed):
    state, _ = play_random_match({"n_colours": n_colours, "rounds": 2}, seed)
    assert state.is_terminal() and not state.is_truncated()
    assert len(state.end_info()["round_scores"]) == 2  # L49
    scores = state.scores()
    assert list(state.returns()) == list(np.sign([scores[0] - scores[1], scores[1] - scores[0]]))


@pytest.mark.parametrize("n_colours, deck", [(5, 44), (6, 56)])
@pytest.mark.parametrize("starter", [0, 1])
def test_L43_without_pile_draws_a_round_lasts_exactly_the_draw_pile(n_colours, deck, starter):
    state = Game(n_colours=n_colours, first_player=starter).new_initial_state(9)
    K = 10 * n_colours
    rng = np.random.default_rng(0)
    drawers = []
    while not state.is_terminal():
        assert obs(state, state.current_player)["draw_pile"][0] * deck == pytest.approx(deck - len(drawers))
        legal = state.legal_actions()
        state.apply_action(legal[rng.integers(len(legal))])  # any card step
        drawers.append(state.current_player)
        state.apply_action(2 * K)  # never a pile
    assert len(drawers) == deck
    assert drawers[-1] == 1 - starter  # the non-starter draws the last card
    assert drawers == [starter, 1 - starter] * (deck // 2)
    assert not state.is_truncated()


def test_L48_same_seed_and_actions_give_identical_trajectories():
    options = {"rounds": 2}
    first = Game(**options).new_initial_state(21)
    rng = np.random.default_rng(3)
    script, trace = [], []
    while not first.is_terminal():
        legal = first.legal_actions()
        script.append(legal[rng.integers(len(legal))])
        first.apply_action(script[-1])
        trace.append((first.to_json(), first.observation(0).tobytes(), first.observation(1).tobytes(),
                      first.action_mask().tobytes()))
    second = Game(**options).new_initial_state(21)
    for i, action in enumerate(script):
        second.apply_action(action)
        assert (second.to_json(), second.observation(0).tobytes(), second.observation(1).tobytes(),
                second.action_mask().tobytes()) == trace[i]
        if i == len(script) // 2:  # a JSON round-trip mid-match continues identically (same generator)
            second = State.from_json(second.to_json())
    assert list(second.returns()) == list(first.returns())
    assert second.end_info() == first.end_info()
    assert Game(**options).new_initial_state(22).to_json() != Game(**options).new_initial_state(21).to_json()
