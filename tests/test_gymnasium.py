"""The Gymnasium single-agent ids: ``gymnasium.make("tabletop/<game>-v0", opponent=..., seat=..., **options)``.

One seat of a game against built-in opponents (``tabletop_rl.training.runtime.single_seat.SingleSeatEnv``, the env
the SB3 pipeline trains in), registered by ``import tabletop_rl``.
"""

from __future__ import annotations

import re
import runpy
import subprocess
import sys
import warnings
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from tabletop_rl import envs
from tabletop_rl.envs import env_id
from tabletop_rl.envs.core.registry import game_module
from tabletop_rl.training.runtime.policy import PolicyAgent, PolicyFileError
from tests.doc_snippets import run_section
from tests.policy_helpers import random_policy_file

ROOT = Path(__file__).parent.parent
GAMES = [("lost_cities", {}), ("five_towers", {"num_players": 3}), ("palazzo", {}), ("torres", {"num_players": 3})]


def play_episode(env: gymnasium.Env, info: dict) -> list[tuple]:
    """Random legal moves (``action_space.sample(mask)``) until the end; every step's outcome."""
    steps, done = [], False
    while not done:
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample(info["action_mask"]))
        steps.append((obs, reward, terminated, truncated, info))
        done = terminated or truncated
    return steps


def test_every_game_is_registered_lazily():
    """``import tabletop_rl`` registers an id per game; the entry point is a string, so nothing more is imported."""
    for game in envs.list_games():
        spec = gymnasium.spec(env_id(game))
        assert spec.entry_point == "tabletop_rl.training.runtime.single_seat:single_seat_env"
        assert spec.kwargs == {"game": game}


@pytest.mark.parametrize("game, options", GAMES, ids=[g for g, _ in GAMES])
def test_check_env_passes(game, options):
    """Gymnasium's checker (spaces, seeding, determinism, fresh data, render modes) without a warning. It
    steps random actions, mostly illegal ones: they end the episode (PettingZoo's convention)."""
    env = gymnasium.make(env_id(game), opponent="heuristic", render_mode="ansi", **options)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)  # the unwrapped env: make()'s wrappers would only add a warning


def test_seeded_episodes_are_reproducible():
    """Same seed, same actions: same deals, seats, opponent moves, observations, rewards and infos."""
    runs = []
    for _ in range(2):
        env = gymnasium.make(env_id("five_towers"), opponent={"heuristic": 1, "random": 1}, num_players=3)
        env.action_space.seed(7)
        trajectory = [env.reset(seed=7)]
        for _ in range(3):  # the unseeded resets continue the seeded sequence
            trajectory += play_episode(env, trajectory[-1][-1])
            trajectory.append(env.reset())
        runs.append(trajectory)
        # Gymnasium's own attributes: the seed given, and the generator the table deals from (seeded once)
        assert env.unwrapped.np_random_seed == 7 and env.unwrapped.np_random is env.unwrapped.table.np_random
    first, second = runs
    assert len(first) == len(second) and len(first) > 3 * 20
    for a, b in zip(first, second, strict=True):
        assert gymnasium.utils.env_checker.data_equivalence(a, b, exact=True)
    other = gymnasium.make(env_id("five_towers"), opponent="heuristic", num_players=3)
    assert not np.array_equal(other.reset(seed=8)[0], first[0][0])


def test_seeds_are_checked_and_a_finished_episode_refuses_steps():
    """The AEC env's seed check (numpy integers are seeds, True and lists are not); a step after the end raises."""
    env = gymnasium.make(env_id("lost_cities"), opponent="random")
    # reset well first: Gymnasium 1.4's PassiveEnvChecker breaks the first step after a first reset that raised
    first = env.reset(seed=np.int64(3))
    for seed, error in [(True, TypeError), ([1, 2], TypeError), (-1, ValueError), (1.5, TypeError), ("3", TypeError)]:
        message = f"seed={seed!r} is not allowed; expected None or a non-negative integer"
        with pytest.raises(error, match=f"^{re.escape(message)}$"):
            env.reset(seed=seed)
    assert gymnasium.utils.env_checker.data_equivalence(first, env.reset(seed=3), exact=True)
    play_episode(env, first[1])
    message = "step() was called after the episode ended; call reset() to start a new episode"
    with pytest.raises(RuntimeError, match=f"^{re.escape(message)}$"):
        env.step(0)


def test_masks_in_info_and_action_masks_are_the_learners():
    env = gymnasium.make(env_id("lost_cities"), opponent="heuristic")
    bare = env.unwrapped
    obs, info = env.reset(seed=1)
    rng = np.random.default_rng(1)
    done = False
    while not done:
        state = bare.game_state
        assert state.current_player == bare.seat
        assert info["action_mask"].dtype == np.int8 and bare.action_masks().dtype == bool
        np.testing.assert_array_equal(info["action_mask"], state.action_mask())
        np.testing.assert_array_equal(bare.action_masks(), state.action_mask().astype(bool))
        np.testing.assert_array_equal(obs, state.observation(bare.seat))
        info["action_mask"][:] = 1  # what a caller does with its copy never reaches the env
        obs, _, terminated, truncated, info = env.step(rng.choice(np.flatnonzero(bare.action_masks())))
        done = terminated or truncated
    assert not info["action_mask"].any() and not bare.action_masks().any()
    assert env.get_wrapper_attr("action_masks") == bare.action_masks  # how sb3-contrib finds it


def test_an_illegal_action_ends_the_episode_with_minus_one():
    """PettingZoo's illegal-move convention: nothing is played, -1, terminated, and info says so."""
    env = gymnasium.make(env_id("lost_cities"), opponent="random")
    _, info = env.reset(seed=2)
    state = env.unwrapped.game_state
    before = state.to_json()
    for not_an_action in (-1, 106, 1.0, "3", np.array([3])):  # outside the action space: a bug, not a move
        with pytest.raises(ValueError, match="not in the action space Discrete"):
            env.step(not_an_action)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    obs, reward, terminated, truncated, info = env.step(np.int64(illegal))
    assert (reward, terminated, truncated, info["illegal_action"]) == (-1.0, True, False, True)
    assert f"action {illegal} ({state.action_to_string(illegal)}) is illegal" in info["reason"]
    assert f"phase '{state.phase}'" in info["reason"]
    assert state.to_json() == before  # the engine never saw it
    np.testing.assert_array_equal(obs, state.observation(env.unwrapped.seat))
    assert not info["action_mask"].any() and not env.unwrapped.action_masks().any()
    assert info["seat"] == env.unwrapped.seat and info["opponents"] == ["random"] and "scores" not in info
    with pytest.raises(RuntimeError, match="call reset"):
        env.unwrapped.step(0)
    _, info = env.reset()
    assert info["action_mask"].any()
    play_episode(env, info)


def test_opponent_kinds(tmp_path):
    """Built-in bots, the shipped policy, a policy file (str or Path) and a weighted mix, in every seat."""
    game = envs.make("five_towers", wrapped=False, num_players=3).game
    policy = random_policy_file(tmp_path / "ft.safetensors", game)
    heuristic = game_module("five_towers").HeuristicAgent
    for opponent, names, kind in [("random", {"random"}, None), ("heuristic", {"heuristic"}, heuristic),
                                  (str(policy), {str(policy)}, PolicyAgent), (policy, {str(policy)}, PolicyAgent),
                                  ({"heuristic": 2, str(policy): 1}, {"heuristic", str(policy)}, None)]:
        env = gymnasium.make(env_id("five_towers"), opponent=opponent, num_players=3)
        seen = set()
        _, info = env.reset(seed=0)
        for _ in range(8):
            seen |= {name for name, _ in env.unwrapped.seated.values()}
            if kind is not None:
                assert all(isinstance(agent, kind) for _, agent in env.unwrapped.seated.values())
            *_, (_, _, _, _, info) = play_episode(env, info)
            assert len(info["opponents"]) == 2 and "scores" in info
            _, info = env.reset()
        assert seen == names, opponent
    env = gymnasium.make(env_id("lost_cities"), opponent="pretrained", seat=1)
    _, info = env.reset(seed=0)
    assert isinstance(env.unwrapped.seated["player_0"][1], PolicyAgent) and env.unwrapped.seat == 1
    play_episode(env, info)


def test_game_options_and_seat_through_make():
    env = gymnasium.make(env_id("lost_cities"), opponent="heuristic", n_colours=6, rounds=2)
    assert env.observation_space.shape == (516,) and env.action_space.n == 127
    assert env.unwrapped.game.options["rounds"] == 2
    *_, (_, _, terminated, _, info) = play_episode(env, env.reset(seed=0)[1])
    assert terminated and len(env.unwrapped.game_state.round_scores) == 2
    env = gymnasium.make(env_id("torres"), opponent="random", num_players=4, seat=3, render_mode="ansi")
    _, info = env.reset(seed=0)
    assert env.unwrapped.seat == info["seat"] == 3
    assert env.render() == env.unwrapped.game_state.render_text(viewer=3)  # the learner's view only


BAD = [
    ({"n_colors": 6}, ValueError, "unknown option.*n_colors.*known options"),
    ({"n_colours": 7}, ValueError, "n_colours=7 is not allowed"),
    ({"opponent": "heuristc"}, ValueError, "unknown agent 'heuristc'"),
    ({"opponent": "self"}, ValueError, "only inside tabletop_rl.training.train"),
    ({"opponent": "no/such.safetensors"}, PolicyFileError, "no such file"),
    ({"opponent": {"random": -1}}, ValueError, "weights >= 0"),
    ({"opponent": 3}, ValueError, "expected an agent spec"),
    ({"seat": 2}, ValueError, "seat=2 is not allowed"),
    ({"render_mode": "rgb"}, ValueError, r"render_mode='rgb' is not supported; use one of \[.*'rgb_array'\]"),
]


@pytest.mark.parametrize("kwargs, error, message", BAD, ids=[str(kwargs) for kwargs, *_ in BAD])
def test_bad_options_and_opponents_fail_at_make(kwargs, error, message):
    with pytest.raises(error, match=message):
        gymnasium.make(env_id("lost_cities"), **kwargs)


def test_a_policy_for_another_game_fails_at_make(tmp_path):
    policy = random_policy_file(tmp_path / "ft.safetensors", envs.make("five_towers", wrapped=False).game)
    with pytest.raises(PolicyFileError, match="policy for five_towers; it cannot play lost_cities"):
        gymnasium.make(env_id("lost_cities"), opponent=policy)



AUTORESET = gymnasium.vector.AutoresetMode


def vector_env(mode: str, autoreset: AUTORESET = AUTORESET.NEXT_STEP) -> gymnasium.vector.VectorEnv:
    return gymnasium.make_vec(env_id("lost_cities"), num_envs=2, vectorization_mode=mode, opponent="heuristic",
                              vector_kwargs={"autoreset_mode": autoreset})


def random_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random legal action per row of ``masks``; 0 for an all-zero row (a step that autoreset ignores)."""
    return (rng.random(masks.shape) * masks).argmax(axis=1)


@pytest.mark.parametrize("autoreset", [AUTORESET.NEXT_STEP, AUTORESET.SAME_STEP], ids=lambda mode: mode.name)
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_vector_envs_stack_the_masks_and_autoreset_as_declared(mode, autoreset):
    """make_vec: the masks stack to (num_envs, num_actions), ``call("action_masks")`` gives the same, and the
    metadata's autoreset mode is what happens at an end: NEXT_STEP returns the all-zero mask of the ended game,
    then a step that ignores its action and only resets (the env itself refuses a step after the end); SAME_STEP
    returns the next game's mask at once and the end in ``info["final_info"]``."""
    env = vector_env(mode, autoreset)
    assert env.metadata["autoreset_mode"] == autoreset
    _, info = env.reset(seed=0)
    rng, ended, finished = np.random.default_rng(0), np.zeros(2, bool), 0
    while finished < 3:
        masks = info["action_mask"]
        assert masks.shape == (2, 106) and masks.dtype == np.int8
        np.testing.assert_array_equal(np.stack(env.call("action_masks")), masks.astype(bool))
        np.testing.assert_array_equal(masks.any(axis=1), ~ended if autoreset == AUTORESET.NEXT_STEP else True)
        _, rewards, terminated, truncated, info = env.step(random_legal(masks, rng))
        if autoreset == AUTORESET.NEXT_STEP:
            assert not rewards[ended].any() and not terminated[ended].any()
        ended = terminated | truncated
        finished += ended.sum()
        end_info = info.get("final_info", {}) if autoreset == AUTORESET.SAME_STEP else info
        np.testing.assert_array_equal(end_info.get("_scores", np.zeros(2, bool)), ended)
        assert set(rewards[ended]) <= {-1.0, 0.0, 1.0}
    env.close()


def test_vector_envs_are_reproducible_with_seeds():
    """``reset(seed=s)`` seeds copy i with s + i: the same seed gives the same games, sync or async, and copy 1 deals
    what ``gymnasium.make``'s env deals after ``reset(seed=s + 1)``."""
    def trajectory(mode: str) -> list[tuple]:
        env = vector_env(mode)
        rng, steps = np.random.default_rng(1), [env.reset(seed=5)]
        for _ in range(120):  # past the end of a game
            steps.append(env.step(random_legal(steps[-1][-1]["action_mask"], rng)))
        env.close()
        assert any(terminated.any() for _, _, terminated, _, _ in steps[1:])
        return steps

    sync = trajectory("sync")
    for again in (trajectory("sync"), trajectory("async")):
        assert gymnasium.utils.env_checker.data_equivalence(sync, again, exact=True)
    obs, info = gymnasium.make(env_id("lost_cities"), opponent="heuristic").reset(seed=6)
    np.testing.assert_array_equal(sync[0][0][1], obs)
    assert sync[0][1]["seat"][1] == info["seat"] and not np.array_equal(sync[0][0][0], obs)


def test_vector_envs_without_autoreset_leave_the_reset_to_the_caller():
    """DISABLED: a finished copy keeps its all-zero mask until ``reset(options={"reset_mask": ...})`` deals anew."""
    env = vector_env("sync", AUTORESET.DISABLED)
    _, info = env.reset(seed=0)
    rng, ended = np.random.default_rng(0), np.zeros(2, bool)
    while not ended.any():
        _, _, terminated, truncated, info = env.step(random_legal(info["action_mask"], rng))
        ended = terminated | truncated
    assert not info["action_mask"][ended].any()
    env.reset(options={"reset_mask": ended})
    masks = np.stack(env.call("action_masks"))  # the reset copies' new masks, the others' as they were
    assert masks.any(axis=1).all()
    _, _, terminated, _, info = env.step(random_legal(masks, rng))
    assert info["action_mask"].shape == (2, 106)


def test_action_masks_before_reset_is_refused():
    message = "^action_masks\\(\\) was called before reset\\(\\)$"
    with pytest.raises(ValueError, match=message):
        gymnasium.make(env_id("lost_cities")).unwrapped.action_masks()
    with pytest.raises(ValueError, match=message):
        vector_env("sync").call("action_masks")


def test_sb3_vec_envs_give_maskable_ppo_every_copys_mask():
    """sb3-contrib reads an SB3 VecEnv's masks with ``env_method("action_masks")``: every copy's current mask, the
    next game's right after an end (SB3's vector envs reset a finished copy inside the step)."""
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env(env_id("lost_cities"), n_envs=2, seed=0,
                        env_kwargs={"opponent": "heuristic", "render_mode": None})
    venv.reset()
    assert is_masking_supported(venv)
    rng, finished = np.random.default_rng(0), 0
    while finished < 2:
        masks = get_action_masks(venv)
        assert masks.shape == (2, 106) and masks.dtype == bool and masks.any(axis=1).all()
        _, _, dones, infos = venv.step(random_legal(masks, rng))
        for i in np.flatnonzero(dones):
            assert "terminal_observation" in infos[i] and "scores" in infos[i]
        finished += dones.sum()


def test_the_interop_doc_vector_env_snippets_run():
    """docs/interop.md, "Gymnasium vector envs": four finished games, Gymnasium's NormalizeObservation on the
    NEXT_STEP env and a MaskablePPO that learned on SB3's vector env of the id."""
    snippet = run_section("docs/interop.md", "Gymnasium vector envs")
    assert len(snippet["finished"]) >= 4
    assert snippet["envs"].metadata["autoreset_mode"] is AUTORESET.NEXT_STEP
    assert all(reward in (-1, 0, 1) and len(scores) == 2 for reward, scores in snippet["finished"])
    assert snippet["model"].num_timesteps >= 128


NO_TORCH = """
import sys

class NoTorch:  # as if torch were not installed
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ImportError(f"no torch in this test ({name})")

sys.meta_path.insert(0, NoTorch())

import gymnasium

for opponent in ["random", "heuristic", "pretrained", sys.argv[1]]:
    # the module prefix imports tabletop_rl, which registers the ids: no import needed before make()
    env = gymnasium.make("tabletop_rl:tabletop/lost_cities-v0", opponent=opponent)
    env.action_space.seed(0)
    _, info = env.reset(seed=0)
    done = False
    while not done:
        _, reward, terminated, truncated, info = env.step(env.action_space.sample(info["action_mask"]))
        done = terminated or truncated
    assert "scores" in info, info
print("torch loaded:", "torch" in sys.modules)
"""


def test_no_torch_is_needed_for_any_opponent(tmp_path):
    policy = random_policy_file(tmp_path / "lc.safetensors", envs.make("lost_cities", wrapped=False).game)
    done = subprocess.run([sys.executable, "-c", NO_TORCH, str(policy)], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "torch loaded: False"


def test_the_sb3_example_runs():
    """examples/sb3_single_agent.py with a tiny budget: MaskablePPO trains and is evaluated on the id."""
    example = runpy.run_path(str(ROOT / "examples" / "sb3_single_agent.py"))
    before, after = example["main"](timesteps=256, episodes=4)
    assert -1 <= before <= 1 and -1 <= after <= 1

