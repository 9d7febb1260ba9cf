"""PPO's loss over the legal actions, and the KL anchor: a penalty towards the policy PPO started from."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from test_training import latest_checkpoint, tiny_config

from tabletop_rl.training import train
from tabletop_rl.training.ppo.config import load_config
from tabletop_rl.training.ppo.network import weights_of
from tabletop_rl.training.ppo.sb3_policy import TabletopPolicy
from tabletop_rl.training.runtime.policy import load_policy

ACTIONS = 7


def policy(seed: int) -> TabletopPolicy:
    torch.manual_seed(seed)
    return TabletopPolicy(spaces.Box(0, 1, (40,), np.float32), spaces.Discrete(ACTIONS), lambda _: 1e-3,
                          network={"shared": [16], "pi": [12], "vf": [8], "activation": "tanh"})


def batch(seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    rng = np.random.default_rng(seed)
    obs = torch.as_tensor((rng.random((32, 40)) < 0.2).astype(np.float32))
    masks = rng.random((32, ACTIONS)) < 0.5
    masks[np.arange(32), rng.integers(ACTIONS, size=32)] = True  # one legal action at least
    masks[0] = [True] + [False] * (ACTIONS - 1)  # a forced decision
    actions = torch.as_tensor([rng.choice(np.flatnonzero(m)) for m in masks])
    return obs, actions, torch.as_tensor(masks, dtype=torch.float32)  # as SB3's rollout buffer hands them


def test_the_losses_inputs_are_sb3s_over_the_legal_actions():
    p = policy(0)
    obs, actions, masks = batch()
    ours = p.evaluate_actions(obs, actions, masks)
    theirs = MaskableActorCriticPolicy.evaluate_actions(p, obs, actions, masks)
    for a, b in zip(ours, theirs, strict=True):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)
    assert ours[1][0] == 0 and ours[2][0] == 0  # a forced decision: probability 1, no entropy


def test_the_rollouts_draw_legal_actions_from_sb3s_distribution():
    p = policy(0)
    obs, _, masks = batch()
    masks = masks.numpy().astype(bool)  # as SB3's rollout hands them
    with torch.no_grad():
        ours = p(obs, deterministic=True, action_masks=masks)
        theirs = MaskableActorCriticPolicy.forward(p, obs, deterministic=True, action_masks=masks)
        for a, b in zip(ours, theirs, strict=True):  # actions, values, log-probabilities
            torch.testing.assert_close(a.float(), b.float(), atol=1e-5, rtol=1e-5)
        p.action_net.weight.mul_(40)  # clear preferences: a near-uniform policy would hide a wrong draw
        p.action_net.bias.copy_(torch.arange(ACTIONS) / 2)
        draws, row = 10000, 3
        torch.manual_seed(1)
        actions, _, log_p = p(obs[row:row + 1].repeat(draws, 1), action_masks=np.repeat(masks[row:row + 1], draws, 0))
        probabilities = torch.zeros(ACTIONS).scatter_(0, actions, log_p.exp()).numpy()  # each drawn action's
    assert masks[row].sum() > 2  # a decision worth drawing from
    counts = np.bincount(actions.numpy(), minlength=ACTIONS)
    assert not counts[~masks[row]].any()  # never an illegal action
    assert abs(probabilities.sum() - 1) < 1e-3  # every legal action with any weight was drawn
    np.testing.assert_allclose(counts / draws, probabilities, atol=4 * np.sqrt(0.25 / draws))


def test_the_anchor_adds_its_weight_times_the_kl_to_the_gradient_and_nothing_to_the_loss():
    p, anchor = policy(0), policy(1)
    obs, actions, masks = batch()
    p.ent_coef = 0.01
    p.set_anchor(weights_of(anchor))
    assert set(p.state_dict()) == set(anchor.state_dict())  # the anchor is no part of the policy file
    assert len(list(p.parameters())) == len(list(anchor.parameters()))  # nor of what Adam trains

    def entropy_loss_grad(weight: float) -> tuple[float, list[torch.Tensor]]:
        p.zero_grad()
        p.anchor_weight = weight
        loss = -p.ent_coef * p.evaluate_actions(obs, actions, masks)[2].mean()  # SB3's entropy term
        loss.backward()
        return loss.item(), [t.grad.clone() for t in p.parameters() if t.grad is not None]

    plain_loss, plain = entropy_loss_grad(0.0)
    anchored_loss, anchored = entropy_loss_grad(0.3)
    assert anchored_loss == pytest.approx(plain_loss)  # the logged entropy is still the entropy

    p.zero_grad()
    log_p = torch.log_softmax(p.action_net(p.mlp_extractor.forward_actor(obs)).masked_fill(masks == 0, -1e9), -1)
    with torch.no_grad():
        log_q = torch.log_softmax(anchor.action_net(anchor.mlp_extractor.forward_actor(obs)).masked_fill(
            masks == 0, -1e9), -1)
    kl = (log_p.exp() * (log_p - log_q)).sum(-1).mean()
    (0.3 * kl).backward()
    expected = [t.grad for t in p.parameters() if t.grad is not None]
    assert len(p.anchor_kl) == 1 and p.anchor_kl[0] == pytest.approx(kl.item(), rel=1e-4) and kl.item() > 0
    for a, b, e in zip(anchored, plain, expected, strict=True):
        torch.testing.assert_close(a - b, e, atol=1e-6, rtol=1e-4)


def test_the_anchor_at_its_own_weights_pulls_nowhere():
    p = policy(0)
    obs, actions, masks = batch()
    p.ent_coef, p.anchor_weight = 0.01, 1.0
    p.set_anchor(weights_of(p))
    p.evaluate_actions(obs, actions, masks)
    assert abs(p.anchor_kl[0]) < 1e-6


@pytest.mark.parametrize("overrides, message", [
    (["anchor.kl=0.1"], "set warm_start.teacher or init_from"),
    (["anchor.kl=0.1", "warm_start.teacher=heuristic", "ppo.ent_coef=0"], "anchor.kl needs ppo.ent_coef > 0"),
    (["anchor.kl=-1"], "anchor.kl must be >= 0"),
    (["anchor.games=0"], "anchor.games must be > 0")])
def test_a_bad_anchor_is_refused(overrides, message):
    with pytest.raises(ValueError, match=message):
        load_config(None, ["game=lost_cities", *overrides])


def test_a_run_keeps_its_anchor_fades_it_out_and_resumes_with_it(tmp_path, capsys):
    args = tiny_config(tmp_path, "lost_cities", vec_env="batched", total_timesteps=256,
                       warm_start={"teacher": "heuristic", "games": 2, "epochs": 1},
                       anchor={"kl": 0.5, "games": 4})
    assert train.main(args) == 0
    run = tmp_path / "runs" / "lost_cities"
    anchor = load_policy(run / "anchor.safetensors")
    assert anchor.info.num_timesteps == 0
    state = json.loads(latest_checkpoint(run).read_text())
    assert state["step"] == 256
    trainer = train.Trainer(load_config(run / "config.yaml"))
    trainer.games = 1
    assert trainer.anchor_weight() == pytest.approx(0.375)
    trainer.games = 5
    assert trainer.anchor_weight() == 0
    assert train.main(["--resume", str(run), "--set", "total_timesteps=384"]) == 0
    (run / "anchor.safetensors").unlink()
    assert train.main(["--resume", str(run), "--set", "total_timesteps=512"]) == 2
    assert "anchor.safetensors, which is missing" in capsys.readouterr().err
