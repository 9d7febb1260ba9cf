"""Training throughput: RLlib (tabletop_rl.training.rllib) with 1 and 2 env runners against the SB3 pipeline
(tabletop_rl.training.train).

    python benchmarks/rllib_throughput.py [--game lost_cities] [--iterations 5] [--repeats 2]

Needs the rllib extra (``make setup-rllib``; run it with ``.venv-rllib/bin/python``). Both pipelines use
their shipped config for the game (configs/rllib_<game>.yaml, configs/<game>.yaml: same network, same
opponent mix) and are timed while training, sampling and learning together — what a user waits for.
Reported per wall-clock second: env steps (every seat's decisions) and learner decisions (the samples
that train the policy; SB3's ``total_timesteps`` counts these). RLlib: the first iteration (start-up)
is not timed. SB3: ``total_timesteps`` = the same learner decisions as the RLlib iterations, in-process
``DummyVecEnv`` as configured, timed in ``model.learn`` (no evaluation, no checkpoint).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import ray
from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME

from tabletop_rl import envs
from tabletop_rl.training.ppo.config import load_config
from tabletop_rl.training.ppo.network import limit_threads
from tabletop_rl.training.ppo.trainer import Trainer
from tabletop_rl.training.rllib_ppo.config import read_config
from tabletop_rl.training.rllib_ppo.trainer import learner_steps, ppo_config

CONFIGS = Path(__file__).resolve().parent.parent / "configs"


def rllib_rates(game: str, runners: int, iterations: int) -> tuple[float, float]:
    """(env steps/s, learner decisions/s) over ``iterations`` timed iterations after one warm-up."""
    config = read_config(CONFIGS / f"rllib_{game}.yaml", [])
    limit_threads(config.torch_threads)  # as tabletop_rl.training.rllib does (SB3's Trainer sets its own)
    algorithm = ppo_config(config, runners).build_algo()
    try:
        result = algorithm.train()
        env0, learner0, start = lifetime(result), learner_steps(result), time.perf_counter()
        for _ in range(iterations):
            result = algorithm.train()
        seconds = time.perf_counter() - start
        return (lifetime(result) - env0) / seconds, (learner_steps(result) - learner0) / seconds
    finally:
        algorithm.stop()


def lifetime(result: dict) -> int:
    return int(result[ENV_RUNNER_RESULTS][NUM_ENV_STEPS_SAMPLED_LIFETIME])


def sb3_rates(game: str, learner_steps: int) -> tuple[float, float]:
    """(env steps/s, learner decisions/s) of ``tabletop_rl.training.train``'s model and envs for the game's config."""
    with tempfile.TemporaryDirectory() as runs:
        config = load_config(CONFIGS / f"{game}.yaml", [f"total_timesteps={learner_steps}", f"runs_dir={runs}"])
        trainer = Trainer(config)
        venv = trainer.make_vec_env()
        env_steps = [0]
        for env in venv.unwrapped.envs:  # DummyVecEnv, as the shipped configs choose: count every seat's step
            env.aec.step = counting(env.aec.step, env_steps)
        try:
            model = trainer.new_model(venv)
            trainer.pool.add(model.policy)
            venv.env_method("set_pool", trainer.pool.snapshots)
            start = time.perf_counter()
            model.learn(learner_steps)
            seconds = time.perf_counter() - start
        finally:
            venv.close()
        return env_steps[0] / seconds, model.num_timesteps / seconds


def counting(step, counter: list[int]):
    def counted(action):
        counter[0] += 1
        return step(action)

    return counted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="lost_cities")
    parser.add_argument("--iterations", type=int, default=5, help="timed RLlib iterations per measurement")
    parser.add_argument("--repeats", type=int, default=2, help="measurements per configuration")
    args = parser.parse_args()
    ray.init(address="local", include_dashboard=False, log_to_driver=False)
    rows: dict[str, list[tuple[float, float]]] = {}
    try:
        for _ in range(args.repeats):  # interleaved, so that load from other users spreads over all rows
            for runners in (1, 2):
                rows.setdefault(f"RLlib, {runners} env runner{'s' * (runners > 1)}", []).append(
                    rllib_rates(args.game, runners, args.iterations))
            batch = read_config(CONFIGS / f"rllib_{args.game}.yaml", []).ppo.train_batch_size
            learner_steps = args.iterations * batch // num_players(args.game)
            rows.setdefault("SB3 (tabletop_rl.training.train)", []).append(sb3_rates(args.game, learner_steps))
    finally:
        ray.shutdown()
    print(f"\n{args.game}: median of {args.repeats} (min–max)\n")
    print("| Pipeline | env steps/s | learner decisions/s |\n|---|---|---|")
    for name, rates in rows.items():
        cells = [f"{statistics.median(r):,.0f} ({min(r):,.0f}–{max(r):,.0f})" for r in zip(*rates, strict=True)]
        print(f"| {name} | {cells[0]} | {cells[1]} |")


def num_players(game: str) -> int:
    return envs.make(game, wrapped=False).game.num_players


if __name__ == "__main__":
    main()
