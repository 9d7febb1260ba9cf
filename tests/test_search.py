"""Search at play time (``tabletop_rl.training.runtime.search``) and the seat-view hook it needs
(``tabletop_rl.envs.core.agents.SeatView``): information from the seat's view only, legal actions only,
determinism, free single-option decisions, spec errors, and the hook in every place that drives agents."""

from __future__ import annotations

import numpy as np
import pytest

from tabletop_rl import envs
from tabletop_rl.envs.core.agents import RandomAgent, SeatView
from tabletop_rl.envs.core.match import play_game
from tabletop_rl.training.runtime.agents import load_agent
from tabletop_rl.training.runtime.search import (
    AgentPlayer,
    NetworkPlayer,
    SearchAgent,
    SearchSettings,
    SplitPlayer,
    outcomes,
)
from tabletop_rl.training.runtime.single_seat import SingleSeatEnv

SMALL = "search:worlds=4,k=3"  # budgets small enough for tests; the strength is measured in docs/search.md
# play-outs cut short to stay fast (with a shipped policy the network plays them; without one — Five Towers
# beyond 2 players, say — the heuristic does, one state at a time)
SHORT = "search:worlds=3,horizon=6"
# Torres without a policy (none given): every legal move (up to ~45) is a candidate
TINY = "search:worlds=1,horizon=2,policy=none"
SEARCHES = 15  # searched decisions per game in the whole-game tests


class Recorder(RandomAgent):
    """A random agent that asks for a view and checks it at every decision."""

    def __init__(self, seed=0):
        super().__init__(seed=seed)
        self.views: list[SeatView] = []
        self.checked = 0

    def attach(self, view: SeatView) -> None:
        self.views.append(view)

    def act(self, observation, action_mask):
        view = self.views[-1]
        sample = view.sample(np.random.default_rng(self.checked))
        # a full state the seat cannot tell from the real one: same observation, same legal moves
        np.testing.assert_array_equal(sample.observation(view.seat), observation)
        np.testing.assert_array_equal(sample.action_mask(), action_mask)
        self.checked += 1
        return super().act(observation, action_mask)


def positions(game: str, seat: int, count: int, seed: int = 0, **options):
    """Live states of random games at decisions of ``seat`` with a choice, and the env they belong to."""
    env = envs.make(game, wrapped=False, **options)
    rng = np.random.default_rng(seed)
    found = []
    while len(found) < count:
        env.reset(seed=int(rng.integers(2**31)))
        state = env.game_state
        while not state.is_terminal():
            legal = state.legal_actions()
            if state.current_player == seat and len(legal) > 1 and rng.random() < 0.3:
                found.append(state.clone())
                if len(found) == count:
                    break
            state.apply_action(legal[rng.integers(len(legal))])
    return found


def attached(spec: str, state, seat: int, seed: int = 7) -> SearchAgent:
    agent = load_agent(spec, state.game, seed=seed)
    agent.attach(SeatView(lambda: state, seat))
    return agent


# --------------------------------------------------------------------------- the hook
@pytest.mark.parametrize("game, options", [("lost_cities", {}), ("five_towers", {"num_players": 3})])
def test_play_game_hands_each_searching_agent_its_seat_view(game, options):
    env = envs.make(game, wrapped=False, **options)
    n = env.game.num_players
    agents = [Recorder(seed=s) for s in range(n - 1)] + [RandomAgent(seed=9)]  # the last one has no hook
    for seed in (1, 2):
        play_game(env, agents, seed=seed)
    for seat, agent in enumerate(agents[:-1]):
        assert [v.seat for v in agent.views] == [seat, seat]  # a fresh view per game
        assert agent.checked > 0


def test_a_view_never_hands_out_the_live_state():
    state = envs.make("lost_cities", wrapped=False).game.new_initial_state(3)
    before = state.to_json()
    view = SeatView(lambda: state, 0)
    sample = view.sample(np.random.default_rng(0))
    assert sample is not state
    sample.apply_action(sample.legal_actions()[0])
    assert state.to_json() == before
    assert not hasattr(view, "state") and view.seat == 0 and view.game is state.game


def test_one_searching_agent_cannot_sit_in_two_seats():
    env = envs.make("lost_cities", wrapped=False)
    agent = Recorder()
    with pytest.raises(ValueError, match="two seats"):
        play_game(env, [agent, agent], seed=0)


def test_searching_opponents_of_the_training_env_get_their_own_seat_views():
    env = SingleSeatEnv("five_towers", {"num_players": 3}, opponents={SHORT: 1}, seat=0)
    env.reset(seed=4)
    opponents = [agent for _, agent in env.seated.values()]
    assert len({id(a) for a in opponents}) == 2
    assert [a.view.seat for a in opponents] == [1, 2]
    rng = np.random.default_rng(0)
    done = False
    while not done:
        _, _, done, truncated, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        done = done or truncated
    assert sum(a.searched for a in opponents) > 0


def test_play_narrates_a_searching_opponent():
    import io

    from tabletop_rl.training.cli.terminal import play

    moves = io.StringIO("1\n" * 400)
    out = io.StringIO()
    play("five_towers", [SHORT], seat=0, seed=3, input_stream=moves, output_stream=out)
    assert f"player 1 ({SHORT}):" in out.getvalue()


# --------------------------------------------------------------------------- information
@pytest.mark.parametrize("game, spec, options", [
    # min_prior=0: every position is searched, however sure the shipped policy is of its move
    ("lost_cities", SMALL + ",min_prior=0", {}),
    ("lost_cities", SMALL + ",min_prior=0,opponents=heuristic", {}),
    ("lost_cities", SMALL + ",min_prior=0,max_worlds=12,c=0", {}),  # racing: later worlds drawn from the view too
    ("five_towers", SHORT, {}),
    ("five_towers", SHORT, {"num_players": 4}),
    ("palazzo", SHORT, {}),
    ("torres", TINY, {}),
])
def test_the_move_depends_only_on_what_the_seat_has_seen(game, spec, options):
    """Same seed, same observation → same move, whatever the hidden cards: the search sees its seat's
    information only (it samples worlds from the seat's view, never reads the real position)."""
    seat = 1
    rng = np.random.default_rng(5)
    searched = 0
    for state in positions(game, seat, 4, **options):
        twin = state.sample_hidden(seat, rng)  # the opponents' hands and the deck drawn again
        np.testing.assert_array_equal(twin.observation(seat), state.observation(seat))
        observation, mask = state.observation(seat), state.action_mask()
        agents = [attached(spec, s, seat) for s in (state, twin)]
        moves = [agent.act(observation, mask) for agent in agents]
        assert moves[0] == moves[1]
        assert mask[moves[0]]
        searched += agents[0].searched
    assert searched > 0


def test_hidden_cards_differ_between_the_twins():
    """The twins of the information test really differ where the seat cannot see (else it proves nothing)."""
    state = positions("lost_cities", 1, 1)[0]
    twin = state.sample_hidden(1, np.random.default_rng(5))
    assert not np.array_equal(twin.observation(0), state.observation(0))


# --------------------------------------------------------------------------- playing
@pytest.mark.parametrize("game, spec, options", [
    ("lost_cities", "search:worlds=2,k=2,horizon=8", {}),
    ("lost_cities", "search:worlds=2,max_worlds=8,z=2,k=3,horizon=8", {}),
    ("five_towers", "search:worlds=2,k=2,horizon=8", {}),
    ("five_towers", "search:worlds=2,horizon=8", {"num_players": 4}),
    ("palazzo", "search:worlds=2,horizon=4,policy=none", {}),
    ("torres", TINY, {}),
])
def test_search_plays_legal_moves_and_is_deterministic(game, spec, options):
    """A whole game through the wrapped env; the searching seat searches its first SEARCHES decisions with a
    choice, then hands over to a random agent (heuristic play-outs in Torres cost ~6 ms a ply)."""
    env = envs.make(game, **options)  # the wrapped env: an illegal move would end the game with a penalty
    n = env.unwrapped.game.num_players

    def trajectory():
        agents = [load_agent(spec, env.unwrapped.game, seed=11)] + [
            RandomAgent(seed=s) for s in range(n - 1)]
        moves = []

        class Logged:
            def __init__(self, agent):
                self.agent, self.rest = agent, RandomAgent(seed=12)

            def attach(self, view):
                if hasattr(self.agent, "attach"):
                    self.agent.attach(view)

            def act(self, observation, action_mask):
                searching = getattr(self.agent, "searched", 0) < SEARCHES
                action = (self.agent if searching else self.rest).act(observation, action_mask)
                assert action_mask[action] == 1
                moves.append(action)
                return action

        returns, scores = play_game(env, [Logged(a) for a in agents], seed=21)
        assert agents[0].searched > 0
        return moves, list(returns), scores

    first = trajectory()
    assert first == trajectory()


def test_single_option_decisions_are_free():
    """One legal action: no view needed, no sampling, no network call."""
    game = envs.make("lost_cities", wrapped=False).game
    agent = load_agent("search", game, seed=0)

    class NoNetwork:
        def logits(self, *args, **kwargs):
            raise AssertionError("the network was called for a forced move")

    agent.prior = NoNetwork()
    mask = np.zeros(game.num_actions, np.int8)
    mask[game.draw_deck_action] = 1
    assert agent.act(np.zeros(game.observation_size, np.float32), mask) == game.draw_deck_action
    assert agent.searched == 0 and agent.unsearched == "only one move is legal here"


def test_a_decision_with_one_candidate_needs_no_view_and_a_search_needs_one():
    state = positions("lost_cities", 0, 1)[0]
    agent = load_agent("search:k=1", state.game, seed=0)
    move = agent.act(state.observation(0), state.action_mask())  # k=1: the prior's choice, no search
    assert state.action_mask()[move] and agent.searched == 0
    assert agent.unsearched.startswith("k=1 keeps only the prior's likeliest move, this one at ")
    agent = load_agent("search:min_prior=1", state.game, seed=0)
    assert agent.act(state.observation(0), state.action_mask()) == move and agent.searched == 0
    assert agent.unsearched.startswith("the prior leaves one candidate, this move at ")
    assert agent.unsearched.endswith("%: every other legal move is under min_prior=1")
    agent = load_agent("search:k=5,min_prior=0", state.game, seed=0)
    with pytest.raises(ValueError, match="no view of the game"):
        agent.act(state.observation(0), state.action_mask())


def test_candidates_are_the_top_k_moves_above_the_prior_threshold():
    state = positions("lost_cities", 0, 1)[0]
    legal = state.legal_actions()
    agent = load_agent("search:k=3,min_prior=0", state.game, seed=0)
    candidates, log_prior = agent.candidates(state.observation(0), legal)
    assert len(candidates) == 3 and set(candidates) <= set(legal)
    assert list(log_prior) == sorted(log_prior, reverse=True)
    logits = agent.prior.logits(state.observation(0))[legal]
    assert candidates[0] == legal[int(np.argmax(logits))]
    strict = load_agent("search:k=3,min_prior=1", state.game, seed=0)
    assert strict.candidates(state.observation(0), legal)[0] == candidates[:1]  # the top move always qualifies


@pytest.mark.parametrize("game, spec, options, rollout, worlds", [
    ("lost_cities", "search", {}, "policy", 32),
    ("lost_cities", "search:worlds=0,rollout=heuristic", {}, "heuristic", 4),
    ("lost_cities", "search:worlds=9,policy=none", {}, "heuristic", 9),
    ("five_towers", "search", {}, "policy", 32),  # the shipped policy fits 2 players
    ("five_towers", "search", {"num_players": 4}, "policy", 32),  # shipped for every player count
    ("five_towers", "search", {"num_players": 4, "final_partial_round": False}, "heuristic", 4),  # for no option
    ("palazzo", "search", {}, "policy", 32),
    ("palazzo", "search", {"num_players": 2, "stack_split": "random"}, "heuristic", 4),
    ("torres", "search", {"num_players": 3}, "policy", 32),
    ("torres", "search", {"action_deck": "personal"}, "heuristic", 4),
])
def test_automatic_settings_follow_the_play_outs(game, spec, options, rollout, worlds):
    """Without a fitting network the heuristic plays the play-outs, and fewer worlds keep a decision cheap."""
    agent = load_agent(spec, envs.make(game, wrapped=False, **options).game)
    assert (agent.settings.rollout, agent.settings.worlds) == (rollout, worlds)


def test_without_a_network_every_legal_move_is_a_candidate():
    state = positions("five_towers", 0, 1, num_players=4, final_partial_round=False)[0]
    agent = load_agent("search", state.game, seed=0)  # no shipped policy was trained for these options
    assert agent.prior is None and agent.settings.rollout == "heuristic"
    candidates, log_prior = agent.candidates(state.observation(0), state.legal_actions())
    assert candidates == state.legal_actions() and not log_prior.any()


# --------------------------------------------------------------------------- the spec
def test_spec_grammar():
    assert SearchSettings.parse("search") == SearchSettings()
    s = SearchSettings.parse("search: worlds=64, k=5 ,c=0.5,value=returns,rollout=heuristic,policy=none")
    assert (s.worlds, s.k, s.c, s.value, s.rollout, s.policy) == (64, 5, 0.5, "returns", "heuristic", "none")


@pytest.mark.parametrize("spec, message", [
    ("search:depth=3", "unknown search option 'depth'.*allowed: policy, rollout, worlds"),
    ("search:worlds", "not key=value"),
    ("search:worlds=many", "worlds='many' is not an integer"),
    ("search:c=high", "c='high' is not a number"),
    ("search:worlds=-1", "worlds=-1 .expected at least 1, or 0 = auto"),
    ("search:k=2,k=3", "given twice"),
    ("search:value=wins", "value='wins' .expected one of margin, returns, critic"),
    ("search:value=critic", "value=critic without a horizon"),
    ("search:policy=none,value=critic,horizon=4", "value=critic needs a policy network"),
    ("search:min_prior=2", "min_prior=2.0"),
    ("search:c=-1", "c=-1.0"),
    ("search:rollout=search:worlds=2", "rollout="),
    ("search:rollout=heuristc", "unknown agent 'heuristc'"),
    ("search:policy=runs/none/policy.safetensors", "no such file"),
    ("search:opponents=heuristc", "unknown agent 'heuristc'"),
    ("search:opponents=search:k=2", "opponents="),
    ("search:policy=none,opponents=policy", "opponents=policy needs a policy network"),
    ("search:max_worlds=16", "max_worlds=16 .expected 0 = no racing, or at least worlds=32"),  # auto worlds: 32
    ("search:worlds=8,max_worlds=4", "max_worlds=4 .expected 0 = no racing, or at least worlds=8"),
    ("search:worlds=1,max_worlds=4", "racing needs at least 2 worlds per batch"),
    ("search:z=-1", "z=-1.0"),
])
def test_bad_specs_fail_clearly(spec, message):
    game = envs.make("lost_cities", wrapped=False).game
    with pytest.raises(ValueError, match=message):
        load_agent(spec, game)


class Scripted:
    """A play-out player that records the states it is asked about and answers with a fixed move."""

    def __init__(self, move):
        self.move, self.asked = move, []

    def choose(self, states, legal):
        self.asked += states
        return [self.move] * len(states)


def test_an_opponent_model_moves_the_other_seats_in_play_outs():
    states = positions("five_towers", 0, 3, num_players=3) + positions("five_towers", 1, 3, num_players=3) \
        + positions("five_towers", 2, 2, num_players=3)
    player = SplitPlayer(Scripted(-1), Scripted(-2))
    player.seat = 1
    moves = player.choose(states, [s.legal_actions() for s in states])
    assert moves == [-2] * 3 + [-1] * 3 + [-2] * 2  # each state answered by its own player, in order
    assert player.own.asked == states[3:6] and player.others.asked == states[:3] + states[6:]


def test_the_opponent_model_is_set_up_for_the_seat_searched():
    state = positions("lost_cities", 1, 1)[0]
    agent = attached("search:worlds=2,opponents=random", state, 1)
    assert isinstance(agent.player, SplitPlayer) and agent.player.seat == 1
    assert isinstance(agent.player.own, NetworkPlayer) and isinstance(agent.player.others, AgentPlayer)
    for same in ("search:worlds=2", "search:worlds=2,opponents=policy", "search:worlds=2,opponents=rollout"):
        assert not isinstance(attached(same, state, 1).player, SplitPlayer)  # one player for every seat
    random_model = [attached("search:worlds=8,k=4,min_prior=0,opponents=random", state, 1, seed=s) for s in (3, 3)]
    values = [agent.evaluate([state.legal_actions()[0]]).tolist() for agent in random_model]
    assert values[0] == values[1]  # deterministic with an agent as the model
    assert values[0] != attached("search:worlds=8,k=4,min_prior=0", state, 1, seed=3).evaluate(
        [state.legal_actions()[0]]).tolist()  # and the model changes what the play-outs say


def test_the_random_opponent_model_moves_as_the_random_agent_without_observations():
    states = positions("five_towers", 0, 6, num_players=5)
    legal = [s.legal_actions() for s in states]
    watched = RandomAgent(seed=4)
    watched.act = None  # AgentPlayer must not build observations for it
    reference = RandomAgent(seed=4)
    assert AgentPlayer(watched).choose(states, legal) == [reference.act(s.observation(s.current_player),
                                                                        s.action_mask()) for s in states]


def test_the_critic_scores_play_outs_cut_at_the_horizon_and_returns_score_ended_ones():
    """value=critic: a cut play-out is worth the network's value of the searched seat's observation of it."""
    state = positions("lost_cities", 1, 1)[0]
    agent = attached("search:worlds=4,horizon=6,value=critic", state, 1)
    cut = [state.clone() for _ in range(3)]
    ended = state.clone()
    while not ended.is_terminal():
        ended.apply_action(ended.legal_actions()[0])
    values = outcomes([*cut, ended], 1, "critic", agent.prior)
    np.testing.assert_allclose(values[:3], agent.prior.value(np.stack([s.observation(1) for s in cut])), rtol=1e-6)
    assert values[3] == ended.returns()[1]
    assert outcomes(cut, 1, "returns").tolist() == [0.0] * 3  # what the cut play-outs were worth without it
    searched = agent.evaluate(state.legal_actions()[:2])
    assert searched.shape == (2, 4) and np.abs(searched).max() <= 1.5 and np.unique(searched).size > 2


class Staged(SearchAgent):
    """A search whose play-outs are scripted: ``evaluate`` answers from a table of per-world values (one row per
    candidate) and records which candidates each batch of worlds was asked about."""

    def __init__(self, spec, table):
        settings = SearchSettings.parse(spec)
        super().__init__(envs.make("lost_cities", wrapped=False).game, settings, None, lambda rng: None)
        self.table, self.asked = np.asarray(table, float), []

    def evaluate(self, candidates):
        used = len(self.asked) * self.settings.worlds
        self.asked.append(list(candidates))
        return self.table[candidates, used:used + self.settings.worlds]


def test_racing_spends_worlds_on_close_decisions_only():
    noise = np.random.default_rng(0).normal(0, 1, (3, 64))
    clear = Staged("search:worlds=8,max_worlds=64", noise + [[10], [0], [0]])
    assert clear.race([0, 1, 2], np.zeros(3)) == 0 and clear.asked == [[0, 1, 2]]  # decided by the first batch
    tied = np.array([[1, 0] * 32, [0, 1] * 32, [-10] * 64])  # the first two equal in every batch, the third hopeless
    close = Staged("search:worlds=8,max_worlds=64", tied)
    assert close.race([0, 1, 2], np.zeros(3)) == 0
    assert close.asked == [[0, 1, 2]] + [[0, 1]] * 7  # the third dropped, the tied two played in all 64 worlds
    plain = Staged("search:worlds=8", tied)
    plain.race([0, 1, 2], np.zeros(3))
    assert plain.asked == [[0, 1, 2]]  # max_worlds 0: one batch, no racing


def test_racing_picks_by_mean_value_plus_prior():
    values = np.array([[1.0, 3.0], [2.0, 2.5]]).repeat(4, axis=1)  # means 2.0 and 2.25, every world counted
    log_prior = np.log([0.9, 0.1])
    assert Staged("search:worlds=8,max_worlds=8,c=0", values).race([0, 1], log_prior) == 1
    assert Staged("search:worlds=8,max_worlds=8,c=1", values).race([0, 1], log_prior) == 0  # 0.25 < ln 9


def test_attaching_to_another_game_fails():
    agent = load_agent("search", envs.make("lost_cities", wrapped=False).game)
    other = envs.make("lost_cities", wrapped=False, n_colours=6).game.new_initial_state(0)
    with pytest.raises(ValueError, match="attached to a game"):
        agent.attach(SeatView(lambda: other, 0))


def benchmark(name):
    """A script of benchmarks/ (not a package) loaded as a module."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_cheating_samplers_of_the_search_bounds_benchmark():
    """benchmarks/search_bounds.py measures what better beliefs could give: its "hand" worlds hold the
    opponent's true hand and a reshuffled deck, its "full" worlds are the true position; the seat's own view
    is unchanged, and neither hands out the live state."""
    bounds = benchmark("search_bounds")
    reshuffled = 0
    for live in positions("lost_cities", 0, 5, seed=3):
        view = SeatView(lambda live=live: live, 0)
        hand = bounds.cheating_sample("hand")(view, np.random.default_rng(0))
        full = bounds.cheating_sample("full")(view, np.random.default_rng(0))
        honest = view.sample(np.random.default_rng(0))
        for world in (hand, full):
            assert world is not live
            assert world.hands == live.hands
            np.testing.assert_array_equal(world.observation(0), live.observation(0))
            np.testing.assert_array_equal(world.observation(1), live.observation(1))
        assert sorted(hand.deck) == sorted(live.deck)
        assert full.deck == live.deck
        reshuffled += hand.deck != live.deck
        assert honest.hands[1] != live.hands[1] or honest.deck != live.deck  # the honest view resamples
    assert reshuffled == 5
    for live in positions("five_towers", 2, 3, seed=3, num_players=5):  # "full" takes any game
        view = SeatView(lambda live=live: live, 2)
        full = bounds.cheating_sample("full")(view, np.random.default_rng(0))
        assert full is not live and full.draw == live.draw != view.sample(np.random.default_rng(0)).draw
    for argv, message in ((["hand", "five_towers", "search", "random"], "'hand' is Lost Cities'"),
                          (["full", "search", "random"], "GAME is one of")):
        with pytest.raises(SystemExit, match=message):
            bounds.main(argv)


def test_the_noise_benchmark_records_searched_decisions_and_replays_rules_on_them(tmp_path, capsys):
    """benchmarks/search_noise.py scores each searched decision's candidates in more worlds, then replays
    decision rules (SearchAgent.race itself) on those values."""
    noise = benchmark("search_noise")
    out = tmp_path / "noise.npz"
    noise.main(["record", "lost_cities", "--agent", "search:worlds=2,horizon=6", "--games", "1",
                "--reference", "8", "--out", str(out)])
    with pytest.raises(SystemExit, match="noise.npz exists: give another --out"):
        noise.main(["record", "lost_cities", "--games", "1", "--out", str(out)])  # before any game is played
    data = np.load(out)
    assert data["sizes"].min() >= 2 and data["values"].shape == (data["sizes"].sum(), 8)
    assert len(data["log_prior"]) == data["sizes"].sum() and int(data["games"]) == 1
    noise.main(["report", str(out), "--baseline", "worlds=2", "--rules", "worlds=4,c=0", "worlds=2,max_worlds=4",
                "--repeats", "2"])
    table = capsys.readouterr().out.split("| rule |")[1].splitlines()
    assert [row.split("|")[1].strip() for row in table[2:]] == ["`worlds=2`", "`worlds=4,c=0`",
                                                                  "`worlds=2,max_worlds=4`"]
    assert table[2].split("|")[2].strip() == "0.00 [0.00, 0.00]"  # the baseline against itself
    with pytest.raises(SystemExit, match="'worlds=32' needs 32 worlds; the recording has 4"):
        noise.main(["report", str(out)])  # the default baseline needs a recording with 64 worlds or more
