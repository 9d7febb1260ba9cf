"""Print a recorded game as text, decision by decision.

    python -m tabletop_rl.training.replay runs/games/lost_cities-20260101-120000.json
    python -m tabletop_rl.training.replay runs/eval/records/table0-deal0-rotation1.json --viewer 1 --step 40

The command line over :func:`tabletop_rl.training.cli.terminal.replay_text`; the records and what the
replay shows are described in docs/records.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..envs.core.record import Record, RecordError, load_record
from . import cli
from .cli.terminal import replay_text


def main(argv: Sequence[str] | None = None) -> Record:
    parser = cli.ArgumentParser(prog="python -m tabletop_rl.training.replay", description=__doc__.split("\n\n")[0])
    parser.add_argument("record", type=Path, metavar="FILE", help="a game record (.json)")
    parser.add_argument("--viewer", type=cli.seed, metavar="SEAT",
                        help="show the game as this seat saw it (its own hidden cards only, its own notes only)")
    parser.add_argument("--step", type=cli.seed, metavar="N",
                        help="print only the position before decision N (N = the number of decisions: the end)")
    args = parser.parse_args(argv)
    try:
        record = load_record(args.record)
    except RecordError as error:
        parser.error(str(error))
    seats, decisions = len(record.agents), len(record.decisions)
    if args.viewer is not None and args.viewer >= seats:
        parser.error(f"argument --viewer: seat {args.viewer} is not in this {seats}-player game (0 to {seats - 1})")
    if args.step is not None and args.step > decisions:
        parser.error(f"argument --step: this record has decisions 0 to {decisions - 1} and the end, {decisions}; "
                     f"got {args.step}")
    for line in replay_text(record, args.viewer, args.step):
        print(line)
    return record


if __name__ == "__main__":
    cli.run(main)
