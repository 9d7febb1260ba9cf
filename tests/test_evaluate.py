"""``python -m tabletop_rl.training.evaluate``: seat balance, determinism, statistics, ratings and the written
outputs."""

from __future__ import annotations

import csv
import io
import math
from collections import Counter
from typing import Any

import numpy as np
import pytest

from tabletop_rl import envs
from tabletop_rl.envs.core import options as opt
from tabletop_rl.envs.core import registry
from tabletop_rl.envs.core.aec import make_env_functions
from tabletop_rl.envs.core.game import TERMINAL, Fields
from tabletop_rl.envs.core.game import Game as BaseGame
from tabletop_rl.envs.core.game import State as BaseState
from tabletop_rl.envs.core.layout import Layout
from tabletop_rl.envs.core.match import first_place_shares
from tabletop_rl.training.evaluate import main
from tabletop_rl.training.evaluation.stats import Estimate, bradley_terry, mean_interval, t_quantile_975, wilson
from tabletop_rl.training.evaluation.tournament import agent_labels, rotations, tables, tournament
from tests.policy_helpers import random_policy_file


# --------------------------------------------------------------------------- a tiny n-player game
class Game(BaseGame):
    """Tiny Bid: each round every seat in turn names 1, 2 or 3 and scores it; the highest total wins."""

    name = "tiny_bid"
    title = "Tiny Bid"
    option_schema = (opt.integer("num_players", 3, 2, 8), opt.integer("rounds", 1, 1, 100))

    def _setup(self) -> None:
        self.num_players = self.options["num_players"]
        self.num_actions = 3
        self.layout = Layout([("total", 1, "my total / maximum", 0, 1)])
        self.state_layout = Layout([("totals", self.num_players, "totals / maximum", 0, 1)])


class State(BaseState):
    game: Game
    fields = Fields(values="turn current_player", copied="totals")

    def _setup(self) -> None:
        self.totals = [0] * self.game.num_players
        self.turn = 0
        self.current_player = 0

    def _legal_actions(self) -> list[int]:
        return [0, 1, 2]

    def _apply(self, action: int) -> None:
        n = self.game.num_players
        self.totals[self.current_player] += action + 1
        self.turn += 1
        self.current_player = TERMINAL if self.turn == n * self.game.options["rounds"] else self.turn % n

    @property
    def phase(self) -> str:
        return "terminal" if self.is_terminal() else "bid"

    def is_terminal(self) -> bool:
        return self.current_player == TERMINAL

    def scores(self) -> list[float]:
        return list(self.totals)

    def observation(self, player: int) -> np.ndarray:
        return np.array([self.totals[player] / (3 * self.game.options["rounds"])], np.float32)

    def action_to_string(self, action: int) -> str:
        return f"name {action + 1}"

    def render_text(self, viewer: int | None = None) -> str:
        return f"totals {self.totals}"

    def text_legend(self) -> str:
        return "totals: each seat's points so far"

    def global_state(self) -> np.ndarray:
        return np.array(self.totals, np.float32) / (3 * self.game.options["rounds"])

    def sample_hidden(self, player: int, rng: np.random.Generator) -> State:
        return self.clone()

    def _after_load(self, data: dict[str, Any]) -> None:
        """Nothing is derived."""


Game.state_class = State
raw_env, env = make_env_functions(Game, Game.__doc__, __name__)


class HeuristicAgent:
    """Always names 3: never loses Tiny Bid."""

    def __init__(self, game: Game, seed: int | None = None):
        pass

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return 2


@pytest.fixture
def tiny_bid():
    """Registers Tiny Bid for one test only, so ``tabletop_rl.envs.list_games()`` stays clean for other tests."""
    registry.register("tiny_bid", __name__)
    yield "tiny_bid"
    registry.unregister("tiny_bid")


@pytest.fixture(scope="module")
def lost_cities():
    """random vs heuristic vs random in Lost Cities: 3 tables × 2 deals × 2 seat orders."""
    return tournament("lost_cities", ["random", "heuristic", "random"], games_per_pairing=4, seed=11)


# --------------------------------------------------------------------------- seats
def test_tables_are_every_meeting_of_agents():
    assert tables(3, 2) == [(0, 1), (0, 2), (1, 2)]
    assert tables(4, 3) == [(0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3)]
    assert tables(2, 3) == [(0, 0, 1), (0, 1, 1)]  # fewer agents than seats: mixed multisets only
    with pytest.raises(ValueError, match="at least two agents"):
        tables(1, 2)


@pytest.mark.parametrize("table", [(0, 1), (0, 1, 2), (0, 0, 1), (3, 1, 4, 1)])
def test_rotations_put_every_agent_in_every_seat_equally_often(table):
    orders = rotations(table)
    assert len(orders) == len(table)
    for seat in range(len(table)):
        assert Counter(order[seat] for order in orders) == Counter(table)


def test_two_players_play_every_deal_in_both_seat_orders(lost_cities):
    """Each deal (env seed) is replayed in both seat orders at every table: common random numbers."""
    by_deal: dict[int, list[tuple[int, int, tuple[int, ...]]]] = {}
    for rec in lost_cities.records:
        by_deal.setdefault(rec.deal, []).append((rec.seed, rec.table, rec.seating))
    assert len(by_deal) == 2
    assert len({seed for games in by_deal.values() for seed, _, _ in games}) == 2
    for games in by_deal.values():
        assert len({seed for seed, _, _ in games}) == 1
        assert sorted(seating for _, _, seating in games) == sorted(
            order for table in tables(3, 2) for order in rotations(table))
    for stats in lost_cities.stats:
        assert stats.seat_counts == (4, 4)  # 2 opponents × 2 deals in each seat


# --------------------------------------------------------------------------- determinism
def test_same_seed_gives_identical_tables(lost_cities):
    again = tournament("lost_cities", ["random", "heuristic", "random"], games_per_pairing=4, seed=11)
    assert again.records == lost_cities.records
    assert again.to_markdown(times=False) == lost_cities.to_markdown(times=False)
    assert again.crosstable_csv() == lost_cities.crosstable_csv()
    assert again.agents_csv() == lost_cities.agents_csv()


def test_another_seed_gives_other_games(lost_cities):
    other = tournament("lost_cities", ["random", "heuristic", "random"], games_per_pairing=4, seed=12)
    assert [r.scores for r in other.records] != [r.scores for r in lost_cities.records]


# --------------------------------------------------------------------------- statistics and ratings
def test_heuristic_is_rated_above_random_in_lost_cities(lost_cities):
    random_a, heuristic, random_b = lost_cities.ratings
    assert heuristic.value > random_a.value and heuristic.value > random_b.value
    assert lost_cities.ranking()[0] == 1
    assert lost_cities.pairs[1, 0].win.mean > 0.5
    assert lost_cities.pairs[1, 0].margin.mean > 0
    # the cross-table is antisymmetric: A's results against B mirror B's against A
    for (a, b), pair in lost_cities.pairs.items():
        assert pair.win.mean == pytest.approx(1 - lost_cities.pairs[b, a].win.mean)
        assert pair.margin.mean == pytest.approx(-lost_cities.pairs[b, a].margin.mean)


def test_two_agents_are_compared_deal_by_deal_against_a_third(lost_cities):
    """At 2 players deal d is the same cards at every table, so the heuristic's games against random#2 minus
    random's against random#2 pair up deal by deal; the report shows every such comparison."""
    def per_deal(a: int, c: int) -> dict[int, tuple[float, float]]:
        games: dict[int, list[tuple[float, float]]] = {}
        for rec in lost_cities.records:
            if sorted(rec.seating) == sorted((a, c)):
                mine, theirs = rec.seating.index(a), rec.seating.index(c)
                mine_r, theirs_r = rec.returns[mine], rec.returns[theirs]
                won = 1.0 if mine_r > theirs_r else 0.5 if mine_r == theirs_r else 0.0
                games.setdefault(rec.deal, []).append((won, rec.scores[mine] - rec.scores[theirs]))
        return {d: (float(np.mean([w for w, _ in g])), float(np.mean([m for _, m in g]))) for d, g in games.items()}

    heuristic, random = per_deal(1, 2), per_deal(0, 2)
    paired = lost_cities.paired(1, 0, 2)
    assert paired.games == 2
    assert paired.win == mean_interval([heuristic[d][0] - random[d][0] for d in (0, 1)])
    assert paired.margin == mean_interval([heuristic[d][1] - random[d][1] for d in (0, 1)])
    assert paired.margin.mean > 0
    assert lost_cities.paired(1, 0, 1) is None  # against itself: no such games
    report = lost_cities.to_markdown(times=False)
    assert "## Paired on the same deals" in report
    assert f"| heuristic | random | random#2 | {100 * paired.win.mean:+.1f} [" in report


def test_no_paired_comparison_without_a_third_agent_or_beyond_two_players(tiny_bid):
    two = tournament("lost_cities", ["random", "heuristic"], games_per_pairing=2, seed=3)
    three_seats = tournament(tiny_bid, ["random", "heuristic", "random"], games_per_pairing=3, seed=3)
    assert three_seats.paired(1, 0, 2) is None
    for results in (two, three_seats):
        assert "Paired on the same deals" not in results.to_markdown(times=False)


def test_wilson_interval():
    none = wilson([0.0] * 10)
    assert none.mean == 0.0 and none.low == pytest.approx(0.0)
    assert none.high == pytest.approx(0.2775, abs=1e-4)
    half = wilson([1.0, 0.0] * 50)
    assert half.low == pytest.approx(1 - half.high) and half.low == pytest.approx(0.4038, abs=1e-4)
    assert wilson([]).n == 0 and wilson([]).text() == "—"


@pytest.mark.parametrize("dof, exact", [(1, 12.706), (2, 4.303), (3, 3.182), (5, 2.571), (10, 2.228),
                                        (30, 2.042), (100, 1.984)])
def test_t_quantile(dof, exact):
    assert t_quantile_975(dof) == pytest.approx(exact, rel=0.01)


def test_mean_interval():
    assert math.isnan(mean_interval([3.0]).low)
    est = mean_interval([1.0, 2.0, 3.0])
    assert est.mean == 2.0 and est.high - est.mean == pytest.approx(4.303 / math.sqrt(3), rel=1e-3)
    assert Estimate(0.25, 0.1, 0.4, 8).text(percent=True) == "25.0% [10.0, 40.0]"
    difference = Estimate(0.012, -0.003, 0.027, 8)  # a difference shows every sign; a share in points
    assert difference.text(signed=True) == "+0.0 [-0.0, +0.0]" and difference.scaled(100).text(signed=True) == (
        "+1.2 [-0.3, +2.7]")
    assert mean_interval([3.0]).text(signed=True) == "+3.0"


def test_bradley_terry():
    even = bradley_terry(np.array([[0, 5.0], [5.0, 0]]), np.array([[0, 10.0], [10.0, 0]]))
    assert [e for e, _ in even] == pytest.approx([1500, 1500])
    # 3 : 1 wins with one virtual draw → strengths 3.5 : 1.5 → 400·log10(7/3) Elo apart
    (strong, half), (weak, _) = bradley_terry(np.array([[0, 3.0], [1.0, 0]]), np.array([[0, 4.0], [4.0, 0]]))
    assert strong - weak == pytest.approx(400 * math.log10(3.5 / 1.5))
    assert strong + weak == pytest.approx(3000)
    assert half > 0


# --------------------------------------------------------------------------- more players
def test_three_player_tournament_with_fewer_agents_than_seats(tiny_bid):
    results = tournament(tiny_bid, ["random", "heuristic"], options={"num_players": 3}, games_per_pairing=6,
                         seed=0)
    assert len(results.records) == 2 * 2 * 3  # tables AAB and ABB, 2 deals, 3 rotations
    for agent, stats in enumerate(results.stats):
        assert len(set(stats.seat_counts)) == 1, f"agent {agent} is not seat-balanced: {stats.seat_counts}"
    random_, heuristic = results.ratings
    assert heuristic.value > random_.value  # OpenSkill
    assert results.pairs[1, 0].win.mean > 0.5
    assert results.stats[1].first_place.mean > results.stats[0].first_place.mean
    assert "OpenSkill" in results.to_markdown()


def test_three_player_five_towers_tournament():
    args = ("five_towers", ["random", "heuristic"])
    results = tournament(*args, options={"num_players": 3}, games_per_pairing=6, seed=2)
    assert len(results.records) == 2 * 2 * 3
    assert [stats.seat_counts for stats in results.stats] == [(6, 6, 6)] * 2  # AAB and ABB: 3 + 3 per seat
    assert results.ratings[1].value > results.ratings[0].value
    assert results.pairs[1, 0].win.mean > 0.5
    again = tournament(*args, options={"num_players": 3}, games_per_pairing=6, seed=2)
    assert again.records == results.records and again.agents_csv() == results.agents_csv()


# --------------------------------------------------------------------------- parallel games, deals, times
def test_workers_give_the_serial_results():
    """Games run in two processes give exactly the serial tournament: agents are seeded per game."""
    args = ("lost_cities", ["random", "heuristic", "pretrained"])
    serial = tournament(*args, games_per_pairing=4, seed=3)
    parallel = tournament(*args, games_per_pairing=4, seed=3, workers=2)
    assert parallel.records == serial.records
    assert parallel.to_markdown(times=False) == serial.to_markdown(times=False)
    assert [t.decisions for t in parallel.times] == [t.decisions for t in serial.times]
    assert "2 worker processes" in parallel.to_markdown()
    with pytest.raises(ValueError, match="workers must be at least 1"):
        tournament(*args, workers=0)


def test_a_game_does_not_depend_on_the_games_before_it():
    """The same game (table, deal, rotation) has the same result in a shorter tournament: nothing carries over."""
    long = tournament("lost_cities", ["random", "heuristic"], games_per_pairing=6, seed=4)
    short = tournament("lost_cities", ["random", "heuristic"], games_per_pairing=2, seed=4)
    assert short.records == long.records[:len(short.records)]


def test_intervals_are_over_deals_not_games(tiny_bid):
    """Each deal's games are averaged first: n counts deals, and the interval is the t interval of the deal means."""
    results = tournament(tiny_bid, ["random", "heuristic"], options={"num_players": 2}, games_per_pairing=10,
                         seed=6)
    pair = results.pairs[1, 0]
    assert pair.games == 10 and pair.margin.n == pair.win.n == 5
    per_deal: dict[int, list[float]] = {}
    for r in results.records:
        per_deal.setdefault(r.deal, []).append(r.scores[r.seating.index(1)] - r.scores[r.seating.index(0)])
    expected = mean_interval([float(np.mean(v)) for v in per_deal.values()])
    assert (pair.margin.mean, pair.margin.low, pair.margin.high) == pytest.approx(
        (expected.mean, expected.low, expected.high))
    assert results.stats[1].margin.n == 5 and sum(results.stats[1].seat_counts) == 10


def test_decision_times_are_reported_per_agent():
    results = tournament("lost_cities", ["random", "heuristic"], games_per_pairing=2, seed=0)
    assert all(t.decisions >= t.choices > 0 and t.cpu > 0 and t.searched is None for t in results.times)
    assert "## Decision times" in results.to_markdown()


def test_decision_times_count_searched_decisions():
    results = tournament("lost_cities", ["random", "search:worlds=2,k=2,horizon=8"], games_per_pairing=2, seed=0)
    random_times, search_times = results.times
    assert random_times.decisions > 0 and random_times.searched is None
    assert search_times.decisions >= search_times.choices >= search_times.searched > 0
    assert search_times.cpu >= search_times.searched_cpu > 0
    markdown = results.to_markdown()
    assert "## Decision times" in markdown and "searched)" in markdown


def test_margins_are_per_round_and_against_the_mean_of_the_others(tiny_bid):
    results = tournament(tiny_bid, ["random", "heuristic", "random"], options={"num_players": 3, "rounds": 2},
                         games_per_pairing=3, seed=5)
    assert all(stats.seat_counts == (1, 1, 1) for stats in results.stats)
    duel = [(r.scores[r.seating.index(1)] - r.scores[r.seating.index(0)]) / 2 for r in results.records]
    assert results.pairs[1, 0].margin.mean == pytest.approx(np.mean(duel))
    vs_rest = [(r.scores[r.seating.index(1)] - (sum(r.scores) - r.scores[r.seating.index(1)]) / 2) / 2
               for r in results.records]
    assert results.stats[1].margin.mean == pytest.approx(np.mean(vs_rest))
    assert "score margin per round" in results.to_markdown()


# --------------------------------------------------------------------------- outputs
def test_report_csv_and_plot_are_written(lost_cities, tmp_path):
    paths = lost_cities.write(tmp_path / "out")
    assert set(paths) == {"markdown", "crosstable", "agents", "games", "plot"}
    assert paths["plot"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    markdown = paths["markdown"].read_text()
    assert "Win rate of row against column" in markdown and "random#2" in markdown
    cross = list(csv.DictReader(io.StringIO(paths["crosstable"].read_text())))
    assert len(cross) == 3 * 2 and all((row["games"], row["deals"]) == ("4", "2") for row in cross)
    agents = list(csv.DictReader(io.StringIO(paths["agents"].read_text())))
    assert [row["agent"] for row in agents][0] == "heuristic"
    games = list(csv.DictReader(io.StringIO(paths["games"].read_text())))
    assert len(games) == len(lost_cities.records)


def test_command_line(tmp_path, capsys):
    args = ["lost_cities", "random", "heuristic", "--games", "2", "--seed", "1", "--quiet", "--out", str(tmp_path)]
    main(args)
    printed = capsys.readouterr().out
    assert "# Lost Cities tournament" in printed and "Bradley–Terry" in printed
    assert (tmp_path / "report.md").read_text() in printed and "## Decision times" in printed
    assert f"written to {tmp_path}: report.md" in printed
    report = (tmp_path / "report.md").read_text()
    main([*args, "--seed", "2"])  # a second tournament gets a folder of its own
    assert f"written to {tmp_path}-2: report.md" in capsys.readouterr().out
    assert (tmp_path / "report.md").read_text() == report and (tmp_path.parent / f"{tmp_path.name}-2").is_dir()
    with pytest.raises(SystemExit):
        main(["lost_cities", "random", "heuristic", "--set", "colours=7", "--out", str(tmp_path)])
    assert "unknown option" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["lost_cities", "random", "runs/nothing/policy.safetensors", "--out", str(tmp_path)])
    assert capsys.readouterr().err.strip() == \
        "python -m tabletop_rl.training.evaluate: error: no such file: runs/nothing/policy.safetensors"


@pytest.mark.parametrize("bad, message", [
    (["--set", "n_colours=[5"], "error: --set 'n_colours=[5': the value is not valid YAML: expected ',' or ']', but "
                                "got '<stream end>' while parsing a flow sequence (line 1, column 3)"),
    (["--set", "n_colours"], "error: --set 'n_colours': expected key=value"),
    (["--seed", "-1"], "error: argument --seed: expected a non-negative integer, got '-1'"),
    (["--games", "0"], "error: argument --games: expected an integer >= 1, got '0'"),
    (["--workers", "²"], "error: argument --workers: expected an integer >= 1, got '²'"),
    (["--players", "x"], "error: argument --players: expected an integer >= 1, got 'x'"),
])
def test_bad_flags_get_one_line_naming_the_flag(tmp_path, capsys, bad, message):
    with pytest.raises(SystemExit) as exit_code:
        main(["lost_cities", "random", "heuristic", "--quiet", "--out", str(tmp_path / "out"), *bad])
    err = capsys.readouterr().err
    assert exit_code.value.code == 2 and err.startswith(f"python -m tabletop_rl.training.evaluate: {message}")
    assert err.count("\n") == 1  # one line: no usage block, no traceback
    assert not (tmp_path / "out").exists()


def test_checkpoint_paths_are_agents(tmp_path):
    """A policy file (here with random weights) plays through the shared loader, found from its run folder."""
    random_policy_file(tmp_path / "run" / "policy.safetensors", envs.make("lost_cities", wrapped=False).game)
    results = tournament("lost_cities", ["random", str(tmp_path / "run")], games_per_pairing=2, seed=0)
    assert len(results.records) == 2
    assert all(sorted(r.returns) in ([-1, 1], [0, 0]) for r in results.records)


def test_agent_labels_are_short_and_unique():
    specs = ["random", "heuristic", "random", "runs/a/policy.safetensors", "runs/b/policy.safetensors",
             "runs/a/policy.safetensors"]
    assert agent_labels(specs) == ["random", "heuristic", "random#2", "a/policy", "b/policy", "a/policy#2"]
    assert agent_labels(["search", "search:worlds=8,policy=runs/v/policy.safetensors", "search"]) == [
        "search", "search:worlds=8,policy=policy", "search#2"]


def test_one_vs_rest_seats_the_first_agent_alone_against_copies_of_each_other(tiny_bid, tmp_path, capsys):
    assert tables(3, 4, one_vs_rest=True) == [(0, 1, 1, 1), (0, 2, 2, 2)]
    assert tables(3, 2, one_vs_rest=True) == [(0, 1), (0, 2)]
    results = tournament(tiny_bid, ["heuristic", "random"], options={"num_players": 4}, games_per_pairing=8,
                         seed=3, one_vs_rest=True)
    assert [sorted(r.seating) for r in results.records] == [[0, 1, 1, 1]] * 8
    assert [stats.seat_counts for stats in results.stats] == [(2, 2, 2, 2), (6, 6, 6, 6)]
    # the heuristic's first-place share is that of one heuristic against three random players
    shares = [first_place_shares(r.returns)[r.seating.index(0)] for r in results.records]
    assert results.stats[0].first_place.mean == pytest.approx(np.mean(shares)) and np.mean(shares) > 0.5
    assert "1 table (heuristic against 3 copies of each other agent)" in results.to_markdown()
    main([tiny_bid, "heuristic", "random", "random", "--players", "3", "--games", "3", "--one-vs-rest", "--quiet",
          "--out", str(tmp_path)])
    assert "2 tables (heuristic against 2 copies of each other agent)" in capsys.readouterr().out
