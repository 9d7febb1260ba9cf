"""Lost Cities with a single-agent library in a page: sb3-contrib's MaskablePPO on the Gymnasium id.

    pip install -e ".[train]"
    python examples/sb3_single_agent.py [TIMESTEPS]      # 20,000 steps: about a minute of CPU

``gymnasium.make("tabletop/lost_cities-v0", opponent="random")`` is one seat of Lost Cities (drawn at
random every episode) against the random bot, which plays inside ``step()``. The reward is 0 until the
end, then +1 for a win, -1 for a loss, 0 for a draw. MaskablePPO finds the legal actions through the
env's ``action_masks()``; the evaluation below reads them from ``info["action_mask"]``, as any other
library can. Every game registered by ``import tabletop_rl`` works the same way (``tabletop/five_towers-v0``,
…; options as keywords: ``gymnasium.make("tabletop/five_towers-v0", num_players=3)``).
After 20,000 steps the policy's mean reward against the random bot is about +0.1 (random moves: 0.0):
a demonstration of the wiring, not of strength. For that, the full pipeline (imitation of the heuristic
first, self-play, checkpoints, reports) is ``python -m tabletop_rl.training.train`` (docs/training.md).
"""

from __future__ import annotations

import sys

import gymnasium
import torch
from sb3_contrib import MaskablePPO

import tabletop_rl  # noqa: F401  (registers the tabletop/<game>-v0 ids with Gymnasium)


def evaluate(model: MaskablePPO | None, episodes: int, seed: int) -> float:
    """Mean final reward (wins − losses per game) of ``model`` (``None``: uniformly random legal moves)."""
    env = gymnasium.make("tabletop/lost_cities-v0", opponent="random")
    env.action_space.seed(seed)
    obs, info = env.reset(seed=seed)
    total = 0.0
    for _ in range(episodes):
        done = False
        while not done:
            mask = info["action_mask"]  # int8, 1 on the legal actions
            if model is None:
                action = env.action_space.sample(mask)
            else:
                action, _ = model.predict(obs, action_masks=mask.astype(bool), deterministic=True)
            obs, reward, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        total += reward
        obs, info = env.reset()
    return total / episodes


def main(timesteps: int = 20_000, episodes: int = 100, seed: int = 0) -> tuple[float, float]:
    """Train for ``timesteps``; return the mean final reward of random play and of the trained policy."""
    torch.set_num_threads(1)  # one env, forward passes of one observation: more threads only contend
    env = gymnasium.make("tabletop/lost_cities-v0", opponent="random")
    n_steps = min(1024, timesteps)  # steps per PPO update
    model = MaskablePPO("MlpPolicy", env, n_steps=n_steps, batch_size=min(256, n_steps), gamma=1.0, seed=seed,
                        verbose=0)
    model.learn(total_timesteps=timesteps)
    before, after = evaluate(None, episodes, seed + 1), evaluate(model, episodes, seed + 1)
    print(f"mean reward against the random bot over {episodes} games (+1 win, -1 loss): "
          f"random moves {before:+.2f}, MaskablePPO after {timesteps:,} steps {after:+.2f}")
    return before, after


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000)
