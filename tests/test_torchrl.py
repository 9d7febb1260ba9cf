"""Every game under TorchRL's ``PettingZooWrapper`` (turn-based AEC, ``use_mask=True``): docs/interop.md#torchrl.

Needs the torchrl extra, which ``make setup`` installs into .venv.
"""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest
import torch

pytest.importorskip("torchrl", reason="TorchRL tests need the torchrl extra (make setup installs it)")

from torchrl.envs import PettingZooWrapper  # noqa: E402
from torchrl.envs.utils import check_env_specs  # noqa: E402

from tabletop_rl.training.interop.torchrl import torchrl_env  # noqa: E402
from tests.doc_snippets import run_section  # noqa: E402

ROOT = Path(__file__).parent.parent
GAMES = [("lost_cities", {}), ("five_towers", {"num_players": 3}), ("palazzo", {}), ("torres", {"num_players": 3})]


def wrapped(game: str, options: dict, seed: int) -> PettingZooWrapper:
    return torchrl_env(game, seed=seed, **options)


@pytest.mark.parametrize("game, options", GAMES, ids=[g for g, _ in GAMES])
def test_random_games_roll_out(game, options):
    """TorchRL's spec check passes; a rollout of random legal moves is one whole game: exactly the seat on move
    has ``mask``, its action is legal under its ``action_mask``, the global state is ``env.state()``, and the
    rewards summed per seat are the engine's returns, all paid on the last step. A second rollout deals a new game
    (another global state; what a seat sees first may be the same, as in Torres)."""
    env = wrapped(game, options, seed=0)
    check_env_specs(env)
    seats = list(env.group_map)
    assert seats == env.possible_agents and all(env.group_map[seat] == [seat] for seat in seats)
    torch.manual_seed(0)
    first_deals = []
    for _ in range(2):
        rollout = env.rollout(max_steps=10_000, break_when_any_done=True)
        state = env.unwrapped.game_state
        assert state.is_terminal() and rollout["next", "done"][-1].item() and not rollout["next", "done"][:-1].any()
        on_move = torch.cat([rollout[seat, "mask"] for seat in seats], dim=1)
        assert (on_move.sum(dim=1) == 1).all()
        for i, seat in enumerate(seats):
            acted = on_move[:, i]
            legal = rollout[seat, "action_mask"][acted, 0].gather(1, rollout[seat, "action"][acted])
            assert legal.all(), f"{seat} played an action outside its mask"
        assert torch.equal(rollout["next", "state"][-1], torch.as_tensor(env.state()))
        returns = torch.stack([rollout["next", seat, "reward"].sum() for seat in seats])
        assert torch.equal(returns, torch.as_tensor(state.returns(), dtype=torch.float32))
        assert not torch.cat([rollout["next", seat, "reward"][:-1] for seat in seats]).any()  # terminal rewards
        first_deals.append(rollout["state"][0])
    assert not torch.equal(*first_deals)


def test_seeded_rollouts_are_reproducible():
    """The env's seed fixes the deals, torch's seed the random actions: the same two seeds, the same games."""
    rollouts = []
    for _ in range(2):
        env = wrapped("lost_cities", {}, seed=3)
        torch.manual_seed(1)
        rollouts.append(env.rollout(max_steps=10_000, break_when_any_done=True))
    assert rollouts[0].batch_size == rollouts[1].batch_size and (rollouts[0] == rollouts[1]).all()


def test_the_interop_doc_torchrl_snippet_runs():
    snippet = run_section("docs/interop.md", "TorchRL")
    returns = list(snippet["returns"].values())
    assert snippet["rollout"]["next", "done"][-1].item() and len(returns) == 3 and sum(returns) == 0 and any(returns)


def test_the_torchrl_example_runs():
    """examples/torchrl_policy.py: one shared masked policy plays whole games at every seat."""
    example = runpy.run_path(str(ROOT / "examples" / "torchrl_policy.py"))
    returns = example["main"](games=2)
    assert len(returns) == 2 and all(sorted(r) in ([-1.0, 1.0], [0.0, 0.0]) for r in returns)
