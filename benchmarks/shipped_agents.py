"""The shipped policies — or the search agent over them — against random players and heuristic bots at every
(game, player count) a policy is shipped for: the table of docs/training.md ("Shipped policies").

    python benchmarks/shipped_agents.py                                  # every policy, 1,000 games each (hours)
    python benchmarks/shipped_agents.py --only five_towers_3p --games 200
    python benchmarks/shipped_agents.py --agent search --opponents heuristic --games 60 --workers 2
    python benchmarks/shipped_agents.py --opponents heuristic --games 300 --lengths   # does any policy stall?

The agent sits at a table of n − 1 copies of the opponent, in every seat of each deal in turn (paired deals);
its share of first places (ties shared) has a 95 % interval over deals, against par 1/n. Rows are printed as
they finish, as markdown. ``--lengths`` adds a check that the agent does not stall to farm points: the decisions
per game (every seat's) at its tables against those of the opponent's own tables (n copies of it) on the same
deals.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tabletop_rl import envs  # noqa: E402
from tabletop_rl.training.evaluation.tournament import tournament  # noqa: E402
from tabletop_rl.training.runtime.policy_paths import shipped_policies  # noqa: E402


def shipped() -> dict[str, dict]:
    """``five_towers_3p`` → the game options its shipped policy was trained for."""
    return {path.stem: {"game": info.game, "options": info.options}
            for game in envs.list_games() for path, info in shipped_policies(game)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agent", default="pretrained", help="pretrained (default) or a search spec, e.g. search")
    parser.add_argument("--opponents", nargs="+", default=["random", "heuristic"])
    parser.add_argument("--games", type=int, default=1000, help="games per (policy, opponent), rounded up to "
                        "whole deals of n rotations (default 1000)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="policies by file name, e.g. torres_3p")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--lengths", action="store_true", help="also the games' length against the opponent's own")
    args = parser.parse_args(argv)
    policies = shipped()
    unknown = sorted(set(args.only or ()) - set(policies))
    if unknown:
        parser.error(f"--only {' '.join(unknown)}: no such shipped policy; shipped: {', '.join(policies)}")
    lengths = (" length ÷ the opponent's own |", "---:|") if args.lengths else ("", "")
    print(f"| game | players | {args.agent} against | games (deals) | first places (par) | score margin | "
          f"CPU per decision |{lengths[0]}\n|---|---:|---|---:|---|---|---:|{lengths[1]}", flush=True)
    for name in args.only or policies:
        game, options = policies[name]["game"], policies[name]["options"]
        for opponent in args.opponents:
            results = tournament(game, [args.agent, opponent], options=options, games_per_pairing=args.games,
                                 seed=args.seed, workers=args.workers, one_vs_rest=True)
            n, stats, times = results.num_players, results.stats[0], results.times[0]
            cpu = 1000 * times.cpu / max(times.decisions, 1)
            length = ""
            if args.lengths:  # the same deals and seeds, the opponent in every seat
                alone = tournament(game, [opponent, opponent], options=options, games_per_pairing=args.games,
                                   seed=args.seed, workers=args.workers, one_vs_rest=True)
                length = f" {decisions(results) / decisions(alone):.3f} |"
            print(f"| {envs.game_class(game).title} | {n} | {opponent} | {sum(stats.seat_counts):,} "
                  f"({stats.first_place.n:,}) | {stats.first_place.text(percent=True)} ({100 / n:.0f} %) | "
                  f"{stats.margin.text()} | {cpu:.2f} ms |{length}", flush=True)
    return 0


def decisions(results) -> float:
    """Decisions per game, every seat's."""
    return sum(t.decisions for t in results.times) / len(results.records)


if __name__ == "__main__":
    sys.exit(main())
