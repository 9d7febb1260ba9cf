"""A critic that reads the global state in training only (``critic: global_state``): the batched env keeps every
game's state beside its observation, SB3 sees [observation | state], the actor and the policy file read the
observation alone, PPO's values come from the critic, and a run checkpoints and resumes it."""

from __future__ import annotations

import json

import gymnasium
import numpy as np
import pytest
import torch
from gymnasium import spaces
from test_training import latest_checkpoint, tiny_config

from tabletop_rl.training import train
from tabletop_rl.training.ppo.checkpoint import read_checkpoint
from tabletop_rl.training.ppo.config import load_config
from tabletop_rl.training.ppo.sb3_policy import TabletopPolicy
from tabletop_rl.training.ppo.vec_env import SB3SeatVecEnv
from tabletop_rl.training.runtime.policy import load_policy
from tabletop_rl.training.runtime.vector_env import batched_env

OBS, STATE, ACTIONS = 30, 20, 6


def first_legal(masks: np.ndarray) -> np.ndarray:
    return masks.argmax(1)


@pytest.mark.parametrize("workers", [0, 2])
def test_the_batched_env_keeps_each_games_global_state_and_plays_the_same_games(workers):
    kwargs = {"opponents": {"heuristic": 1.0}, "skip_forced": True}
    plain = batched_env("lost_cities", 3, **kwargs)
    with_state = batched_env("lost_cities", 3, workers, global_state=True, **kwargs)
    reference = batched_env("lost_cities", 3, global_state=True, **kwargs)  # in this process: its tables to read
    observations = [env.reset(seed=5)[0] for env in (plain, with_state, reference)]
    ended = 0
    try:
        for _ in range(120):
            np.testing.assert_array_equal(observations[0], observations[1])  # the observations are unchanged
            truth = np.stack([table.state.global_state() for table in reference.tables])
            np.testing.assert_array_equal(with_state.states(), truth)
            actions = first_legal(plain.action_masks())
            observations = [env.step(actions)[0] for env in (plain, with_state, reference)]
            for (_, _, info), (_, _, expected) in zip(with_state.ended, reference.ended, strict=True):
                np.testing.assert_array_equal(info["state"], expected["state"])
                ended += 1
            assert "state" not in {key for _, _, info in plain.ended for key in info}
    finally:
        for env in (plain, with_state, reference):
            env.close()
    assert ended >= 3  # games ended and were dealt anew on the way


def test_make_vec_takes_the_option_and_states_are_refused_in_one_line_without_it():
    env = gymnasium.make_vec("tabletop/lost_cities-v0", num_envs=2, global_state=True)
    env.reset(seed=0)
    assert env.states().shape == (2, env.game.state_layout.size)
    env = batched_env("lost_cities", 2)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="global_state=True"):
        env.states()
    with pytest.raises(ValueError, match="global_state='yes' is not allowed"):
        batched_env("lost_cities", 2, global_state="yes")


def test_sb3_sees_the_observation_then_the_state_terminal_observations_too():
    venv = SB3SeatVecEnv(batched_env("lost_cities", 2, opponents={"random": 1.0}, global_state=True))
    size = venv.env.game.observation_size
    venv.seed(1)
    obs = venv.reset()
    assert obs.shape == (2, size + venv.env.game.state_layout.size) == (2, venv.observation_space.shape[0])
    for _ in range(400):
        np.testing.assert_array_equal(obs[:, size:], venv.env.states())
        obs, _, dones, infos = venv.step(first_legal(venv.env.action_masks()))
        for i in np.flatnonzero(dones):
            terminal = infos[i]["terminal_observation"]
            np.testing.assert_array_equal(terminal[size:], infos[i]["state"])
            return
    pytest.fail("no game ended")


def policy(seed: int = 0, critic: bool = True) -> TabletopPolicy:
    torch.manual_seed(seed)
    size = OBS + STATE if critic else OBS
    return TabletopPolicy(spaces.Box(-np.inf, np.inf, (size,), np.float32), spaces.Discrete(ACTIONS),
                          lambda _: 1e-3, network={"shared": [16], "pi": [12], "vf": [8], "activation": "tanh"},
                          critic={"hidden": [16, 8], "state_size": STATE} if critic else None)


def batch(seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    rng = np.random.default_rng(seed)
    obs = torch.as_tensor((rng.random((32, OBS + STATE)) < 0.3).astype(np.float32))
    masks = np.ones((32, ACTIONS), np.float32)
    return obs, torch.as_tensor(rng.integers(ACTIONS, size=32)), torch.as_tensor(masks)


def test_the_actor_never_reads_the_state_and_the_critic_starts_as_the_value_head():
    p = policy()
    obs, actions, masks = batch()
    p.init_critic()
    other = obs.clone()
    other[:, OBS:] = 1 - other[:, OBS:]  # another hidden position behind the same observations
    with torch.no_grad():
        values, log_p, _ = p.evaluate_actions(obs, actions, masks)
        _, other_log_p, _ = p.evaluate_actions(other, actions, masks)
        torch.testing.assert_close(log_p, other_log_p, rtol=0, atol=0)
        head = p.value_net(p.mlp_extractor.forward_critic(obs[:, :OBS]))
        torch.testing.assert_close(values, head, rtol=1e-5, atol=1e-6)  # the copy, the state's weights at 0
        torch.testing.assert_close(p.predict_values(obs), values)
        p.critic[0].weight[:, OBS:].add_(0.5)  # once it has learnt something of the state ...
        assert not torch.allclose(p.predict_values(other), p.predict_values(obs))  # ... its values read it
    plain = policy(critic=False)
    assert set(p.file_weights()) == set(plain.state_dict())  # a policy file holds no critic
    assert set(p.critic_weights()) == {name for name in p.state_dict() if name.startswith("critic.")}


@pytest.mark.parametrize("critic", [True, False])
def test_the_rollouts_draw_with_the_updates_log_probabilities_and_ppos_values(critic):
    """The rollouts' forward pass (which, with a critic, skips the value head) gives the log-probabilities and
    values that the update computes for the same actions."""
    p = policy(critic=critic)
    obs, _, masks = batch()
    obs = obs if critic else obs[:, :OBS]
    masks[:, ::3] = 0  # some illegal actions: never drawn
    with torch.no_grad():
        actions, values, log_p = p(obs, action_masks=masks)
        assert masks[torch.arange(len(actions)), actions].all()
        update_values, update_log_p, _ = p.evaluate_actions(obs, actions, masks)
    torch.testing.assert_close(log_p, update_log_p, rtol=0, atol=0)
    torch.testing.assert_close(values, update_values, rtol=0, atol=0)


def test_the_value_head_learns_towards_the_critic_through_the_entropy_term():
    p = policy()
    obs, actions, masks = batch()
    p.init_critic()
    with torch.no_grad():
        p.critic[-1].bias.add_(1.0)  # the critic says more than the head
    p.ent_coef, p.distil_weight = 0.01, 0.5

    def entropy_term(weight: float) -> tuple[float, dict[str, torch.Tensor]]:
        p.zero_grad()
        p.distil_weight = weight
        loss = -p.ent_coef * p.evaluate_actions(obs, actions, masks)[2].mean()  # SB3's entropy term
        loss.backward()
        return loss.item(), {n: t.grad.clone() for n, t in p.named_parameters() if t.grad is not None}

    plain_loss, plain = entropy_term(0.0)
    pulled_loss, pulled = entropy_term(0.5)
    assert pulled_loss == pytest.approx(plain_loss)  # the logged entropy is still the entropy
    assert "critic.0.weight" not in pulled  # the critic learns from the returns only
    assert "value_net.bias" not in plain  # without the pull the entropy term does not reach the value head
    step = -pulled["value_net.bias"]  # gradient descent's direction for the head
    assert step.item() > 0  # up, towards the critic
    gap = p.critic(obs).detach() - p.value_net(p.mlp_extractor.forward_critic(obs[:, :OBS])).detach()
    assert step.item() == pytest.approx(2 * 0.5 * gap.mean().item(), rel=1e-4)  # d/dh of 0.5 × mean gap²


@pytest.mark.parametrize("overrides, message", [
    (["critic=global_state", "vec_env=dummy"], "critic: global_state reads the states of vec_env: batched"),
    (["critic=global_state", "vec_env=batched", "ppo.ent_coef=0"], "critic: global_state needs ppo.ent_coef > 0"),
    (["critic=state"], "critic must be one of")])
def test_a_bad_critic_is_refused(overrides, message):
    with pytest.raises(ValueError, match=message):
        load_config(None, ["game=lost_cities", *overrides])


def test_a_run_trains_checkpoints_and_resumes_its_critic_and_exports_the_actor_alone(tmp_path):
    args = tiny_config(tmp_path, "lost_cities", vec_env="batched", total_timesteps=256, critic="global_state",
                       warm_start={"teacher": "heuristic", "games": 2, "epochs": 1})
    assert train.main(args) == 0
    run = tmp_path / "runs" / "lost_cities"
    checkpoint = read_checkpoint(latest_checkpoint(run))
    assert sorted(checkpoint.critic) == ["critic.0.bias", "critic.0.weight", "critic.2.bias", "critic.2.weight"]
    game_sizes = load_policy(run / "policy.safetensors")
    first = checkpoint.critic["critic.0.weight"]
    assert first.shape[1] == game_sizes.info.observation_size + 543  # Lost Cities' global state
    assert np.abs(first[:, game_sizes.info.observation_size:]).sum() > 0  # PPO taught it something of the state
    assert set(load_policy(run / "policy.safetensors").weights) == set(checkpoint.policy.weights)
    assert train.main(["--resume", str(run)]) == 0  # nothing left to train: the critic read back, saved again
    again = read_checkpoint(latest_checkpoint(run))
    for name, weights in checkpoint.critic.items():
        np.testing.assert_array_equal(again.critic[name], weights)  # not started afresh as the value head
    assert train.main(["--resume", str(run), "--set", "total_timesteps=384"]) == 0
    assert json.loads(latest_checkpoint(run).read_text())["step"] == 384
