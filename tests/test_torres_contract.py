"""The generic contract (``tests/contract.py``) applied to Torres, with the §14 invariants (I1–I15) of
``docs/rules/torres.md`` checked after every action of random games for 2–4 players, every action deck
and every option; the masks compared with the reference rules of ``torres_helpers.expected_legal``; leak
tests for hands and deck order; the global state; bad input; PettingZoo; golden playthroughs.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tabletop_rl import envs
from tabletop_rl.envs.core.game import State as BaseState
from tabletop_rl.envs.torres import Game, State, env, raw_env
from tests.contract import (
    assert_matches_golden,
    check_bad_input,
    check_determinism,
    check_env_api,
    check_env_state,
    check_given_chance,
    check_global_state,
    check_random_play,
    check_registry,
    checked_random_games,
    golden_playthrough,
    random_playout,
)
from tests.torres_helpers import DECISIONS, Checker, build

GOLDEN = Path(__file__).parent / "golden"
ROOT = Path(__file__).resolve().parents[1]

OPTION_SETS = {  # name → (options, episodes): every option value appears, every deck at every player count
    "2p": ({}, 10),
    "2p_personal": ({"action_deck": "personal", "door_model": "monotone_tunnel", "jump_up_two": "up_to_two"}, 8),
    "2p_master": ({"action_deck": "master", "king_move_scope": "any_castle"}, 6),
    "3p": ({"num_players": 3, "forced_redistribution": False, "phase_start": "king_mover"}, 6),
    "3p_personal": ({"num_players": 3, "action_deck": "personal", "auto_resolve_forced": True,
                     "card_types": 8}, 5),
    "3p_master": ({"num_players": 3, "action_deck": "master", "master_min_knights": 1, "auto_resolve_forced": True,
                   "door_model": "monotone_tunnel"}, 5),
    "4p": ({"num_players": 4, "start_castles": [0, 7, 19, 28, 35, 44, 56, 63]}, 4),
    "4p_personal": ({"num_players": 4, "action_deck": "personal", "stack_table": [[3, 2, 2, 1], [3, 1], [2]],
                     "king_move_scope": "any_castle"}, 4),
    "4p_master": ({"num_players": 4, "action_deck": "master", "master_card": "M7", "card_types": 8,
                   "phase_start": "king_mover"}, 4),
}


# ===================================================================== random play
@pytest.mark.parametrize("name", OPTION_SETS)
def test_I1_to_I15_random_play_keeps_the_contract_and_the_invariants(name):
    options, episodes = OPTION_SETS[name]
    game = Game(**options)
    checker = Checker(game, observation_every=7)
    stats = check_random_play(game, episodes, seed=sum(map(ord, name)), checker=checker, deep_every=40)
    assert stats.episodes == episodes and stats.truncated == 0
    n = game.num_players
    assert checker.games == episodes and checker.turns_seen == episodes * n * (12 if n == 2 else 10)  # I10
    assert stats.deep_checks >= stats.decisions // 60
    assert stats.hidden_changed > 0 or options.get("action_deck") == "master"  # master: nothing is hidden


@pytest.mark.parametrize("name", ["2p", "2p_personal", "3p_personal", "4p_personal", "3p_master", "4p_master"])
def test_T8_T32_T59_chance_given_from_outside(name):
    """Every common-deck draw, every personal-deck card looked at that nobody has seen and the master card as given
    chance outcomes (OpenSpiel's chance nodes), with the invariants at every position; a fixed master card leaves
    nothing to chance."""
    options, _ = OPTION_SETS[name]
    game = Game(**options)
    events = check_given_chance(game, 2, seed=len(name), checker=Checker(game, observation_every=7))
    if game.master:
        assert events == (0 if options.get("master_card") else 2)  # the master card, once per game
    else:
        assert events > 0  # the cards acquired
    assert game.perfect_information == (options.get("action_deck") == "master")


@pytest.mark.parametrize("n", [2, 3, 4])
def test_I1_to_I15_hundreds_of_random_games(n):
    """210 games per player count, 70 per action deck, every invariant after every action; the game
    lengths stay in a plausible band (docs/torres.md reports them)."""
    turns = n * (12 if n == 2 else 10)
    decisions = []
    for deck in ("common", "personal", "master"):
        game = Game(num_players=n, action_deck=deck)
        checker = Checker(game, observation_every=25)
        decisions += [d for _, d in checked_random_games(game, 70, seed=100 * n + len(deck), checker=checker)]
        assert checker.games == 70 and checker.turns_seen == 70 * turns  # I10: each game had all its turns
    assert 5 * turns < np.mean(decisions) < 12 * turns  # decisions per turn


@pytest.mark.parametrize("name", ["2p", "2p_personal", "3p_master", "4p_personal"])
def test_T70_masks_equal_the_reference_rules(name):
    """Every mask of whole random games equals ``expected_legal`` (each rule tested square by square)."""
    options, _ = OPTION_SETS[name]
    game = Game(**options)
    checker = Checker(game, masks=True, observation_every=0)
    checked_random_games(game, 2, seed=7, checker=checker)
    assert checker.positions > 300


# ===================================================================== information (T65–T68a)
def hidden_variant(state: State) -> State:
    """The same position with other hidden information: seat 1's hand and every deck's order changed
    (the cards keep their places' sizes)."""
    d = json.loads(state.to_json())
    s = d["state"]
    mode = state.game.options["action_deck"]
    if mode == "common":
        deck = s["decks"][0]
        hand = s["hands"][1]
        held = [t for t in range(10) for _ in range(hand[t])]
        fresh = sum(s["fresh"][1])
        swap = next((i for i, t in enumerate(deck) if held and t != held[0]), None)
        if held and swap is not None and not fresh:  # exchange one of seat 1's cards with a deck card
            hand[held[0]] -= 1
            hand[deck[swap]] += 1
            deck[swap] = held[0]
        deck.reverse()
    elif mode == "personal":
        for deck in s["decks"]:
            deck.reverse()
    return BaseState.from_json(json.dumps(d))


def test_T67_hidden_information_leaves_other_observations_alone():
    """Seat 1's hand and the deck order change: seat 0's observation and view do not; seat 1's does."""
    for options in ({}, {"action_deck": "personal"}, {"num_players": 3}):
        rng = np.random.default_rng(5)
        state = Game(**options).new_initial_state(5)
        changed = 0
        while not state.is_terminal():
            if state.current_player == 0 and sum(state.hands[1]):
                other = hidden_variant(state)
                if other.to_json() != state.to_json():
                    changed += 1
                    assert np.array_equal(other.observation(0), state.observation(0))
                    assert other.render_text(0) == state.render_text(0)
                    assert other.legal_actions() == state.legal_actions()
                    assert not np.array_equal(other.global_state(), state.global_state())
            random_playout(state, rng, 1)
        assert changed > 5


def test_T66_own_cards_and_looked_at_cards_are_shown_to_their_owner_only():
    state = build(["1R . 1", ". . .", "1B . 1K"], {"action_deck": "personal"}, hands={0: {2: 1}, 1: {5: 1}})
    state.apply_action(state.string_to_action("acquire"))
    layout = state.game.layout
    mine, theirs = layout.unpack(state.observation(0)), layout.unpack(state.observation(1))
    assert mine["hand"][2] == 1 and theirs["hand"][5] == 1 and theirs["hand"][2] == 0
    assert mine["looked_at"].sum() == 3 and theirs["looked_at"].sum() == 0
    assert mine["looked_count"][0] == theirs["looked_count"][0] == 1  # three cards: public (T65)
    assert mine["my_deck"].sum() == 6 and theirs["my_deck"].sum() == 9
    assert mine["hand_size"].tolist() == pytest.approx([0.1, 0.1]) and \
        theirs["deck_size"].tolist() == pytest.approx([0.9, 0.6])


def test_T65_observation_fields_and_seat_rotation():
    rows = ["1R 2 . 1", ". . . .", "1B 1 . 1K", ". . .G ."]
    state = build(rows, {"num_players": 3}, player=1, ap=4, stacks={0: [3, 3], 1: [3], 2: [2]}, turn_stack=2,
                  scores=[5, 9, 2])
    layout = state.game.layout
    for viewer in range(3):
        f = layout.unpack(state.observation(viewer))
        rows_ = [(viewer + i) % 3 for i in range(3)]
        assert f["height"][0, 1] * 8 == 2 and f["castle_area"][0, 0] * 16 == 2
        assert f["castle_id"][0, 0].argmax() == f["castle_id"][0, 1].argmax() == 0 and not f["castle_id"][0, 2].any()
        assert f["king"][2, 3] == 1 and f["king_castle"].argmax() == state.board.cid[19]
        assert [f["knights"][i].sum() for i in range(3)] == [len(state.knights[q]) for q in rows_]
        assert f["knights"][rows_.index(2), 3, 2] == 1
        assert (f["score"] * 100).round().tolist() == [[5, 9, 2][q] for q in rows_]
        assert f["to_act"].tolist() == [float(q == 1) for q in rows_]
        assert f["turn_stack"][0] * 3 == pytest.approx(2)  # the active player's (T65)
        assert (f["stacks"][rows_.index(0)] * 3).round().tolist() == [3, 3, 0, 0]
        assert f["ap"][0] * 7 == pytest.approx(4) and f["decision"].argmax() == DECISIONS.index("D4")
        assert f["best_level"][rows_.index(0), 0] * 8 == 1 and f["phase"].tolist() == [1, 0, 0]
    state.apply_action(state.string_to_action("move from (2,0)"))
    f = layout.unpack(state.observation(0))
    assert f["selected"][2, 0] == 1 and f["decision"].argmax() == DECISIONS.index("D4a")


@pytest.mark.parametrize("options", [{}, {"num_players": 3, "action_deck": "personal", "auto_resolve_forced": True},
                                     {"num_players": 4, "card_types": 8}], ids=["2p", "3p_personal", "4p_8_types"])
def test_global_state_contract(options):
    """The generic checks; every resample that moves hidden cards moves the global state (nothing hidden is
    missing from it)."""
    stats = check_global_state(Game(**options), episodes=2, seed=5, deep_every=15)
    assert stats.positions > 300 and stats.hidden_changed == stats.resamples_moved > 0


def test_global_state_of_the_master_version_where_nothing_is_hidden():
    """``check_global_state`` needs a resample that changes something; the master version has none (T68a):
    resampling leaves the position and the global state, and the env's ``state()`` checks still hold."""
    game = Game(num_players=3, action_deck="master")
    state = game.new_initial_state(1)
    rng = np.random.default_rng(1)
    while not state.is_terminal():
        vector = state.global_state()
        sample = state.sample_hidden(state.current_player, rng)
        assert json.loads(sample.to_json())["state"] == json.loads(state.to_json())["state"]
        assert np.array_equal(sample.global_state(), vector)
        random_playout(state, rng, 1)
    check_env_state(game, 1, 3)


def test_global_state_is_the_whole_position_in_table_order():
    game = Game(num_players=3)
    low, high = game.state_layout.bounds()
    state = game.new_initial_state(3)
    rng = np.random.default_rng(3)
    for _ in range(150):
        random_playout(state, rng, 1)
    g = state.global_state()
    assert g.dtype == np.float32 and g.shape == (game.state_layout.size,) and np.all((g >= low) & (g <= high))
    assert np.array_equal(g, State.from_json(state.to_json()).global_state())  # deterministic
    f = game.state_layout.unpack(g)
    assert f["to_act"].argmax() == state.current_player  # whose decision it is, seats unrotated
    assert [int(f["knights"][p].sum()) for p in range(3)] == [len(k) for k in state.knights]
    assert (f["hands"] == np.array(state.hands)).all()
    deck = state.decks[0]
    assert [int(row.argmax()) for row in f["deck_order"][:len(deck)]] == deck[::-1]
    assert not f["deck_order"][len(deck):].any()
    for p in range(3):  # resampling hidden cards keeps p's observation and may change the global state
        sample = state.sample_hidden(p, np.random.default_rng(p))
        assert np.array_equal(sample.observation(p), state.observation(p))
    assert any(not np.array_equal(state.sample_hidden(0, np.random.default_rng(s)).global_state(), g)
               for s in range(5))


@pytest.mark.parametrize("options", [{"action_deck": "personal", "num_players": 4}, {"action_deck": "master"}])
def test_global_state_layouts_per_deck(options):
    game = Game(**options)
    names = [f.name for f in game.state_layout]
    assert ("deck_order" in names) == (options["action_deck"] != "master")
    assert "unseen" not in names and "hands" in names
    state = game.new_initial_state(1)
    random_playout(state, np.random.default_rng(1), 100)
    low, high = game.state_layout.bounds()
    g = state.global_state()
    assert np.all((g >= low) & (g <= high))
    if options["action_deck"] == "personal":
        f = game.state_layout.unpack(g)
        for p in range(4):
            deck = state.decks[p]
            assert [int(r.argmax()) for r in f["deck_order"][p][:len(deck)]] == deck[::-1]


def test_observation_bounds_are_finite_and_tight_enough():
    for n in (2, 3, 4):
        for layout in (Game(num_players=n).layout, Game(num_players=n).state_layout):
            low, high = layout.bounds()
            assert np.isfinite(low).all() and np.isfinite(high).all() and (high > low).all()
            assert high.max() <= 100  # the score bound is the widest (≈ 62 for 2 players)


# ===================================================================== determinism, serialisation, bad input
@pytest.mark.parametrize("options", [{"num_players": 4, "action_deck": "personal", "auto_resolve_forced": True},
                                     {"num_players": 3, "action_deck": "master"}])  # defaults: tests/test_contract.py
def test_I12_same_seed_same_game(options):
    check_determinism(Game(**options), range(3))


def decision_states(options: dict, seed: int, wanted: int = 12) -> dict[str, State]:
    """One state per decision type reached in a random game (plus the finished game)."""
    rng = np.random.default_rng(seed)
    state = Game(**options).new_initial_state(seed)
    out: dict[str, State] = {}
    while not state.is_terminal():
        out.setdefault(state.phase.split()[0], state.clone())
        random_playout(state, rng, 1)
    out["terminal"] = state
    return out


@pytest.mark.parametrize("options", [{"num_players": 4}, {"action_deck": "personal", "num_players": 3},
                                     {"action_deck": "master", "num_players": 3, "forced_redistribution": False}])
def test_json_round_trip_and_bad_actions_in_every_decision(options):
    """D11 needs a stack with room: never with 2 players' stacks of 3."""
    seen = {}
    for seed in range(3):
        for key, state in decision_states(options, seed).items():
            seen.setdefault(key, state)
    expected = {"D2", "D3", "D3a", "D4", "D4a", "D7", "D8", "D11", "D12", "terminal"}
    expected |= {"D5", "D6"} if options.get("action_deck") == "personal" else set()
    expected |= {"D1"} if options.get("action_deck") == "master" else set()
    assert expected <= set(seen), set(seen)
    for key, state in seen.items():
        copy = BaseState.from_json(state.to_json())
        assert type(copy) is State and copy == state and copy.legal_actions() == state.legal_actions()
        for p in range(state.num_players):
            assert np.array_equal(copy.observation(p), state.observation(p))
        messages = check_bad_input(state)
        if key != "terminal":
            assert any("illegal" in m and f"phase {state.phase}" in m for m in messages)


def test_T72_an_illegal_action_names_the_action_and_the_decision_and_changes_nothing():
    state = build(["1R . 1", ". . .", "1B . 1K"])
    before = state.to_json()
    with pytest.raises(ValueError, match=r"action 304 \(pass\) is illegal for player 0 in phase D4 action"):
        state.apply_action(304)
    assert state.to_json() == before


@pytest.mark.parametrize("options, match", [
    ({"num_players": 5}, r"num_players=5 is not allowed; expected one of 2, 3, 4"),
    ({"action_deck": "shared"}, r"action_deck='shared' is not allowed; expected one of 'common', 'personal', "
                                r"'master'"),
    ({"stack_table": [[3, 3]]}, r"stack_table=\[\[3, 3\]\] is not allowed; expected None or a list of 3 lists"),
    ({"stack_table": [[4], [], []]}, r"stack sizes 1–3"),
    ({"stack_table": [[3, 3, 3, 3, 3], [], []]}, r"at most one stack per round"),
    ({"stack_table": [[1.5], [], []]}, r"stack_table"),
    ({"stack_table": [[True], [], []]}, r"stack_table"),
    ({"stack_table": "3333"}, r"stack_table"),
    ({"num_players": 3, "stack_table": [[3], [2, 2, 2, 2], [1]]}, r"not allowed with num_players=3; expected None "
                                                                   r"or a list of 3 lists of stack sizes 1–3 with "
                                                                   r"at most 4, 3, 3 stacks"),
    ({"start_castles": [0, 1, 20, 30, 40, 50, 60, 63]}, r"no two orthogonally adjacent"),
    ({"start_castles": [0, 0, 20, 30, 40, 50, 60, 63]}, r"8 distinct square indices"),
    ({"start_castles": [0, 2, 20, 30, 40, 50, 60, 64]}, r"start_castles"),
    ({"master_card": "M9"}, r"master_card='M9' is not allowed; expected one of None, 'M1'"),
    ({"master_min_knights": 0}, r"master_min_knights=0 is not allowed; expected an integer from 1 to 6"),
    ({"card_types": 9}, r"card_types=9 is not allowed; expected one of 10, 8"),
    ({"door_model": "tunnel"}, r"door_model"),
    ({"auto_resolve_forced": 1}, r"auto_resolve_forced=1 is not allowed; expected True or False"),
    ({"seed": 3}, r"unknown option\(s\) \['seed'\]"),
])
def test_bad_options_fail_at_construction_saying_what_is_allowed(options, match):
    with pytest.raises(ValueError, match=match):
        Game(**options)


def test_table_options_accept_lists_tuples_and_numpy_integers_and_round_trip():
    table = ((np.int64(3), 2, 2, 1), (3, 1), ())
    game = Game(num_players=4, stack_table=table, start_castles=tuple(np.arange(0, 64, 9)[:8].tolist()))
    assert game.options["stack_table"] == [[3, 2, 2, 1], [3, 1], []] and game.stack_table[0] == (3, 2, 2, 1)
    state = game.new_initial_state(0)
    copy = BaseState.from_json(state.to_json())
    assert copy.game.options == game.options and copy == state


# ===================================================================== registry and PettingZoo
def test_registry_and_pettingzoo_make():
    for n in (2, 3, 4):
        raw = check_registry(Game, raw_env, num_players=n)
        assert raw.possible_agents == [f"player_{i}" for i in range(n)]
        assert raw.action_space("player_0").n == 305  # T71
    with pytest.raises(ValueError, match="num_players"):
        envs.make("torres", num_players=5)


@pytest.mark.parametrize("options", [{"num_players": 3, "action_deck": "personal", "auto_resolve_forced": True},
                                     {"num_players": 4, "action_deck": "master"}],
                         ids=["3p_personal", "4p_master"])  # the default options: tests/test_contract.py
def test_pettingzoo_api_seed_render_pickle(options):
    check_env_api(env, raw_env, seed=3, num_cycles=3000, **options)


# ===================================================================== golden playthroughs
@pytest.mark.parametrize(("options", "filename"), [
    ({}, "torres_seed7.txt"),
    ({"num_players": 3, "action_deck": "personal", "auto_resolve_forced": True, "door_model": "monotone_tunnel",
      "forced_redistribution": False}, "torres_3p_personal_seed7.txt"),
    ({"num_players": 4, "action_deck": "master", "phase_start": "king_mover"}, "torres_4p_master_seed7.txt"),
])
def test_golden_playthrough(options, filename):
    assert_matches_golden(golden_playthrough(Game(**options), 7), GOLDEN / filename)


# ===================================================================== docs
def test_doc_has_the_generated_tables_and_every_observation_size():
    """``tests/test_docs.py`` checks the options and 2-player layout tables; the sizes for 2–4 players too."""
    doc = (ROOT / "docs" / "torres.md").read_text()
    assert Game().layout.to_markdown() in doc and Game().state_layout.to_markdown() in doc
    for n in (2, 3, 4):
        assert f"{Game(num_players=n).layout.size} ({n} players)" in doc
        assert f"{Game(num_players=n).state_layout.size} ({n} players)" in doc


def test_env_docstring_has_the_action_and_observation_tables():
    for doc in (env.__doc__, raw_env.__doc__):
        assert Game().layout.to_markdown() in doc and "MOVE_FROM(a)" in doc and "RETURN_BOTTOM(x)" in doc
