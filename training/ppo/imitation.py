"""The one imitation fitter: a torch actor-critic fitted to recorded decisions, by cross-entropy over the legal
actions (and, if asked, its critic to their outcomes). The warm start (:mod:`.warm_start`) and expert
iteration (:mod:`.expert_iteration`) fit with it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from .network import masked_logits, values


def fit(net: torch.nn.Module, data: dict[str, Any], epochs: int, batch_size: int, learning_rate: float,
        generator: torch.Generator, vf_coef: float | None = None, decay: bool = False,
        after_epoch: Callable[[int], None] | None = None,
        relabellings: tuple[np.ndarray, np.ndarray] | None = None) -> None:
    """Train ``net`` (a module with SB3's names, :mod:`.network`) in place on ``data``: ``obs`` (rows that a numpy
    index array selects: an array or ``SparseRows``), ``masks``, ``actions`` and, with ``vf_coef``, ``rewards``.

    ``epochs`` passes in batches shuffled by ``generator``, with a fresh Adam at ``learning_rate`` (``decay``:
    decaying linearly to 0 over the fit). The loss is the cross-entropy of the actions plus, with ``vf_coef``,
    that weight times the critic's squared error on the rewards (rows whose reward is NaN, an outcome not
    recorded, are left out of it); without, the critic is left as it is.
    ``after_epoch(epoch)`` is called after each pass. With ``relabellings`` (``Game.relabellings()``), every
    decision of a batch is seen under one of them drawn at random: its observation, mask and action relabelled
    alike (the outcome is the same)."""
    tensors = {k: torch.as_tensor(v) for k, v in data.items() if k in ("masks", "actions", "rewards")}
    n = len(tensors["actions"])
    # parameters without a gradient stay as they are; the fused kernel: the same steps, several times faster
    optimizer = torch.optim.Adam(net.parameters(), lr=learning_rate, fused=True)
    steps = max(1, epochs * -(-n // batch_size))
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda i: 1 - i / steps) if decay else None
    if relabellings is not None:
        obs_take, action_take = (torch.as_tensor(t) for t in relabellings)
        action_to = action_take.argsort(1)  # action a is action_to[r, a] in relabelling r
    net.train(True)
    for epoch in range(epochs):
        for batch in torch.randperm(n, generator=generator).split(batch_size):
            obs = torch.as_tensor(data["obs"][batch.numpy()])
            masks, actions = tensors["masks"][batch], tensors["actions"][batch]
            if relabellings is not None:
                r = torch.randint(len(obs_take), (len(batch),), generator=generator)
                obs, masks, actions = obs.gather(1, obs_take[r]), masks.gather(1, action_take[r]), action_to[r, actions]
            loss = torch.nn.functional.cross_entropy(masked_logits(net, obs, masks), actions)
            if vf_coef is not None:
                known = ~torch.isnan(tensors["rewards"][batch])
                if known.any():
                    loss = loss + vf_coef * torch.nn.functional.mse_loss(values(net, obs)[known],
                                                                         tensors["rewards"][batch][known])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if schedule is not None:
                schedule.step()
        if after_epoch is not None:
            after_epoch(epoch)
    net.train(False)


def agreement(net: torch.nn.Module, obs: np.ndarray, masks: np.ndarray, actions: np.ndarray
              ) -> tuple[torch.Tensor, float]:
    """Per decision, 1.0 where ``net``'s arg-max over the legal actions is the recorded action (else 0.0), and
    the mean cross-entropy of the recorded actions."""
    actions = torch.as_tensor(actions)
    with torch.no_grad():
        logits = masked_logits(net, torch.as_tensor(obs), torch.as_tensor(masks))
        loss = torch.nn.functional.cross_entropy(logits, actions).item()
    return (logits.argmax(1) == actions).float(), loss
