"""Seat-balanced round-robin tournaments between any agents, for any game and player count.

    python -m tabletop_rl.training.evaluate lost_cities random heuristic runs/lost_cities/policy.safetensors --games 100
    python -m tabletop_rl.training.evaluate five_towers random heuristic --players 3 --set final_partial_round=False
    python -m tabletop_rl.training.evaluate lost_cities search heuristic --games 20 --record runs/eval/records
    python -m tabletop_rl.training.evaluate lost_cities examples/my_agent.py:highest heuristic --games 20

The command line over :func:`tabletop_rl.training.evaluation.tournament.tournament`; tables, seats, outcomes,
intervals, ratings and outputs are described in docs/training.md, the game records in docs/records.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .. import envs
from ..envs.core.extras import install_hint
from ..envs.core.files import atomic_write, new_folder
from ..envs.core.record import Record
from . import cli
from .cli.stopping import stoppable
from .evaluation.tournament import Results, tournament
from .runtime.printed_commands import command


def main(argv: Sequence[str] | None = None) -> Results:
    parser = cli.ArgumentParser(prog="python -m tabletop_rl.training.evaluate", description=__doc__.split("\n\n")[0])
    parser.add_argument("game", choices=envs.list_games(), help="game to play")
    parser.add_argument("agents", nargs="+", metavar="AGENT",
                        help="agent specs: random, heuristic, pretrained, a policy file / run folder, "
                             "search[:key=value,...], ismcts[:key=value,...], or your own agent: module:callable or "
                             "path/to/file.py:callable, "
                             "a factory called as callable(game=Game, seed=int) returning an object with "
                             "act(observation, action_mask) -> int or a function of those two "
                             "(examples/my_agent.py)")
    parser.add_argument("--games", type=cli.count, default=40,
                        help="games at each table (each set of agents that meets), rounded up to a multiple "
                             "of the player count (default 40); the total is this times the tables: 3 for 3 "
                             "agents at 2 players, 12 for 3 agents at 4 (40 → 480 games)")
    parser.add_argument("--seed", type=cli.seed, default=0, help="tournament seed (default 0)")
    parser.add_argument("--players", type=cli.count, help="player count (sets the game option num_players)")
    parser.add_argument("--set", action="append", default=[], metavar="OPTION=VALUE",
                        help="game option (value read as YAML), repeatable, e.g. --set rounds=3")
    parser.add_argument("--out", type=Path, help="output folder (default runs/eval/<game>); if it holds files "
                                                 "already, <out>-2, <out>-3, … is used instead")
    parser.add_argument("--workers", type=cli.count, default=1,
                        help="games played in this many processes at once (default 1); same results as 1")
    parser.add_argument("--one-vs-rest", action="store_true",
                        help="the first agent alone against n-1 copies of each other agent (not a round-robin)")
    parser.add_argument("--record", type=Path, metavar="DIR",
                        help="write each game's record (docs/records.md) into DIR, one file per game; if DIR holds "
                             "files already, DIR-2, DIR-3, … is used instead")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    record_dir: Path | None = None  # made when the first game ends: a refused tournament leaves no folder

    def write_record(name: str, record: Record) -> None:
        nonlocal record_dir
        record_dir = record_dir or new_folder(args.record)
        atomic_write(record_dir / name, record.to_json().encode())

    def recorded() -> str:
        return f"the records of the {len(list(record_dir.glob('*.json')))} games played are in {record_dir}"

    def kept() -> str:
        results = "a tournament writes its results when it ends"
        return f"nothing written: {results}" if record_dir is None else f"{recorded()}; {results}"

    try:
        with stoppable(parser.prog, kept):
            results = tournament(args.game, args.agents, options=cli.game_options(args.set, args.players),
                                 games_per_pairing=args.games, seed=args.seed, progress=not args.quiet,
                                 workers=args.workers, one_vs_rest=args.one_vs_rest,
                                 on_record=write_record if args.record else None)
    except ValueError as e:  # bad options, unknown agents, files that are not policies: one line, no traceback
        parser.error(str(e))
    paths = results.write(args.out or Path("runs") / "eval" / args.game)
    print(results.to_markdown())
    print(f"written to {paths['markdown'].parent}: " + ", ".join(p.name for p in paths.values()))
    if record_dir is not None:
        print(f"{recorded()}; replay one with: "
              + command("tabletop_rl.training.replay", min(record_dir.glob("*.json"))))
    if "plot" not in paths:
        print(f"(no tournament.png: matplotlib is not installed; {install_hint('plot')})")
    return results


if __name__ == "__main__":
    cli.run(main)
