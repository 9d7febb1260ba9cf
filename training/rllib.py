"""Multi-agent PPO on Ray RLlib for any registered game, on one machine or a Ray cluster.

    python -m tabletop_rl.training.rllib --config configs/rllib_lost_cities.yaml [--address ADDR] [--set key=value ...]
    python -m tabletop_rl.training.rllib --resume runs/rllib_lost_cities [--set iterations=200]

The command line over :func:`tabletop_rl.training.rllib_ppo.trainer.train`: the run, Ray and the run folder are
described in docs/rllib.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..envs.core.extras import install_hint
from ..envs.core.files import new_folder
from . import cli
from .cli import ArgumentParser, set_flags
from .cli.stopping import exit_code
from .ppo.config import dump, saved_config
from .runtime.printed_commands import command

try:  # ray lives in its own venv (make setup-rllib): .venv has none
    from .rllib_ppo.config import RESUMABLE_KEYS, RllibConfig, read_config
    from .rllib_ppo.trainer import checkpoint_iteration, latest_checkpoint, train
except ModuleNotFoundError as error:
    if (error.name or "").partition(".")[0] not in ("ray", "torch"):
        raise
    raise SystemExit(f"RLlib training needs the 'rllib' extra ({error.name} is not installed): "
                     f"{install_hint('rllib')} (or make setup-rllib)") from None

PROG = "python -m tabletop_rl.training.rllib"


def resume_config(run_dir: Path, overrides: list[str]) -> RllibConfig:
    saved = saved_config(run_dir, overrides, RESUMABLE_KEYS)
    if latest_checkpoint(run_dir) is None:
        raise ValueError(f"nothing to resume: {run_dir / 'checkpoints'} holds no complete checkpoint")
    return read_config(saved, overrides)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    usage = "\n\n".join(__doc__.split("\n\n")[:2])
    parser = ArgumentParser(prog=PROG, description=usage,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", help="YAML config, e.g. configs/rllib_lost_cities.yaml")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override a config value, e.g. --set iterations=200 (repeatable)")
    parser.add_argument("--resume", metavar="RUN_DIR", help="continue a run from its newest checkpoint")
    parser.add_argument("--address", help="join a running Ray cluster (e.g. auto or HEAD_IP:6379); "
                        "default: start a local Ray")
    return parser.parse_args(argv)


CONNECT_HINT = ("Is the head running (`ray start --head` there, `ray status --address ADDR` here)? If it uses "
                "Ray's token authentication, set RAY_AUTH_MODE=token here and give it the head's token "
                "(`ray get-auth-token` on the head; RAY_AUTH_TOKEN=... or ~/.ray/auth_token here): docs/rllib.md")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        if args.resume:
            if args.config:
                raise ValueError("give either --config (a new run) or --resume RUN_DIR, not both")
            run_dir = Path(args.resume)
            config = resume_config(run_dir, args.set)
        elif args.config:
            config, run_dir = read_config(args.config, args.set), None
        else:
            raise ValueError("give --config configs/rllib_<game>.yaml (or --resume RUN_DIR)")
    except (ValueError, OSError) as error:
        print(f"{PROG}: error: {cli.error_line(error)}", file=sys.stderr)
        return 2
    done = checkpoint_iteration(latest_checkpoint(run_dir)) if run_dir else 0
    if done >= config.iterations:
        print(f"{run_dir} has done {done} iterations (iterations: {config.iterations}): train it further with "
              f"--resume {run_dir} --set iterations=N (N > {done})")
        return 0
    import ray

    # Ray puts this working directory on its workers' sys.path: env runners import `tabletop_rl` from it (a
    # checkout; on other nodes from the same path), or from an installed copy.
    owns_ray = not ray.is_initialized()  # a caller's Ray (a notebook, the tests) is left running
    if owns_ray:
        try:
            # "local": a fresh Ray even if a cluster runs on this machine; joining one is what --address is for
            ray.init(address=args.address or "local", include_dashboard=False, log_to_driver=False)
        except ConnectionError as error:
            print(f"{PROG}: error: {error}. {CONNECT_HINT}", file=sys.stderr)
            return 2
    try:
        run_dir = run_dir or new_folder(Path(config.runs_dir) / config.name)  # never an earlier run's folder
        config.name, config.runs_dir = run_dir.name, str(run_dir.parent)  # a resumed folder may have moved
        dump(config, run_dir / "config.yaml")  # on --resume with the steering keys it changed
        result = train(config, run_dir, resume=bool(args.resume))
    finally:
        if owns_ray:
            ray.shutdown()
    status = {None: "Training completed.", "max_minutes": f"Stopped by max_minutes={config.max_minutes}."}.get(
        result["stopped"], f"Interrupted ({result['stopped']}); continue with --resume.")
    print(f"\n{config.name}: {status} {result['iterations']} iterations ({result['new_iterations']} now, "
          f"{result['minutes']:.1f} min, {result['env_runners']} env runners, last "
          f"{result['steps_per_second']:,.0f} env steps/s).\nCheckpoint: {result['checkpoint']}\n"
          f"Policy: {result['policy']}\n\nNext:")
    flags = set_flags(config.game_options)
    for line in (command("tabletop_rl.training.evaluate", config.game, run_dir, "heuristic", "random", *flags),
                 command("tabletop_rl.training.play", config.game, "--opponent", run_dir, *flags),
                 command("tabletop_rl.training.rllib", "--resume", run_dir, "--set",
                         f"iterations={2 * config.iterations}")):
        print("  " + line)
    return exit_code(result["stopped"]) if result["stopped"] not in (None, "max_minutes") else 0


if __name__ == "__main__":
    cli.run(main)
