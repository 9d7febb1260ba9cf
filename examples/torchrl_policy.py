"""Lost Cities on TorchRL in a page: one masked policy network plays both seats, with a REINFORCE step per game.

    pip install -e ".[torchrl]"
    python examples/torchrl_policy.py [GAMES]       # 20 games: a few seconds

The game is ``torchrl_env`` (TorchRL's ``PettingZooWrapper`` around ``tabletop_rl.make``, turn-based), both
seats in one group ``agents`` so that one network serves both: TorchRL stacks the seats, the policy samples an
action for each from ``MaskedCategorical`` over the seat's ``action_mask``, and the env plays the one of the
seat on move (``("agents", "mask")``). The update shows what turn-based training must get right: only the steps
where a seat was on move are its decisions, and the final reward, which reaches every seat on the last move
whoever made it, is credited to each seat's own decisions. A demonstration of the wiring, not of strength
(docs/interop.md#torchrl; for training that plays well, python -m tabletop_rl.training.train).
"""

from __future__ import annotations

import sys

import torch
from tensordict.nn import TensorDictModule
from torchrl.modules import MLP, MaskedCategorical, ProbabilisticActor

from tabletop_rl.training.interop.torchrl import torchrl_env


def main(games: int = 20, seed: int = 0) -> list[list[float]]:
    """Play and learn from ``games`` games; return each game's returns (seat 0, seat 1)."""
    torch.manual_seed(seed)
    torch.set_num_threads(1)  # forward passes of two observations: more threads only contend
    env = torchrl_env("lost_cities", seed=seed, shared_policy=True)  # both seats in one group "agents"
    action_spec = env.full_action_spec["agents", "action"]
    observation_size = env.observation_spec["agents", "observation", "observation"].shape[-1]
    network = TensorDictModule(MLP(in_features=observation_size, out_features=action_spec.space.n, num_cells=[64]),
                               in_keys=[("agents", "observation", "observation")], out_keys=[("agents", "logits")])
    policy = ProbabilisticActor(network, spec=action_spec, distribution_class=MaskedCategorical,
                                in_keys={"logits": ("agents", "logits"), "mask": ("agents", "action_mask")},
                                out_keys=[("agents", "action")], return_log_prob=True)
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
    all_returns = []
    for game in range(games):
        rollout = env.rollout(max_steps=10_000, policy=policy, break_when_any_done=True)  # one whole game
        on_move = rollout["agents", "mask"]  # (steps, seats): whose decision each step was
        returns = rollout["next", "agents", "reward"].sum(dim=0).squeeze(-1)  # (seats,): terminal rewards
        log_probs = rollout["agents", "action_log_prob"]
        loss = -(log_probs * on_move * returns).sum() / on_move.sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        all_returns.append(returns.tolist())
        print(f"game {game + 1}: {len(rollout)} decisions, returns {returns.tolist()}")
    return all_returns


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
