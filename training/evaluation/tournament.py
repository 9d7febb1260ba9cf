"""Seat-balanced round-robin tournaments between any agents, for any game and player count: the schedule (tables,
seat rotations, deals), the games (in this process or in workers, timed), and the results (``Results``: report,
CSV tables, plot). ``python -m tabletop_rl.training.evaluate`` runs it; what it computes is described in
docs/training.md.
"""

from __future__ import annotations

import csv
import io
import math
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import combinations, combinations_with_replacement
from pathlib import Path
from statistics import fmean
from typing import Any

import numpy as np

from ... import envs
from ...envs.core.agents import Agent, SeatView, agent_notes, pass_view
from ...envs.core.files import new_folder
from ...envs.core.match import first_place_shares, play_game, score_margins
from ...envs.core.record import Decision, Record
from ..runtime.agents import agent_factory
from ..runtime.policy import limit_blas_threads
from ..runtime.policy_paths import SUFFIX
from ..runtime.processes import results, worker_pool
from .stats import Z95, Estimate, Rating, bradley_terry, mean_interval, openskill_ratings, wilson


@dataclass(frozen=True)
class GameRecord:
    """One game: the deal (``env.reset(seed=seed)`` replays its cards), who sat where, how it ended."""

    table: int
    deal: int
    seed: int
    seating: tuple[int, ...]
    returns: tuple[float, ...]
    scores: tuple[float, ...] | None


@dataclass(frozen=True)
class PairStats:
    """Row agent against column agent over the games where both sat (intervals over deals)."""

    win: Estimate
    margin: Estimate
    games: int


@dataclass
class DecisionTimes:
    """An agent's decisions and what they cost: CPU seconds of the deciding process, and wall seconds."""

    decisions: int = 0
    cpu: float = 0.0
    wall: float = 0.0
    choices: int = 0  # decisions with two or more legal actions
    choice_cpu: float = 0.0
    searched: int | None = None  # decisions the agent counted as searched (``agent.searched``), if it counts
    searched_cpu: float = 0.0

    def add(self, other: DecisionTimes) -> None:
        self.decisions += other.decisions
        self.cpu += other.cpu
        self.wall += other.wall
        self.choices += other.choices
        self.choice_cpu += other.choice_cpu
        if other.searched is not None:
            self.searched = (self.searched or 0) + other.searched
        self.searched_cpu += other.searched_cpu

    def cells(self) -> list[str]:
        """Decisions, CPU ms per decision, per decision with a choice, per searched decision (share), wall ms."""
        def ms(seconds: float, count: int | None) -> str:
            return f"{1000 * seconds / count:.2f}" if count else "—"

        searched = "—" if self.searched is None else (
            f"{ms(self.searched_cpu, self.searched)} ({self.searched / max(self.decisions, 1):.0%} searched)")
        return [str(self.decisions), ms(self.cpu, self.decisions), ms(self.choice_cpu, self.choices), searched,
                ms(self.wall, self.decisions)]


class Timed:
    """An agent whose every decision is timed into ``times``; a searching agent still gets its view."""

    def __init__(self, agent: Agent, times: DecisionTimes):
        self.agent, self.times = agent, times

    def attach(self, view: SeatView) -> None:
        pass_view(self.agent, view)

    def notes(self) -> dict | None:
        return agent_notes(self.agent)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        searched = getattr(self.agent, "searched", None)
        cpu, wall = time.process_time(), time.perf_counter()
        action = self.agent.act(observation, action_mask)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        t = self.times
        t.decisions += 1
        t.cpu += cpu
        t.wall += wall
        if np.count_nonzero(action_mask) > 1:
            t.choices += 1
            t.choice_cpu += cpu
        if searched is not None:
            if self.agent.searched > searched:
                t.searched = (t.searched or 0) + 1
                t.searched_cpu += cpu
            else:
                t.searched = t.searched or 0
        return action


@dataclass(frozen=True)
class AgentStats:
    first_place: Estimate
    margin: Estimate
    seat_counts: tuple[int, ...]


def tables(num_agents: int, num_players: int, one_vs_rest: bool = False) -> list[tuple[int, ...]]:
    """The agent sets that meet: n-subsets, or with fewer agents than seats, multisets mixing ≥ 2 agents;
    ``one_vs_rest``: agent 0 with n − 1 copies of each other agent."""
    if num_agents < 2:
        raise ValueError("a tournament needs at least two agents")
    if one_vs_rest:
        return [(0, *[b] * (num_players - 1)) for b in range(1, num_agents)]
    if num_agents >= num_players:
        return list(combinations(range(num_agents), num_players))
    return [t for t in combinations_with_replacement(range(num_agents), num_players) if len(set(t)) > 1]


def rotations(table: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Every cyclic seat order of a table: each of its agents sits in each seat equally often."""
    return [table[r:] + table[:r] for r in range(len(table))]


@dataclass
class Results:
    """A finished tournament; every statistic is derived from ``records``."""

    game: str
    title: str
    options: dict[str, Any]
    num_players: int
    agents: list[str]
    specs: list[str]
    seed: int
    deals: int
    records: list[GameRecord]
    times: list[DecisionTimes] = field(default_factory=list)  # per agent; not part of the deterministic results
    workers: int = 1
    one_vs_rest: bool = False
    pairs: dict[tuple[int, int], PairStats] = field(init=False)
    stats: list[AgentStats] = field(init=False)
    ratings: list[Rating] = field(init=False)
    # per agent: its score margin per round at each deal (table, deal) it played, the deal's games averaged
    deal_margins: list[dict[tuple[int, int], float]] = field(init=False)
    # at 2 players, per pair of agents: its win share and margin at each deal index (for paired comparisons)
    _duel_deals: dict[tuple[int, int], tuple[dict[int, float], dict[int, float]]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._summarise()

    @property
    def rounds(self) -> int:
        return int(self.options.get("rounds", 1))

    @property
    def rating_system(self) -> str:
        if self.num_players == 2:
            return "Bradley–Terry on the Elo scale (mean 1500) with 95 % intervals"
        return "OpenSkill Plackett–Luce μ with μ ± 1.96σ"

    def _summarise(self) -> None:
        m, n, per_round = len(self.agents), self.num_players, self.rounds
        duels = [(a, b) for a in range(m) for b in range(m) if a != b]
        # every value is filed under its deal (table, deal): a deal's games are averaged before any interval
        Deals = dict[tuple[int, int], list[float]]
        duel_wins: dict[tuple[int, int], Deals] = {k: {} for k in duels}
        duel_margins: dict[tuple[int, int], Deals] = {k: {} for k in duels}
        firsts: list[Deals] = [{} for _ in range(m)]
        margins: list[Deals] = [{} for _ in range(m)]
        seat_counts = np.zeros((m, n), dtype=int)
        for rec in self.records:
            r, sc, deal = rec.returns, rec.scores, (rec.table, rec.deal)
            first = first_place_shares(r)
            margin = score_margins(sc, per_round) if sc is not None else None
            seats = {a: [s for s, b in enumerate(rec.seating) if b == a] for a in sorted(set(rec.seating))}
            for a, mine in seats.items():
                seat_counts[a, mine] += 1
                firsts[a].setdefault(deal, []).append(fmean(first[s] for s in mine))
                if sc is not None:
                    margins[a].setdefault(deal, []).append(fmean(margin[s] for s in mine))
                for b, theirs in seats.items():
                    if b == a:
                        continue
                    pairs = [(s, t) for s in mine for t in theirs]
                    duel_wins[a, b].setdefault(deal, []).append(fmean(_duel(r[s], r[t]) for s, t in pairs))
                    if sc is not None:
                        duel_margins[a, b].setdefault(deal, []).append(
                            fmean((sc[s] - sc[t]) / per_round for s, t in pairs))
        self.pairs = {k: PairStats(wilson(_per_deal(duel_wins[k])), mean_interval(_per_deal(duel_margins[k])),
                                   sum(map(len, duel_wins[k].values()))) for k in duels}
        # At 2 players every deal index is the same deal at every table, so two agents' results against a third
        # can be compared deal by deal.
        self._duel_deals = {} if n != 2 else {k: ({d: fmean(v) for (_, d), v in duel_wins[k].items()},
                                                  {d: fmean(v) for (_, d), v in duel_margins[k].items()})
                                              for k in duels}
        self.deal_margins = [{deal: fmean(values) for deal, values in margins[a].items()} for a in range(m)]
        self.stats = [AgentStats(wilson(_per_deal(firsts[a])), mean_interval(list(self.deal_margins[a].values())),
                                 tuple(seat_counts[a].tolist())) for a in range(m)]
        if n == 2:
            points, games = np.zeros((m, m)), np.zeros((m, m))
            for (a, b), wins in duel_wins.items():
                points[a, b] = sum(map(sum, wins.values()))
                games[a, b] = self.pairs[a, b].games
            fitted = [(elo, elo - h, elo + h) for elo, h in bradley_terry(points, games)]
        else:
            fitted = [(mu, mu - Z95 * s, mu + Z95 * s) for mu, s in openskill_ratings(self.records, m)]
        self.ratings = [Rating(name, *f) for name, f in zip(self.agents, fitted, strict=True)]

    # ----------------------------------------------------------------- views
    def ranking(self) -> list[int]:
        """Agent indices, best rating first (ties keep the given order)."""
        return sorted(range(len(self.agents)), key=lambda a: -self.ratings[a].value)

    def paired(self, a: int, b: int, c: int) -> PairStats | None:
        """Agent ``a``'s results against ``c`` minus ``b``'s against ``c``, deal by deal over the deals both played
        against it (2 players only; else ``None``): the share of games won and the margin, each a mean difference
        with its t interval over deals, and the number of deals. Common deals cancel most of the luck of the cards,
        so this separates two close agents with far fewer games than their two results side by side."""
        if (a, c) not in self._duel_deals or (b, c) not in self._duel_deals:
            return None
        (wins_a, margins_a), (wins_b, margins_b) = self._duel_deals[a, c], self._duel_deals[b, c]
        deals = sorted(wins_a.keys() & wins_b.keys())
        if not deals:
            return None
        margins = [margins_a[d] - margins_b[d] for d in deals if d in margins_a and d in margins_b]
        return PairStats(mean_interval([wins_a[d] - wins_b[d] for d in deals]), mean_interval(margins), len(deals))

    def margin_name(self) -> str:
        return "score margin per round" if "rounds" in self.options else "score margin"

    def to_markdown(self, times: bool = True) -> str:
        """The report; ``times=False`` leaves out the decision times (the only part that varies run to run)."""
        m, n = len(self.agents), self.num_players
        order = self.ranking()
        opts = ", ".join(f"{k}={v!r}" for k, v in self.options.items())
        lines = [
            f"# {self.title} tournament",
            "",
            f"{n} players · {m} agents · seed {self.seed} · {len(self.records)} games: "
            f"{_count(self.deals, 'deal')} × {n} seat rotations at each of "
            f"{_count(len(tables(m, n, self.one_vs_rest)), 'table')}"
            + (f" ({self.agents[0]} against {n - 1} copies of each other agent)" if self.one_vs_rest else ""),
            "",
            f"Options: {opts}",
            "",
            f"## Ratings: {self.rating_system}",
            "",
            f"| rank | agent | rating | first-place share | {self.margin_name()} vs the others | seats |",
            "|---:|---|---|---|---|---|",
        ]
        for rank, a in enumerate(order, 1):
            r, s = self.ratings[a], self.stats[a]
            lines.append(f"| {rank} | {self.agents[a]} | {r.value:.1f} [{r.low:.1f}, {r.high:.1f}] | "
                         f"{s.first_place.text(percent=True)} | {s.margin.text()} | "
                         f"{' / '.join(map(str, s.seat_counts))} |")
        for title, cell in (("Win rate of row against column (draws ½, 95 % Wilson interval)",
                             lambda p: p.win.text(percent=True)),
                            (f"Mean {self.margin_name()} of row against column (95 % t interval)",
                             lambda p: p.margin.text())):
            lines += ["", f"## {title}", "", "| | " + " | ".join(self.agents[b] for b in order) + " |",
                      "|---|" + "---|" * m]
            for a in order:
                cells = ["—" if a == b else cell(self.pairs[a, b]) for b in order]
                lines.append(f"| **{self.agents[a]}** | " + " | ".join(cells) + " |")
        lines += self._paired_markdown(order)
        if times and self.times:
            processes = f"{self.workers} worker process{'es' if self.workers > 1 else ''}"
            lines += ["", f"## Decision times ({processes}, milliseconds)", "",
                      "CPU time of the deciding process (one BLAS thread) per decision; wall time depends on the "
                      "machine's load.", "",
                      "| agent | decisions | CPU per decision | CPU per decision with a choice | "
                      "CPU per searched decision | wall per decision |", "|---|---:|---:|---:|---:|---:|"]
            for a in order:
                lines.append(f"| {self.agents[a]} | " + " | ".join(self.times[a].cells()) + " |")
        specs = ", ".join(f"{a} = `{s}`" for a, s in zip(self.agents, self.specs, strict=True))
        lines += ["", f"Specs: {specs}", ""]
        return "\n".join(lines)

    def _paired_markdown(self, order: list[int]) -> list[str]:
        rows = []
        for i, a in enumerate(order):
            for b in order[i + 1:]:
                for c in order:
                    p = self.paired(a, b, c)  # None where c is a or b: no agent meets itself
                    if p is not None:
                        rows.append(f"| {self.agents[a]} | {self.agents[b]} | {self.agents[c]} | "
                                    f"{p.win.scaled(100).text(signed=True)} | {p.margin.text(signed=True)} | "
                                    f"{p.games} |")
        if not rows:
            return []
        return ["", "## Paired on the same deals: one agent minus another against a third",
                "", "Each deal's games of the first agent against the third minus those of the second against it "
                "(95 % t interval over deals).", "",
                f"| agent | minus | against | games won, difference in points | {self.margin_name()}, difference "
                "| deals |",
                "|---|---|---|---|---|---:|", *rows]

    def crosstable_csv(self) -> str:
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(["agent", "opponent", "games", "deals", "win_rate", "win_low", "win_high",
                    "margin", "margin_low", "margin_high"])
        for (a, b), p in sorted(self.pairs.items()):
            w.writerow([self.agents[a], self.agents[b], p.games, p.win.n, *_numbers(p.win), *_numbers(p.margin)])
        return out.getvalue()

    def agents_csv(self) -> str:
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(["rank", "agent", "spec", "rating", "rating_low", "rating_high", "games", "deals",
                    "first_place", "first_low", "first_high", "margin", "margin_low", "margin_high",
                    *(f"seat_{s}" for s in range(self.num_players))])
        for rank, a in enumerate(self.ranking(), 1):
            r, s = self.ratings[a], self.stats[a]
            w.writerow([rank, self.agents[a], self.specs[a], *_numbers(r), sum(s.seat_counts), s.first_place.n,
                        *_numbers(s.first_place), *_numbers(s.margin), *s.seat_counts])
        return out.getvalue()

    def games_csv(self) -> str:
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        n = self.num_players
        w.writerow(["table", "deal", "seed", *(f"seat_{s}" for s in range(n)),
                    *(f"return_{s}" for s in range(n)), *(f"score_{s}" for s in range(n))])
        for rec in self.records:
            w.writerow([rec.table, rec.deal, rec.seed, *(self.agents[a] for a in rec.seating), *rec.returns,
                        *(rec.scores if rec.scores is not None else [""] * n)])
        return out.getvalue()

    def plot(self, path: Path) -> None:
        """Heat-maps of the two cross-tables and the ratings with their intervals, as a PNG."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        m = len(self.agents)
        order = self.ranking()
        names = [self.agents[a] for a in order]
        fig = Figure(figsize=(15 + 1.5 * m, 4 + 0.5 * m), layout="constrained")
        FigureCanvasAgg(fig)
        axes = fig.subplots(1, 3)
        win, margin = (np.array([[np.nan if a == b else getattr(self.pairs[a, b], key).mean for b in order]
                                 for a in order]) for key in ("win", "margin"))
        bound = max(np.nanmax(np.abs(margin)) if np.isfinite(margin).any() else 0.0, 1e-9)
        for ax, table, title, fmt, vmin, vmax in (
                (axes[0], win, "win rate, row vs column", "{:.0%}", 0.0, 1.0),
                (axes[1], margin, f"mean {self.margin_name()}", "{:+.1f}", -bound, bound)):
            image = ax.imshow(table, cmap="RdYlGn", vmin=vmin, vmax=vmax)
            ax.set_title(title)
            ax.set_xticks(range(m), names, rotation=45, ha="right")
            ax.set_yticks(range(m), names)
            for i in range(m):
                for j in range(m):
                    if i != j and np.isfinite(table[i, j]):
                        ax.text(j, i, fmt.format(table[i, j]), ha="center", va="center", fontsize=8)
            fig.colorbar(image, ax=ax, shrink=0.8)
        ratings = [self.ratings[a] for a in order]
        values = np.array([r.value for r in ratings])
        errors = np.array([[r.value - r.low for r in ratings], [r.high - r.value for r in ratings]])
        axes[2].errorbar(values, range(m), xerr=errors, fmt="o", capsize=4)
        axes[2].set_yticks(range(m), names)
        axes[2].set_ylim(m - 0.5, -0.5)
        axes[2].grid(axis="x", alpha=0.3)
        axes[2].set_title(f"rating: {self.rating_system}", fontsize=9)
        fig.suptitle(f"{self.title}: {self.num_players} players, {len(self.records)} games, seed {self.seed}")
        fig.savefig(path, dpi=100)

    def write(self, out_dir: str | Path) -> dict[str, Path]:
        """Write the report, the CSV tables and the plot into a new folder: ``out_dir`` or, if that holds
        files already, ``out_dir-2``, ``-3``, … (nothing is overwritten). Returns the paths by kind; without
        matplotlib (the light install) there is no plot."""
        out = new_folder(out_dir)
        paths = {"markdown": out / "report.md", "crosstable": out / "crosstable.csv",
                 "agents": out / "agents.csv", "games": out / "games.csv", "plot": out / "tournament.png"}
        paths["markdown"].write_text(self.to_markdown(), encoding="utf-8")
        paths["crosstable"].write_text(self.crosstable_csv(), encoding="utf-8")
        paths["agents"].write_text(self.agents_csv(), encoding="utf-8")
        paths["games"].write_text(self.games_csv(), encoding="utf-8")
        try:
            self.plot(paths["plot"])
        except ImportError:
            del paths["plot"]
        return paths


def _per_deal(values: dict[tuple[int, int], list[float]]) -> list[float]:
    """One value per deal: the mean over that deal's games."""
    return [fmean(v) for v in values.values()]


def _count(k: int, noun: str) -> str:
    return f"{k} {noun}{'' if k == 1 else 's'}"


def _duel(mine: float, theirs: float) -> float:
    """1 for ranking above the other seat, ½ for a tie, 0 below."""
    return 1.0 if mine > theirs else 0.5 if mine == theirs else 0.0


def _numbers(x: Estimate | Rating) -> list[str]:
    values = (x.mean, x.low, x.high) if isinstance(x, Estimate) else (x.value, x.low, x.high)
    return ["" if math.isnan(v) else f"{v:.6g}" for v in values]


def agent_labels(specs: Sequence[str]) -> list[str]:
    """Short unique names: a checkpoint path shows its last folder and file stem, a path inside a search spec
    its file stem; repeats get ``#2``…"""
    labels = []
    for spec in specs:
        labels.append(_unique(_label(spec), labels))
    return labels


def _label(spec: str) -> str:
    name, colon, options = spec.partition(":")
    if name == "search":
        short = [f"{key}={Path(value).stem if '/' in value else value}"
                 for key, _, value in (item.strip().partition("=") for item in options.split(",") if item.strip())]
        return name + colon + ",".join(short)
    path = Path(spec)
    return "/".join([*path.parent.parts[-1:], path.stem]) if path.suffix == SUFFIX else spec


def _unique(label: str, taken: list[str]) -> str:
    k, unique = 1, label
    while unique in taken:
        k += 1
        unique = f"{label}#{k}"
    return unique


def tournament(game_name: str, agent_specs: Sequence[str], *, options: dict[str, Any] | None = None,
               games_per_pairing: int = 20, seed: int = 0, progress: bool = False, workers: int = 1,
               one_vs_rest: bool = False, on_record: Callable[[str, Record], None] | None = None) -> Results:
    """Play the seat-balanced round robin and return its :class:`Results`.

    ``games_per_pairing`` games are played at each table, rounded up to a whole number of deals, each
    played in all ``num_players`` seat rotations. Every game gets fresh agents seeded from (``seed``, table,
    deal, rotation, agent, place), so the results depend only on the seed, whether the games run one
    after the other or in ``workers`` processes. With ``on_record``, each game's record (docs/records.md) is
    handed to it as the game ends, with a file name for it, ``table<t>-deal<d>-rotation<r>.json``; the results
    are the same.
    """
    from tqdm.auto import tqdm

    if games_per_pairing < 1:
        raise ValueError(f"games_per_pairing must be at least 1, got {games_per_pairing}")
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    env = envs.make(game_name, wrapped=False, **(options or {}))
    game = env.game
    n = game.num_players
    all_tables = tables(len(agent_specs), n, one_vs_rest)
    deals = -(-games_per_pairing // n)
    root = np.random.SeedSequence(seed)
    deal_seeds = [int(s.generate_state(1)[0]) for s in root.spawn(deals)]
    # Every agent is made once before the first game: a file that is not a policy, or a bad option,
    # fails the tournament before anything is played.
    factories = [agent_factory(spec, game) for spec in agent_specs]
    for make in factories:
        make(0)
    jobs = [Job(t, d, r, seating, deal_seed, seed) for t, table in enumerate(all_tables)
            for d, deal_seed in enumerate(deal_seeds) for r, seating in enumerate(rotations(table))]
    records, times = [], [DecisionTimes() for _ in agent_specs]
    bar = tqdm(total=len(jobs), desc=f"{game.title} tournament", disable=not progress, unit="game")
    specs = None if on_record is None else list(agent_specs)
    name = _record_name(len(all_tables), deals, n)
    played = _play_all(jobs, env, factories, specs, (game_name, options or {}, list(agent_specs)), workers)
    for job, (outcome, seat_times, game_record) in zip(jobs, played, strict=True):
        records.append(outcome)
        for a, t in zip(outcome.seating, seat_times, strict=True):
            times[a].add(t)
        if game_record is not None:
            on_record(name(job), game_record)
        bar.update()
    bar.close()
    return Results(game_name, game.title, dict(game.options), n, agent_labels(agent_specs), list(agent_specs),
                   seed, deals, records, times, workers, one_vs_rest)


@dataclass(frozen=True)
class Job:
    """One game of a tournament: where it sits in the schedule, its deal, and the seed its agents derive from."""

    table: int
    deal: int
    rotation: int
    seating: tuple[int, ...]
    deal_seed: int
    seed: int

    def agent_seed(self, agent: int, place: int) -> int:
        key = [self.seed, self.table, self.deal, self.rotation, agent, place]
        return int(np.random.SeedSequence(key).generate_state(1)[0])


Factories = Sequence[Callable[[int | None], Agent]]
Played = tuple[GameRecord, list[DecisionTimes], Record | None]


def play_job(job: Job, env: Any, factories: Factories, specs: Sequence[str] | None = None) -> Played:
    """Play one game with fresh agents: its outcome, each seat's decision times and, given the agents' ``specs``,
    its record."""
    times = [DecisionTimes() for _ in job.seating]
    agents = [Timed(factories[a](job.agent_seed(a, job.seating[:s].count(a))), times[s])
              for s, a in enumerate(job.seating)]
    decisions: list[Decision] | None = None if specs is None else []
    returns, scores = play_game(env, agents, job.deal_seed, decisions)
    outcome = GameRecord(job.table, job.deal, job.deal_seed, job.seating, tuple(float(x) for x in returns),
                         None if scores is None else tuple(float(x) for x in scores))
    if specs is None:
        return outcome, times, None
    info = {"command": "evaluate", "tournament_seed": job.seed, "table": job.table, "deal": job.deal,
            "rotation": job.rotation, "deal_seed": job.deal_seed}
    return outcome, times, Record.played(env, [specs[a] for a in job.seating], decisions, info)


def _record_name(tables: int, deals: int, rotations: int) -> Callable[[Job], str]:
    """A job's record file name, numbers padded so that the names sort in schedule order."""
    widths = [len(str(k - 1)) for k in (tables, deals, rotations)]
    return lambda job: "-".join(f"{word}{k:0{w}d}" for word, k, w in zip(
        ("table", "deal", "rotation"), (job.table, job.deal, job.rotation), widths, strict=True)) + ".json"


def _play_all(jobs: list[Job], env: Any, factories: Factories, specs: list[str] | None, setup: tuple,
              workers: int) -> Iterator[Played]:
    """The jobs' results in schedule order: played here, or by ``workers`` processes."""
    if workers == 1:
        with limit_blas_threads(1):  # as in the workers: the decision times are one BLAS thread's
            yield from (play_job(job, env, factories, specs) for job in jobs)
        return
    # spawn: a fresh interpreter, no inherited BLAS threads or locks
    with worker_pool(workers, "spawn", _start_worker, setup) as pool:
        yield from results([pool.submit(_worker_job, job, specs) for job in jobs])


_WORKER: dict[str, Any] = {}


def _start_worker(game_name: str, options: dict[str, Any], specs: list[str]) -> None:
    limit_blas_threads(1)
    env = envs.make(game_name, wrapped=False, **options)
    _WORKER.update(env=env, factories=[agent_factory(spec, env.game) for spec in specs])


def _worker_job(job: Job, specs: list[str] | None) -> Played:
    return play_job(job, _WORKER["env"], _WORKER["factories"], specs)


# --------------------------------------------------------------------------- command line
