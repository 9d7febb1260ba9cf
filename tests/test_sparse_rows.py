"""The warm start's sparse store of observations: exact rows back, a fraction of the dense memory."""

from __future__ import annotations

import numpy as np
import pytest

from tabletop_rl import envs
from tabletop_rl.envs.palazzo import HeuristicAgent
from tabletop_rl.training.ppo.sparse_rows import SparseRows
from tabletop_rl.training.ppo.warm_start import teacher_games


def test_rows_come_back_exactly_in_any_order():
    rng = np.random.default_rng(0)
    blocks = [np.where(rng.random((k, 300)) < 0.05, rng.normal(size=(k, 300)), 0).astype(np.float32)
              for k in (7, 0, 1, 25)]
    blocks[3][4] = 0  # an all-zero row
    rows = SparseRows(300)
    for block in blocks:
        rows.extend(block)
    dense = np.concatenate(blocks)
    assert len(rows) == len(dense) == 33
    picks = np.array([32, 0, 11, 11, 7, 8 + 4, 5])  # any order, repeats, the zero row
    np.testing.assert_array_equal(rows[picks], dense[picks])
    np.testing.assert_array_equal(rows[np.arange(33)], dense)
    assert rows[np.array([], int)].shape == (0, 300)
    rows.extend(blocks[0][:1] + 2)  # rows added after a read are found too
    np.testing.assert_array_equal(rows[np.array([33, 32])], np.stack([blocks[0][0] + 2, dense[32]]))
    assert rows.nbytes < dense.nbytes / 3


def test_bad_rows_and_indices_are_refused():
    rows = SparseRows(4)
    with pytest.raises(ValueError, match="rows of 4 values"):
        rows.extend(np.zeros((2, 5)))
    rows.extend(np.eye(4))
    with pytest.raises(IndexError, match="out of range"):
        rows[np.array([4])]
    with pytest.raises(IndexError, match="out of range"):
        rows[np.array([-1])]


def test_palazzo_teacher_games_are_stored_sparse_and_exact():
    """4-player Palazzo: 4,746 values per observation, ~4% nonzero. The stored rows are the teacher's
    observations: the (deterministic) heuristic, shown them again, makes every recorded decision."""
    data = teacher_games("palazzo", {}, "heuristic", games=2, seed=3)
    n = len(data["actions"])
    assert n > 200 and len(data["obs"]) == len(data["masks"]) == len(data["rewards"]) == n
    assert data["obs"].nbytes < n * 4746 * 4 / 10
    bot = HeuristicAgent(envs.make("palazzo", wrapped=False).game, seed=0)
    obs = data["obs"][np.arange(n)]
    assert [bot.act(o, m.astype(np.int8)) for o, m in zip(obs, data["masks"], strict=True)] == list(data["actions"])


def test_join_keeps_the_rows_in_order():
    rng = np.random.default_rng(1)
    blocks = [np.where(rng.random((n, 9)) < 0.3, rng.random((n, 9)), 0).astype(np.float32) for n in (4, 0, 7)]
    parts = []
    for block in blocks:
        rows = SparseRows(9)
        rows.extend(block)
        parts.append(rows)
    joined = SparseRows.join(parts)
    assert len(joined) == 11
    np.testing.assert_array_equal(joined[np.arange(11)], np.concatenate(blocks))
    with pytest.raises(ValueError, match="cannot join"):
        SparseRows.join([parts[0], SparseRows(8)])
