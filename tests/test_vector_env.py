"""The batched vector env (``gymnasium.make_vec("tabletop/<game>-v0", num_envs=N)``, training/runtime/vector_env.py)
and its SB3 adapter: game i seeded ``s + i`` plays exactly the single env's games, for every opponent kind, with
workers or without; SAME_STEP autoreset; bad input in one line."""

from __future__ import annotations

import multiprocessing

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor

import tabletop_rl
from tabletop_rl import env_id  # importing tabletop_rl registers the ids
from tabletop_rl.training.ppo.vec_env import SB3SeatVecEnv
from tabletop_rl.training.runtime.opponents import SELF
from tabletop_rl.training.runtime.policy import PolicyInfo
from tabletop_rl.training.runtime.single_seat import SingleSeatEnv
from tabletop_rl.training.runtime.vector_env import SeatVectorEnv, ShardedSeatVectorEnv
from tests.policy_helpers import network, random_weights

OPPONENTS = ["random", "heuristic", "pretrained", {"random": 1, "heuristic": 1, "pretrained": 1}]
GAMES = [("lost_cities", {}), ("five_towers", {"num_players": 3}), ("palazzo", {"num_players": 4}),
         ("torres", {"num_players": 2})]


def random_actions(masks: np.ndarray, rng: np.random.Generator, illegal: float = 0.02) -> np.ndarray:
    """A random legal action per game, now and then an illegal one (which forfeits the game)."""
    actions = (rng.random(masks.shape) * masks).argmax(1)
    for i in np.flatnonzero(rng.random(len(masks)) < illegal):
        actions[i] = np.flatnonzero(masks[i] == 0)[0]
    return actions


def assert_plays_like_single_envs(vector, game: str, options: dict, opponent, steps: int, seed: int = 7) -> int:
    """Step ``vector`` and one single env per game side by side; returns the number of episodes that ended."""
    n = vector.num_envs
    singles = [gymnasium.make(env_id(game), opponent=opponent, **options) for _ in range(n)]
    observations, info = vector.reset(seed=seed)
    for i, single in enumerate(singles):
        observation, single_info = single.reset(seed=seed + i)
        np.testing.assert_array_equal(observations[i], observation)
        assert info["seat"][i] == single_info["seat"]
    rng, ended = np.random.default_rng(seed), 0
    for step in range(steps):
        masks = info["action_mask"]
        assert masks.any(axis=1).all(), "SAME_STEP autoreset: every game waits on a legal learner action"
        actions = random_actions(masks, rng)
        observations, rewards, terminated, truncated, info = vector.step(actions)
        for i, single in enumerate(singles):
            observation, reward, single_terminated, single_truncated, single_info = single.step(int(actions[i]))
            assert (reward, single_terminated, single_truncated) == (rewards[i], terminated[i], truncated[i]), \
                (step, i)
            if single_terminated or single_truncated:
                ended += 1
                assert info["_final_obs"][i]
                np.testing.assert_array_equal(info["final_obs"][i], observation)
                for key, value in single_info.items():
                    np.testing.assert_array_equal(info["final_info"][key][i], value)
                observation, single_info = single.reset()
            else:
                assert "_final_obs" not in info or not info["_final_obs"][i]
            np.testing.assert_array_equal(observations[i], observation)
            np.testing.assert_array_equal(info["action_mask"][i], single_info["action_mask"])
    return ended


@pytest.mark.parametrize("game, options", GAMES)
@pytest.mark.parametrize("opponent", OPPONENTS, ids=["random", "heuristic", "pretrained", "mix"])
def test_game_i_plays_the_games_of_a_single_env_seeded_seed_plus_i(game, options, opponent):
    vector = gymnasium.make_vec(env_id(game), num_envs=5, opponent=opponent, **options)
    assert isinstance(vector.unwrapped, SeatVectorEnv)
    assert vector.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    assert vector.single_observation_space == gymnasium.make(env_id(game), **options).observation_space
    assert assert_plays_like_single_envs(vector, game, options, opponent, steps=120) > 0


def test_workers_play_the_same_games_and_end_with_close():
    options = {"num_players": 3}
    vector = gymnasium.make_vec(env_id("five_towers"), num_envs=5, num_workers=2, opponent=OPPONENTS[-1],
                                **options)
    assert isinstance(vector.unwrapped, ShardedSeatVectorEnv)
    workers = multiprocessing.active_children()
    assert len([p for p in workers if p.name.startswith("tabletop-games")]) == 2
    try:
        assert assert_plays_like_single_envs(vector, "five_towers", options, OPPONENTS[-1], steps=80) > 0
        with pytest.raises(ValueError, match=r"actions must be an integer array of shape \(5,\)"):
            vector.step(np.zeros(4, np.int64))
    finally:
        vector.close()
    assert not any(p.is_alive() for p in workers if p.name.startswith("tabletop-games"))


def test_self_play_snapshots_are_decided_in_batches_as_the_single_env_decides_them():
    info = PolicyInfo.for_game(tabletop_rl.game_class("lost_cities")(), network())
    pool = [random_weights(info, seed=1), random_weights(info, seed=2)]
    kwargs = {"game": "lost_cities", "opponents": {SELF: 2, "random": 1}, "network": network()}
    vector = SeatVectorEnv(num_envs=4, **kwargs)
    singles = [SingleSeatEnv(**kwargs) for _ in range(4)]
    vector.set_pool(pool)
    for single in singles:
        single.set_pool(pool)
    observations, _ = vector.reset(seed=3)
    rng = np.random.default_rng(0)
    for i, single in enumerate(singles):
        np.testing.assert_array_equal(observations[i], single.reset(seed=3 + i)[0])
    for _ in range(100):
        actions = random_actions(vector.action_masks(), rng, illegal=0)
        observations, rewards, *_ = vector.step(actions)
        for i, single in enumerate(singles):
            observation, reward, terminated, truncated, _ = single.step(int(actions[i]))
            if terminated or truncated:
                observation, _ = single.reset()
            np.testing.assert_array_equal(observations[i], observation)
            assert reward == rewards[i]


def test_bad_actions_are_one_line_and_change_nothing():
    vector = gymnasium.make_vec(env_id("lost_cities"), num_envs=3)
    with pytest.raises(RuntimeError, match="before reset"):
        vector.step(np.zeros(3, np.int64))
    observations, info = vector.reset(seed=0)
    legal = info["action_mask"].argmax(1)
    for bad, message in [(legal[:2], r"shape \(3,\)"), (legal.astype(float), "dtype float64"),
                         (legal.tolist() + [0], r"shape \(3,\)"), ([0, 1, 106], "action 106 is not in the action"),
                         ([-1, 0, 0], "action -1 is not in the action"), ("abc", "shape"), (None, "shape")]:
        with pytest.raises(ValueError, match=message) as error:
            vector.step(bad)
        assert "\n" not in str(error.value)
    # Nothing was played: the same actions now give what a fresh env seeded alike gives.
    fresh = gymnasium.make_vec(env_id("lost_cities"), num_envs=3)
    fresh.reset(seed=0)
    for a, b in zip(vector.step(legal)[:4], fresh.step(legal)[:4], strict=True):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="2 seeds for 3 games"):
        vector.reset(seed=[1, 2])
    with pytest.raises(ValueError, match="num_envs=0"):
        gymnasium.make_vec(env_id("lost_cities"), num_envs=0)
    with pytest.raises(ValueError, match="opponent 'self'"):
        gymnasium.make_vec(env_id("lost_cities"), num_envs=2, opponent=SELF)
    with pytest.raises(ValueError, match="num_workers=3"):
        gymnasium.make_vec(env_id("lost_cities"), num_envs=2, num_workers=3)


def test_an_illegal_action_forfeits_that_game_only():
    vector = gymnasium.make_vec(env_id("lost_cities"), num_envs=3, opponent="heuristic")
    _, info = vector.reset(seed=1)
    actions = info["action_mask"].argmax(1)
    actions[1] = int(np.flatnonzero(info["action_mask"][1] == 0)[0])
    _, rewards, terminated, truncated, info = vector.step(actions)
    assert rewards.tolist() == [0.0, -1.0, 0.0] and terminated.tolist() == [False, True, False]
    assert info["_final_info"].tolist() == [False, True, False]
    assert info["final_info"]["illegal_action"][1] and "is illegal for seat" in info["final_info"]["reason"][1]
    assert info["action_mask"][1].any()  # game 1 was dealt anew in the same step


def test_sb3_adapter_trains_on_the_games_dummyvecenv_would_deal():
    kwargs = {"game": "five_towers", "game_options": {"num_players": 3}, "margin_reward": 0.01,
              "opponents": {"heuristic": 1, "random": 1}}
    dummy = VecMonitor(DummyVecEnv([lambda: SingleSeatEnv(**kwargs) for _ in range(4)]))
    batched = VecMonitor(SB3SeatVecEnv(SeatVectorEnv(num_envs=4, **kwargs)))
    dummy.seed(5)
    batched.seed(5)
    np.testing.assert_array_equal(dummy.reset(), batched.reset())
    rng, episodes = np.random.default_rng(0), 0
    for _ in range(150):
        masks = np.stack(batched.env_method("action_masks"))
        np.testing.assert_array_equal(masks, np.stack(dummy.env_method("action_masks")))
        actions = random_actions(masks, rng, illegal=0)
        a, b = dummy.step(actions), batched.step(actions)
        for x, y in zip(a[:3], b[:3], strict=True):
            np.testing.assert_array_equal(x, y)
        for x, y in zip(a[3], b[3], strict=True):
            if "terminal_observation" in x:
                episodes += 1
                np.testing.assert_array_equal(x["terminal_observation"], y["terminal_observation"])
                assert (x["episode"]["r"], x["episode"]["l"], x["margin"]) == \
                    (y["episode"]["r"], y["episode"]["l"], y["margin"])
    assert episodes > 0
    with pytest.raises(ValueError, match="all at once"):
        batched.env_method("action_masks", indices=[0])
