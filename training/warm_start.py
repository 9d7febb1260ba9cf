"""Optional warm start: imitate a teacher agent (usually the game's heuristic) before PPO begins.

PPO from scratch spends most of its budget rediscovering what a hand-written bot already knows. So a
fresh run may first play ``games`` teacher-vs-teacher games, record every decision of every seat
(observation, mask, action, and that seat's final reward — the same reward the learner will get), and
fit the policy to the actions (cross-entropy over the legal actions) and the value head to the rewards.
PPO then starts from about the teacher's level, with a value function that already means something.
The teacher sees what any agent sees — ``env.observe(its seat)`` — so nothing hidden is imitated.
Observations are stored sparse (:class:`~training.sparse_rows.SparseRows`): dense, the decisions of a few
thousand games of a game with a large observation would not fit in memory.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

import envs
from envs.core.match import score_margins

from .agents import load_agent
from .sparse_rows import SparseRows


def teacher_games(game: str, game_options: dict, teacher: str, games: int, seed: int,
                  margin_reward: float = 0.0) -> dict[str, Any]:
    """Every decision of ``games`` teacher-vs-teacher games: observations (``SparseRows``), masks, actions,
    final rewards (arrays)."""
    env = envs.make(game, wrapped=False, **game_options)
    rng = np.random.default_rng([seed, 1])
    agents = [load_agent(teacher, env.game, seed=int(rng.integers(2**63))) for _ in env.possible_agents]
    seat = env.agent_name_mapping
    obs = SparseRows(env.observation_space(env.possible_agents[0])["observation"].shape[0])
    masks, actions, rewards = [], [], []
    for _ in range(games):
        env.reset(seed=int(rng.integers(2**63)))
        seats, game_obs = [], []
        while not (env.terminations[env.agent_selection] or env.truncations[env.agent_selection]):
            view = env.observe(env.agent_selection)
            action = agents[seat[env.agent_selection]].act(view["observation"], view["action_mask"])
            game_obs.append(view["observation"])
            masks.append(view["action_mask"].astype(bool))
            actions.append(action)
            seats.append(seat[env.agent_selection])
            env.step(action)
        first = env.possible_agents[0]
        final = np.array([env.rewards[a] for a in env.possible_agents])
        if margin_reward and not env.truncations[first]:  # the shaping of SingleSeatEnv, seat by seat
            final += margin_reward * score_margins(env.infos[first]["scores"])
        rewards += [final[s] for s in seats]
        obs.extend(np.array(game_obs, np.float32).reshape(len(game_obs), obs.width))
    return {"obs": obs, "masks": np.array(masks), "actions": np.array(actions),
            "rewards": np.array(rewards, np.float32)}


def imitate(policy: MaskableActorCriticPolicy, data: dict[str, Any], epochs: int, batch_size: int,
            learning_rate: float, vf_coef: float, seed: int) -> dict[str, Any]:
    """Fit the actor to the teacher's actions and the critic to the final rewards.

    Returns the number of decisions and the agreement: how often the policy's arg-max is the teacher's action.
    """
    generator = torch.Generator().manual_seed(seed)
    tensors = {k: torch.as_tensor(v) for k, v in data.items() if k != "obs"}
    n = len(tensors["actions"])
    optimizer = torch.optim.Adam(policy.parameters(), lr=learning_rate)  # PPO's own optimizer stays fresh
    policy.set_training_mode(True)
    for _ in range(epochs):
        for batch in torch.randperm(n, generator=generator).split(batch_size):
            obs = torch.as_tensor(data["obs"][batch.numpy()])
            dist = policy.get_distribution(obs, action_masks=tensors["masks"][batch].numpy())
            policy_loss = -dist.log_prob(tensors["actions"][batch]).mean()
            values = policy.predict_values(obs).flatten()
            value_loss = torch.nn.functional.mse_loss(values, tensors["rewards"][batch])
            optimizer.zero_grad()
            (policy_loss + vf_coef * value_loss).backward()
            optimizer.step()
    policy.set_training_mode(False)
    with torch.no_grad():
        sample = torch.randperm(n, generator=generator)[:20_000]
        obs = torch.as_tensor(data["obs"][sample.numpy()])
        dist = policy.get_distribution(obs, action_masks=tensors["masks"][sample].numpy())
        agree = (dist.distribution.logits.argmax(1) == tensors["actions"][sample]).float().mean()
    return {"decisions": n, "agreement": float(agree)}
