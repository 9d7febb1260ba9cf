"""Information-set MCTS at play time (``tabletop_rl.training.runtime.ismcts``): information from the seat's view
only, legal moves in whole games of every game, determinism, free decisions, the tree's statistics, spec errors."""

from __future__ import annotations

import numpy as np
import pytest
from test_search import attached, positions

from tabletop_rl import envs
from tabletop_rl.envs.core.agents import RandomAgent, SeatView
from tabletop_rl.envs.core.match import play_game
from tabletop_rl.envs.core.record import NOTES
from tabletop_rl.training.runtime.agents import load_agent
from tabletop_rl.training.runtime.ismcts import IsmctsAgent, IsmctsSettings

# budgets small enough for tests; the strength is measured in docs/search.md. min_prior=0 searches every decision
# with a choice; play-outs are cut short (without a shipped policy the heuristic plays them, one state at a time)
SMALL = "ismcts:iterations=24,batch=8,leaf=value,min_prior=0"
ROLLOUT = "ismcts:iterations=12,batch=4,leaf=rollout,horizon=6,min_prior=0"
TINY = "ismcts:iterations=6,batch=3,horizon=2,policy=none"  # Torres without a policy: heuristic play-outs
SEARCHES = 10  # searched decisions per game in the whole-game tests


@pytest.mark.parametrize("game, spec, options", [
    ("lost_cities", SMALL, {}),
    ("lost_cities", ROLLOUT, {}),
    ("five_towers", SMALL, {}),
    ("five_towers", ROLLOUT, {"num_players": 4}),
    ("palazzo", SMALL, {}),
    ("torres", TINY, {}),
])
def test_the_move_depends_only_on_what_the_seat_has_seen(game, spec, options):
    """Same seed, same observation → same move and the same tree, whatever the hidden cards: every iteration's
    world is sampled from the seat's view, never read from the real position."""
    seat = 1
    rng = np.random.default_rng(5)
    searched = 0
    for state in positions(game, seat, 3, **options):
        twin = state.sample_hidden(seat, rng)  # the opponents' hands and the deck drawn again
        observation, mask = state.observation(seat), state.action_mask()
        agents = [attached(spec, s, seat) for s in (state, twin)]
        moves = [agent.act(observation, mask) for agent in agents]
        assert moves[0] == moves[1] and mask[moves[0]]
        assert agents[0].notes() == agents[1].notes()
        searched += agents[0].searched
    assert searched > 0


@pytest.mark.parametrize("game, spec, options", [
    ("lost_cities", SMALL, {}),
    ("lost_cities", ROLLOUT, {}),
    ("five_towers", SMALL, {"num_players": 3}),
    ("palazzo", "ismcts:iterations=8,batch=4,horizon=4,policy=none", {}),
    ("torres", TINY, {}),
])
def test_ismcts_plays_legal_moves_and_is_deterministic(game, spec, options):
    """A whole game through the wrapped env (an illegal move would end it with a penalty); the searching seat
    searches its first SEARCHES decisions with a choice, then hands over to a random agent."""
    env = envs.make(game, **options)
    n = env.unwrapped.game.num_players

    def trajectory():
        agent = load_agent(spec, env.unwrapped.game, seed=11)
        rest, moves = RandomAgent(seed=12), []

        class Logged:
            def attach(self, view):
                agent.attach(view)

            def act(self, observation, action_mask):
                action = (agent if agent.searched < SEARCHES else rest).act(observation, action_mask)
                assert action_mask[action] == 1
                moves.append(action)
                return action

        returns, scores = play_game(env, [Logged()] + [RandomAgent(seed=s) for s in range(n - 1)], seed=21)
        assert agent.searched > 0
        return moves, list(returns), scores

    assert trajectory() == trajectory()


def test_decisions_without_a_real_choice_are_free():
    """One legal action, or a prior sure of its move: no view needed, no search."""
    game = envs.make("lost_cities", wrapped=False).game
    agent = load_agent("ismcts", game, seed=0)
    mask = np.zeros(game.num_actions, np.int8)
    mask[game.draw_deck_action] = 1
    assert agent.act(np.zeros(game.observation_size, np.float32), mask) == game.draw_deck_action
    assert agent.unsearched == "only one move is legal here" and agent.notes() is None
    state = positions("lost_cities", 0, 1)[0]
    agent = load_agent("ismcts:min_prior=1", game, seed=0)  # no view attached: a search would fail
    move = agent.act(state.observation(0), state.action_mask())
    assert state.action_mask()[move] and agent.searched == 0
    assert agent.unsearched.endswith("every other legal move is under min_prior=1")
    with pytest.raises(ValueError, match="no view of the game"):
        load_agent("ismcts:min_prior=0", game, seed=0).act(state.observation(0), state.action_mask())


@pytest.mark.parametrize("spec", [SMALL, ROLLOUT, "ismcts:iterations=10,batch=4,horizon=3,policy=none"])
def test_every_iteration_visits_one_root_move_and_the_notes_say_so(spec):
    state = positions("lost_cities", 0, 1, seed=2)[0]
    agent = attached(spec, state, 0)
    move = agent.act(state.observation(0), state.action_mask())
    notes = agent.notes()
    assert NOTES(notes, "notes") is None  # what a game record accepts
    candidates = notes["search"]["candidates"]
    assert sum(c["worlds"] for c in candidates) == agent.settings.iterations
    assert move == max(candidates, key=lambda c: (c["worlds"], c["prior"]))["action"]
    assert notes["search"]["measure"] == ("returns" if agent.settings.leaf == "value" else "margin")


class Staged(IsmctsAgent):
    """ISMCTS without a network whose leaves are valued by a script: +1 to the searching seat (−1 to the other)
    if the walk's first move was ``good``, else −1."""

    def __init__(self, state, good, spec):
        super().__init__(state.game, IsmctsSettings.parse(spec), None, lambda rng: None, seed=0)
        self.good, self.walks = good, []
        self.attach(SeatView(lambda: state, 0))

    def descend(self, root, root_mean):
        state, node, path = super().descend(root, root_mean)
        self.walks.append(path[0][1])
        return state, node, path

    def evaluate(self, leaves):
        first = self.walks[-len(leaves):]
        return np.array([[1.0, -1.0] if a == self.good else [-1.0, 1.0] for a in first])


def test_the_search_finds_the_move_its_evaluations_favour():
    """With a uniform prior the visits go to the one root move whose leaves win, and it is played; with the values
    backed up for the wrong seat it would be the move avoided."""
    state = positions("lost_cities", 0, 1, seed=4)[0]
    legal = state.legal_actions()
    good = legal[len(legal) // 2]
    agent = Staged(state, good, "ismcts:iterations=200,batch=4,c=1,min_prior=0")
    assert agent.act(state.observation(0), state.action_mask()) == good
    visits = {c["action"]: c["worlds"] for c in agent.notes()["search"]["candidates"]}
    assert visits[good] > 200 / 2 and set(visits) == set(legal)  # each tried, the good one most


@pytest.mark.parametrize("game, spec, options, leaf, iterations, batch", [
    ("lost_cities", "ismcts", {}, "rollout", 256, 64),
    ("lost_cities", "ismcts:leaf=value", {}, "value", 400, 16),
    ("lost_cities", "ismcts:leaf=value,iterations=8", {}, "value", 8, 16),
    ("lost_cities", "ismcts:leaf=value", {"n_colours": 6}, "rollout", 16, 1),  # no shipped policy: heuristic play-outs
    ("five_towers", "ismcts:batch=4", {"num_players": 4, "final_partial_round": False}, "rollout", 16, 4),
])
def test_automatic_settings_follow_the_network(game, spec, options, leaf, iterations, batch):
    agent = load_agent(spec, envs.make(game, wrapped=False, **options).game)
    assert (agent.settings.leaf, agent.settings.iterations, agent.settings.batch) == (leaf, iterations, batch)


def test_spec_grammar():
    assert IsmctsSettings.parse("ismcts") == IsmctsSettings()
    s = IsmctsSettings.parse("ismcts: iterations=64, batch=8 ,c=0.5,leaf=rollout,value=returns,policy=none")
    assert (s.iterations, s.batch, s.c, s.leaf, s.value, s.policy) == (64, 8, 0.5, "rollout", "returns", "none")


@pytest.mark.parametrize("spec, message", [
    ("ismcts:depth=3", "^unknown ismcts option 'depth' in 'ismcts:depth=3'; allowed: policy, iterations, batch"),
    ("ismcts:iterations", "^ismcts option 'iterations' is not key=value"),
    ("ismcts:iterations=many", "^ismcts option iterations='many' is not an integer"),
    ("ismcts:c=high", "c='high' is not a number"),
    ("ismcts:batch=1,batch=2", "given twice"),
    ("ismcts:iterations=-1", r"^ismcts: bad option iterations=-1 \(expected at least 1, or 0 = auto\)$"),
    ("ismcts:batch=-1", "batch=-1 .expected at least 1, or 0 = auto"),
    ("ismcts:leaf=critic", "leaf='critic' .expected one of value, rollout"),
    ("ismcts:value=wins", "value='wins' .expected one of margin, returns"),
    ("ismcts:min_prior=2", "min_prior=2.0"),
    ("ismcts:c=-1,horizon=-2", "c=-1.0 .*; horizon=-2"),
    ("ismcts:policy=runs/none/policy.safetensors", "no such file"),
])
def test_bad_specs_fail_clearly(spec, message):
    game = envs.make("lost_cities", wrapped=False).game
    with pytest.raises(ValueError, match=message) as error:
        load_agent(spec, game)
    assert "\n" not in str(error.value)
