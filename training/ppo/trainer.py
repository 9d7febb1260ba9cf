"""One MaskablePPO training run (:class:`Trainer`) and its hooks into SB3's loop (:class:`TrainingLoop`): the
learner plays one seat of :class:`~tabletop_rl.training.runtime.single_seat.SingleSeatEnv` against the opponent
mix; at every rollout boundary the self-play pool is refreshed, the learner evaluated and a checkpoint written
when due. ``python -m tabletop_rl.training.train`` runs it; the run folder and how a run stops and resumes are
described in docs/training.md.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.utils import LinearSchedule
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv, VecMonitor
from tqdm import tqdm

from ... import envs
from ...envs.core.match import first_place_shares, play_game, score_margins, seat_among
from ..cli.stopping import stop_on_signals
from ..runtime.agents import load_agent
from ..runtime.opponents import SELF, SnapshotPool
from ..runtime.policy import MLPPolicy, PolicyAgent, PolicyInfo, Weights, load_policy, save_policy
from ..runtime.policy_paths import describe_options, fitting_pretrained, policy_path
from ..runtime.processes import ignore_stop_signals, start_helpers
from ..runtime.single_seat import SingleSeatEnv
from ..runtime.vector_env import batched_env
from .checkpoint import Checkpoint, rng_state, save_checkpoint, set_rng_state
from .config import Config
from .network import limit_threads, native_bf16
from .report import describe, summarise, write_report
from .sb3_policy import TabletopPolicy
from .vec_env import SB3SeatVecEnv
from .warm_start import imitate, joined, teacher_games

EVAL_SEED_TAG = 7919  # evaluation deals derive from (seed, tag): never the training deals
ANCHOR_FILE = "anchor.safetensors"  # in the run folder: the policy PPO started from, for anchor.kl
LIMITS = ("max_minutes", "max_games")  # what ends a run early but finished: it evaluates and exports its policy


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
        returns, scores = play_game(env, seat_among(learner, others, seat), seed=int(deals[g // n]))
        seats.append(seat)
        wins.append(float(first_place_shares(returns)[seat]))
        if scores is not None:
            margins.append(float(score_margins(scores, rounds)[seat]))
    return summarise(step, opponent, seats, wins, margins if len(margins) == games else None, n)


def env_factory(in_worker: bool = False, **kwargs: Any) -> Callable[[], SingleSeatEnv]:
    """A picklable constructor for ``SubprocVecEnv`` / ``DummyVecEnv``. A worker process ignores the stop signals:
    the training process catches them, checkpoints, then closes the workers."""
    def make() -> SingleSeatEnv:
        if in_worker:
            ignore_stop_signals()
        return SingleSeatEnv(**kwargs)

    return make


# ----------------------------------------------------------------------------- the training run
class Trainer:
    """One run: checks everything up front, then builds envs and model (fresh or resumed), trains,
    evaluates and reports into ``run_dir``."""

    def __init__(self, config: Config, fresh: bool = True):
        """Build everything that can fail before any file is written: the game with its options, every
        agent the config names, the training env, the device and (``fresh``: not ``--resume``) the
        ``init_from`` policy."""
        self.config = c = config
        self.run_dir = c.run_dir  # until run() is given the folder it claimed or resumes
        limit_threads(c.torch_threads)
        # The masks guarantee valid logits: torch's argument checks on every distribution built (several per
        # minibatch and per rollout step) only cost time, as other RL libraries find on their hot paths.
        torch.distributions.Distribution.set_default_validate_args(False)
        try:
            torch.device(c.device)
        except RuntimeError as error:
            raise ValueError(f"device={c.device!r} is not a torch device ({error})") from None
        self.game = envs.make(c.game, wrapped=False, **c.game_options).game  # bad options fail here
        if c.warm_start.teacher == "pretrained" and fitting_pretrained(self.game) is None:
            raise ValueError(f"warm_start.teacher=pretrained: no shipped {c.game} policy fits these options "
                             f"({describe_options(self.game, self.game.options)}); add --set "
                             "warm_start.teacher=heuristic to imitate the heuristic bot instead")
        if c.warm_start.relabel and self.game.relabellings() is None:
            raise ValueError(f"warm_start.relabel: {c.game} declares no symmetries to relabel by "
                             "(Game.relabellings); set it to false")
        for spec in dict.fromkeys(c.eval.opponents + [c.warm_start.teacher]):
            if spec == SELF:
                raise ValueError(f"'{SELF}' is an opponent for training only (opponents.mix), not for eval or "
                                 "warm_start")
            if spec:
                load_agent(spec, self.game)
        self.network = c.network.spec()
        self.env_kwargs = {"game": c.game, "game_options": c.game_options, "seat": c.seat,
                           "opponents": c.opponents.mix, "network": self.network,
                           "snapshot_deterministic": c.opponents.snapshot_deterministic,
                           "margin_reward": c.margin_reward, "outcome_reward": c.outcome_reward, "outcome": c.outcome,
                           "skip_forced": c.skip_forced}
        SingleSeatEnv(**self.env_kwargs)  # the seat and the opponent mix (every agent in it) check out
        self.policy_kwargs = {"network": self.network}
        if c.critic == "global_state":
            self.policy_kwargs["critic"] = {"hidden": [*self.network.get("shared", []), *self.network["vf"]],
                                            "state_size": self.game.state_layout.size}
        self.pool = SnapshotPool(c.opponents.pool_size)
        self.history: list[dict[str, Any]] = []
        self.last = {"snapshot": None, "eval": None, "checkpoint": 0}  # step of the last time each was done
        self.minutes_before = 0.0  # wall-clock of earlier invocations of this run
        self.games = 0  # the learner's games of experience: its training episodes that ended
        self.warm_start_facts = ""  # how the initial policy was made, for the report
        # A resumed run already holds its weights: it neither needs nor checks the init_from policy.
        self.init_policy = self.load_init_policy() if fresh and c.init_from else None
        self.anchor: Weights | None = None  # the policy anchor.kl holds PPO near (read_anchor, set_anchor)
        self.started = time.monotonic()

    def info(self, step: int, **provenance: Any) -> PolicyInfo:
        """What a policy file of this run says about itself."""
        return PolicyInfo.for_game(self.game, self.network, step, **provenance)

    # ------------------------------------------------------------------ setup
    def make_vec_env(self) -> VecEnv:
        c = self.config
        if c.vec_env == "batched":
            return VecMonitor(SB3SeatVecEnv(batched_env(num_envs=c.num_envs, num_workers=c.num_workers,
                                                        global_state=c.critic == "global_state", **self.env_kwargs)))
        subproc = c.vec_env == "subproc" or (c.vec_env == "auto" and c.num_envs > 1)
        fns = [env_factory(in_worker=subproc, **self.env_kwargs) for _ in range(c.num_envs)]
        if subproc:
            start_helpers("forkserver")  # SubprocVecEnv's start method
        return VecMonitor(SubprocVecEnv(fns) if subproc else DummyVecEnv(fns))

    def new_model(self, venv: VecEnv) -> MaskablePPO:
        c = self.config
        ppo = {k: v for k, v in vars(c.ppo).items() if k != "anneal_lr"}
        if c.ppo.anneal_lr:
            ppo["learning_rate"] = LinearSchedule(c.ppo.learning_rate, 0.0, 1.0)
        model = MaskablePPO(TabletopPolicy, venv, seed=c.seed, device=c.device, policy_kwargs=self.policy_kwargs,
                            tensorboard_log=str(self.run_dir / "tb"), verbose=0, **ppo)
        # the KL anchor and the global-state critic's value head enter the loss through the entropy term
        model.policy.ent_coef, model.policy.distil_weight = c.ppo.ent_coef, c.ppo.vf_coef
        model.policy.bf16 = c.bf16 and native_bf16()
        if c.bf16 and not model.policy.bf16:
            say("bf16: this CPU has no native bfloat16 (AVX512-BF16 or AMX): PPO runs in float32", None)
        return model

    def resume(self, model: MaskablePPO, venv: VecEnv, checkpoint: Checkpoint) -> None:
        """Put the checkpoint's weights, optimizer, counters, pool and RNG states into a fresh model."""
        model.policy.load_file_weights(checkpoint.policy.weights)
        if model.policy.critic is not None:
            if not checkpoint.critic:
                raise ValueError("the checkpoint has no critic/ tensors, but the run's config has critic: global_state")
            model.policy.load_critic_weights(checkpoint.critic)
        model.policy.optimizer.load_state_dict(checkpoint.optimizer)
        model.num_timesteps, model._n_updates = checkpoint.step, checkpoint.doc["n_updates"]
        model.ep_info_buffer = deque(checkpoint.doc["episodes"], maxlen=model._stats_window_size)  # for rollout/*
        model.ep_success_buffer = deque(maxlen=model._stats_window_size)
        state = checkpoint.trainer
        self.pool = SnapshotPool(self.config.opponents.pool_size, checkpoint.pool)
        self.history, self.last, self.minutes_before = state["eval_history"], state["last"], state["minutes"]
        self.warm_start_facts = state["warm_start"]
        self.games = state.get("games", 0)  # a checkpoint of an earlier release did not count them
        # Building the model re-seeded everything from the original seed: put back the RNGs of the
        # checkpoint, and give the (restarted) episodes deals that depend on where the run resumes.
        set_rng_state(checkpoint.rng)
        venv.seed(int(np.random.SeedSequence([self.config.seed, checkpoint.step]).generate_state(1)[0]))

    def warm_start(self, model: MaskablePPO) -> None:
        c, w = self.config, self.config.warm_start
        began = time.monotonic()
        say(f"warm start: imitating {w.teacher} in {w.games} games ...", None)

        def play(games: int, **kwargs: Any) -> dict[str, Any]:
            return teacher_games(c.game, c.game_options, w.teacher, games, c.seed, c.margin_reward, c.outcome_reward,
                                 workers=w.workers or os.cpu_count() or 1, progress=c.progress_bar,
                                 skip_forced=c.skip_forced, outcome=c.outcome, **kwargs)

        data = play(w.games, random_seats=w.random_seats)
        relabellings = self.game.relabellings() if w.relabel else None
        fit = imitate(model.policy, data, w.epochs, w.batch_size, w.learning_rate, c.ppo.vf_coef, c.seed, relabellings)
        for r in range(w.dagger_rounds):  # the imitation plays, the teacher answers, everything is fitted again
            say(f"warm start: DAgger round {r + 1} of {w.dagger_rounds}, {w.dagger_games} games ...", None)
            student = (model.policy.file_weights(), self.info(0))
            data = joined([data, play(w.dagger_games, student=student, stream=2 + r)])
            fit = imitate(model.policy, data, 1, w.batch_size, w.learning_rate, c.ppo.vf_coef, c.seed + 1 + r,
                          relabellings)
        mixed = f", {w.random_seats:.0%} of the seats random" if w.random_seats else ""
        mixed += ", relabelled" if w.relabel else ""
        mixed += f", then {w.dagger_rounds} DAgger round{'s' * (w.dagger_rounds != 1)} of {w.dagger_games} games" \
            if w.dagger_rounds else ""
        self.warm_start_facts = (f"Warm start: imitated `{w.teacher}` on {fit['decisions']:,} decisions "
                                 f"({w.games} games{mixed}, {w.epochs} epoch{'s' * (w.epochs != 1)}, "
                                 f"{(time.monotonic() - began) / 60:.1f} min); "
                                 f"agreement {100 * fit['agreement']:.1f}%.")
        say(self.warm_start_facts, None)

    def load_init_policy(self) -> MLPPolicy:
        """The ``init_from`` policy of a fresh run, refused unless its network is the configured one."""
        c = self.config
        policy = load_policy(policy_path(c.init_from, self.game), self.game)
        if policy.info.network != self.network:
            raise ValueError(f"init_from={c.init_from!r} has the network {policy.info.network}, the config asks "
                             f"for {self.network}: set `network` to the sizes of the policy to fine-tune")
        self.warm_start_facts = (f"Initialised from `{c.init_from}` ({policy.info.num_timesteps:,} steps of "
                                 "training).")
        return policy

    def read_anchor(self, run_dir: Path) -> None:
        """A resumed run's anchor (``anchor.kl``): the policy it started from, kept in ``anchor.safetensors``."""
        path = run_dir / ANCHOR_FILE
        if not path.is_file():
            raise ValueError(f"anchor.kl needs the policy this run started from, {path}, which is missing")
        self.anchor = load_policy(path, self.game).weights

    def set_anchor(self, model: MaskablePPO) -> None:
        """Hold PPO near the policy it starts from. A fresh run keeps it for ``--resume`` and reads it back from
        the file too (float16), so that a resumed run has the very same anchor."""
        if self.anchor is None:
            path = self.run_dir / ANCHOR_FILE
            save_policy(path, model.policy.file_weights(),
                        self.info(model.num_timesteps, run=self.run_dir.name, made=self.warm_start_facts))
            self.anchor = load_policy(path, self.game).weights
        model.policy.set_anchor(self.anchor)

    def anchor_weight(self) -> float:
        """The KL penalty's weight now: ``anchor.kl``, falling linearly to 0 at ``anchor.games`` games."""
        a = self.config.anchor
        return a.kl * max(0.0, 1.0 - self.games / a.games)

    # ------------------------------------------------------------------ at every rollout boundary
    def at_boundary(self, model: MaskablePPO, step: int, loop: TrainingLoop) -> None:
        c = self.config
        if self.last["snapshot"] is None or step - self.last["snapshot"] >= c.opponents.snapshot_every:
            self.pool.add(model.policy.file_weights())
            model.get_env().env_method("set_pool", self.pool.snapshots)
            self.last["snapshot"] = step
        if c.eval.every and (self.last["eval"] is None or step - self.last["eval"] >= c.eval.every):
            self.run_evaluation(model, step, c.eval.games, loop)
            self.last["eval"] = step
        if step - self.last["checkpoint"] >= c.checkpoint_every:
            self.save_checkpoint(model, step, rng_state())

    def run_evaluation(self, model: MaskablePPO, step: int, games: int, loop: TrainingLoop | None,
                       ) -> list[dict[str, Any]]:
        """The learner, as the same numpy agent every policy plays through, against each eval opponent."""
        c = self.config
        learner = PolicyAgent(MLPPolicy(model.policy.file_weights(), self.info(step)),
                              deterministic=c.eval.deterministic, seed=c.seed)
        records = [{**evaluate(learner, c.game, c.game_options, opponent, games, c.seed, step),
                    "trained_games": self.games, "minutes": round(self.minutes(), 3)} for opponent in c.eval.opponents]
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

    def save_checkpoint(self, model: MaskablePPO, step: int, rng: dict[str, Any], finished: bool = False) -> None:
        self.last["checkpoint"] = step
        model.num_timesteps = step  # after an interrupt: the step count of the boundary being saved
        trainer = {"eval_history": self.history, "last": self.last, "minutes": self.minutes(),
                   "warm_start": self.warm_start_facts, "finished": finished, "games": self.games}
        save_checkpoint(self.run_dir / "checkpoints", step, model, self.info(step, run=self.run_dir.name),
                        self.pool.snapshots, rng, trainer, self.config.keep_checkpoints)

    def export_policy(self, model: MaskablePPO, step: int) -> Path:
        """``policy.safetensors``; the policy of an earlier end of this run (before it was extended) is
        kept as ``policy-<steps>.safetensors``."""
        path = self.run_dir / "policy.safetensors"
        if path.is_file():
            earlier = load_policy(path).info.num_timesteps
            if earlier != step:
                path.replace(path.with_name(f"policy-{earlier}.safetensors"))
        save_policy(path, model.policy.file_weights(),
                    self.info(step, run=self.run_dir.name, made=self.warm_start_facts, config=self.config.to_dict()))
        return path

    def minutes(self) -> float:
        return self.minutes_before + (time.monotonic() - self.started) / 60

    # ------------------------------------------------------------------ the whole run
    def run(self, run_dir: Path, resumed: Checkpoint | None = None) -> dict[str, Any]:
        """Train in ``run_dir``: from scratch, or on from the checkpoint ``resumed`` (see ``resume_point``)."""
        c = self.config
        self.run_dir = run_dir
        venv = self.make_vec_env()
        try:
            model = self.new_model(venv)
            if resumed is not None:
                self.resume(model, venv, resumed)
            elif c.warm_start.teacher:
                self.warm_start(model)
            elif self.init_policy is not None:
                model.policy.load_file_weights(self.init_policy.weights)
                say(self.warm_start_facts, None)
            if resumed is None and model.policy.critic is not None:
                model.policy.init_critic()
            if c.anchor.kl > 0:
                self.set_anchor(model)
            start, start_games = model.num_timesteps, self.games
            if not self.pool.snapshots:  # the envs are reset (opponents drawn) before the first rollout
                self.pool.add(model.policy.file_weights())
                self.last["snapshot"] = start
            venv.env_method("set_pool", self.pool.snapshots)
            loop = TrainingLoop(self)
            learn_started = time.monotonic()
            with stop_on_signals(loop):
                # Even with nothing left to train, learn() sets up the logger the final evaluation writes to.
                model.learn(max(0, c.total_timesteps - start), callback=loop, tb_log_name="ppo",
                            reset_num_timesteps=resumed is None)
            learn_seconds = time.monotonic() - learn_started
            stopped = loop.stop_reason
            # An interrupted rollout was never learned from: save the state of its start instead (or of
            # the start of training, if the signal came before the first rollout).
            step, rng = (loop.boundary if stopped and loop.boundary else (model.num_timesteps, rng_state()))
            if stopped and loop.boundary:
                self.games = loop.boundary_games
            done, final = stopped in (None, *LIMITS), []
            if done:
                say(f"final evaluation: {c.eval.final_games} games per opponent ...", None)
                final = self.run_evaluation(model, step, c.eval.final_games, None)
                self.last["eval"] = step
                self.export_policy(model, step)
            self.save_checkpoint(model, step, rng, finished=done)
        finally:
            venv.close()
        minutes = self.minutes()
        status = {None: "Training completed.", **{limit: f"Stopped by {limit}={getattr(c, limit)}." for limit in LIMITS}
                  }.get(stopped, f"Interrupted ({stopped}); continue with --resume.")
        learned = max(learn_seconds, 1e-9)
        facts = {"num_timesteps": step, "minutes": minutes, "n_envs": c.num_envs, "games": self.games,
                 "finished": done and step >= c.total_timesteps,  # else --resume continues it
                 "status": f"{status} {self.warm_start_facts}".strip(),
                 "steps_per_second": (step - start) / learned,  # PPO and its evaluations
                 "games_per_second": (self.games - start_games) / learned,
                 "policy": run_dir / ("policy.safetensors" if done else f"checkpoints/step_{step:012d}.safetensors")}
        report = write_report(run_dir, self.game, c.to_dict(), self.history, final, facts)
        return {"report": report, "final": final, "stopped": stopped, **facts}


class TrainingLoop(BaseCallback):
    """Hooks the trainer into SB3's loop: boundaries, progress bar, clean stops."""

    def __init__(self, trainer: Trainer):
        super().__init__()
        self.trainer = trainer
        self.stop_reason: str | None = None
        self.boundary: tuple[int, dict[str, Any]] | None = None
        self.boundary_games = 0  # the learner's games at that boundary
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
        self.boundary, self.boundary_games = (step, rng_state()), self.trainer.games
        c = self.trainer.config
        if c.anchor.kl > 0:
            policy = self.model.policy
            if policy.anchor_kl:
                self.logger.record("train/anchor_kl", float(np.mean(policy.anchor_kl)))
            self.logger.record("train/anchor_weight", policy.anchor_weight)
            policy.anchor_weight, policy.anchor_kl = self.trainer.anchor_weight(), []
        if c.max_minutes is not None and (time.monotonic() - self.trainer.started) / 60 >= c.max_minutes:
            self.stop_reason = "max_minutes"
        if c.max_games is not None and self.trainer.games >= c.max_games:
            self.stop_reason = "max_games"

    def _on_step(self) -> bool:
        self.trainer.games += int(np.count_nonzero(self.locals["dones"]))
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
