"""Decisions per second of every registered game, against PettingZoo's connect_four in the same process.

    python benchmarks/throughput.py [--seconds 3] [--games lost_cities five_towers]

Three loops per game, all choosing uniformly random legal actions:
  engine   State.legal_actions() + apply_action() (no PettingZoo at all)
  raw_env  the bare AEC env: agent_iter / last() / step() (observation and mask every step)
  env      the wrapped env (PettingZoo's standard wrappers), which is what most users run
connect_four's env() is measured with exactly the same loop as our env() loop.
Rates are decisions per second of this process's CPU time, and every ratio is the median over --repeats
interleaved pairs (ours, then connect_four's), so other work on the machine disturbs them little.
Targets (issue #2/#4): env() >= 1.5x connect_four env(); Lost Cities engine >= 100k decisions/s.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import numpy as np
from pettingzoo.classic import connect_four_v3

from tabletop_rl import envs


def engine_loop(game, seconds: float) -> float:
    rng = random.Random(0)
    decisions, seed, start = 0, 0, time.process_time()
    while time.process_time() - start < seconds:
        state = game.new_initial_state(seed)
        seed += 1
        while not state.is_terminal():
            legal = state.legal_actions()
            state.apply_action(legal[rng.randrange(len(legal))])
            decisions += 1
    return decisions / (time.process_time() - start)


def aec_loop(env, seconds: float) -> float:
    rng = random.Random(0)
    decisions, seed, start = 0, 0, time.process_time()
    while time.process_time() - start < seconds:
        env.reset(seed=seed)
        seed += 1
        for _agent in env.agent_iter():
            obs, _reward, terminated, truncated, _info = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.randrange(len(legal))]))
            decisions += 1
    return decisions / (time.process_time() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=2.0, help="CPU time per measurement")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved measurements per loop")
    parser.add_argument("--games", nargs="*", default=envs.list_games())
    args = parser.parse_args()

    connect_four = connect_four_v3.env()
    print(f"{'game':<14}{'loop':<9}{'decisions/s':>13}{'× connect_four env()':>22}")
    reference_rates = []
    for name in args.games:
        loops = (("engine", engine_loop, envs.game_class(name)()),
                 ("raw_env", aec_loop, envs.make(name, wrapped=False)),
                 ("env", aec_loop, envs.make(name)))
        for loop, measure, subject in loops:
            rates, ratios = [], []
            for _ in range(args.repeats):
                rate, reference = measure(subject, args.seconds), aec_loop(connect_four, args.seconds)
                rates.append(rate)
                ratios.append(rate / reference)
                reference_rates.append(reference)
            print(f"{name:<14}{loop:<9}{statistics.median(rates):>13,.0f}{statistics.median(ratios):>22.2f}")
    print(f"{'connect_four':<14}{'env':<9}{statistics.median(reference_rates):>13,.0f}{1.0:>22.2f}")


if __name__ == "__main__":
    main()
