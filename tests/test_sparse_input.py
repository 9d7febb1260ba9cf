"""Sparse-input first layers (numpy runtime and torch training) give the dense layer's results, to 1e-5; a shared
trunk is written as policy format 3, every other network as format 2."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tabletop_rl import envs
from tabletop_rl.training.ppo.network import SparseInputLinear
from tabletop_rl.training.runtime.policy import (
    SPARSE_SHARE,
    MLPPolicy,
    PolicyFileError,
    PolicyInfo,
    _safetensors_header,
    load_policy,
    policy_file_bytes,
    save_policy,
)
from tests.policy_helpers import network, random_weights
from tests.test_policy_files import observations

GAMES = [("lost_cities", {}), ("five_towers", {"num_players": 5}), ("palazzo", {"num_players": 4}),
         ("torres", {"num_players": 4})]
TOLERANCE = {"rtol": 1e-5, "atol": 1e-5}


@pytest.mark.parametrize("game_name, options", GAMES)
def test_the_numpy_first_layer_equals_the_dense_product(game_name, options):
    x = observations(game_name, games=2, **options)
    weight = np.random.default_rng(0).normal(0, 0.1, (64, x.shape[1])).astype(np.float32)
    weight_t = np.ascontiguousarray(weight.T)
    nonzero = (x != 0).sum(1)
    assert (nonzero <= SPARSE_SHARE * x.shape[1]).all(), "every observation takes the gathering path"
    for row in x[::7]:
        np.testing.assert_allclose(MLPPolicy._sparse(row, weight_t, np.empty(64, np.float32)), weight @ row,
                                   **TOLERANCE)
    for batch in (x[:4], x):  # a few rows (gathered) and many (their union may be dense)
        np.testing.assert_allclose(MLPPolicy._sparse(batch, weight_t, None), batch @ weight.T, **TOLERANCE)


@pytest.mark.parametrize("noise", [0.0, 0.5])
def test_the_torch_first_layer_equals_the_dense_layer_and_its_gradient(noise):
    x = observations("palazzo", games=1, num_players=4)[:64]
    x = torch.as_tensor(np.where(np.random.default_rng(0).random(x.shape) < noise, 1.0, x).astype(np.float32))
    used = int((x != 0).any(0).sum())
    assert (used <= SPARSE_SHARE * x.shape[1]) == (noise == 0), "both paths are exercised"
    torch.manual_seed(0)
    dense = torch.nn.Linear(x.shape[1], 32)
    sparse = SparseInputLinear(x.shape[1], 32)
    sparse.load_state_dict(dense.state_dict())
    outputs = []
    for layer in (dense, sparse):
        y = layer(x)
        (y * torch.linspace(-1, 1, 32)).square().sum().backward()
        outputs.append((y.detach(), layer.weight.grad, layer.bias.grad))
    for expected, got in zip(*outputs, strict=True):
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)
    unused = (x == 0).all(0)
    assert (outputs[1][1][:, unused] == 0).all() and unused.any() == (noise == 0)


def test_a_shared_trunk_is_format_3_and_the_rest_stays_format_2(tmp_path):
    game = envs.make("torres", wrapped=False).game
    for net, version in ((network(shared=[16], pi=[8], vf=[]), "3"), (network(), "2")):
        info = PolicyInfo.for_game(game, net)
        path = tmp_path / f"{version}.safetensors"
        save_policy(path, random_weights(info), info)
        assert _safetensors_header(path)[0]["format_version"] == version
        assert load_policy(path).info.network == net
    info = PolicyInfo.for_game(game, network(shared=[16]))
    data = policy_file_bytes(random_weights(info), info).replace(b'"format_version":"3"', b'"format_version":"2"')
    (tmp_path / "claims2.safetensors").write_bytes(data)
    with pytest.raises(PolicyFileError, match="a network with a shared trunk needs policy format_version 3"):
        load_policy(tmp_path / "claims2.safetensors")
