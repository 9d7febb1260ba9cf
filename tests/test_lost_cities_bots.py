"""HeuristicAgent (envs/lost_cities/bots.py) and the play_game helper (envs/core/match.py).

Rule ids refer to docs/rules/lost_cities.md.
"""

import numpy as np
import pytest

from tabletop_rl import envs
from tabletop_rl.envs.core.agents import RandomAgent, builtin_agent
from tabletop_rl.envs.core.match import play_game
from tabletop_rl.envs.lost_cities import Game, HeuristicAgent, State
from tabletop_rl.envs.lost_cities.actions import CARD_STEP, DRAW_STEP
from tests.lost_cities_helpers import build, kind

COLOUR = {"Y": 0, "B": 1, "W": 2, "G": 3, "R": 4, "P": 5}  # L2


def kinds(cards: str) -> list[int]:
    """``"R5 Yw"`` → the kinds of red 5 and a yellow wager (L4)."""
    return [kind(COLOUR[c[0]], "W" if c[1:] == "w" else int(c[1:])) for c in cards.split()]


def position(hand: str, mine: str = "", theirs: str = "", piles: str = "", deck: int = 30,
             step: str = "card", n_colours: int = 5) -> State:
    """Seat 0 to act with ``hand``; expeditions and piles (bottom → top) as given, a draw pile of
    ``deck`` cards, every other card in the opponent's hand or under the piles (L39)."""
    expeditions: dict[tuple[int, int], list[int]] = {}
    for p, spec in enumerate((mine, theirs)):
        for k in sorted(kinds(spec)):
            expeditions.setdefault((p, k // 10), []).append(k)
    pile_lists: dict[int, list[int]] = {}
    for k in kinds(piles):
        pile_lists.setdefault(k // 10, []).append(k)
    return build({"n_colours": n_colours}, hands=(kinds(hand), None), expeditions=expeditions,
                 piles=pile_lists, deck_size=deck, step=step)


def bot_action(state: State, seed: int = 0) -> str:
    p = state.current_player
    agent = HeuristicAgent(state.game, seed)
    return state.action_to_string(agent.act(state.observation(p), state.action_mask()))


# ----------------------------------------------------------------- contract: legal, deterministic, obs-only
@pytest.mark.parametrize("n_colours", [5, 6])
def test_L45_bot_returns_only_masked_actions(n_colours):
    """Over many positions of both steps, reached by a mix of bot and random play, across rounds."""
    game = Game(n_colours=n_colours, rounds=2)
    rng = np.random.default_rng(n_colours)
    steps = {CARD_STEP: 0, DRAW_STEP: 0}
    for episode in range(12):
        state = game.new_initial_state(episode)
        bots = [HeuristicAgent(game, episode), HeuristicAgent(game, episode + 100)]
        while not state.is_terminal():
            p = state.current_player
            mask = state.action_mask()
            a = bots[p].act(state.observation(p), mask)
            assert mask[a] == 1, f"illegal {state.action_to_string(a)} in the {state.phase} step"
            steps[state.step] += 1
            # Random moves now and then lead the bot into positions it would not choose itself.
            state.apply_action(a if rng.random() < 0.7 else int(rng.choice(state.legal_actions())))
    assert min(steps.values()) > 500


def test_bot_is_deterministic_for_a_seed():
    env = envs.make("lost_cities", wrapped=False)
    results = [play_game(env, [HeuristicAgent(env.game, 3), HeuristicAgent(env.game, 4)], seed=11)
               for _ in range(2)]
    assert results[0][1] == results[1][1]
    np.testing.assert_array_equal(results[0][0], results[1][0])
    state = Game().new_initial_state(5)
    a, b = HeuristicAgent(state.game, 9), HeuristicAgent(state.game, 9)
    while not state.is_terminal():
        obs, mask = state.observation(state.current_player), state.action_mask()
        action = a.act(obs, mask)
        assert b.act(obs, mask) == action
        state.apply_action(action)


@pytest.mark.parametrize("n_colours", [5, 6])
def test_L47_bot_depends_only_on_observation_and_mask(n_colours):
    """Resampling what the bot cannot see (L32) changes neither its observation nor its action."""
    game = Game(n_colours=n_colours)
    rng = np.random.default_rng(0)
    changed_hidden = 0
    for episode in range(4):
        state = game.new_initial_state(episode)
        driver = HeuristicAgent(game, episode)
        while not state.is_terminal():
            p = state.current_player
            obs, mask = state.observation(p), state.action_mask()
            other = state.sample_hidden(p, rng)
            changed_hidden += other.hands[1 - p] != state.hands[1 - p]
            other_obs = other.observation(p)
            np.testing.assert_array_equal(obs, other_obs)
            np.testing.assert_array_equal(mask, other.action_mask())
            seed = int(rng.integers(1000))
            frozen = obs.copy()
            assert HeuristicAgent(game, seed).act(obs, mask) == HeuristicAgent(game, seed).act(other_obs, mask)
            np.testing.assert_array_equal(obs, frozen)  # the bot does not write into its input
            state.apply_action(driver.act(obs, mask))
    assert changed_hidden > 100  # the resampling really moved hidden cards


def test_builtin_heuristic_agent_is_the_lost_cities_bot():
    game = Game()
    assert isinstance(builtin_agent("heuristic", game, seed=1), HeuristicAgent)


def test_bot_rejects_an_empty_mask():
    game = Game()
    state = game.new_initial_state(0)
    with pytest.raises(ValueError, match="no legal action"):
        HeuristicAgent(game).act(state.observation(0), np.zeros(game.num_actions, np.int8))


# ----------------------------------------------------------------- sensible play
def test_L19_plays_the_next_card_rather_than_skipping():
    state = position(hand="R4 R6 R9 Y2 B10 W3 G5 Gw", mine="R2 R3")
    assert bot_action(state) == "play red 4"


def test_L23_opens_a_strong_colour_but_not_a_weak_one():
    strong = position(hand="G2 G5 G7 G8 G10 Y3 B4 W2")
    assert bot_action(strong) == "play green 2"
    weak = position(hand="G2 G4 Y3 B4 W2 W5 R3 R2")
    assert bot_action(weak).startswith("discard")


def test_L23_no_new_expedition_when_the_round_is_about_to_end():
    # 2 turns left: yellow 9+10 = 19 < 20 cannot pay; with 8 draw-pile cards left, 6 7 8 9 10 can.
    late = position(hand="Y6 Y7 Y8 Y9 Y10 B2 W2 G2", deck=3)
    assert bot_action(late).startswith("discard")
    in_time = position(hand="Y6 Y7 Y8 Y9 Y10 B2 W2 G2", deck=10)
    assert bot_action(in_time).startswith("play yellow")


def test_L12_discards_what_the_opponent_cannot_use():
    # The opponent's green column tops at 5 (green 8 would feed it); their white column tops at 9.
    state = position(hand="G8 W2 Y10 B9 R6 Y4 B3 R2", theirs="G4 G5 W8 W9")
    action = bot_action(state)
    assert action.startswith("discard") and action != "discard green 8"
    assert action == "discard white 2"


def test_L13_takes_a_directly_playable_pile_card():
    state = position(hand="R7 R9 Y2 B3 W4 G2 G10", mine="R2 R3 R4", piles="R5", step="draw")
    assert bot_action(state) == "draw red"


def test_L13_draws_the_deck_when_no_pile_card_helps():
    state = position(hand="R7 R9 Y2 B3 W4 G2 G10", mine="R2 R3 R4 R5", piles="Y3 B2",
                        step="draw")
    assert bot_action(state) == "draw pile"


def test_L17_late_in_the_round_behind_stretches_ahead_hurries():
    # 6 draw-pile cards left: 3 more turns, but 6 red and blue cards worth playing; no pile top helps.
    hand, piles = "R7 R8 R9 R10 B6 B7 W3", "Y2 Bw Ww"
    behind = position(hand=hand, mine="R2 B2", theirs="G2 G3 G4 G5 G6 G7 G8 G9", piles=piles, deck=6,
                      step="draw")
    action = bot_action(behind)
    assert action.startswith("draw") and action != "draw pile"  # one more turn to play
    ahead = position(hand=hand, mine="R2 B2 G2 G3 G4 G5 G6 G7 G8 G9", piles=piles, deck=6, step="draw")
    assert bot_action(ahead) == "draw pile"  # the round ends sooner (L14b)


# ----------------------------------------------------------------- strength, through the PettingZoo env
def test_play_game_reports_zero_sum_returns_and_scores():
    env = envs.make("lost_cities")  # the wrapped env works too
    returns, scores = play_game(env, [RandomAgent(seed=1), RandomAgent(seed=2)], seed=3)
    assert returns.sum() == 0 and np.sign(returns[0]) == np.sign(scores[0] - scores[1])
    with pytest.raises(ValueError, match="3 agents given for 2 seats"):
        play_game(env, [RandomAgent()] * 3, seed=0)


def test_heuristic_beats_random_by_a_wide_margin():
    """Measured over 1,000 seat-balanced games: 100 % wins, +182 points per round (5 colours)."""
    env = envs.make("lost_cities", wrapped=False)
    games, wins, margins = 200, 0, []
    for i in range(games):
        seat = i % 2
        agents = [HeuristicAgent(env.game, i), RandomAgent(seed=i)]
        returns, scores = play_game(env, agents if seat == 0 else agents[::-1], seed=i)
        wins += returns[seat] > 0
        margins.append(scores[seat] - scores[1 - seat])
    assert wins / games >= 0.95
    assert np.mean(margins) >= 120
