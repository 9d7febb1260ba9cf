"""``bf16``: PPO's hidden layers in bfloat16 on a CPU that multiplies it natively; the heads, the loss and the
policy file stay float32."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tabletop_rl import envs
from tabletop_rl.training import train
from tabletop_rl.training.ppo.network import native_bf16
from tabletop_rl.training.ppo.warm_start import teacher_games
from tabletop_rl.training.runtime.policy import load_policy
from tests.policy_helpers import seeded_torch_policy
from tests.test_training import tiny_config

needs_bf16 = pytest.mark.skipif(not native_bf16(), reason="this CPU has no native bfloat16 (AVX512-BF16 or AMX)")


@needs_bf16
def test_bf16_changes_the_log_probabilities_by_rounding_only():
    """Within 0.05 of float32's on real Lost Cities decisions (PPO clips ratios at 1 ± 0.1-0.2), yet not equal:
    the hidden layers did run in bfloat16; the rollouts and the update compute them alike."""
    game = envs.make("lost_cities", wrapped=False).game
    data = teacher_games("lost_cities", {}, "heuristic", games=4, seed=0)
    obs = torch.as_tensor(data["obs"][np.arange(len(data["actions"]))])
    masks, actions = torch.as_tensor(data["masks"]), torch.as_tensor(data["actions"])
    policy = seeded_torch_policy(game, seed=0, pi=[256, 256], vf=[256, 256])
    with torch.no_grad():
        values, log_p, _ = policy.evaluate_actions(obs, actions, masks)
        policy.bf16 = True
        values16, log_p16, _ = policy.evaluate_actions(obs, actions, masks)
        drawn, rollout_values, rollout_log_p = policy(obs, action_masks=masks)
        update_values, update_log_p, _ = policy.evaluate_actions(obs, drawn, masks)
    assert log_p16.dtype == values16.dtype == torch.float32
    assert not torch.equal(log_p16, log_p)
    torch.testing.assert_close(log_p16, log_p, rtol=0, atol=0.05)
    torch.testing.assert_close(values16, values, rtol=0, atol=0.05)
    torch.testing.assert_close(rollout_log_p, update_log_p, rtol=0, atol=0)
    torch.testing.assert_close(rollout_values, update_values, rtol=0, atol=0)


@needs_bf16
def test_a_bf16_run_writes_a_float32_policy_file(tmp_path):
    args = tiny_config(tmp_path, "lost_cities")
    assert train.main([*args, "--set", "bf16=true"]) == 0
    policy = load_policy(next(tmp_path.rglob("policy.safetensors")))
    assert {w.dtype for w in policy.weights.values()} == {np.dtype(np.float32)}
