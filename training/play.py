"""Play any game against any agent in the terminal.

    python -m tabletop_rl.training.play lost_cities --opponent heuristic
    python -m tabletop_rl.training.play lost_cities --opponent runs/lc --seat 1 --seed 7 --set rounds=3
    python -m tabletop_rl.training.play five_towers --set num_players=3 --opponent heuristic random
    python -m tabletop_rl.training.play lost_cities --opponent examples/my_agent.py:highest

The command line over :func:`tabletop_rl.training.cli.terminal.play`; how a game in the terminal goes is
in docs/training.md ("Play in the terminal"). Every game is recorded (docs/records.md), in runs/games/ unless
told otherwise.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .. import envs
from . import cli
from .cli.terminal import play

RECORDS = Path("runs") / "games"


def _seat(text: str) -> int | str:
    if text == "random":
        return text
    seat = cli.integer(text)
    if seat is not None and seat >= 0:
        return seat
    raise argparse.ArgumentTypeError(f"expected a seat number or 'random', got {text!r}")


def main(argv: Sequence[str] | None = None) -> np.ndarray | None:
    parser = cli.ArgumentParser(prog="python -m tabletop_rl.training.play", description=__doc__.split("\n\n")[0])
    parser.add_argument("game", choices=envs.list_games(), help="game to play")
    parser.add_argument("--opponent", nargs="+", default=["heuristic"], metavar="AGENT",
                        help="random, heuristic, pretrained, a policy file / run folder, search[:key=value,...], "
                             "ismcts[:key=value,...] or "
                             "your own agent, module:callable or path/to/file.py:callable (examples/my_agent.py); one "
                             "for all opponent seats or one per opponent seat (default heuristic)")
    parser.add_argument("--seat", type=_seat, default="random", help="your seat: 0, 1, … or random (default)")
    parser.add_argument("--seed", type=cli.seed, help="seed for the deal, the seats and the opponents")
    parser.add_argument("--set", action="append", default=[], metavar="OPTION=VALUE",
                        help="game option (value read as YAML), repeatable, e.g. --set rounds=3")
    recording = parser.add_mutually_exclusive_group()
    recording.add_argument("--record", type=Path, default=RECORDS, metavar="DIR",
                           help=f"folder for the game's record, a new file in it (default {RECORDS})")
    recording.add_argument("--no-record", dest="record", action="store_const", const=None, help="keep no record")
    args = parser.parse_args(argv)
    try:
        return play(args.game, args.opponent, seat=args.seat, seed=args.seed, options=cli.game_options(args.set),
                    record_dir=args.record)
    except ValueError as error:  # bad options, unknown agents, files that are not policies: one line
        parser.error(str(error))
    except KeyboardInterrupt:
        print("\nGame abandoned.")
    return None


if __name__ == "__main__":
    cli.run(main)
