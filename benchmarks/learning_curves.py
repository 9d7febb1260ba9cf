"""Baselines a paper can put its curve beside: PPO's share of first places against the heuristic and against random
players, over the learner's games of experience and over wall time, for every game at 2 players and at its largest
count, from scratch and from the imitation warm start, with several seeds.

    python benchmarks/learning_curves.py                          # every run not yet done, then the tables and plots
    python benchmarks/learning_curves.py --report                 # only the tables and plots, from what is done
    python benchmarks/learning_curves.py --cases lost_cities:2 --starts scratch --seeds 1 --games 2000

Each run is ``python -m tabletop_rl.training.train`` with the game's shipped short config (``configs/<game>.yaml``)
at that player count, ``max_games`` games of experience (``--games``), evaluated every fifth of them (``--eval-games``
seat-balanced games per opponent); ``scratch`` sets ``warm_start.teacher=null``, ``warm`` imitates the heuristic
with the config's ``warm_start`` settings (their defaults where it has none; its teacher games are not games of
experience: their number is in the table). A run trains in
``runs/baselines/`` and resumes there when stopped; its evaluation history is kept in ``benchmarks/results/
learning_curves/<run>.json``, small enough to commit, so that a finished run is never trained again, on this
machine or the next. ``--report`` (and every full invocation at its end) writes ``docs/baselines.md`` between its
markers and a plot per game, ``docs/img/baselines_<game>.png``.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import tabletop_rl
from tabletop_rl.training.evaluation.stats import mean_interval

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "learning_curves"
CASES = ["lost_cities:2", "five_towers:2", "five_towers:5", "palazzo:2", "palazzo:4", "torres:2", "torres:4"]
STARTS = ("scratch", "warm")
BUDGETS = (2000, 6000, 10000)  # the table's columns: games of experience; evaluated every fifth of the last
BEGIN, END = "<!-- measured: benchmarks/learning_curves.py -->", "<!-- end measured -->"


def run_name(case: str, start: str, seed: int) -> str:
    game, players = case.split(":")
    return f"{game}_{players}p_{start}_seed{seed}"


def train(case: str, start: str, seed: int, games: int, eval_games: int, runs: Path) -> None:
    """Train one run to ``games`` games of experience (resuming a stopped one) and keep its evaluation history."""
    game, players = case.split(":")
    name = run_name(case, start, seed)
    folder = runs / name
    steering = [f"max_games={games}", "max_minutes=null", "progress_bar=false", "torch_threads=1"]
    if (folder / "checkpoints").is_dir():
        command = ["--resume", str(folder)]
    else:
        # eval.every is in steps: a fifth of the budget at about the config's steps per game (STEPS_PER_GAME)
        command = ["--config", str(ROOT / "configs" / f"{game}.yaml"), "--set", f"name={name}",
                   "--set", f"runs_dir={runs}", "--set", f"seed={seed}", "--set", "total_timesteps=1000000000",
                   "--set", f"eval.every={games * STEPS_PER_GAME[game] // 5}", "--set", f"eval.games={eval_games}",
                   "--set", f"eval.final_games={eval_games}", "--set", "eval.opponents=[heuristic, random]",
                   "--set", "warm_start.workers=1", "--set", f"checkpoint_every={games * STEPS_PER_GAME[game] // 5}"]
        if game != "lost_cities":  # a two-player game without the option
            command += ["--set", f"game_options={{num_players: {players}}}"]
        # warm: the config's warm start, or the defaults of `warm_start` for a config without one (Five Towers)
        command += ["--set", f"warm_start.teacher={'null' if start == 'scratch' else 'heuristic'}"]
    for item in steering:
        command += ["--set", item]
    subprocess.run([sys.executable, "-m", "tabletop_rl.training.train", *command], check=True, cwd=ROOT)
    config = (folder / "config.yaml").read_text()
    history = json.loads((folder / "eval_history.json").read_text())
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps({
        "run": name, "case": case, "start": start, "seed": seed, "games": games, "config": config,
        "tabletop_rl": tabletop_rl.__version__, "machine": machine(), "history": history}, indent=1))


# About the learner's real decisions per game in each short config (its forced ones skipped): only for scheduling the
# evaluations about five times per run.
STEPS_PER_GAME = {"lost_cities": 50, "five_towers": 26, "palazzo": 75, "torres": 75}


def machine() -> str:
    cpuinfo = Path("/proc/cpuinfo")
    names = [line.split(":", 1)[1].strip() for line in (cpuinfo.read_text().splitlines() if cpuinfo.is_file() else [])
             if line.startswith("model name")]
    return f"{names[0] if names else platform.processor() or platform.machine()}, Python {platform.python_version()}"


def curves(results: list[dict], opponent: str) -> dict[tuple[str, str], list[tuple[float, float, float]]]:
    """(case, start) -> [(games, minutes, first places)] per seed, for ``opponent``."""
    out: dict[tuple[str, str], list] = {}
    for r in results:
        points = [(h["trained_games"], h["minutes"], h["win_rate"]) for h in r["history"]
                  if h["opponent"] == opponent and "trained_games" in h]
        out.setdefault((r["case"], r["start"]), []).append(points)
    return out


def at_budget(points: list[tuple[float, float, float]], budget: int) -> float | None:
    """The last evaluation at or before ``budget`` games of experience (None if the run has not reached it)."""
    if not points or points[-1][0] < budget * 0.95:
        return None
    return [p for p in points if p[0] <= budget * 1.05][-1][2]


def table(results: list[dict]) -> str:
    rows = ["| game | players | start | seeds | "
            + " | ".join(f"vs {o}, {b:,} games" for o in ("heuristic", "random") for b in BUDGETS) + " | minutes |",
            "|---|---|---|---|" + "---|" * (2 * len(BUDGETS) + 1)]
    per = {o: curves(results, o) for o in ("heuristic", "random")}
    for (case, start), seeds in sorted(per["heuristic"].items()):
        game, players = case.split(":")
        cells = []
        for o in ("heuristic", "random"):
            for b in BUDGETS:
                values = [v for v in (at_budget(p, b) for p in per[o][case, start]) if v is not None]
                e = mean_interval(np.array(values) * 100) if len(values) > 1 else None
                cells.append("—" if not values else f"{100 * values[0]:.1f}" if e is None else
                             f"{e.mean:.1f} [{max(e.low, 0):.1f}, {min(e.high, 100):.1f}]")  # a share: within 0-100
        minutes = np.mean([p[-1][1] for p in seeds if p])
        rows.append(f"| {game} | {players} | {start} | {len(seeds)} | " + " | ".join(cells) + f" | {minutes:.0f} |")
    return "\n".join(rows)


def plots(results: list[dict], folder: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    made = []
    per = {o: curves(results, o) for o in ("heuristic", "random")}
    for game in sorted({r["case"].split(":")[0] for r in results}):
        figure, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
        for (case, start), seeds in sorted(per["heuristic"].items()):
            if case.split(":")[0] != game:
                continue
            label = f"{case.split(':')[1]} players, {start}"
            for axis, x in ((axes[0], 0), (axes[1], 1)):
                for i, points in enumerate(seeds):
                    axis.plot([p[x] for p in points], [100 * p[2] for p in points], alpha=0.8,
                                      label=label if i == 0 else None,
                                      color=f"C{sorted(per['heuristic']).index((case, start))}")
        axes[0].set_xlabel("games of experience")
        axes[1].set_xlabel("minutes (warm start included)")
        axes[0].set_ylabel("first places against heuristics (%)")
        axes[0].legend(fontsize=8)
        for axis in axes:
            axis.grid(alpha=0.3)
        figure.suptitle(f"{game}: PPO against the heuristic, one line per seed")
        figure.tight_layout()
        path = folder / f"baselines_{game}.png"
        figure.savefig(path, dpi=100)
        plt.close(figure)
        made.append(path)
    return made


def report(out: Path) -> None:
    results = [json.loads(p.read_text()) for p in sorted(RESULTS.glob("*.json"))]
    if not results:
        print("no finished runs yet", file=sys.stderr)
        return
    pictures = plots(results, out.parent / "img")
    text = "\n\n".join([
        f"{len(results)} runs, tabletop-rl {results[0]['tabletop_rl']}, "
        f"{'; '.join(sorted({r['machine'] for r in results}))}, one core each; "
        "first places in % (mean over seeds and 95 % interval) at the last evaluation at or before each budget "
        "of games of experience (5 % over it allowed); — where no run has reached it.",
        table(results),
        *[f"![{p.stem}](img/{p.name})" for p in pictures]])
    page = out.read_text()
    head, _, rest = page.partition(BEGIN)
    out.write_text(f"{head}{BEGIN}\n{text}\n{END}{rest.partition(END)[2]}")
    print(text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", nargs="+", default=CASES, metavar="GAME:PLAYERS")
    parser.add_argument("--starts", nargs="+", default=list(STARTS), choices=STARTS)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--games", type=int, default=BUDGETS[-1], help="games of experience per run")
    parser.add_argument("--eval-games", type=int, default=100, help="per opponent and evaluation")
    parser.add_argument("--runs", type=Path, default=ROOT / "runs" / "baselines")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "baselines.md")
    parser.add_argument("--report", action="store_true", help="only the tables and plots of the finished runs")
    args = parser.parse_args()
    for case in args.cases:
        game, _, players = case.partition(":")
        if game not in STEPS_PER_GAME or not players.isdigit():
            parser.error(f"--cases {case}: expected GAME:PLAYERS with GAME one of {sorted(STEPS_PER_GAME)}")
    if not args.report:
        todo = [(case, start, seed) for seed in range(args.seeds) for case in args.cases for start in args.starts
                if not (RESULTS / f"{run_name(case, start, seed)}.json").is_file()]
        started = time.monotonic()
        for i, (case, start, seed) in enumerate(todo):
            print(f"[{i + 1}/{len(todo)}, {(time.monotonic() - started) / 60:.0f} min] {run_name(case, start, seed)}",
                  file=sys.stderr, flush=True)
            train(case, start, seed, args.games, args.eval_games, args.runs)
    report(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
