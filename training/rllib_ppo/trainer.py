"""The RLlib algorithm of a run: ``PPOConfig`` with the env (:mod:`.env`), the modules (:mod:`.modules`), the
seating and the snapshot callbacks; training, checkpoints, and the export of the learner as a policy file.
How a run goes is described in docs/rllib.md."""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from ... import envs
from ..cli.stopping import stop_on_signals
from ..interop.rllib_env import LEARNER, SeatMapping, TabletopMultiAgentEnv, fixed_agent_ids, snapshot_id
from ..ppo.network import limit_threads
from ..runtime.opponents import check_weights
from ..runtime.policy import PolicyInfo, save_policy
from ..runtime.policy_paths import SUFFIX
from .config import RllibConfig
from .modules import AgentModule, MaskedActor, MaskedActorCritic

POLICY_FILE = f"policy{SUFFIX}"


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
    network = c.network.spec()
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
    info = PolicyInfo.for_game(game, config.network.spec(), steps, trainer="tabletop_rl.training.rllib (RLlib PPO)",
                               run=config.name)
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
    """Set by :func:`tabletop_rl.training.cli.stopping.stop_on_signals` when Ctrl-C / SIGTERM / SIGHUP arrives."""

    stop_reason: str | None = None


def train(config: RllibConfig, run_dir: Path, resume: bool = False) -> dict[str, Any]:
    """Build (or restore) the algorithm, train up to ``iterations``, checkpoint, export. Ray must be up."""
    from tqdm import tqdm

    limit_threads(config.torch_threads)
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
