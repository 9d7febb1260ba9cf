"""Learner steps per second of a Gymnasium id, alone and under ``gymnasium.make_vec`` (sync and async).

    python benchmarks/vector_throughput.py [--game lost_cities] [--opponent heuristic] [--num-envs 4] [--seconds 2]

Every loop steps uniformly random legal actions (read from ``info["action_mask"]``, stacked in the vector envs);
one step is one decision of the learner plus the opponents' moves inside ``step()``. Rates are steps per second
of wall-clock time, because the async vector env works in other processes (one per sub-env): it gains on a
machine with free cores, the sync one runs its sub-envs one after another in this process.
"""

from __future__ import annotations

import argparse
import time

import gymnasium
import numpy as np

from tabletop_rl import list_games


def random_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of ``masks`` (int8, 1 on the legal actions)."""
    return (rng.random(masks.shape) * masks).argmax(axis=-1)


def single_rate(env_id: str, opponent: str, seconds: float) -> float:
    env = gymnasium.make(env_id, opponent=opponent)
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=0)
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        _, _, terminated, truncated, info = env.step(random_legal(info["action_mask"], rng))
        steps += 1
        if terminated or truncated:
            _, info = env.reset()
    return steps / (time.perf_counter() - start)


def vector_rate(env_id: str, opponent: str, num_envs: int, mode: str, seconds: float) -> float:
    """Same-step autoreset, so every mask returned belongs to a running episode."""
    env = gymnasium.make_vec(env_id, num_envs=num_envs, vectorization_mode=mode, opponent=opponent,
                             vector_kwargs={"autoreset_mode": gymnasium.vector.AutoresetMode.SAME_STEP})
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=0)
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        _, _, _, _, info = env.step(random_legal(info["action_mask"], rng))
        steps += num_envs
    rate = steps / (time.perf_counter() - start)
    env.close()
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", choices=list_games(), default="lost_cities")
    parser.add_argument("--opponent", default="heuristic", help="the id's opponent (random, heuristic, ...)")
    parser.add_argument("--num-envs", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=2.0, help="wall-clock time per measurement")
    args = parser.parse_args()

    env_id = f"tabletop/{args.game}-v0"
    single = single_rate(env_id, args.opponent, args.seconds)
    print(f"{env_id} against {args.opponent}: learner steps per second")
    print(f"{'gymnasium.make':<28}{single:>10,.0f}")
    for mode in ("sync", "async"):
        rate = vector_rate(env_id, args.opponent, args.num_envs, mode, args.seconds)
        print(f"{f'make_vec {mode}, {args.num_envs} envs':<28}{rate:>10,.0f}{rate / single:>7.2f}x")


if __name__ == "__main__":
    main()
