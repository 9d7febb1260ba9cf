"""``Game.relabellings``: Lost Cities' colour permutations are symmetries. A position rebuilt with its colours
permuted (through its JSON) is seen by each seat as the view relabelled by the tables, and a relabelled action
played there leads to the relabelled next position; games without declared symmetries return None."""

import itertools
import json

import numpy as np
import pytest

from tabletop_rl.envs.core.registry import game_class, list_games
from tabletop_rl.envs.lost_cities.game import Game, State


def permuted(state: State, perm: np.ndarray) -> State:
    """``state`` with new colour c showing old colour perm[c]."""
    inv = np.argsort(perm)
    kind = lambda k: k if k < 0 else int(10 * inv[k // 10] + k % 10)  # noqa: E731
    data = json.loads(state.to_json())
    s = data["state"]
    s["deck"] = [kind(k) for k in s["deck"]]
    s["drawn"] = [kind(k) for k in s["drawn"]]
    s["hands"] = [sorted(kind(k) for k in hand) for hand in s["hands"]]
    s["expeditions"] = [[[kind(k) for k in seat[perm[c]]] for c in range(len(perm))] for seat in s["expeditions"]]
    s["piles"] = [[kind(k) for k in s["piles"][perm[c]]] for c in range(len(perm))]
    s["known"] = [[row[10 * perm[k // 10] + k % 10] for k in range(len(row))] for row in s["known"]]
    s["forbidden"] = s["forbidden"] if s["forbidden"] < 0 else int(inv[s["forbidden"]])
    return State.from_json(json.dumps(data))


@pytest.mark.parametrize("n_colours", [5, 6])
def test_colour_permutations_are_symmetries(n_colours):
    game = Game(n_colours=n_colours)
    obs_take, action_take = game.relabellings()
    assert len(obs_take) == len(action_take) == (120 if n_colours == 5 else 720)
    assert (obs_take[0] == np.arange(game.layout.size)).all() and (action_take[0] == np.arange(game.num_actions)).all()
    rng = np.random.default_rng(n_colours)
    perms = list(itertools.permutations(range(n_colours)))
    for seed in range(3):
        state = game.new_initial_state(seed)
        while not state.is_terminal():
            r = int(rng.integers(1, len(perms)))
            twin = permuted(state, np.array(perms[r]))
            for seat in range(2):
                assert np.array_equal(twin.observation(seat), state.observation(seat)[obs_take[r]])
            assert np.array_equal(twin.action_mask(), state.action_mask()[action_take[r]])
            action = int(rng.choice(state.legal_actions()))
            twin.apply_action(int(np.argsort(action_take[r])[action]))
            state.apply_action(action)
            again = permuted(state, np.array(perms[r]))
            assert np.array_equal(twin.observation(0), again.observation(0))
            assert twin.scores() == state.scores()


def test_relabellings_are_declared_or_none():
    for name in list_games():
        tables = game_class(name)().relabellings()
        assert (tables is not None) == (name == "lost_cities")


def test_the_imitation_sees_each_decision_relabelled_alike(monkeypatch):
    """``warm_start.relabel``'s fit: every batch row's observation, mask and action go through one relabelling. In a
    card step a legal PLAY is a kind in the hand, and the teacher's action is legal, under any relabelling."""
    import torch

    from tabletop_rl.training.ppo import imitation
    from tabletop_rl.training.ppo.warm_start import teacher_games

    game = Game()
    data = teacher_games("lost_cities", {}, "heuristic", 3, seed=0)
    seen = []

    class Rows:  # the observations, remembering which rows each batch read
        def __init__(self, rows):
            self.rows, self.read = rows, []

        def __getitem__(self, index):
            self.read.append(index)
            return self.rows[index]

    data["obs"] = Rows(data["obs"])

    def recording(net, obs, masks):
        seen.append((obs.clone(), masks.clone()))
        return torch.where(masks, net.weight.sum(), -torch.inf)  # only the legal actions count

    monkeypatch.setattr(imitation, "masked_logits", recording)
    entropy = torch.nn.functional.cross_entropy
    monkeypatch.setattr(torch.nn.functional, "cross_entropy",
                        lambda logits, actions: seen.append(actions.clone()) or entropy(logits, actions))
    net = torch.nn.Linear(1, 1)
    imitation.fit(net, data, 1, 64, 1e-3, torch.Generator().manual_seed(0), relabellings=game.relabellings())
    K, hand = game.num_kinds, game.layout["hand"].slice
    moved = 0
    for (obs, masks), actions, index in zip(seen[0::2], seen[1::2], data["obs"].read, strict=True):
        assert masks[torch.arange(len(actions)), actions].all()
        card_step = masks[:, :K].any(1)
        assert (masks[card_step, :K] <= (obs[card_step, hand] > 0)).all()
        moved += int((obs != torch.as_tensor(data["obs"].rows[index])).any(1).sum())
    assert moved > len(data["actions"]) / 2  # the identity is one relabelling in 120


def test_relabel_is_refused_where_a_game_declares_no_symmetries(tmp_path):
    from test_training import tiny_config

    from tabletop_rl.training import train
    from tabletop_rl.training.ppo.config import load_config

    args = tiny_config(tmp_path, "torres", warm_start={"teacher": "heuristic", "games": 2, "relabel": True})
    with pytest.raises(ValueError, match="warm_start.relabel: torres declares no symmetries"):
        train.Trainer(load_config(args[1]))
