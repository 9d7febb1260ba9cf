"""RLlib training (tabletop_rl.training.rllib): the multi-agent env, the seating, the modules, the export and a real
run.

Needs ``pip install -e ".[train,dev,rllib]"``; ``make test`` runs this file in its own venv (.venv-rllib),
because ray[rllib] pins another gymnasium than the main venv's.
"""

from __future__ import annotations

import dataclasses
import pickle
import runpy
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

ray = pytest.importorskip("ray", reason="RLlib tests need the rllib extra (make test runs them in .venv-rllib)")

from tabletop_rl import envs  # noqa: E402
from tabletop_rl.envs.core.agents import RandomAgent  # noqa: E402
from tabletop_rl.envs.core.match import play_game  # noqa: E402
from tabletop_rl.training import evaluate  # noqa: E402
from tabletop_rl.training.interop.rllib_env import (  # noqa: E402
    LEARNER,
    SeatMapping,
    TabletopMultiAgentEnv,
    fixed_agent_ids,
    snapshot_id,
)
from tabletop_rl.training.ppo.network import limit_threads  # noqa: E402
from tabletop_rl.training.rllib import main as rllib_main  # noqa: E402
from tabletop_rl.training.rllib_ppo.config import RllibConfig, read_config  # noqa: E402
from tabletop_rl.training.rllib_ppo.modules import AgentModule, MaskedActorCritic  # noqa: E402
from tabletop_rl.training.rllib_ppo.trainer import export_learner  # noqa: E402
from tabletop_rl.training.runtime.agents import load_agent  # noqa: E402
from tabletop_rl.training.runtime.policy import MLPPolicy, load_policy, read_policy_info  # noqa: E402
from tabletop_rl.training.runtime.printed_commands import interpreter  # noqa: E402

limit_threads()
CONFIGS = sorted((Path(__file__).parent.parent / "configs").glob("rllib_*.yaml"))


def random_rllib_episode(env: TabletopMultiAgentEnv, rng: np.random.Generator, seed: int) -> list[tuple]:
    """Play one episode with random legal actions; every (obs, rewards, terminateds, truncateds) returned."""
    obs, _ = env.reset(seed=seed)
    steps = [(obs, {}, {"__all__": False}, {"__all__": False})]
    while not (steps[-1][2]["__all__"] or steps[-1][3]["__all__"]):
        (agent, view), = steps[-1][0].items()
        action = int(rng.choice(np.flatnonzero(view["action_mask"])))
        obs, rewards, terminateds, truncateds, _ = env.step({agent: action})
        steps.append((obs, rewards, terminateds, truncateds))
    return steps


# ----------------------------------------------------------------------------- the multi-agent env
@pytest.mark.parametrize("game", envs.list_games())
def test_env_follows_rllib_turn_convention_for_every_game(game):
    """Only the seat on move observes (a seat may move several times in a row); at the end every seat
    gets its final observation and its return, and the episode is over for all."""
    env = TabletopMultiAgentEnv({"game": game})
    rng = np.random.default_rng(0)
    for seed in range(3):
        steps = random_rllib_episode(env, rng, seed)
        for obs, rewards, _, _ in steps[:-1]:
            (agent, view), = obs.items()
            assert env.observation_spaces[agent].contains(view)
            assert rewards in ({}, {agent: 0.0})
        final_obs, rewards, terminateds, truncateds = steps[-1]
        state = env.state
        assert terminateds["__all__"] != truncateds["__all__"] == state.is_truncated()
        played = {a for obs, *_ in steps[:-1] for a in obs}
        assert set(final_obs) == set(rewards) == played
        for agent in played:
            seat = env.possible_agents.index(agent)
            assert rewards[agent] == state.returns()[seat]
            np.testing.assert_array_equal(final_obs[agent]["observation"], state.observation(seat))
            assert not final_obs[agent]["action_mask"].any()
        assert sum(rewards.values()) == pytest.approx(0.0)


def test_env_is_seeded_truncates_at_the_turn_cap_and_refuses_bad_actions():
    env = TabletopMultiAgentEnv({"game": "lost_cities", "game_options": {"max_turns_per_round": 44}})
    first = random_rllib_episode(env, np.random.default_rng(1), seed=7)
    again = random_rllib_episode(env, np.random.default_rng(1), seed=7)
    assert [sorted(o) for o, *_ in first] == [sorted(o) for o, *_ in again]
    truncated = [random_rllib_episode(env, np.random.default_rng(s), seed=s)[-1] for s in range(20)]
    truncated = [t for t in truncated if t[3]["__all__"]]
    assert truncated, "no random game reached a turn cap of 44"
    _, rewards, terminateds, truncateds = truncated[0]
    assert set(rewards.values()) == {0.0} and not terminateds["__all__"] and all(truncateds.values())

    obs, _ = env.reset(seed=3)
    (agent, view), = obs.items()
    before = env.state.to_json()
    with pytest.raises(ValueError, match="illegal"):
        env.step({agent: int(np.flatnonzero(view["action_mask"] == 0)[0])})
    with pytest.raises(ValueError, match="on move"):
        env.step({"player_1" if agent == "player_0" else "player_0": 0})
    assert env.state.to_json() == before


# ----------------------------------------------------------------------------- seating
def test_seat_mapping_puts_the_learner_in_one_seat_and_draws_opponents_from_the_mix():
    mix = {"random": 2, "heuristic": 1, "self": 1}
    mapping = SeatMapping(3, mix, pool_size=2)
    ids = fixed_agent_ids(mix)
    assert ids == {"random": "fixed_random", "heuristic": "fixed_heuristic"}
    learner_seats, opponents = Counter(), Counter()
    for e in range(3000):
        episode = type("Episode", (), {"id_": f"episode-{e}"})()
        seating = [mapping(f"player_{i}", episode) for i in range(3)]
        assert seating == mapping.seating(episode.id_)  # every agent of an episode agrees
        assert seating.count(LEARNER) == 1
        learner_seats[seating.index(LEARNER)] += 1
        opponents.update(m for m in seating if m != LEARNER)
    assert all(900 < learner_seats[s] < 1100 for s in range(3))
    assert set(opponents) == {"fixed_random", "fixed_heuristic", snapshot_id(0), snapshot_id(1)}
    share = {m: n / 6000 for m, n in opponents.items()}
    assert share["fixed_random"] == pytest.approx(0.5, abs=0.03)
    assert share["fixed_heuristic"] == pytest.approx(0.25, abs=0.03)
    assert share[snapshot_id(0)] == pytest.approx(0.125, abs=0.03)
    path = "runs/x/policy.safetensors"
    assert fixed_agent_ids({path: 1, "pretrained": 1}) == {path: "fixed_0", "pretrained": "fixed_pretrained"}


# ----------------------------------------------------------------------------- the modules
def build_module(module_class, env, model_config):
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    agent = env.possible_agents[0]
    return RLModuleSpec(module_class=module_class, observation_space=env.observation_spaces[agent],
                        action_space=env.action_spaces[agent], model_config=model_config).build()


def observations(env: TabletopMultiAgentEnv, n: int) -> dict[str, torch.Tensor]:
    """``n`` observations of random play, batched as RLlib hands them to a module."""
    rng, views = np.random.default_rng(0), []
    while len(views) < n:
        for obs, *_ in random_rllib_episode(env, rng, seed=len(views))[:-1]:
            views += obs.values()
    return {"observation": torch.as_tensor(np.stack([v["observation"] for v in views[:n]])),
            "action_mask": torch.as_tensor(np.stack([v["action_mask"] for v in views[:n]]))}


def test_masked_actor_critic_is_the_policy_files_network_and_masks_illegal_actions(tmp_path):
    from ray.rllib.core.columns import Columns

    env = TabletopMultiAgentEnv({"game": "five_towers", "game_options": {"num_players": 3}})
    network = {"pi": [32, 16], "vf": [24], "activation": "tanh"}
    module = build_module(MaskedActorCritic, env, network)
    obs = observations(env, 64)
    obs["action_mask"][-1] = 0  # a terminal observation: no legal action, yet finite logits
    with torch.no_grad():
        logits = module.forward_inference({Columns.OBS: obs})[Columns.ACTION_DIST_INPUTS]
        values = module.compute_values({Columns.OBS: obs})
    assert torch.isfinite(logits).all() and values.shape == (64,)
    dist = torch.distributions.Categorical(logits=logits[:-1])
    assert (obs["action_mask"][:-1].gather(1, dist.sample((50,)).T) == 1).all()

    config = read_config(None, ["game=five_towers", "game_options.num_players=3", "network.pi=[32, 16]",
                                      "network.vf=[24]", "network.activation=tanh"])
    export_learner(module.get_state(), config, steps=5, path=tmp_path / "policy.safetensors")
    policy = load_policy(tmp_path / "policy.safetensors", env.game)  # the numpy MLP every agent runs
    assert policy.info.num_timesteps == 5 and policy.info.options["num_players"] == 3
    assert policy.info.network == network
    # the module's parameters are the file's tensors, name for name (SB3's names) and shape for shape
    assert {k: tuple(v.shape) for k, v in module.state_dict().items()} == policy.info.tensor_shapes()
    weights = {k: v.numpy() for k, v in module.state_dict().items()}
    for name, value in weights.items():  # rounded to float16 in the file
        np.testing.assert_array_equal(policy.weights[name], value.astype(np.float16).astype(np.float32))
    exact = MLPPolicy(weights, policy.info)
    masked = np.where(obs["action_mask"].numpy()[:-1] == 1, exact.logits(obs["observation"].numpy()[:-1]), -3.4e38)
    np.testing.assert_allclose(masked, logits[:-1].numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(exact.value(obs["observation"].numpy()), values.numpy(), rtol=1e-5, atol=1e-5)


def test_agent_module_plays_the_bot_on_each_seats_observation():
    from ray.rllib.core.columns import Columns

    env = TabletopMultiAgentEnv({"game": "lost_cities"})
    obs = observations(env, 40)
    for spec in ("random", "heuristic"):
        module = build_module(AgentModule, env, {"game": "lost_cities", "game_options": {}, "agent": spec,
                                                      "seed": 3})
        actions = module.forward_exploration({Columns.OBS: obs})[Columns.ACTIONS]
        assert (obs["action_mask"].numpy()[np.arange(40), actions] == 1).all()
    bot = load_agent("heuristic", env.game, seed=3)
    assert list(actions) == [bot.act(o, m) for o, m in zip(obs["observation"].numpy(),
                                                           obs["action_mask"].numpy(), strict=True)]
    with pytest.raises(NotImplementedError, match="never trained"):
        module.forward_train({Columns.OBS: obs})


# ----------------------------------------------------------------------------- config and run folders
@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_every_shipped_rllib_config_is_valid(path):
    config = read_config(path, [])
    assert config.name == path.stem and config.iterations > 0


def test_config_errors_come_before_anything_is_written(tmp_path, capsys):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"game": "lost_cities", "runs_dir": str(tmp_path / "runs")}))
    for bad, message in [("iterations=0", "iterations must be > 0"), ("ppo.lamda_=1", "did you mean 'ppo.lambda_'"),
                         ("num_env_runners=many", "num_env_runners must be 'auto'"),
                         ("opponents.mix={heuristc: 1}", "unknown agent"), ("opponents.mix={}", "opponents.mix {}"),
                         ("game_options.n_colours=9", "n_colours"), (f"runs_dir={path}", "is a file, not a folder"),
                         ("ppo.minibatch_size=99999", "minibatch_size must not exceed"),
                         ("network.vf=[64, 0]", "network.vf[1] must be > 0"), ("ppo.lr=.nan", "finite")]:
        assert rllib_main(["--config", str(path), "--set", bad]) == 2
        assert message in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()
    assert rllib_main(["--resume", str(tmp_path / "runs" / "nothing")]) == 2
    assert "nothing to resume" in capsys.readouterr().err


def test_make_test_runs_these_tests_in_the_rllib_venv():
    """CI (.ci/run -> make test) must exercise RLlib: the test target ends with test-rllib."""
    root = Path(__file__).parent.parent
    makefile = (root / "Makefile").read_text()
    recipe = makefile.split("\ntest: ", 1)[1].split("\n\n", 1)[0]
    assert "$(MAKE) --no-print-directory test-rllib" in recipe
    assert "tests/test_rllib.py" in makefile.split("\ntest-rllib: ", 1)[1] and '".[dev,rllib,render]"' in makefile
    assert "make test" in (root / ".ci" / "run").read_text()


def test_the_docs_describe_every_config_key():
    doc = (Path(__file__).parent.parent / "docs" / "rllib.md").read_text()
    config = RllibConfig()
    for field in dataclasses.fields(config):
        value = getattr(config, field.name)
        keys = [f"{field.name}.{f.name}" for f in dataclasses.fields(value)] if dataclasses.is_dataclass(value) \
            else [field.name]
        for key in keys:
            assert f"`{key}`" in doc, f"docs/rllib.md does not describe the config key {key}"


# ----------------------------------------------------------------------------- a real run on a local Ray
@pytest.fixture(scope="module")
def local_ray():
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def module_weights(checkpoint: Path, module_id: str) -> dict[str, np.ndarray]:
    """A module's weights in an RLlib checkpoint this test wrote (RLlib pickles them)."""
    with open(checkpoint / "learner_group" / "learner" / "rl_module" / module_id / "module_state.pkl", "rb") as f:
        return pickle.load(f)


def test_train_two_iterations_checkpoint_resume_export_evaluate(tmp_path, local_ray, capsys):
    """Five Towers with 3 players, one remote env runner, opponents random / heuristic / snapshots."""
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump({
        "game": "five_towers", "game_options": {"num_players": 3}, "runs_dir": str(tmp_path / "runs"),
        "iterations": 2, "num_env_runners": 1, "num_envs_per_env_runner": 2, "checkpoint_every": 1,
        "progress_bar": False, "ppo": {"train_batch_size": 200, "minibatch_size": 100, "num_epochs": 1},
        "network": {"pi": [16], "vf": [16]},
        "opponents": {"mix": {"random": 1, "heuristic": 1, "self": 1}, "snapshot_every": 1, "pool_size": 2}}))
    assert rllib_main(["--config", str(path)]) == 0
    run = tmp_path / "runs" / "tiny"
    printed = capsys.readouterr().out
    assert f"{interpreter()} -m tabletop_rl.training.evaluate five_towers {run} heuristic random --set num_players=3" \
        in printed
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == ["iter_000001", "iter_000002"]
    second = run / "checkpoints" / "iter_000002"
    learner = module_weights(second, LEARNER)
    assert set(learner) == set(module_weights(run / "checkpoints" / "iter_000001", LEARNER))
    # snapshot_every=1, pool of 2: slot 1 got the learner after iteration 2, slot 0 after iteration 1
    for name, weights in module_weights(second, snapshot_id(1)).items():
        np.testing.assert_array_equal(weights, learner[name])
    assert not all(np.array_equal(w, learner[k]) for k, w in module_weights(second, snapshot_id(0)).items())
    info = read_policy_info(run / "policy.safetensors")
    assert info.game == "five_towers" and info.options["num_players"] == 3 and info.num_timesteps > 0

    assert rllib_main(["--config", str(path)]) == 0  # the same name again: a new folder, the first untouched
    assert (tmp_path / "runs" / "tiny-2" / "policy.safetensors").is_file()
    assert rllib_main(["--resume", str(run), "--set", "ppo.lr=1"]) == 2  # what is learned cannot change
    assert rllib_main(["--resume", str(run), "--set", "iterations=3"]) == 0
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == ["iter_000002", "iter_000003"]
    resumed = read_policy_info(run / "policy.safetensors")
    assert resumed.num_timesteps > info.num_timesteps
    assert rllib_main(["--resume", str(run)]) == 0  # already complete: nothing trained, nothing rewritten
    assert "has done 3 iterations (iterations: 3)" in capsys.readouterr().out
    assert read_policy_info(run / "policy.safetensors") == resumed
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == ["iter_000002", "iter_000003"]

    # The exported policy is an ordinary agent for evaluation and play.
    game = envs.make("five_towers", wrapped=False, num_players=3)
    agent = load_agent(str(run), game.game, seed=0)
    play_game(game, [agent, RandomAgent(seed=1), RandomAgent(seed=2)], seed=0)
    results = evaluate.main(["five_towers", str(run), "random", "--players", "3", "--games", "3", "--quiet",
                             "--out", str(tmp_path / "eval")])
    assert (tmp_path / "eval" / "report.md").is_file() and str(run) in results.to_markdown()


def test_the_quickstart_example_runs(tmp_path, local_ray):
    """examples/rllib_quickstart.py, one iteration: trains, exports, and its policy plays the heuristic."""
    example = runpy.run_path(str(Path(__file__).parent.parent / "examples" / "rllib_quickstart.py"))
    win_rate = example["main"](iterations=1, out=tmp_path)
    assert 0 <= win_rate <= 1
    policy = load_policy(tmp_path / "policy.safetensors", envs.make("lost_cities", wrapped=False).game)
    assert policy.info.num_timesteps >= 2000
