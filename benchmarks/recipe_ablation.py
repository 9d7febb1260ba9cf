"""Is a training change better per game of experience? Train each variant of a config for the same number of the
learner's games (``max_games``), with several seeds, then play every final policy on the same deals against the
same opponents, seats rotated, and compare each variant with the first one deal by deal.

    python benchmarks/recipe_ablation.py --config configs/lost_cities.yaml --games 3000 --seeds 2 \\
        --variant today="skip_forced=false ppo.n_epochs=4 ppo.batch_size=256" \\
        --variant fast="skip_forced=true ppo.n_epochs=2 ppo.batch_size=1024"

Each variant is a set of ``--set`` overrides on top of the config (and of ``--set`` given once for all); a run
trains in a fresh process (``python -m tabletop_rl.training.train``, its final evaluation cut to 2 games) under
``--runs`` (default ``runs/ablation``), so that a stopped ablation keeps its finished runs and, run again, trains
only what is missing. The comparison plays ``--deals`` deals, each once with the learner in every seat, against
``--opponent`` (default ``heuristic``) in every other seat: first places and score margins per game, averaged over
the seeds, with 95 % intervals over those games, and each seed's first places; the difference from the first
variant is paired (the same deals and seats), seed k with seed k, and its interval is over the seeds (a t
interval of the seeds' differences: runs of one recipe differ by more than the games of one run do — two seeds
of one Torres recipe once ended at 79 and 50 %; with two seeds the interval is wide, as it should be); and, as a
check that no variant learned to stall, the length of its games against that of the opponent's own games in
its seat on the same deals (decisions per game) and its longest game.
Prints a markdown table; ``--out`` also writes it, with the figures as JSON beside it.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

from tabletop_rl import envs
from tabletop_rl.envs.core.match import first_place_shares, play_game, score_margins
from tabletop_rl.training.evaluation.stats import mean_interval
from tabletop_rl.training.ppo.config import load_config
from tabletop_rl.training.runtime.agents import load_agent

DEAL_SEED = 20261206  # the comparison's deals: never a training or an evaluation deal of the runs


def variant(text: str) -> tuple[str, list[str]]:
    name, _, overrides = text.partition("=")
    if not name or not name.isidentifier():
        raise argparse.ArgumentTypeError(f"--variant {text!r}: expected NAME=\"key=value key=value ...\"")
    return name, shlex.split(overrides)


def train(config: str, name: str, seed: int, games: int, overrides: list[str], runs: Path) -> dict:
    """One run (skipped when its policy exists); its games of experience, steps and games per second."""
    run = runs / f"{name}-seed{seed}"
    if not (run / "policy.safetensors").is_file():
        fixed = [f"name={run.name}", f"runs_dir={runs}", f"seed={seed}", f"max_games={games}",
                 "total_timesteps=1000000000", "max_minutes=null", "eval.every=0", "eval.final_games=2",
                 "eval.opponents=[random]", "progress_bar=false", "checkpoint_every=1000000000"]
        command = [sys.executable, "-m", "tabletop_rl.training.train", "--config", config]
        for item in [*fixed, *overrides]:
            command += ["--set", item]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    state = json.loads(sorted((run / "checkpoints").glob("step_*.json"))[-1].read_text())
    rate = re.search(r"([\d.]+) games/s", (run / "report.md").read_text())
    return {"run": str(run), "games": state["trainer"]["games"], "steps": state["step"],
            "games_per_second": float(rate[1]) if rate else None}


def play(policy: str, game_name: str, options: dict, opponent: str, deals: int, progress: tqdm) -> np.ndarray:
    """(first place share, margin, decisions) per game: deal d with ``policy`` in seat s is game d * n + s."""
    env = envs.make(game_name, wrapped=False, **options)
    n = env.game.num_players
    rng = np.random.default_rng(DEAL_SEED)
    seeds = rng.integers(2**63, size=deals)
    learner = load_agent(policy, env.game, seed=0)
    others = [load_agent(opponent, env.game, seed=int(s)) for s in rng.integers(2**63, size=n - 1)]
    results = np.zeros((deals * n, 3))
    for d, deal in enumerate(seeds):
        for seat in range(n):
            decisions: list = []
            returns, scores = play_game(env, [*others[:seat], learner, *others[seat:]], seed=int(deal),
                                        decisions=decisions)
            margin = score_margins(scores, env.game.options.get("rounds", 1))[seat] if scores is not None else 0.0
            results[d * n + seat] = first_place_shares(returns)[seat], margin, len(decisions)
            progress.update()
    return results


def interval(samples: np.ndarray, scale: float = 1.0) -> str:
    return mean_interval(samples * scale).text(signed=scale == 1)


def table(variants: list[tuple[str, list[str]]], trained: dict, results: dict, reference: np.ndarray, seeds: int,
          opponent: str) -> str:
    """The markdown table: one row per variant, the first the base of every difference."""
    base = variants[0][0]
    mean = {name: np.mean([results[name, s] for s in range(seeds)], axis=0) for name, _ in variants}
    per_seed = {name: np.array([results[name, s].mean(axis=0) for s in range(seeds)]) for name, _ in variants}
    rows = ["| variant | overrides | games of experience | games/s | first places % | per seed | margin | "
            f"first places − {base} (points, over seeds) | margin − {base} | length ÷ {opponent}'s | longest |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, overrides in variants:
        runs_of = [trained[name, s] for s in range(seeds)]
        rates = [r["games_per_second"] for r in runs_of if r["games_per_second"]]
        difference = per_seed[name] - per_seed[base]  # seed k against seed k
        rows.append(f"| {name} | `{' '.join(overrides)}` | {np.mean([r['games'] for r in runs_of]):,.0f} | "
                    f"{np.mean(rates):.1f} | {interval(mean[name][:, 0], 100)} | "
                    + " / ".join(f"{100 * p[0]:.1f}" for p in per_seed[name]) + f" | {interval(mean[name][:, 1])} | "
                    + ("—" if name == base else interval(difference[:, 0] * 100)) + " | "
                    + ("—" if name == base else interval(difference[:, 1]))
                    + f" | {mean[name][:, 2].mean() / reference[:, 2].mean():.2f} | "
                    f"{max(results[name, s][:, 2].max() for s in range(seeds)):.0f} |")
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", required=True)
    parser.add_argument("--variant", type=variant, action="append", required=True, metavar="NAME=\"OVERRIDES\"")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="for every variant")
    parser.add_argument("--games", type=int, default=3000, help="the learner's games of experience per run")
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--deals", type=int, default=500)
    parser.add_argument("--opponent", default="heuristic")
    parser.add_argument("--runs", type=Path, default=Path("runs/ablation"))
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    config = load_config(args.config, args.set)  # a bad config or override fails here, before any training
    runs = args.runs / config.name
    started = time.monotonic()
    trained = {}
    for name, overrides in args.variant:
        for seed in range(args.seeds):
            trained[name, seed] = train(args.config, name, seed, args.games, [*args.set, *overrides], runs)
            print(f"trained {name} seed {seed}: {trained[name, seed]}", file=sys.stderr, flush=True)
    n = envs.make(config.game, wrapped=False, **config.game_options).game.num_players
    with tqdm(total=(len(trained) + 1) * args.deals * n, desc="games", unit="game",
              mininterval=0.5 if sys.stderr.isatty() else 60) as progress:  # a log gets a line a minute
        results = {key: play(t["run"], config.game, config.game_options, args.opponent, args.deals, progress)
                   for key, t in trained.items()}
        # the opponent in the learner's seat: how long its games are (a learner that stalls plays longer ones)
        reference = play(args.opponent, config.game, config.game_options, args.opponent, args.deals, progress)
    table_text = table(args.variant, trained, results, reference, args.seeds, args.opponent)
    facts = (f"{config.game} {config.game_options or ''}, config {args.config} with {' '.join(args.set) or 'no'} "
             f"overrides; {args.games:,} games of experience per run, {args.seeds} seeds; {args.deals} deals x {n} "
             f"seats against {args.opponent}; length: decisions per game (all seats) against those of "
             f"{args.opponent} in the same seats and deals ({reference[:, 2].mean():.1f}, longest "
             f"{reference[:, 2].max():.0f}); "
             f"{(time.monotonic() - started) / 60:.0f} min.")
    print(f"{facts}\n\n{table_text}")
    if args.out:
        args.out.write_text(f"{facts}\n\n{table_text}\n")
        args.out.with_suffix(".json").write_text(json.dumps(
            {"facts": facts, "runs": {f"{k[0]}-seed{k[1]}": v for k, v in trained.items()},
             "results": {f"{k[0]}-seed{k[1]}": v.tolist() for k, v in results.items()},
             "reference": reference.tolist()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
