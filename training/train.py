"""Train a MaskablePPO agent for any registered game.

    python -m tabletop_rl.training.train --config configs/lost_cities.yaml [--set key=value ...]
    python -m tabletop_rl.training.train --resume runs/lost_cities [--set total_timesteps=2000000]

The command line over :class:`tabletop_rl.training.ppo.trainer.Trainer`: configs, the run folder, stopping
and resuming are described in docs/training.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..envs.core.extras import install_hint

try:  # the light install (pip install -e .) evaluates and plays, but cannot train
    from .ppo.trainer import LIMITS, Trainer
except ModuleNotFoundError as error:
    if (error.name or "").partition(".")[0] not in ("torch", "stable_baselines3", "sb3_contrib"):
        raise
    raise SystemExit(f"training needs the 'train' extra ({error.name} is not installed): "
                     f"{install_hint('train')}") from None

from ..envs.core.files import new_folder
from . import cli
from .cli import ArgumentParser
from .cli.stopping import exit_code, stoppable
from .ppo.checkpoint import Checkpoint, latest_checkpoint, resume_point
from .ppo.config import RESUMABLE_KEYS, Config, dump, load_config, saved_config
from .ppo.report import describe, next_steps
from .runtime.printed_commands import command

PROG = "python -m tabletop_rl.training.train"


def resolve_config(args: argparse.Namespace) -> tuple[Config, Path | None]:
    """The config of a fresh run (``--config``; run folder ``None``: to be claimed), or the saved config
    of the run being resumed and its folder."""
    if not args.resume:
        if args.config is None:
            raise ValueError("give --config configs/<game>.yaml (or --resume RUN_DIR)")
        return load_config(args.config, args.set), None
    if isinstance(args.resume, str):
        run_dir = Path(args.resume)
    elif args.config is not None:
        run_dir = load_config(args.config, args.set).run_dir
    else:
        raise ValueError("--resume needs the run directory, or --config to find it")
    config = load_config(saved_config(run_dir, args.set, RESUMABLE_KEYS), args.set)
    config.name, config.runs_dir = run_dir.name, str(run_dir.parent)  # the folder may have been moved
    return config, run_dir


def finished_message(config: Config, run_dir: Path, checkpoint: Checkpoint) -> str | None:
    """What to say instead of resuming (from ``checkpoint``) a run that already reached its ``total_timesteps``."""
    step = checkpoint.step
    if not (checkpoint.trainer["finished"] and step >= config.total_timesteps):
        return None
    return (f"{run_dir} is finished: {step:,} steps of total_timesteps={config.total_timesteps:,}, "
            f"evaluated, policy in {run_dir / 'policy.safetensors'}. To train it further, raise the total: "
            + command("tabletop_rl.training.train", "--resume", run_dir, "--set", f"total_timesteps={2 * step}"))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    usage = "\n\n".join(__doc__.split("\n\n")[:2])
    parser = ArgumentParser(prog=PROG, description=usage,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", help="YAML config, e.g. configs/lost_cities.yaml")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override a config value, e.g. --set ppo.learning_rate=1e-4 (repeatable)")
    parser.add_argument("--resume", nargs="?", const=True, default=None, metavar="RUN_DIR",
                        help="continue the run of --config (or RUN_DIR) from its newest checkpoint")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        config, run_dir = resolve_config(args)
        resumed = None
        if run_dir is not None:  # the newest checkpoint that reads back, before anything is changed
            resumed, skipped = resume_point(run_dir)
            for reason in skipped:
                print(f"{reason}: skipped, resuming from step {resumed.step:,}")
            if resumed is not None and (message := finished_message(config, run_dir, resumed)):
                print(message)
                return 0
        # Everything that can fail, before any file exists. A run stopped before its first checkpoint starts afresh.
        trainer = Trainer(config, fresh=resumed is None)
        if resumed is not None and config.anchor.kl > 0:
            trainer.read_anchor(run_dir)
    except (ValueError, OSError) as error:
        print(f"{PROG}: error: {cli.error_line(error)}", file=sys.stderr)
        return 2
    if run_dir is None:
        run_dir = new_folder(config.run_dir)
        if run_dir != config.run_dir:
            print(f"{config.run_dir} holds an earlier run (left as it is): this run goes to {run_dir}")
        config.name, config.runs_dir = run_dir.name, str(run_dir.parent)
    dump(config, run_dir / "config.yaml")  # on --resume: with the changed total_timesteps, max_minutes, …
    with stoppable(config.name, lambda: f"--resume {run_dir} " + (
            "continues from its newest checkpoint" if latest_checkpoint(run_dir) else
            "starts the run again: nothing is saved before the first checkpoint (a warm start is not kept)")):
        result = trainer.run(run_dir, resumed)
    print(f"\n{config.name}: {result['status']} {result['num_timesteps']:,} steps, {result['games']:,} games of "
          f"experience in {result['minutes']:.1f} min ({result['steps_per_second']:.0f} PPO steps/s, "
          f"{result['games_per_second']:.1f} games/s).")
    for record in result["final"]:
        print("  " + describe(record))
    print(f"Run folder: {run_dir}\nReport: {result['report']}\n\nNext:")
    for what, line in next_steps(trainer.game, run_dir, result["policy"], result["num_timesteps"], result["finished"]):
        print(f"  {what + ':':<22} {line}")
    return exit_code(result["stopped"]) if result["stopped"] not in (None, *LIMITS) else 0


if __name__ == "__main__":
    cli.run(main)
