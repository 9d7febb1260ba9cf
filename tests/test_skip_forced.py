"""``skip_forced``: the single-seat and batched envs play the learner's decisions that have one legal action for it.
The same games (final scores and returns) as with the option off, given the same seeds and the same choices at the
real decisions; fewer steps, counted in ``info``; off by default in the Gymnasium ids."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

from tabletop_rl import env_id  # importing tabletop_rl registers the ids
from tabletop_rl.training.runtime.vector_env import ShardedSeatVectorEnv
from tests.test_vector_env import assert_plays_like_single_envs

GAMES = [("five_towers", {"num_players": 2}), ("five_towers", {"num_players": 5}), ("palazzo", {"num_players": 3}),
         ("torres", {"num_players": 4}), ("lost_cities", {})]


def play(game: str, options: dict, seed: int, skip_forced: bool, opponent: str = "heuristic") -> dict:
    """One episode; every real decision (two or more legal actions) a random choice drawn from one generator, so
    that the two settings face the same choices in the same order."""
    env = gymnasium.make(env_id(game), opponent=opponent, skip_forced=skip_forced, **options)
    _, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    steps, forced = 0, info.get("forced", 0)
    while True:
        legal = np.flatnonzero(info["action_mask"])
        assert len(legal) >= 1
        if skip_forced:
            assert len(legal) >= 2, "a forced decision reached the learner"
        action = int(rng.choice(legal)) if len(legal) > 1 else int(legal[0])
        _, reward, terminated, truncated, info = env.step(action)
        steps += 1
        if terminated or truncated:
            if skip_forced:
                assert info["forced_in_episode"] == forced + info["forced"]
            return {"reward": reward, "scores": info["scores"], "steps": steps, "forced": info.get("forced_in_episode")}
        forced += info.get("forced", 0)


@pytest.mark.parametrize("game, options", GAMES)
def test_skipping_forced_decisions_plays_the_same_games_in_fewer_steps(game, options):
    for seed in range(2):
        off, on = play(game, options, seed, False), play(game, options, seed, True)
        assert (on["reward"], on["scores"]) == (off["reward"], off["scores"])
        assert on["steps"] + on["forced"] == off["steps"]
        assert off["forced"] is None
    if game == "five_towers":
        assert on["forced"] > on["steps"], "most Five Towers decisions are forced"


def test_the_ids_skip_nothing_by_default():
    env = gymnasium.make(env_id("five_towers"))
    _, info = env.reset(seed=0)
    assert "forced" not in info
    masks, over = [], False
    while not over:
        masks.append(info["action_mask"].sum())
        _, _, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[-1]))
        over = terminated or truncated
    assert min(masks) == 1, "the id hands the learner its forced decisions"


def test_skip_forced_must_be_a_bool():
    with pytest.raises(ValueError, match="skip_forced=1 is not allowed; expected True or False"):
        gymnasium.make(env_id("torres"), skip_forced=1)


@pytest.mark.parametrize("workers", [0, 2])
def test_the_batched_env_skips_them_as_the_single_env_does(workers):
    options = {"num_players": 3, "skip_forced": True}
    vector = gymnasium.make_vec(env_id("five_towers"), num_envs=4, opponent="heuristic", num_workers=workers,
                                **options)
    try:
        assert isinstance(vector.unwrapped, ShardedSeatVectorEnv) == bool(workers)
        assert assert_plays_like_single_envs(vector, "five_towers", options, "heuristic", steps=60) > 0
        _, info = vector.reset(seed=3)
        assert info["forced"].shape == (4,)
        assert (info["action_mask"].sum(1) >= 2).all()
        _, _, _, _, info = vector.step(info["action_mask"].argmax(1))
        assert (info["action_mask"].sum(1) >= 2).all()
        assert info["forced"].dtype.kind == "i"
    finally:
        vector.close()
