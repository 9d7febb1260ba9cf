"""Lost Cities on Ray RLlib in a page: one action-masked PPO policy plays every seat (pure self-play).

    pip install -e ".[rllib]"
    python examples/rllib_quickstart.py [ITERATIONS]        # 2 iterations: about a minute on 2 cores

What it wires together, all plain RLlib (new API stack): the game as a ``MultiAgentEnv``
(``TabletopMultiAgentEnv``), our ``MaskedActorCritic`` RLModule (reads the observation dict, masks with
its int8 mask), one module shared by both seats. At the end the policy is exported to the project's
policy file and plays the heuristic bot through ``load_agent``, like any other agent.
The full pipeline (opponent mix, self-play snapshots, checkpoints, clusters) is
``python -m tabletop_rl.training.rllib`` (docs/rllib.md).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import ray
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec

import tabletop_rl
from tabletop_rl.envs.core.match import play_game
from tabletop_rl.training.interop.rllib_env import TabletopMultiAgentEnv
from tabletop_rl.training.rllib_ppo.config import read_config
from tabletop_rl.training.rllib_ppo.modules import MaskedActorCritic
from tabletop_rl.training.rllib_ppo.trainer import export_learner
from tabletop_rl.training.runtime.agents import load_agent
from tabletop_rl.training.runtime.printed_commands import command


def main(iterations: int = 2, out: Path = Path("runs/rllib_quickstart")) -> float:
    """Train, export to ``out/policy.safetensors``, return the policy's win rate in 20 games against the heuristic."""
    run = read_config(None, ["game=lost_cities", "network.pi=[64, 64]", "network.vf=[64, 64]"])
    network = {"pi": run.network.pi, "vf": run.network.vf, "activation": run.network.activation}
    config = (
        PPOConfig()
        # RLlib's env checker would step random, mostly illegal actions: the engine rightly refuses them.
        .environment(TabletopMultiAgentEnv, env_config={"game": run.game}, disable_env_checking=True)
        .env_runners(num_env_runners=1, num_envs_per_env_runner=4)
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, episode, **kwargs: "shared")
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
            "shared": RLModuleSpec(module_class=MaskedActorCritic, model_config=network)}))
        .training(lr=3e-4, gamma=1.0, lambda_=0.95, entropy_coeff=0.01, train_batch_size_per_learner=2000,
                  minibatch_size=250, num_epochs=4)
    )
    owns_ray = not ray.is_initialized()
    if owns_ray:
        ray.init(include_dashboard=False, log_to_driver=False)
    algorithm = config.build_algo()
    try:
        for _ in range(iterations):
            result = algorithm.train()
            print(f"iteration {algorithm.iteration}: {result['env_runners']['num_env_steps_sampled']} env steps "
                  f"in {result['time_this_iter_s']:.1f} s")
        out.mkdir(parents=True, exist_ok=True)
        weights = algorithm.learner_group.get_weights(["shared"])["shared"]
        steps = result["env_runners"]["num_env_steps_sampled_lifetime"]  # all the shared module's
        export_learner(weights, run, steps=steps, path=out / "policy.safetensors")
    finally:
        algorithm.stop()
        if owns_ray:
            ray.shutdown()

    env = tabletop_rl.make(run.game, wrapped=False)
    me, bot = load_agent(str(out / "policy.safetensors"), env.game), load_agent("heuristic", env.game, seed=0)
    wins = [play_game(env, [me, bot] if g % 2 == 0 else [bot, me], seed=g // 2)[0][g % 2] > 0 for g in range(20)]
    policy = out / "policy.safetensors"
    print(f"{policy}: won {np.mean(wins):.0%} of 20 games against the heuristic "
          f"(try: {command('tabletop_rl.training.evaluate', run.game, policy, 'heuristic', 'random')})")
    return float(np.mean(wins))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
