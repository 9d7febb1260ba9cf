"""Multi-agent PPO on Ray RLlib for any registered game, on one machine or a Ray cluster.

    python -m tabletop_rl.training.rllib --config configs/rllib_lost_cities.yaml [--address ADDR] [--set key=value ...]
    python -m tabletop_rl.training.rllib --resume runs/rllib_lost_cities [--set iterations=200]

RLlib's new API stack: ``PPOConfig`` with our own RLModules (:mod:`tabletop_rl.training.rllib_modules`) reading the
env's observation dict and masking with its int8 mask, the game as an RLlib ``MultiAgentEnv``
(:mod:`tabletop_rl.training.rllib_env`). One trained module, ``learner``, takes a random seat in every episode; the
other seats get opponents drawn from ``opponents.mix``: fixed agents (``random``, ``heuristic``,
``pretrained``, a policy path) run as non-trainable modules, and ``self`` picks one of ``pool_size``
frozen snapshot modules, refreshed with the learner's weights every ``snapshot_every`` iterations
(oldest first) by an ``on_train_result`` callback.

Ray: a local Ray by default; ``--address`` joins a running cluster (``ray start --head`` on one node,
``ray start --address=HEAD:6379`` on the others, see docs/rllib.md). ``num_env_runners: auto`` starts one
env runner per cluster CPU but one (the learner runs in this process).

Everything lands in a new run folder ``runs/<name>/`` (``runs/<name>-2`` … if that exists: a run is never
overwritten):

==============================  ============================================================
``config.yaml``                 the resolved config (``--resume`` reads it back)
``checkpoints/iter_N/``         RLlib checkpoints (``Algorithm.save_to_path``), the last few
``policy.safetensors``          the learner's policy in the project's format, rewritten at every
                                checkpoint: ``tabletop_rl.training.evaluate``, ``tabletop_rl.training.play`` and
                                ``load_agent`` take it (or the run folder) unchanged
==============================  ============================================================

Stopping: ``iterations`` (the run's total, counted across resumes), ``max_minutes`` (per invocation),
or Ctrl-C / SIGTERM / SIGHUP: the current iteration finishes, then a checkpoint is written. ``--resume`` restores
modules, optimizer, snapshot pool and iteration count from the newest checkpoint.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tabletop_rl import envs

from .agents import SUFFIX, load_agent
from .cli import ArgumentParser
from .config import Network, Run, dump, load_config, network_problems, run_problems
from .files import new_folder
from .opponents import SELF, check_weights
from .policy import PolicyInfo, save_policy
from .rllib_env import LEARNER, SeatMapping, TabletopMultiAgentEnv, fixed_agent_ids, snapshot_id
from .rllib_modules import AgentModule, MaskedActor, MaskedActorCritic
from .shell import command
from .stopping import exit_code
from .train import limit_torch_threads, stop_on_signals

POLICY_FILE = f"policy{SUFFIX}"


# ----------------------------------------------------------------------------- configuration
@dataclass
class RllibPPO:
    """PPO hyperparameters under RLlib's names (``PPOConfig.training``); defaults as the SB3 pipeline's."""

    lr: float = 3e-4
    train_batch_size: int = 8192  # env steps per iteration, every seat's (the learner's share is about 1/n)
    minibatch_size: int = 256
    num_epochs: int = 4
    gamma: float = 1.0  # rewards are terminal only
    lambda_: float = 0.95
    clip_param: float = 0.2
    vf_clip_param: float = 10.0  # returns lie in [-1, 1]: effectively unclipped, as in SB3
    entropy_coeff: float = 0.01
    vf_loss_coeff: float = 0.5
    grad_clip: float | None = 0.5
    use_kl_loss: bool = False  # SB3's PPO has no KL penalty
    kl_coeff: float = 0.2


@dataclass
class RllibOpponents:
    # agent spec -> weight; "self" = snapshots of the learner; also random, heuristic, pretrained, a path
    mix: dict[str, float] = field(default_factory=lambda: {"random": 0.5, "heuristic": 0.2, "self": 0.3})
    snapshot_every: int = 5  # iterations between copies of the learner into the pool
    pool_size: int = 4


@dataclass
class RllibConfig(Run):
    iterations: int = 50  # total training iterations of the run (each samples ppo.train_batch_size steps)
    max_minutes: float | None = None  # wall-clock cap of one invocation; stops cleanly with a checkpoint
    num_env_runners: int | str = "auto"  # auto: one per CPU of the Ray cluster, less one for the learner
    num_envs_per_env_runner: int = 32  # envs stepped together in each runner: one batched forward per step
    torch_threads: int = 1  # of the learner (this process); more threads thrash on a shared, busy CPU
    checkpoint_every: int = 10  # iterations
    keep_checkpoints: int = 2
    progress_bar: bool = True
    runs_dir: str = "runs"
    ppo: RllibPPO = field(default_factory=RllibPPO)
    network: Network = field(default_factory=Network)
    opponents: RllibOpponents = field(default_factory=RllibOpponents)

    @property
    def snapshots(self) -> int:
        """Number of snapshot modules: the pool, if the mix uses it."""
        return self.opponents.pool_size if check_weights(self.opponents.mix).get(SELF) else 0


# keys that may change on --resume: they steer the run, not what is being learned
RESUMABLE_KEYS = {"iterations", "max_minutes", "num_env_runners", "num_envs_per_env_runner", "torch_threads",
                  "checkpoint_every", "keep_checkpoints", "progress_bar", "runs_dir"}


def check_config(c: RllibConfig) -> None:
    """Every value, the game and its options, and every agent of the mix, before anything is written."""
    problems = run_problems(c)
    positive = {"iterations": c.iterations, "num_envs_per_env_runner": c.num_envs_per_env_runner,
                "torch_threads": c.torch_threads,
                "checkpoint_every": c.checkpoint_every, "keep_checkpoints": c.keep_checkpoints,
                "ppo.train_batch_size": c.ppo.train_batch_size, "ppo.minibatch_size": c.ppo.minibatch_size,
                "ppo.num_epochs": c.ppo.num_epochs, "opponents.snapshot_every": c.opponents.snapshot_every,
                "opponents.pool_size": c.opponents.pool_size}
    problems += [f"{k} must be > 0 (got {v})" for k, v in positive.items() if v <= 0]
    problems += network_problems(c.network)
    if c.ppo.minibatch_size > c.ppo.train_batch_size:
        problems.append("ppo.minibatch_size must not exceed ppo.train_batch_size")
    if not (c.num_env_runners == "auto" or (isinstance(c.num_env_runners, int) and c.num_env_runners >= 0)):
        problems.append(f"num_env_runners must be 'auto' or an integer >= 0 (got {c.num_env_runners!r})")
    if c.max_minutes is not None and c.max_minutes <= 0:
        problems.append(f"max_minutes must be > 0 or null (got {c.max_minutes})")
    if not 0 < c.ppo.gamma <= 1 or not 0 <= c.ppo.lambda_ <= 1:
        problems.append("ppo.gamma must be in (0, 1] and ppo.lambda_ in [0, 1]")
    if problems:
        raise ValueError("bad config: " + "; ".join(problems))
    game = envs.make(c.game, wrapped=False, **c.game_options).game  # unknown game or bad options fail here
    PolicyInfo.for_game(game, asdict(c.network))  # a network too large for a policy file fails now, not at export
    mix = check_weights(c.opponents.mix, "opponents.mix")
    for spec in fixed_agent_ids(mix):  # a typo fails now, not inside an env runner
        load_agent(spec, game)


def read_config(path: str | Path | None, overrides: list[str]) -> RllibConfig:
    return load_config(path, overrides, schema=RllibConfig, check=check_config)


def resume_config(run_dir: Path, overrides: list[str]) -> RllibConfig:
    saved = run_dir / "config.yaml"
    if not saved.is_file():
        raise ValueError(f"nothing to resume: {saved} does not exist")
    changed = {item.partition("=")[0].strip().split(".")[0] for item in overrides}
    if changed - RESUMABLE_KEYS:
        raise ValueError(f"--resume cannot change {sorted(changed - RESUMABLE_KEYS)}; only "
                         f"{sorted(RESUMABLE_KEYS)} (the rest defines what is being learned)")
    if latest_checkpoint(run_dir) is None:
        raise ValueError(f"nothing to resume: {run_dir / 'checkpoints'} holds no complete checkpoint")
    return read_config(saved, overrides)


# ----------------------------------------------------------------------------- the RLlib algorithm
class SnapshotSchedule:
    """Callbacks that keep the snapshot modules: all start as copies of the initial learner; after every
    ``every``-th iteration the oldest slot gets the learner's current weights."""

    def __init__(self, slots: int, every: int):
        self.slots, self.every = slots, every

    def fill(self, *, algorithm: Any, **kwargs: Any) -> None:
        """``on_algorithm_init``: a resumed run then overwrites the slots from its checkpoint."""
        copy_learner(algorithm, range(self.slots))

    def refresh(self, *, algorithm: Any, result: dict, **kwargs: Any) -> None:
        """``on_train_result``."""
        if self.slots and algorithm.iteration % self.every == 0:
            copy_learner(algorithm, [(algorithm.iteration // self.every - 1) % self.slots])


def copy_learner(algorithm: Any, slots: Any) -> None:
    """Copy the learner's weights into snapshot ``slots``, on the learner side and on every env runner."""
    ids = [snapshot_id(s) for s in slots]
    if not ids:
        return
    weights = algorithm.learner_group.get_weights([LEARNER])[LEARNER]
    algorithm.learner_group.set_weights(dict.fromkeys(ids, weights))
    algorithm.env_runner_group.sync_weights(from_worker_or_learner_group=algorithm.learner_group, policies=ids,
                                            inference_only=True)


def resolve_env_runners(config: RllibConfig) -> int:
    """``auto``: one env runner per CPU of the (running) Ray cluster, keeping one for the learner."""
    if config.num_env_runners != "auto":
        return int(config.num_env_runners)
    import ray

    return max(1, int(ray.cluster_resources().get("CPU", 1)) - 1)


def ppo_config(config: RllibConfig, num_env_runners: int = 1) -> Any:
    """The ``PPOConfig`` of a run: env, modules, seating, snapshot callbacks, PPO hyperparameters."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    c = config
    num_players = envs.make(c.game, wrapped=False, **c.game_options).game.num_players
    network = {"pi": list(c.network.pi), "vf": list(c.network.vf), "activation": c.network.activation}
    specs = {LEARNER: RLModuleSpec(module_class=MaskedActorCritic, model_config=network),
             **{snapshot_id(i): RLModuleSpec(module_class=MaskedActor, model_config=network)
                for i in range(c.snapshots)}}
    for i, (spec, module_id) in enumerate(fixed_agent_ids(check_weights(c.opponents.mix)).items()):
        specs[module_id] = RLModuleSpec(module_class=AgentModule, model_config={
            "game": c.game, "game_options": dict(c.game_options), "agent": spec, "seed": c.seed + i})
    schedule = SnapshotSchedule(c.snapshots, c.opponents.snapshot_every)
    ppo = dict(vars(c.ppo))
    return (
        PPOConfig()
        # RLlib's env checker steps random (mostly illegal) actions: our engines rightly raise on those.
        .environment(TabletopMultiAgentEnv, env_config={"game": c.game, "game_options": dict(c.game_options)},
                     disable_env_checking=True)
        .env_runners(num_env_runners=num_env_runners, num_envs_per_env_runner=c.num_envs_per_env_runner)
        .multi_agent(policies=set(specs), policies_to_train=[LEARNER],
                     policy_mapping_fn=SeatMapping(num_players, c.opponents.mix, c.opponents.pool_size))
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
        .training(train_batch_size_per_learner=ppo.pop("train_batch_size"), **ppo)
        .callbacks(on_algorithm_init=schedule.fill, on_train_result=schedule.refresh)
        .debugging(seed=c.seed)
    )


# ----------------------------------------------------------------------------- checkpoints and export
def learner_steps(result: dict) -> int:
    """Decisions the learner module has sampled so far (what the SB3 pipeline counts as timesteps)."""
    from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, NUM_MODULE_STEPS_SAMPLED_LIFETIME

    return int(result.get(ENV_RUNNER_RESULTS, {}).get(NUM_MODULE_STEPS_SAMPLED_LIFETIME, {}).get(LEARNER, 0))


def export_learner(weights: dict[str, Any], config: RllibConfig, steps: int, path: Path) -> None:
    """The learner module's weights (``get_state()``) as the project's policy file: its parameters already
    carry the file's (SB3's) names; ``save_policy`` checks every name and shape against the network."""
    game = envs.make(config.game, wrapped=False, **config.game_options).game
    network = {"pi": config.network.pi, "vf": config.network.vf, "activation": config.network.activation}
    info = PolicyInfo.for_game(game, network, steps, trainer="tabletop_rl.training.rllib (RLlib PPO)", run=config.name)
    save_policy(path, {name: np.asarray(value) for name, value in weights.items()}, info)


def latest_checkpoint(run_dir: Path) -> Path | None:
    found = sorted((run_dir / "checkpoints").glob("iter_*[0-9]"))
    return found[-1] if found else None


def checkpoint_iteration(checkpoint: Path) -> int:
    return int(checkpoint.name.removeprefix("iter_"))


def save_checkpoint(algorithm: Any, config: RllibConfig, run_dir: Path, steps: int) -> Path:
    """RLlib checkpoint (written aside, then renamed: a killed run never leaves half of one), the exported
    policy, and the oldest checkpoints beyond ``keep_checkpoints`` removed."""
    folder = run_dir / "checkpoints"
    target = folder / f"iter_{algorithm.iteration:06d}"
    partial = folder / f"{target.name}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    algorithm.save_to_path(partial.resolve())
    if target.exists():  # the same iteration saved again (a resumed run stopped at once)
        shutil.rmtree(target)
    partial.rename(target)
    export_learner(algorithm.learner_group.get_weights([LEARNER])[LEARNER], config, steps, run_dir / POLICY_FILE)
    for old in sorted(folder.glob("iter_*[0-9]"))[:-config.keep_checkpoints]:
        shutil.rmtree(old)
    return target


# ----------------------------------------------------------------------------- the run
class Stop:
    """Set by :func:`tabletop_rl.training.train.stop_on_signals` when Ctrl-C / SIGTERM / SIGHUP arrives."""

    stop_reason: str | None = None


def train(config: RllibConfig, run_dir: Path, resume: bool = False) -> dict[str, Any]:
    """Build (or restore) the algorithm, train up to ``iterations``, checkpoint, export. Ray must be up."""
    from tqdm import tqdm

    limit_torch_threads(config.torch_threads)
    num_runners = resolve_env_runners(config)
    algorithm = ppo_config(config, num_runners).build_algo()
    try:
        if resume:
            algorithm.restore_from_path(latest_checkpoint(run_dir).resolve())
        started, stop, start_iteration = time.monotonic(), Stop(), algorithm.iteration
        steps, rate, saved = 0, 0.0, None
        bar = tqdm(total=config.iterations, initial=start_iteration, unit="iter", desc=config.name,
                   dynamic_ncols=True, disable=not config.progress_bar,
                   mininterval=0.5 if sys.stderr.isatty() else 60)
        with stop_on_signals(stop):
            while algorithm.iteration < config.iterations and stop.stop_reason is None:
                result = algorithm.train()
                steps, rate = learner_steps(result), steps_per_second(result)
                status = f"{rate:,.0f} env steps/s, learner return {learner_return(result):+.2f}"
                bar.update(1)
                bar.set_postfix_str(status)
                if algorithm.iteration % config.checkpoint_every == 0:
                    saved = save_checkpoint(algorithm, config, run_dir, steps)
                    bar.write(f"[iteration {algorithm.iteration}, {steps:,} learner decisions] {status}; "
                              f"checkpoint {saved.name}")
                if config.max_minutes is not None and (time.monotonic() - started) / 60 >= config.max_minutes:
                    stop.stop_reason = "max_minutes"
        bar.close()
        if algorithm.iteration == start_iteration:  # nothing trained (a resumed run already complete)
            saved = latest_checkpoint(run_dir)
        elif saved is None or saved.name != f"iter_{algorithm.iteration:06d}":
            saved = save_checkpoint(algorithm, config, run_dir, steps)
        return {"iterations": algorithm.iteration, "new_iterations": algorithm.iteration - start_iteration,
                "minutes": (time.monotonic() - started) / 60, "env_runners": num_runners, "checkpoint": saved,
                "steps_per_second": rate, "stopped": stop.stop_reason, "policy": run_dir / POLICY_FILE}
    finally:
        algorithm.stop()


def steps_per_second(result: dict) -> float:
    from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED

    return result.get(ENV_RUNNER_RESULTS, {}).get(NUM_ENV_STEPS_SAMPLED, 0) / max(result["time_this_iter_s"], 1e-9)


def learner_return(result: dict) -> float:
    """The learner's mean episode return against the mix in this iteration's episodes (NaN if none ended)."""
    returns = result.get("env_runners", {}).get("module_episode_returns_mean", {})
    return float(returns.get(LEARNER, np.nan))


# ----------------------------------------------------------------------------- command line
def parse_args(argv: list[str] | None) -> argparse.Namespace:
    usage = "\n\n".join(__doc__.split("\n\n")[:2])
    parser = ArgumentParser(prog="python -m tabletop_rl.training.rllib", description=usage,
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
        print(f"error: {error}", file=sys.stderr)
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
            print(f"error: {error}. {CONNECT_HINT}", file=sys.stderr)
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
    flags = options_flags(config)
    for line in (command("tabletop_rl.training.evaluate", config.game, run_dir, "heuristic", "random", *flags),
                 command("tabletop_rl.training.play", config.game, "--opponent", run_dir, *flags),
                 command("tabletop_rl.training.rllib", "--resume", run_dir, "--set",
                         f"iterations={2 * config.iterations}")):
        print("  " + line)
    return exit_code(result["stopped"]) if result["stopped"] not in (None, "max_minutes") else 0


def options_flags(config: RllibConfig) -> list[str]:
    """The evaluate / play arguments that give the trained game's option set."""
    return [arg for k, v in config.game_options.items() for arg in ("--set", f"{k}={v}")]


if __name__ == "__main__":
    sys.exit(main())
