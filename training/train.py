"""Train a MaskablePPO agent for any registered game.

    python -m training.train --config configs/lost_cities.yaml [--set key=value ...]
    python -m training.train --resume runs/lost_cities [--set total_timesteps=2000000]

The learner plays one seat of :class:`~training.single_seat.SingleSeatEnv` against the configured
opponent mix, in ``n_envs`` worker processes. At every rollout boundary (after a PPO update, before
the next rollout) the loop, in this order, refreshes the self-play pool, evaluates against the
evaluation opponents, and writes a checkpoint when they are due. Everything lands in ``runs/<name>/``:

=========================  =============================================================
``config.yaml``            the resolved config (``--resume`` reads it back)
``checkpoints/step_N.zip`` model + optimizer + step count (also loadable as an agent)
``checkpoints/step_N.pt``  snapshot pool, RNG states, evaluation history
``tb/``                    TensorBoard logs (``rollout/*``, ``train/*``, ``eval/<opponent>/*``)
``eval_history.json``      every evaluation record (see :mod:`training.report`)
``policy.zip``             the final policy alone (what ``load_agent`` / ``--opponent`` take)
``report.md``              final evaluation, learning curve ``learning_curve.png``, config
=========================  =============================================================

Stopping: ``max_minutes`` ends training at the next rollout boundary and still evaluates, writes the
checkpoint and the report. Ctrl-C / SIGTERM stops at the next step and checkpoints the state of the
last rollout boundary (the unfinished rollout is dropped, so the step count stays exact); a second
Ctrl-C aborts. ``--resume`` restores model, optimizer, step count, snapshot pool, evaluation history
and the python / numpy / torch RNG states; episodes that were in flight restart with fresh deals.
"""

from __future__ import annotations

import argparse
import io
import json
import random
import shutil
import signal
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.utils import LinearSchedule
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv, VecMonitor
from tqdm import tqdm

import envs
from envs.core.match import first_place_shares, play_game, score_margins

from .agents import (
    PolicyAgent,
    atomic_write,
    checkpoint_meta,
    export_policy,
    limit_torch_threads,
    load_agent,
    load_policy,
    policy_path,
)
from .config import RESUMABLE_KEYS, Config, Network, dump, load_config
from .opponents import SELF, SnapshotPool
from .report import describe, summarise, write_report
from .single_seat import env_factory
from .warm_start import imitate, teacher_games

ACTIVATIONS = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh}
EVAL_SEED_TAG = 7919  # evaluation deals derive from (seed, tag): never the training deals


def policy_kwargs(network: Network) -> dict[str, Any]:
    """``MaskableActorCriticPolicy`` arguments: separate policy and value MLPs of the configured sizes."""
    return {"net_arch": {"pi": list(network.pi), "vf": list(network.vf)},
            "activation_fn": ACTIVATIONS[network.activation]}


# ----------------------------------------------------------------------------- evaluation
def evaluate(learner: Any, game: str, game_options: dict, opponent: str, games: int, seed: int,
             step: int = 0) -> dict[str, Any]:
    """Seat-balanced games of ``learner`` against ``opponent`` in every other seat.

    Deals are paired: deal d is played once with the learner in each seat, which removes most of the
    luck of the draw from seat comparisons. Same seed, same deals, at every evaluation of a run.
    """
    env = envs.make(game, wrapped=False, **game_options)
    n = env.game.num_players
    rng = np.random.default_rng([seed, EVAL_SEED_TAG])
    deals = rng.integers(2**63, size=-(-games // n))
    others = [load_agent(opponent, env.game, seed=int(rng.integers(2**63))) for _ in range(n - 1)]
    rounds = env.game.options.get("rounds", 1)
    seats, wins, margins = [], [], []
    for g in range(games):
        seat = g % n
        agents = [*others[:seat], learner, *others[seat:]]
        returns, scores = play_game(env, agents, seed=int(deals[g // n]))
        seats.append(seat)
        wins.append(float(first_place_shares(returns)[seat]))
        if scores is not None:
            margins.append(float(score_margins(scores, rounds)[seat]))
    return summarise(step, opponent, seats, wins, margins if len(margins) == games else None, n)


# ----------------------------------------------------------------------------- checkpoints
def rng_state() -> dict[str, Any]:
    return {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}


def set_rng_state(state: dict[str, Any]) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])


def latest_checkpoint(run_dir: Path) -> tuple[Path, Path] | None:
    """Newest complete checkpoint: the ``.pt`` is written before the ``.zip``, so a zip implies both."""
    for model_path in sorted((run_dir / "checkpoints").glob("step_*.zip"), reverse=True):
        if model_path.with_suffix(".pt").is_file():
            return model_path, model_path.with_suffix(".pt")
    return None


# ----------------------------------------------------------------------------- the training run
class Trainer:
    """One run directory: builds envs and model (fresh or resumed), trains, evaluates, reports."""

    def __init__(self, config: Config, fresh: bool = True):
        """``fresh``: a new run (not ``--resume``), whose ``init_from`` policy is loaded and checked now."""
        self.config = config
        self.run_dir = config.run_dir
        limit_torch_threads(config.torch_threads)
        self.game = envs.make(config.game, wrapped=False, **config.game_options).game  # bad options fail here
        specs = [s for s in config.opponents.mix if s != SELF] + config.eval.opponents + [config.warm_start.teacher]
        for spec in dict.fromkeys(s for s in specs if s):  # a typo fails now, not inside an env worker
            load_agent(spec, self.game)
        self.policy_kwargs = policy_kwargs(config.network)
        self.pool = SnapshotPool(config.opponents.pool_size)
        self.history: list[dict[str, Any]] = []
        self.last = {"snapshot": None, "eval": None, "checkpoint": 0}  # step of the last time each was done
        self.minutes_before = 0.0  # wall-clock of earlier invocations of this run
        self.warm_start_facts = ""  # how the initial policy was made, for the report
        # A resumed run already holds its weights: it neither needs nor checks the init_from policy.
        self.init_policy = self.load_init_policy() if fresh and config.init_from else None
        self.started = time.monotonic()

    # ------------------------------------------------------------------ setup
    def make_vec_env(self) -> VecEnv:
        c = self.config
        subproc = c.vec_env == "subproc" or (c.vec_env == "auto" and c.num_envs > 1)
        kwargs = {"game": c.game, "game_options": c.game_options, "seat": c.seat,
                  "opponents": c.opponents.mix, "snapshot_deterministic": c.opponents.snapshot_deterministic,
                  "margin_reward": c.margin_reward,
                  "policy_kwargs": self.policy_kwargs}
        fns = [env_factory(in_worker=subproc, **kwargs) for _ in range(c.num_envs)]
        return VecMonitor(SubprocVecEnv(fns) if subproc else DummyVecEnv(fns))

    def new_model(self, venv: VecEnv) -> MaskablePPO:
        c = self.config
        ppo = {k: v for k, v in vars(c.ppo).items() if k != "anneal_lr"}
        if c.ppo.anneal_lr:
            ppo["learning_rate"] = LinearSchedule(c.ppo.learning_rate, 0.0, 1.0)
        return MaskablePPO("MlpPolicy", venv, seed=c.seed, device=c.device, policy_kwargs=self.policy_kwargs,
                           tensorboard_log=str(self.run_dir / "tb"), verbose=0, **ppo)

    def resume_model(self, venv: VecEnv, model_path: Path, state_path: Path) -> MaskablePPO:
        model = MaskablePPO.load(model_path, env=venv, device=self.config.device)
        state = torch.load(state_path, weights_only=False)  # our own file: RNG tuples, not just tensors
        self.pool = SnapshotPool(self.config.opponents.pool_size, state["pool"])
        self.history, self.last, self.minutes_before = state["eval_history"], state["last"], state["minutes"]
        self.warm_start_facts = state["warm_start"]
        # load() re-seeded everything from the original seed: put back the RNGs of the checkpoint, and
        # give the (restarted) episodes deals that depend on where the run resumes.
        set_rng_state(state["rng"])
        venv.seed(int(np.random.SeedSequence([self.config.seed, model.num_timesteps]).generate_state(1)[0]))
        return model

    def warm_start(self, model: MaskablePPO) -> None:
        c, w = self.config, self.config.warm_start
        say(f"warm start: imitating {w.teacher} in {w.games} games ...", None)
        data = teacher_games(c.game, c.game_options, w.teacher, w.games, c.seed, c.margin_reward)
        fit = imitate(model.policy, data, w.epochs, w.batch_size, w.learning_rate, c.ppo.vf_coef, c.seed)
        self.warm_start_facts = (f"Warm start: imitated `{w.teacher}` on {fit['decisions']:,} decisions "
                                 f"({w.games} games, {w.epochs} epochs); agreement {100 * fit['agreement']:.1f}%.")
        say(self.warm_start_facts, None)

    def load_init_policy(self) -> MaskableActorCriticPolicy:
        """The ``init_from`` policy of a fresh run, refused unless its network is the configured one."""
        c = self.config
        policy, meta = load_policy(policy_path(c.init_from, self.game), self.game)
        theirs = {"net_arch": policy.net_arch, "activation_fn": policy.activation_fn}
        if theirs != self.policy_kwargs:
            raise ValueError(f"init_from={c.init_from!r} has the network {theirs}, the config asks for "
                             f"{self.policy_kwargs}: set `network` to the sizes of the policy to fine-tune")
        self.warm_start_facts = f"Initialised from `{c.init_from}` ({meta['num_timesteps']:,} steps of training)."
        return policy

    # ------------------------------------------------------------------ at every rollout boundary
    def at_boundary(self, model: MaskablePPO, step: int, loop: TrainingLoop) -> None:
        c = self.config
        if self.last["snapshot"] is None or step - self.last["snapshot"] >= c.opponents.snapshot_every:
            self.pool.add(model.policy)
            model.get_env().env_method("set_pool", self.pool.snapshots)
            self.last["snapshot"] = step
        if c.eval.every and (self.last["eval"] is None or step - self.last["eval"] >= c.eval.every):
            self.run_evaluation(model, step, c.eval.games, loop)
            self.last["eval"] = step
        if step - self.last["checkpoint"] >= c.checkpoint_every:
            self.save_checkpoint(model, step, rng_state())

    def run_evaluation(self, model: MaskablePPO, step: int, games: int, loop: TrainingLoop | None,
                       ) -> list[dict[str, Any]]:
        c = self.config
        learner = PolicyAgent(model.policy, deterministic=c.eval.deterministic, seed=c.seed)
        records = [evaluate(learner, c.game, c.game_options, opponent, games, c.seed, step)
                   for opponent in c.eval.opponents]
        for r in records:
            tag = f"eval/{r['opponent']}"
            model.logger.record(f"{tag}/win_rate", r["win_rate"])
            model.logger.record(f"{tag}/win_rate_ci_low", r["ci"][0])
            model.logger.record(f"{tag}/win_rate_ci_high", r["ci"][1])
            for s in r["per_seat"]:
                model.logger.record(f"{tag}/win_rate_seat{s['seat']}", s["win_rate"])
            if r["margin"] is not None:
                model.logger.record(f"{tag}/margin", r["margin"])
            say(f"[step {step:,}] {describe(r)}", loop)
        model.logger.dump(step)
        # A final evaluation may land on the step of a periodic one (max_minutes): it replaces it.
        self.history = [r for r in self.history if r["step"] != step] + records
        (self.run_dir / "eval_history.json").write_text(json.dumps(self.history, indent=1))
        if loop is not None:
            loop.show(records)
        return records

    def save_checkpoint(self, model: MaskablePPO, step: int, rng: dict[str, Any]) -> None:
        folder = self.run_dir / "checkpoints"
        folder.mkdir(parents=True, exist_ok=True)
        self.last["checkpoint"] = step
        name = f"step_{step:012d}"
        state = {"pool": self.pool.snapshots, "rng": rng, "eval_history": self.history, "last": self.last,
                 "minutes": self.minutes(), "warm_start": self.warm_start_facts}
        buffer = io.BytesIO()
        torch.save(state, buffer)
        atomic_write(folder / f"{name}.pt", buffer.getvalue())
        model.num_timesteps = step  # after an interrupt: the step count of the boundary being saved
        model.tabletop = checkpoint_meta(self.game, step)  # saved with the model's data (see agents.py)
        buffer = io.BytesIO()
        model.save(buffer)
        atomic_write(folder / f"{name}.zip", buffer.getvalue())
        for old in sorted(folder.glob("step_*.zip"))[:-self.config.keep_checkpoints]:
            old.with_suffix(".pt").unlink(missing_ok=True)
            old.unlink()

    def minutes(self) -> float:
        return self.minutes_before + (time.monotonic() - self.started) / 60

    # ------------------------------------------------------------------ the whole run
    def run(self) -> dict[str, Any]:
        c = self.config
        checkpoint = latest_checkpoint(self.run_dir)
        venv = self.make_vec_env()
        try:
            model = self.resume_model(venv, *checkpoint) if checkpoint else self.new_model(venv)
            if checkpoint is None and c.warm_start.teacher:
                self.warm_start(model)
            if checkpoint is None and self.init_policy is not None:
                model.policy.load_state_dict(self.init_policy.state_dict())
                say(self.warm_start_facts, None)
            start = model.num_timesteps
            if not self.pool.snapshots:  # the envs are reset (opponents drawn) before the first rollout
                self.pool.add(model.policy)
                self.last["snapshot"] = start
            venv.env_method("set_pool", self.pool.snapshots)
            loop = TrainingLoop(self)
            if model.num_timesteps < c.total_timesteps:
                with stop_on_signals(loop):
                    model.learn(c.total_timesteps - model.num_timesteps, callback=loop, tb_log_name="ppo",
                                reset_num_timesteps=checkpoint is None)
            stopped = loop.stop_reason
            # An interrupted rollout was never learned from: save the state of its start instead.
            step, rng = (loop.boundary if stopped else (model.num_timesteps, rng_state()))
            final = []
            if stopped in (None, "max_minutes"):
                say(f"final evaluation: {c.eval.final_games} games per opponent ...", None)
                final = self.run_evaluation(model, step, c.eval.final_games, None)
                self.last["eval"] = step
                export_policy(model.policy, self.policy_kwargs, checkpoint_meta(self.game, step),
                              self.run_dir / "policy.zip")
            self.save_checkpoint(model, step, rng)
        finally:
            venv.close()
        minutes = self.minutes()
        status = {None: "Training completed.", "max_minutes": f"Stopped by max_minutes={c.max_minutes}."}.get(
            stopped, f"Interrupted ({stopped}); continue with --resume.")
        run_minutes = (time.monotonic() - self.started) / 60
        facts = {"num_timesteps": step, "minutes": minutes, "n_envs": c.num_envs,
                 "status": f"{status} {self.warm_start_facts}".strip(),
                 "steps_per_second": (step - start) / max(run_minutes * 60, 1e-9),
                 "policy": self.run_dir / ("policy.zip" if final else f"checkpoints/step_{step:012d}.zip")}
        report = write_report(self.run_dir, c.to_dict(), self.history, final, facts)
        return {"report": report, "final": final, "stopped": stopped, **facts}


class TrainingLoop(BaseCallback):
    """Hooks the trainer into SB3's loop: boundaries, progress bar, clean stops."""

    def __init__(self, trainer: Trainer):
        super().__init__()
        self.trainer = trainer
        self.stop_reason: str | None = None
        self.boundary: tuple[int, dict[str, Any]] | None = None
        self.bar: tqdm | None = None

    def _on_training_start(self) -> None:
        c = self.trainer.config
        if c.progress_bar:
            # Outside a terminal (nohup, CI) redraw rarely so that logs stay readable.
            self.bar = tqdm(total=c.total_timesteps, initial=self.num_timesteps, unit="step", desc=c.name,
                            dynamic_ncols=True, mininterval=0.5 if sys.stderr.isatty() else 60)

    def _on_rollout_start(self) -> None:
        step = self.num_timesteps
        self.trainer.at_boundary(self.model, step, self)
        self.boundary = (step, rng_state())
        max_minutes = self.trainer.config.max_minutes
        if max_minutes is not None and (time.monotonic() - self.trainer.started) / 60 >= max_minutes:
            self.stop_reason = "max_minutes"

    def _on_step(self) -> bool:
        if self.bar is not None:
            self.bar.update(self.training_env.num_envs)
        return self.stop_reason is None

    def _on_training_end(self) -> None:
        if self.bar is not None:
            self.bar.close()

    def show(self, records: list[dict[str, Any]]) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(", ".join(f"{r['opponent']} {100 * r['win_rate']:.0f}%"
                                               for r in records))


def say(text: str, loop: TrainingLoop | None) -> None:
    if loop is not None and loop.bar is not None:
        loop.bar.write(text)
    else:
        print(text, flush=True)


@contextmanager
def stop_on_signals(loop: TrainingLoop):
    """First Ctrl-C / SIGTERM: finish the current step, checkpoint, exit. Second Ctrl-C: abort now."""
    def request_stop(signum: int, frame: Any) -> None:
        if loop.stop_reason is not None and signum == signal.SIGINT:
            raise KeyboardInterrupt
        loop.stop_reason = signal.Signals(signum).name

    previous = {s: signal.signal(s, request_stop) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


# ----------------------------------------------------------------------------- command line
def resolve_config(args: argparse.Namespace) -> Config:
    """A fresh run from ``--config``, or the saved config of the run being resumed."""
    if not args.resume:
        if args.config is None:
            raise ValueError("give --config configs/<game>.yaml (or --resume RUN_DIR)")
        config = load_config(args.config, args.set)
        if (config.run_dir / "config.yaml").exists() and not args.overwrite:
            raise ValueError(f"{config.run_dir} already holds a run: continue it with --resume, start "
                             "over with --overwrite, or pick another name with --set name=...")
        return config
    if isinstance(args.resume, str):
        run_dir = Path(args.resume)
    elif args.config is not None:
        run_dir = load_config(args.config, args.set).run_dir
    else:
        raise ValueError("--resume needs the run directory, or --config to find it")
    saved = run_dir / "config.yaml"
    if not saved.is_file():
        raise ValueError(f"nothing to resume: {saved} does not exist")
    changed = {item.partition("=")[0].strip().split(".")[0] for item in args.set}
    if changed - RESUMABLE_KEYS:
        raise ValueError(f"--resume cannot change {sorted(changed - RESUMABLE_KEYS)}; only "
                         f"{sorted(RESUMABLE_KEYS)} (the rest defines what is being learned)")
    return load_config(None, args.set, base=yaml.safe_load(saved.read_text()))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    usage = "\n\n".join(__doc__.split("\n\n")[:2])
    parser = argparse.ArgumentParser(prog="python -m training.train", description=usage,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", help="YAML config, e.g. configs/lost_cities.yaml")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override a config value, e.g. --set ppo.learning_rate=1e-4 (repeatable)")
    parser.add_argument("--resume", nargs="?", const=True, default=None, metavar="RUN_DIR",
                        help="continue the run of --config (or RUN_DIR) from its newest checkpoint")
    parser.add_argument("--overwrite", action="store_true", help="delete an existing run of the same name")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        config = resolve_config(args)
        trainer = Trainer(config, fresh=not args.resume)
    except (ValueError, OSError, yaml.YAMLError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.overwrite and not args.resume:
        shutil.rmtree(config.run_dir, ignore_errors=True)
    config.run_dir.mkdir(parents=True, exist_ok=True)
    dump(config, config.run_dir / "config.yaml")
    result = trainer.run()
    print(f"\n{config.name}: {result['status']} {result['num_timesteps']:,} steps in "
          f"{result['minutes']:.1f} min ({result['steps_per_second']:.0f} steps/s).")
    for record in result["final"]:
        print("  " + describe(record))
    print(f"Report: {result['report']}\nPolicy: {result['policy']}")
    return 130 if result["stopped"] not in (None, "max_minutes") else 0  # 130: the shell's "interrupted"


if __name__ == "__main__":
    sys.exit(main())
