"""The batched vector env (``gymnasium.make_vec("tabletop/<game>-v0", num_envs=N)``, training/runtime/vector_env.py)
and its SB3 adapter: game i seeded ``s + i`` plays exactly the single env's games, for every opponent kind, with
workers or without; SAME_STEP autoreset; bad input in one line."""

from __future__ import annotations

import multiprocessing
import time

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
                assert info["_seat"][i] and info["seat"][i] == single_info["seat"]  # the new episode's seat
            else:
                assert "_final_obs" not in info or not info["_final_obs"][i]
                assert "_seat" not in info or not info["_seat"][i]
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


def sync_vector_env(n: int, mode: AutoresetMode, **kwargs) -> gymnasium.vector.SyncVectorEnv:
    """Gymnasium's own vector env of ``n`` single envs: the reference for reset_mask and the autoreset modes."""
    return gymnasium.make_vec(env_id("lost_cities"), num_envs=n, vectorization_mode="sync",
                              vector_kwargs={"autoreset_mode": mode}, **kwargs)


def assert_same_step(ours: tuple, theirs: tuple) -> None:
    """The same observations, rewards, flags and masks; every info key of Gymnasium's where it flags a game."""
    for a, b in zip(ours[:-1], theirs[:-1], strict=True):
        np.testing.assert_array_equal(a, b)
    rows = theirs[-1]["_action_mask"]  # Gymnasium's reset with reset_mask gives the masks of those games only
    np.testing.assert_array_equal(ours[-1]["action_mask"][rows], theirs[-1]["action_mask"][rows])
    assert_same_info(ours[-1], theirs[-1])


def assert_same_info(info: dict, reference: dict) -> None:
    for key in reference:
        if key.startswith("_") and key != "_action_mask":
            np.testing.assert_array_equal(info[key], reference[key], err_msg=key)
            value, expected = info[key[1:]], reference[key[1:]]
            if isinstance(expected, dict):  # final_info: a dict of arrays itself
                assert_same_info(value, expected)
                continue
            for i in np.flatnonzero(reference[key]):
                np.testing.assert_array_equal(value[i], expected[i], err_msg=f"{key[1:]}[{i}]")


@pytest.mark.parametrize("mode", [AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP])
@pytest.mark.parametrize("num_workers", [None, 2])
def test_reset_mask_and_autoreset_modes_give_what_gymnasiums_sync_vector_env_gives(mode, num_workers):
    n = 5
    ours = gymnasium.make_vec(env_id("lost_cities"), num_envs=n, num_workers=num_workers, autoreset_mode=mode,
                              opponent="heuristic")
    theirs = sync_vector_env(n, mode, opponent="heuristic")
    assert ours.metadata["autoreset_mode"] is mode
    try:
        assert_same_step(ours.reset(seed=3), theirs.reset(seed=3))
        rng, ended = np.random.default_rng(0), 0
        for step in range(150):
            masks = ours.unwrapped.action_masks()
            actions = random_actions(masks, rng) if masks.any(1).all() else (rng.random(masks.shape) * masks).argmax(1)
            results = ours.step(actions)
            assert_same_step(results, theirs.step(actions))
            ended += int((results[2] | results[3]).sum())
            if step % 40 == 39:  # some games dealt anew, with seeds and without
                mask = rng.random(n) < 0.5
                mask[step // 40 % n] = True
                seed = None if step == 79 else 100 + step
                assert_same_step(ours.reset(seed=seed, options={"reset_mask": mask}),
                                 theirs.reset(seed=seed, options={"reset_mask": mask.copy()}))
        assert ended > 0
    finally:
        ours.close()


def test_disabled_autoreset_leaves_an_ended_game_until_reset_mask_deals_it():
    n = 3
    ours = gymnasium.make_vec(env_id("lost_cities"), num_envs=n, autoreset_mode=AutoresetMode.DISABLED)
    theirs = sync_vector_env(n, AutoresetMode.DISABLED)
    assert_same_step(ours.reset(seed=1), theirs.reset(seed=1))
    rng = np.random.default_rng(1)
    for _ in range(5):
        actions = random_actions(ours.unwrapped.action_masks(), rng, illegal=0)
        actions[1] = np.flatnonzero(ours.unwrapped.action_masks()[1] == 0)[0]  # game 1 forfeits: it ends now
        results = ours.step(actions)
        assert_same_step(results, theirs.step(actions))
        assert results[2].tolist() == [False, True, False] and not results[-1]["action_mask"][1].any()
        before = [array.copy() for array in results[:4]]
        with pytest.raises(RuntimeError, match=r"games \[1\] ended and autoreset_mode is DISABLED: deal them anew "
                                               r"first with reset\(options=\{'reset_mask': mask\}\)"):
            ours.step(actions)
        np.testing.assert_array_equal(ours.unwrapped._observations, before[0])  # nothing was played
        mask = np.array([False, True, False])
        assert_same_step(ours.reset(options={"reset_mask": mask}), theirs.reset(options={"reset_mask": mask}))


def test_next_step_works_under_gymnasiums_vector_observation_wrappers_and_same_step_is_refused_by_them():
    from gymnasium.wrappers import vector as wrappers

    envs = gymnasium.make_vec(env_id("lost_cities"), num_envs=4, autoreset_mode="NextStep")
    envs = wrappers.TransformObservation(wrappers.FlattenObservation(wrappers.DtypeObservation(
        wrappers.NormalizeObservation(envs), np.float64)), lambda obs: obs * 2)
    envs.reset(seed=0)
    for _ in range(200):  # through some ends of games
        masks = envs.unwrapped.action_masks()
        observations, *_ = envs.step((masks + 1e-9 * np.arange(masks.shape[1])).argmax(1))
        assert observations.dtype == np.float64 and observations.shape == (4, envs.single_observation_space.shape[0])
    with pytest.raises(ValueError, match="Expected autoreset_mode to be NEXT_STEP or DISABLED"):  # why a choice
        wrappers.NormalizeObservation(gymnasium.make_vec(env_id("lost_cities"), num_envs=2))


def test_reset_options_seeds_and_sizes_are_checked_up_front_in_one_line():
    envs = gymnasium.make_vec(env_id("lost_cities"), num_envs=3)
    mask = np.array([True, False, True])
    with pytest.raises(ValueError, match="no game was dealt yet: call reset"):
        envs.reset(options={"reset_mask": mask})
    observations, _ = envs.reset(seed=0)
    refused = [
        ({"seed": 1.5}, TypeError, "seed=1.5 is not allowed; expected None, a non-negative integer"),
        ({"seed": True}, TypeError, "seed=True is not allowed"),
        ({"seed": -1}, ValueError, "seed=-1 is not allowed"),
        ({"seed": {1, 2, 3}}, TypeError, r"seed=\{1, 2, 3\} is not allowed; .* or a list of one per game"),
        ({"seed": "abc"}, TypeError, "seed='abc' is not allowed"),
        ({"seed": [1, 2]}, ValueError, "got 2 seeds for 3 games"),
        ({"seed": [1, 2.5, 3]}, TypeError, "seed=2.5 is not allowed"),
        ({"options": {"mask": mask}}, ValueError, r"unknown option\(s\) 'mask'; the only one is 'reset_mask'"),
        ({"options": [1]}, ValueError, r"reset\(options=\[1\]\) is not allowed"),
        ({"options": {"reset_mask": [True, False, True]}}, ValueError,
         r"reset_mask must be a numpy bool array of shape \(3,\); got list"),
        ({"options": {"reset_mask": mask.astype(int)}}, ValueError, r"got array of shape \(3,\) and dtype int64"),
        ({"options": {"reset_mask": mask[:2]}}, ValueError, r"got array of shape \(2,\)"),
        ({"options": {"reset_mask": np.zeros(3, bool)}}, ValueError, "reset_mask is all False"),
    ]
    for kwargs, kind, message in refused:
        with pytest.raises(kind, match=message) as error:
            envs.reset(**kwargs)
        assert "\n" not in str(error.value)
    np.testing.assert_array_equal(envs.reset(seed=np.array([0, 1, 2]))[0], observations)  # nothing changed before
    assert gymnasium.make_vec(env_id("lost_cities"), num_envs=np.int64(4)).num_envs == 4
    started = time.monotonic()
    for num_envs in (10**7, 0, True, 2.0, "4"):
        with pytest.raises(ValueError, match=rf"num_envs={num_envs!r} is not allowed; expected a whole number from "
                                             r"1 to 65536"):
            gymnasium.make_vec(env_id("lost_cities"), num_envs=num_envs)
    assert time.monotonic() - started < 1  # refused before any space is built
    for bad, message in [({"autoreset_mode": "later"}, "autoreset_mode='later' is not allowed; expected one of "
                                                        "AutoresetMode.NEXT_STEP"),
                         ({"num_workers": 4}, r"num_workers=4 is not allowed; expected a whole number from 1 to 3"),
                         ({"num_workers": True}, "num_workers=True is not allowed"),
                         ({"worker_timeout": 5}, "worker_timeout=5 is for the workers of num_workers=k"),
                         ({"num_workers": 1, "worker_timeout": 0}, "worker_timeout=0 is not allowed")]:
        with pytest.raises(ValueError, match=message):
            gymnasium.make_vec(env_id("lost_cities"), num_envs=3, **bad)


def test_an_interrupted_step_in_the_process_refuses_all_but_reset_and_close(monkeypatch):
    envs = gymnasium.make_vec(env_id("lost_cities"), num_envs=3, opponent="heuristic")
    envs.reset(seed=0)
    actions = envs.unwrapped.action_masks().argmax(1)

    def interrupted(tables):
        raise KeyboardInterrupt  # after the learner's actions were applied, before the opponents played

    monkeypatch.setattr("tabletop_rl.training.runtime.vector_env.play_opponents", interrupted)
    with pytest.raises(KeyboardInterrupt):
        envs.step(actions)
    monkeypatch.undo()
    for call, name in [(lambda: envs.step(actions), "step"), (lambda: envs.unwrapped.action_masks(), "action_masks"),
                       (lambda: envs.unwrapped.set_pool([]), "set_pool")]:
        with pytest.raises(RuntimeError, match=rf"^{name}\(\) is refused: step\(\) was interrupted "
                                               r"\(KeyboardInterrupt\)"):
            call()
    fresh = gymnasium.make_vec(env_id("lost_cities"), num_envs=3, opponent="heuristic")
    np.testing.assert_array_equal(envs.reset(seed=4)[0], fresh.reset(seed=4)[0])
    for _ in range(30):
        actions = fresh.unwrapped.action_masks().argmax(1)
        for a, b in zip(envs.step(actions)[:4], fresh.step(actions)[:4], strict=True):
            np.testing.assert_array_equal(a, b)


def test_any_agent_offering_a_batch_key_is_decided_in_batches_subclasses_too():
    """The agent protocol (envs/core/agents.py): the batched loop asks agents what they offer, not their type; a
    subclass keeps what it inherits, unless it overrides act (then its act decides)."""
    from tabletop_rl.training.runtime.agents import load_agent
    from tabletop_rl.training.runtime.policy import PolicyAgent

    class NewKind:  # a kind of agent the loop was never told of
        batch_key = object()
        batches: list[int] = []

        def act(self, observation, action_mask):
            raise AssertionError("decided alone")

        @staticmethod
        def act_batch(agents, observations, masks):
            NewKind.batches.append(len(agents))
            return [int(np.flatnonzero(mask)[0]) for mask in masks]

        def only(self, action):
            return action

    class Subclass(PolicyAgent):
        pass

    class OwnAct(PolicyAgent):
        acted = 0

        def act(self, observation, action_mask):
            OwnAct.acted += 1
            return int(np.flatnonzero(action_mask)[0])

    game = tabletop_rl.game_class("lost_cities")()
    policy = load_agent("pretrained", game).policy
    forward_passes = []
    logits = policy.logits
    policy.logits = lambda observations, **kwargs: forward_passes.append(len(observations)) or logits(observations,
                                                                                                        **kwargs)
    for agent in (NewKind(), Subclass(policy), OwnAct(policy)):
        envs = SeatVectorEnv("lost_cities", num_envs=4, seat=0)
        for table in envs.tables:
            table.mix.draw = lambda seat, agent=agent: ("new", agent)
        envs.reset(seed=0)
        for _ in range(20):
            envs.step(envs.action_masks().argmax(1))
        if isinstance(agent, Subclass):
            assert max(forward_passes) == 4  # the four games' opponents in one forward pass
    assert max(NewKind.batches) == 4
    assert OwnAct.acted > 0  # decided by its own act, not batched past it
