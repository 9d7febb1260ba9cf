"""Training side: the single-seat env, the agent loader, the config, and train → checkpoint → resume → evaluate."""

from __future__ import annotations

import json
import multiprocessing
import os
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from safetensors import safe_open

from tabletop_rl import envs
from tabletop_rl.envs.core.agents import RandomAgent
from tabletop_rl.envs.core.match import first_place_shares, play_game
from tabletop_rl.training import train
from tabletop_rl.training.ppo import trainer, warm_start
from tabletop_rl.training.ppo.checkpoint import latest_checkpoint
from tabletop_rl.training.ppo.config import load_config
from tabletop_rl.training.ppo.network import limit_threads
from tabletop_rl.training.ppo.report import next_steps
from tabletop_rl.training.ppo.warm_start import imitate, teacher_games
from tabletop_rl.training.runtime import policy_paths
from tabletop_rl.training.runtime.agents import load_agent
from tabletop_rl.training.runtime.policy import PolicyAgent, PolicyFileError, PolicyInfo, load_policy
from tabletop_rl.training.runtime.printed_commands import interpreter
from tabletop_rl.training.runtime.single_seat import SingleSeatEnv
from tests.policy_helpers import network, random_policy_file, random_weights, seeded_torch_policy

limit_threads()  # what training does too: more threads thrash on a busy CPU

GAMES = [("lost_cities", {}), ("five_towers", {"num_players": 3})]

ROOT = Path(__file__).resolve().parents[1]


def test_limit_threads_limits_numpys_blas_too():
    """The opponents' numpy policies thrash on a busy CPU otherwise (16 ms instead of 0.3 per decision)."""
    import torch
    from threadpoolctl import threadpool_info

    blas = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
    assert blas and set(blas) == {1} and torch.get_num_threads() == 1


def random_episode(env: SingleSeatEnv, rng: np.random.Generator) -> tuple[list[float], float, dict]:
    """Play the learner's seat at random; rewards of every step, the final return of its seat, last info."""
    rewards, done = [], False
    while not done:
        action = rng.choice(np.flatnonzero(env.action_masks()))
        _, reward, terminated, truncated, info = env.step(action)
        rewards.append(reward)
        done = terminated or truncated
    return rewards, float(env.game_state.returns()[env.seat]), info


# ----------------------------------------------------------------------------- the single-seat env
@pytest.mark.parametrize("game, options", GAMES)
def test_terminal_reward_reaches_the_learner_in_every_seat_win_or_lose(game, options):
    """The flaw of PettingZoo's SB3 tutorial: a losing final reward never reached the learner."""
    rng = np.random.default_rng(0)
    n = envs.make(game, wrapped=False, **options).game.num_players
    for seat in range(n):
        env = SingleSeatEnv(game, options, opponents={"random": 1}, seat=seat)
        env.reset(seed=seat)
        outcomes = set()
        for _ in range(60):
            rewards, expected, info = random_episode(env, rng)
            assert env.seat == seat and info["seat"] == seat
            assert rewards[:-1] == [0.0] * (len(rewards) - 1)
            assert rewards[-1] == expected
            outcomes.add(np.sign(expected))
            if {-1.0, 1.0} <= outcomes:
                break
            env.reset()
        assert {-1.0, 1.0} <= outcomes, f"seat {seat}: never saw both a win and a loss"


def test_margin_reward_adds_the_score_margin_at_the_end():
    env = SingleSeatEnv("lost_cities", opponents={"random": 1}, margin_reward=0.01)
    env.reset(seed=3)
    rewards, expected, info = random_episode(env, np.random.default_rng(3))
    scores = env.game_state.scores()
    assert info["margin"] == scores[env.seat] - scores[1 - env.seat]
    assert rewards[-1] == pytest.approx(expected + 0.01 * info["margin"])


def test_outcome_reward_zero_makes_the_margin_the_whole_objective():
    env = SingleSeatEnv("palazzo", game_options={"num_players": 3}, opponents={"heuristic": 1}, margin_reward=0.02,
                        outcome_reward=0.0)
    env.reset(seed=5)
    rewards, expected, info = random_episode(env, np.random.default_rng(5))
    assert expected != 0 and rewards[-1] == pytest.approx(0.02 * info["margin"])
    with pytest.raises(ValueError, match="outcome_reward and margin_reward are both 0"):
        load_config(None, ["game=palazzo", "outcome_reward=0"])


def test_the_first_place_outcome_rewards_first_places_only_as_the_evaluations_count_them():
    """At 3-5 players the pairwise return also pays for second place; outcome="first_place" does not."""
    seen = set()
    for seed in range(40):
        pairwise = SingleSeatEnv("five_towers", game_options={"num_players": 4}, opponents={"random": 1}, seat=0)
        first = SingleSeatEnv("five_towers", game_options={"num_players": 4}, opponents={"random": 1}, seat=0,
                              outcome="first_place", margin_reward=0.01)
        for env in (pairwise, first):
            env.reset(seed=seed)
        rewards = [random_episode(env, np.random.default_rng(seed)) for env in (pairwise, first)]
        returns = pairwise.game_state.returns()
        share = first_place_shares(returns)[0]
        assert rewards[0][0][-1] == pytest.approx(returns[0])
        assert rewards[1][0][-1] == pytest.approx(share + 0.01 * rewards[1][2]["margin"])
        seen.add((share > 0, returns[0] > -1))
    assert (False, True) in seen and (True, True) in seen  # a second place: paid pairwise, not as a first place
    with pytest.raises(ValueError, match="outcome='second' is not allowed; expected one of pairwise, first_place"):
        SingleSeatEnv("five_towers", outcome="second")
    with pytest.raises(ValueError, match="outcome must be one of"):
        load_config(None, ["game=palazzo", "outcome=second"])


def test_opponents_see_only_their_own_observation():
    """Opponents get env.observe(their seat) — never the learner's hand or the engine state."""
    env = SingleSeatEnv("lost_cities", opponents={"random": 1}, seat=0)
    seen = []

    class Spy(RandomAgent):
        def act(self, observation, action_mask):
            seen.append((env.game_state.current_player, observation.copy(), action_mask.copy(),
                         env.game_state.clone()))
            return super().act(observation, action_mask)

    env.reset(seed=0)  # a seeded reset rebuilds the opponents: plant the spy after it
    env.opponents.fixed["random"] = Spy(seed=0)
    env.reset()
    random_episode(env, np.random.default_rng(0))
    rng = np.random.default_rng(1)
    learner_hand_varied = False
    assert seen and all(player == 1 for player, *_ in seen)
    for _, observation, mask, state in seen:
        assert isinstance(observation, np.ndarray) and isinstance(mask, np.ndarray)
        np.testing.assert_array_equal(observation, state.observation(1))
        np.testing.assert_array_equal(mask, state.action_mask())
        # Re-deal what player 1 cannot see (the learner's hand, the deck): its observation must not move.
        other = state.sample_hidden(1, rng)
        np.testing.assert_array_equal(other.observation(1), observation)
        learner_hand_varied |= not np.array_equal(other.observation(0), state.observation(0))
    assert learner_hand_varied, "the resampling never changed the learner's hidden cards"


def test_action_masks_are_the_learners_and_an_illegal_action_forfeits():
    env = SingleSeatEnv("lost_cities", opponents={"random": 1})
    _, info = env.reset(seed=5)
    rng = np.random.default_rng(5)
    for _ in range(30):
        state = env.game_state
        assert state.current_player == env.seat
        mask = env.action_masks()
        assert mask.dtype == bool
        np.testing.assert_array_equal(mask, state.action_mask().astype(bool))
        np.testing.assert_array_equal(info["action_mask"], state.action_mask())
        _, _, _, _, info = env.step(rng.choice(np.flatnonzero(mask)))
    # PettingZoo's illegal-move convention (tests/test_gymnasium.py has the details): nothing is played.
    before = env.game_state.to_json()
    _, reward, terminated, truncated, info = env.step(int(np.flatnonzero(~env.action_masks())[0]))
    assert (reward, terminated, truncated, info["illegal_action"]) == (-1.0, True, False, True)
    assert env.game_state.to_json() == before


def test_seat_is_random_or_fixed():
    env = SingleSeatEnv("five_towers", {"num_players": 3}, opponents={"random": 1})
    seats = set()
    for seed in range(30):
        env.reset(seed=seed)
        seats.add(env.seat)
        assert env.game_state.current_player == env.seat
    assert seats == {0, 1, 2}
    with pytest.raises(ValueError, match="seat"):
        SingleSeatEnv("five_towers", {"num_players": 3}, seat=3)


def test_an_empty_opponent_mix_is_refused_not_taken_for_random():
    for mix in ({}, {"random": 0, "heuristic": 0}):
        with pytest.raises(ValueError, match=r"^opponent mix \{.*\} must map agent specs"):
            SingleSeatEnv("lost_cities", opponents=mix)


def test_self_play_opponents_come_from_the_pool():
    env = SingleSeatEnv("lost_cities", opponents={"self": 1}, network=network())
    with pytest.raises(RuntimeError, match="set_pool"):
        env.reset(seed=0)
    info = PolicyInfo.for_game(env.game, network())
    env.set_pool([random_weights(info, seed=1), random_weights(info, seed=2)])
    env.reset(seed=0)
    assert env.seated["player_" + str(1 - env.seat)][0] in ("self[0]", "self[1]")
    random_episode(env, np.random.default_rng(0))
    with pytest.raises(ValueError, match="weights"):
        SingleSeatEnv("lost_cities", opponents={"random": -1})


def test_warm_start_imitates_the_teacher():
    data = teacher_games("lost_cities", {}, "heuristic", games=10, seed=0, margin_reward=0.01)
    assert len(data["actions"]) == len(data["obs"]) == len(data["rewards"]) > 10 * 80
    assert data["masks"][np.arange(len(data["actions"])), data["actions"]].all()
    assert set(np.abs(data["rewards"]).round(6)) != {1.0}  # the margin shaping is in the targets
    # Seeded: torch's global generator starts from a different seed in every process, and an unseeded
    # initialisation that happens to favour a frequent action (draw from the deck) already agrees 35-40%.
    policy = seeded_torch_policy(envs.make("lost_cities", wrapped=False).game, seed=0, pi=[64], vf=[64])
    before = imitate(policy, data, epochs=0, batch_size=128, learning_rate=3e-3, vf_coef=0.5, seed=0)
    after = imitate(policy, data, epochs=10, batch_size=128, learning_rate=3e-3, vf_coef=0.5, seed=0)
    assert after["agreement"] > max(0.5, before["agreement"] + 0.3)


def test_teacher_games_with_random_seats_record_the_teachers_moves_only(tmp_path):
    """A deterministic policy as teacher: every recorded move is its arg-max; a random seat's would not be."""
    game = envs.make("five_towers", wrapped=False, num_players=3).game
    teacher = random_policy_file(tmp_path / "teacher.safetensors", game, seed=4)
    data = teacher_games("five_towers", {"num_players": 3}, str(teacher), games=6, seed=2, random_seats=0.9)
    policy = load_policy(teacher)
    rows = np.arange(len(data["actions"]))
    logits = np.where(data["masks"], np.stack([policy.logits(o) for o in data["obs"][rows]]), -np.inf)
    np.testing.assert_array_equal(logits.argmax(axis=1), data["actions"])
    alone = teacher_games("five_towers", {"num_players": 3}, str(teacher), games=6, seed=2)
    assert len(data["actions"]) < 0.6 * len(alone["actions"])  # about one seat in three recorded


def test_dagger_games_record_the_teachers_answers_to_the_moves_the_student_plays(tmp_path):
    """The teacher (the lowest legal action) labels the student's decisions; the student's moves are the ones
    played: two students give two sets of games under the same seed, labelled the same way."""
    game = envs.make("lost_cities", wrapped=False).game
    students = [load_policy(random_policy_file(tmp_path / f"s{k}.safetensors", game, seed=k)) for k in (4, 5)]
    teacher = "tests.custom_agents:first"
    labelled = [teacher_games("lost_cities", {}, teacher, games=6, seed=1, student=(s.weights, s.info), stream=2)
                for s in students]
    for data in labelled:
        np.testing.assert_array_equal(data["actions"], data["masks"].argmax(axis=1))  # the teacher's answers
        assert len(data["actions"]) > 6 * 30 and set(np.abs(data["rewards"])) == {1.0}
    rows = np.arange(20)
    assert not np.array_equal(labelled[0]["obs"][rows], labelled[1]["obs"][rows])
    again = teacher_games("lost_cities", {}, teacher, games=6, seed=1, student=(students[0].weights,
                                                                                students[0].info), stream=2)
    np.testing.assert_array_equal(again["actions"], labelled[0]["actions"])


def test_teacher_games_that_skip_forced_decisions_record_only_the_real_ones():
    every = teacher_games("five_towers", {"num_players": 2}, "heuristic", games=4, seed=2)
    real = teacher_games("five_towers", {"num_players": 2}, "heuristic", games=4, seed=2, skip_forced=True)
    choices = every["masks"].sum(axis=1) > 1
    assert (real["masks"].sum(axis=1) > 1).all() and not choices.all()
    np.testing.assert_array_equal(real["actions"], every["actions"][choices])
    np.testing.assert_array_equal(real["obs"][np.arange(3)], every["obs"][np.flatnonzero(choices)[:3]])


def test_teacher_games_do_not_depend_on_how_many_processes_play_them(monkeypatch):
    monkeypatch.setattr(warm_start, "CHUNK", 2)  # 3 chunks of 2, 2 and 1 games
    alone = teacher_games("lost_cities", {}, "heuristic", games=5, seed=5, workers=1)
    shared = teacher_games("lost_cities", {}, "heuristic", games=5, seed=5, workers=2)
    assert alone.keys() == shared.keys() and len(alone["actions"]) > 5 * 80
    for key in alone:
        if key == "obs":  # SparseRows: compare every row, dense
            rows = np.arange(len(alone["actions"]))
            np.testing.assert_array_equal(alone[key][rows], shared[key][rows])
        else:
            np.testing.assert_array_equal(alone[key], shared[key])


# ----------------------------------------------------------------------------- agent loader and config
def test_load_agent_refuses_other_games_and_unknown_specs(tmp_path):
    lost_cities = envs.make("lost_cities", wrapped=False).game
    five_towers = envs.make("five_towers", wrapped=False).game
    assert isinstance(load_agent("random", lost_cities, seed=0), RandomAgent)
    assert load_agent("heuristic", five_towers, seed=0).act is not None
    path = random_policy_file(tmp_path / "policy.safetensors", lost_cities)
    assert isinstance(load_agent(str(path), lost_cities), PolicyAgent)
    assert isinstance(load_agent(str(tmp_path), lost_cities), PolicyAgent)  # a run folder: its policy
    with pytest.raises(PolicyFileError, match="policy for lost_cities; it cannot play five_towers"):
        load_agent(str(path), five_towers)
    six = envs.make("lost_cities", wrapped=False, n_colours=6).game
    with pytest.raises(PolicyFileError, match="observation"):
        load_agent(str(path), six)
    with pytest.raises(ValueError, match="unknown agent 'heuristc'"):
        load_agent("heuristc", lost_cities)
    assert isinstance(load_agent("pretrained", lost_cities), PolicyAgent)  # shipped in training/pretrained/
    assert isinstance(load_agent("pretrained", five_towers), PolicyAgent)
    for name in ("palazzo", "torres"):
        assert isinstance(load_agent("pretrained", envs.make(name, wrapped=False).game), PolicyAgent)


def test_pretrained_picks_the_policy_trained_for_the_options_and_else_says_what_exists(tmp_path, monkeypatch):
    monkeypatch.setattr(policy_paths, "PRETRAINED_DIR", tmp_path)
    two, three = (envs.make("five_towers", wrapped=False, num_players=n).game for n in (2, 3))
    for n, game in ((2, two), (3, three)):
        random_policy_file(tmp_path / f"five_towers_{n}p.safetensors", game)
    random_policy_file(tmp_path / "five_towers_other.safetensors", envs.make("lost_cities", wrapped=False).game)
    for n, game in ((2, two), (3, three)):
        assert policy_paths.pretrained_path(game) == tmp_path / f"five_towers_{n}p.safetensors"
        assert load_agent("pretrained", game).policy.info.options == game.options
    five = envs.make("five_towers", wrapped=False, num_players=5).game
    with pytest.raises(ValueError) as refused:
        load_agent("pretrained", five)
    assert str(refused.value) == (
        "no pretrained five_towers policy was trained for 5 players; shipped: 2 players (five_towers_2p.safetensors), "
        "3 players (five_towers_3p.safetensors); give a policy file's path to play one anyway, or train one with: "
        f"{interpreter()} -m tabletop_rl.training.train --config configs/five_towers.yaml "
        "--set 'game_options={\"num_players\": 5}'")
    # an option that leaves the spaces alone still needs a policy trained for it
    with pytest.raises(ValueError, match=r"trained for 3 players with final_partial_round=False; shipped: 2 players"):
        load_agent("pretrained", envs.make("five_towers", wrapped=False, num_players=3, final_partial_round=False).game)
    # what a run prints to do next plays its options, and the shipped policy only where one fits them
    evaluate = [next_steps(game, Path("runs/x"), Path("runs/x/policy.safetensors"), 8, False)[1][1]
                for game in (three, five)]
    assert evaluate[0].endswith("runs/x/policy.safetensors random heuristic pretrained --games 400 --set num_players=3")
    assert evaluate[1].endswith("runs/x/policy.safetensors random heuristic --games 400 --set num_players=5")
    # an option added to a game after a policy was trained had its default then
    info = policy_paths.read_policy_info(tmp_path / "five_towers_2p.safetensors")
    assert policy_paths.trained_for(PolicyInfo(**{**vars(info), "options": {"num_players": 2}}), two)


def test_pretrained_names_what_is_shipped_when_a_game_has_none(tmp_path, monkeypatch):
    monkeypatch.setattr(policy_paths, "PRETRAINED_DIR", tmp_path)
    random_policy_file(tmp_path / "lost_cities_2p.safetensors", envs.make("lost_cities", wrapped=False).game)
    with pytest.raises(ValueError, match=r"^no pretrained policy is shipped for five_towers; train one with"):
        load_agent("pretrained", envs.make("five_towers", wrapped=False).game)


def test_the_hint_to_train_a_missing_lost_cities_policy_runs_as_printed():
    """make train's config imitates the shipped policy, which fits no other options: the printed command imitates
    the heuristic instead, and its run is built (game, options, teacher); without that it is refused in one line."""
    game = envs.make("lost_cities", wrapped=False, n_colours=6).game
    with pytest.raises(ValueError) as refused:
        load_agent("pretrained", game)
    args = shlex.split(str(refused.value).partition("train one with: ")[2])[3:]
    assert args[:2] == ["--config", "configs/lost_cities.yaml"] and args[2::2] == ["--set"] * 2
    config = policy_paths.CONFIGS_DIR / "lost_cities.yaml"
    assert trainer.Trainer(load_config(config, args[3::2])).game.options["n_colours"] == 6
    with pytest.raises(ValueError, match=r"^warm_start.teacher=pretrained: no shipped lost_cities policy fits these "
                                         r"options \(2 players with n_colours=6\); add --set warm_start.teacher="):
        trainer.Trainer(load_config(config, args[3:4]))


def test_every_shipped_policy_is_named_for_its_game_and_player_count():
    shipped = {path.name: info for game in envs.list_games() for path, info in policy_paths.shipped_policies(game)}
    assert set(shipped) == {p.name for p in policy_paths.PRETRAINED_DIR.glob("*.safetensors")}
    for name, info in shipped.items():
        game = envs.make(info.game, wrapped=False, **info.options).game
        assert name == f"{info.game}_{game.num_players}p.safetensors"
        assert policy_paths.non_default_options(game, info.options).keys() <= {"num_players"}  # default options only


def test_next_commands_name_the_python_that_runs(tmp_path, monkeypatch):
    """Bare ``python`` only when the PATH finds the running interpreter under that name; else its path, relative
    to the current folder when inside it. A venv's python links to the system's but is not the same command."""
    system = tmp_path / "usr" / "bin"
    venv = tmp_path / "repo" / ".venv" / "bin"
    for folder in (system, venv, tmp_path / "elsewhere"):
        folder.mkdir(parents=True)
    (system / "python").write_text("")
    (system / "python").chmod(0o755)
    (venv / "python").symlink_to(system / "python")
    monkeypatch.setattr(sys, "executable", str(venv / "python"))
    monkeypatch.setenv("PATH", str(system))
    monkeypatch.chdir(tmp_path / "repo")
    assert interpreter() == ".venv/bin/python"
    lost_cities = envs.make("lost_cities", wrapped=False).game
    play, evaluate, resume, board = (line for _, line in next_steps(lost_cities, Path("runs/my run"),
                                                                    Path("runs/my run/policy.safetensors"), 8, True))
    assert play == (".venv/bin/python -m tabletop_rl.training.play lost_cities "
                    "--opponent 'runs/my run/policy.safetensors'")
    assert evaluate.startswith(".venv/bin/python -m tabletop_rl.training.evaluate lost_cities 'runs/my run/")
    assert resume == ".venv/bin/python -m tabletop_rl.training.train --resume 'runs/my run' --set total_timesteps=16"
    assert board == ".venv/bin/python -m tensorboard.main --logdir 'runs/my run/tb'"
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert interpreter() == str(venv / "python")
    monkeypatch.setenv("PATH", f"{venv}{os.pathsep}{system}")  # the venv activated
    assert interpreter() == "python"
    monkeypatch.setattr(policy_paths, "PRETRAINED_DIR", tmp_path)  # the hint of a missing policy
    with pytest.raises(ValueError, match=r"train one with: python -m tabletop_rl.training.train --config "
                                         r"configs/five_towers.yaml$"):
        load_agent("pretrained", envs.make("five_towers", wrapped=False).game)


def test_next_commands_run_as_printed(tmp_path, monkeypatch):
    """The printed 'play against it' command, split as a shell would and run with no python on the PATH (printed
    under that PATH too: with the venv activated, ``python`` on the PATH is the running one and is printed bare)."""
    monkeypatch.setenv("PATH", str(tmp_path))
    line = next_steps(envs.make("lost_cities", wrapped=False).game, tmp_path,
                      policy_paths.PRETRAINED_DIR / "lost_cities_2p.safetensors", 8, True)[0][1]
    records = ROOT / "runs" / "games"  # the command runs where it was printed for, the checkout: it records there
    kept = set(records.iterdir()) if records.is_dir() else None
    try:
        done = subprocess.run(shlex.split(line), input="q\n", capture_output=True, text=True, timeout=120,
                              env={**os.environ, "PATH": str(tmp_path)}, cwd=ROOT)
    finally:  # the user's own records stay; this game's goes
        for path in set(records.iterdir()) - (kept or set()) if records.is_dir() else ():
            path.unlink()
        if kept is None and records.is_dir():
            records.rmdir()
            if not any(records.parent.iterdir()):
                records.parent.rmdir()
    assert done.returncode == 0, done.stderr
    assert "Lost Cities, 2 players." in done.stdout and "Game abandoned." in done.stdout
    assert "The record of this game (unfinished): runs/games/" in done.stdout


def test_config_overrides_and_errors(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"game": "lost_cities", "ppo": {"learning_rate": 1e-3}}))
    c = load_config(path, ["ppo.learning_rate=1e-4", "total_timesteps=2e5", "network.pi=[64, 64]",
                           "opponents.mix={random: 1}", "seat=1", "max_minutes=null"])
    assert (c.name, c.ppo.learning_rate, c.total_timesteps, c.network.pi) == ("c", 1e-4, 200_000, [64, 64])
    assert (c.opponents.mix, c.seat, c.max_minutes) == ({"random": 1.0}, 1, None)
    for bad, message in [("ppo.lerning_rate=1", "did you mean 'ppo.learning_rate'"),
                         ("ppo.n_steps=1.5", "expected integer"), ("network.pi=3", "expected a list"),
                         ("eval.games=0", "must be > 0"), ("vec_env=threads", "must be one of"),
                         ("nonsense", "expected key=value")]:
        with pytest.raises(ValueError, match=message):
            load_config(path, [bad])


def files_in(folder: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("bad, message", [
    (["--set", "game_options.n_colours=[5"], "error: --set 'game_options.n_colours=[5': the value is not valid "
                                             "YAML: expected ',' or ']', but got '<stream end>'"),
    (["--set", "opponents.mix={}"], "error: bad config: opponents.mix {} must map agent specs"),
    (["--set", "opponents.mix={random: 0, self: 0}"], "error: bad config: opponents.mix {'random': 0.0, 'self': 0.0}"),
    (["--set", "runs_dir=FILE"], "error: bad config: runs_dir 'FILE' cannot be made: FILE is a file, not a folder"),
    (["--set", "runs_dir=FILE/runs"], "error: bad config: runs_dir 'FILE/runs' cannot be made: FILE is a file"),
    (["--set", "runs_dir=" + "r" * 300], "cannot be made: File name too long"),
    (["--set", "name=" + "n" * 300], "error: bad config: name must be at most 240 bytes long (got 300)"),
    (["--set", 'name="a\\0b"'], "error: bad config: name must be a folder name, without '/' or NUL (got 'a\\x00b')"),
    (["--set", "warm_start.random_seats=1"], "error: bad config: warm_start.random_seats must be >= 0 and < 1 "
                                             "(got 1.0)"),
    (["--set", "warm_start.dagger_rounds=-1"], "error: bad config: warm_start.dagger_rounds must be >= 0 (got -1)"),
    (["--config", "NOT_UTF8"], "error: NOT_UTF8 is not UTF-8 text (byte 0xe9 at offset 27)"),
    (["--config", "NOT_YAML"], "error: NOT_YAML is not valid YAML: mapping values are not allowed here (line 1, "
                               "column 11)"),
    (["--config", "MISSING"], "python -m tabletop_rl.training.train: error: no such file: MISSING"),
], ids=["yaml", "empty mix", "zero mix", "runs_dir file", "runs_dir below file", "runs_dir too long", "name too long",
        "name NUL", "random seats", "dagger rounds", "utf8", "yaml file", "missing file"])
def test_train_refuses_a_bad_config_in_one_line_before_writing_anything(tmp_path, capsys, bad, message):
    args = tiny_config(tmp_path, "lost_cities")
    files = {"FILE": tmp_path / "file", "NOT_UTF8": tmp_path / "latin1.yaml", "NOT_YAML": tmp_path / "bad.yaml",
             "MISSING": tmp_path / "nope.yaml"}
    files["FILE"].write_text("not a folder")
    files["NOT_UTF8"].write_bytes("game: lost_cities\nname: café\n".encode("latin-1"))
    files["NOT_YAML"].write_text("game: lost: cities\n")  # MISSING stays missing
    for key, path in files.items():
        bad, message = [a.replace(key, str(path)) for a in bad], message.replace(key, str(path))
    before = files_in(tmp_path)
    assert train.main([*args, *bad]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err
    assert files_in(tmp_path) == before


@pytest.mark.parametrize("path", sorted(p for p in (Path(__file__).parent.parent / "configs").glob("*.yaml")
                                         if not p.name.startswith("rllib_")), ids=str)  # those: test_rllib.py
def test_every_shipped_config_is_valid(path):
    """Keys, values, the game's options, every agent it names and its init_from policy all check out."""
    train.Trainer(load_config(path))


# ----------------------------------------------------------------------------- end to end
def tiny_config(tmp_path, game: str, **extra) -> list[str]:
    """A run of two rollouts of 2 × 64 steps: seconds, but every feature is exercised."""
    path = tmp_path / f"{game}.yaml"
    path.write_text(yaml.safe_dump({
        "game": game, "runs_dir": str(tmp_path / "runs"), "total_timesteps": 256, "n_envs": 2,
        "progress_bar": False, "checkpoint_every": 128, "seed": 3,
        "ppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1},
        "network": {"pi": [16], "vf": [16]},
        "opponents": {"mix": {"random": 1, "heuristic": 1, "self": 1}, "snapshot_every": 128, "pool_size": 2},
        "eval": {"every": 128, "games": 6, "final_games": 6}, **extra}))
    return ["--config", str(path)]


@pytest.mark.parametrize("players, vec_env", [(2, "subproc"), (3, "dummy"), (4, "batched")])
def test_train_checkpoint_resume_evaluate(tmp_path, capsys, players, vec_env):
    args = tiny_config(tmp_path, "five_towers", game_options={"num_players": players}, vec_env=vec_env,
                       warm_start={"teacher": "heuristic", "games": 2, "epochs": 1})
    assert train.main(args) == 0
    run = tmp_path / "runs" / "five_towers"
    assert {p.name for p in (run / "checkpoints").iterdir()} == {
        "step_000000000128.json", "step_000000000128.safetensors",
        "step_000000000256.json", "step_000000000256.safetensors"}
    for name in ("report.md", "learning_curve.png", "policy.safetensors", "eval_history.json", "config.yaml"):
        assert (run / name).is_file(), name
    assert list((run / "tb").iterdir())
    report = (run / "report.md").read_text()
    assert "| heuristic | 6 |" in report and "Warm start: imitated `heuristic`" in report
    assert f"{interpreter()} -m tabletop_rl.training.train --resume {run} --set total_timesteps=512" in report
    printed = capsys.readouterr().out
    policy = run / "policy.safetensors"
    assert f"{interpreter()} -m tabletop_rl.training.play five_towers --opponent {policy}" in printed

    # A finished run is not trained or evaluated again: --resume says so and how to extend it.
    history = (run / "eval_history.json").read_text()
    assert train.main(["--resume", str(run)]) == 0
    assert capsys.readouterr().out.strip().endswith(
        f"is finished: 256 steps of total_timesteps=256, evaluated, policy in {run / 'policy.safetensors'}. To train "
        f"it further, raise the total: {interpreter()} -m tabletop_rl.training.train --resume {run} "
        "--set total_timesteps=512")
    assert (run / "eval_history.json").read_text() == history
    # Raising total_timesteps extends it (a resumable key; so is vec_env: a worker start costs seconds).
    assert train.main(["--resume", str(run), "--set", "total_timesteps=384", "--set", "vec_env=dummy"]) == 0
    state = json.loads((run / "checkpoints" / "step_000000000384.json").read_text())
    assert state["pool_size"] == 2 and state["trainer"]["last"]["snapshot"] == 256 and state["trainer"]["finished"]
    with safe_open(str(run / "checkpoints" / "step_000000000384.safetensors"), "np") as f:
        names = set(f.keys())
    assert {"rng/torch", "optimizer/0/exp_avg", "pool/1/action_net.weight", "action_net.weight"} <= names
    steps = [r["step"] for r in json.loads((run / "eval_history.json").read_text()) if r["opponent"] == "random"]
    assert steps == [0, 128, 256, 384]  # no evaluation repeated
    with pytest.raises(ValueError, match="cannot change"):
        train.resolve_config(train.parse_args(["--resume", str(run), "--set", "ppo.n_steps=8"]))

    info = load_policy(run / "policy.safetensors").info
    assert (info.game, info.options["num_players"], info.num_timesteps) == ("five_towers", players, 384)
    assert load_policy(run / "policy-256.safetensors").info.num_timesteps == 256  # the policy before extending
    game = envs.make("five_towers", wrapped=False, num_players=players).game
    agent = load_agent(str(run), game, seed=0)
    env = envs.make("five_towers", wrapped=False, num_players=players)
    for seed in range(2):
        play_game(env, [agent] + [RandomAgent(seed=s) for s in range(players - 1)], seed=seed)


def test_random_states_survive_json():
    """Checkpoints keep the Python / numpy / torch generators as JSON and a uint8 tensor: exactly."""
    import random

    import torch

    from tabletop_rl.training.ppo.checkpoint import rng_state, set_rng_state

    state = json.loads(json.dumps({**rng_state(), "torch": rng_state()["torch"].tolist()}))
    draws = random.random(), np.random.random(), torch.rand(1).item()
    random.seed(1), np.random.seed(1), torch.manual_seed(1)
    set_rng_state(state)
    assert (random.random(), np.random.random(), torch.rand(1).item()) == draws


@pytest.fixture
def sigint_handled():
    """Ctrl-C reaches this process. A shell's background job (`make test &`, nohup) inherits SIGINT ignored, and
    the trainer rightly leaves an ignored signal alone: the tests that raise SIGINT would then see no stop."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.mark.usefixtures("sigint_handled")
@pytest.mark.parametrize("vec_env", [{"vec_env": "dummy"}, {"vec_env": "batched", "num_workers": 2}],
                         ids=["dummy", "batched-workers"])
def test_an_interrupted_run_checkpoints_its_last_boundary_and_resumes(tmp_path, monkeypatch, vec_env):
    """Ctrl-C mid-rollout: the unfinished rollout is dropped, the step count stays exact, --resume finishes; the
    batched env's worker processes end with the run."""
    original = train.Trainer.at_boundary

    def interrupt_at_128(self, model, step, loop):
        original(self, model, step, loop)
        if step == 128:
            signal.raise_signal(signal.SIGINT)  # caught by the trainer: stop after the next step

    monkeypatch.setattr(train.Trainer, "at_boundary", interrupt_at_128)
    args = tiny_config(tmp_path, "lost_cities", **vec_env)
    assert train.main([*args, "--set", "opponents.mix={heuristc: 1}"]) == 2  # a typo fails before any work
    run = tmp_path / "runs" / "lost_cities"
    assert not run.exists()
    assert train.main(args) == 130
    assert not [p for p in multiprocessing.active_children() if p.name.startswith("tabletop-games")]
    assert latest_checkpoint(run).name == "step_000000000128.json"
    assert not (run / "policy.safetensors").exists()
    assert "Interrupted (SIGINT)" in (run / "report.md").read_text()
    assert load_agent(str(run), envs.make("lost_cities", wrapped=False).game)  # its newest checkpoint
    assert load_policy(run / "checkpoints" / "step_000000000128.safetensors").info.num_timesteps == 128

    monkeypatch.setattr(train.Trainer, "at_boundary", original)
    assert train.main(["--resume", str(run)]) == 0
    assert latest_checkpoint(run).name == "step_000000000256.json"
    assert "Training completed" in (run / "report.md").read_text()


def test_resume_skips_a_damaged_checkpoint_and_changes_nothing_when_none_reads_back(tmp_path, capsys):
    assert train.main(tiny_config(tmp_path, "lost_cities", vec_env="dummy")) == 0
    run = tmp_path / "runs" / "lost_cities"
    older, newer = (run / "checkpoints" / f"step_000000000{step}.json" for step in (128, 256))
    good = older.read_bytes()
    newer.write_bytes(b"\xff not JSON")
    older.write_text("{}")
    capsys.readouterr()
    before = files_in(run)
    assert train.main(["--resume", str(run), "--set", "total_timesteps=512"]) == 2
    err = capsys.readouterr().err
    assert err == (f"python -m tabletop_rl.training.train: error: nothing to resume: none of the 2 checkpoints of "
                   f"{run} reads back; the newest: checkpoint {newer} is incomplete or damaged (UnicodeDecodeError: "
                   "'utf-8' codec can't decode byte 0xff in position 0: invalid start byte)\n")
    assert files_in(run) == before  # config.yaml still says total_timesteps: 256

    # The newest damaged (a value of the wrong type), the older one whole: training goes on from the older one.
    older.write_bytes(good)
    doc = json.loads(good)
    newer.write_text(json.dumps({**doc, "trainer": {**doc["trainer"], "last": 5}}))
    assert train.main(["--resume", str(run)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"checkpoint {newer} is incomplete or damaged (TypeError: trainer.last must be a JSON "
                          "object, got 5): skipped, resuming from step 128\n")
    assert json.loads(newer.read_text())["trainer"]["finished"]  # the run trained to 256 again, and finished


def test_a_stop_in_the_warm_start_says_that_it_is_not_kept_and_resume_plays_it_again(tmp_path, monkeypatch, capsys):
    def stopped(*args, **kwargs):
        signal.raise_signal(signal.SIGTERM)

    monkeypatch.setattr(trainer, "teacher_games", stopped)
    args = tiny_config(tmp_path, "lost_cities", vec_env="dummy", warm_start={"teacher": "heuristic", "games": 2})
    with pytest.raises(SystemExit) as stop:
        train.main(args)
    run = tmp_path / "runs" / "lost_cities"
    assert stop.value.code == 143 and sorted(p.name for p in run.iterdir()) == ["config.yaml"]
    assert capsys.readouterr().err == (f"lost_cities: stopped by SIGTERM; --resume {run} starts the run again: "
                                       "nothing is saved before the first checkpoint (a warm start is not kept)\n")
    monkeypatch.undo()
    assert train.main(["--resume", str(run)]) == 0
    assert "Warm start: imitated `heuristic` on" in (run / "report.md").read_text()


@pytest.mark.usefixtures("sigint_handled")
def test_a_run_stopped_before_its_first_checkpoint_resumes_from_init_from(tmp_path, monkeypatch):
    source = random_policy_file(tmp_path / "source.safetensors", envs.make("lost_cities", wrapped=False).game,
                                seed=5, pi=(16,), vf=(16,))
    original = train.Trainer.new_model

    def stopped(self, venv):
        signal.raise_signal(signal.SIGINT)

    monkeypatch.setattr(train.Trainer, "new_model", stopped)
    args = tiny_config(tmp_path, "lost_cities", vec_env="dummy", max_minutes=1e-6, init_from=str(source))
    with pytest.raises(SystemExit, match="130"):
        train.main(args)
    monkeypatch.setattr(train.Trainer, "new_model", original)
    run = tmp_path / "runs" / "lost_cities"
    assert train.main(["--resume", str(run)]) == 0
    resumed = load_policy(run / "policy.safetensors").weights  # stopped by max_minutes at step 0
    assert all(np.array_equal(w, resumed[k]) for k, w in load_policy(source).weights.items())


def test_max_minutes_stops_at_a_boundary_and_still_reports(tmp_path, capsys):
    args = tiny_config(tmp_path, "five_towers", vec_env="dummy", max_minutes=1e-6)
    assert train.main(args) == 0
    run = tmp_path / "runs" / "five_towers"
    assert latest_checkpoint(run).name == "step_000000000000.json"
    assert (run / "policy.safetensors").is_file()
    report = (run / "report.md").read_text()
    assert "Stopped by max_minutes" in report and "| random | 6 |" in report
    # not yet at total_timesteps
    assert f"- continue it: `{interpreter()} -m tabletop_rl.training.train --resume {run}`" in report

    # Runs never lose work: the same config again gets a folder of its own, and a bad value fails
    # before any folder is made.
    files = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    assert train.main(args) == 0
    assert f"this run goes to {run}-2" in capsys.readouterr().out
    assert (tmp_path / "runs" / "five_towers-2" / "policy.safetensors").is_file()
    assert files == {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    assert train.main([*args, "--set", "ppo.learning_rate=-1e-4"]) == 2
    assert "ppo.learning_rate must be > 0" in capsys.readouterr().err
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["five_towers", "five_towers-2"]


def test_max_games_counts_games_of_experience_across_a_resume(tmp_path, capsys):
    """Games of experience (the learner's training episodes that ended) are counted at each evaluation and in the
    checkpoint, and max_games stops at the first boundary past it; here with forced decisions skipped and a shared
    trunk (a format-3 policy file)."""
    args = tiny_config(tmp_path, "five_towers", vec_env="batched", max_games=3, skip_forced=True,
                       total_timesteps=2048, network={"shared": [16], "pi": [8], "vf": []})
    assert train.main(args) == 0
    run = tmp_path / "runs" / "five_towers"
    printed = capsys.readouterr().out
    assert "Stopped by max_games=3." in printed and "games/s" in printed
    state = json.loads(latest_checkpoint(run).read_text())
    games, step = state["trainer"]["games"], state["step"]
    assert 3 <= games <= 10 and step in (128, 256, 384)  # 2 games x 64 steps per rollout; ~25 learner steps a game
    history = json.loads((run / "eval_history.json").read_text())
    assert history[0]["trained_games"] == 0 and history[-1]["trained_games"] == games
    assert load_policy(run / "policy.safetensors").info.network["shared"] == [16]
    assert train.main(["--resume", str(run), "--set", "max_games=null", "--set", f"total_timesteps={step + 128}"]) == 0
    assert json.loads(latest_checkpoint(run).read_text())["trainer"]["games"] > games


def test_init_from_fine_tunes_a_policy_and_refuses_another_network(tmp_path, capsys):
    source_args = tiny_config(tmp_path, "lost_cities", vec_env="dummy", max_minutes=1e-6)
    assert train.main(source_args) == 0
    source = load_policy(tmp_path / "runs" / "lost_cities" / "policy.safetensors")

    args = tiny_config(tmp_path, "lost_cities", name="tuned", vec_env="dummy", max_minutes=1e-6,
                       init_from=str(tmp_path / "runs" / "lost_cities"))
    assert train.main(args) == 0
    tuned = load_policy(tmp_path / "runs" / "tuned" / "policy.safetensors")  # stopped at step 0: same weights
    assert source.weights.keys() == tuned.weights.keys()
    assert all(np.array_equal(source.weights[k], tuned.weights[k]) for k in source.weights)
    assert "Initialised from" in (tmp_path / "runs" / "tuned" / "report.md").read_text()

    assert train.main([*args, "--set", "network.pi=[32]"]) == 2
    assert "set `network` to the sizes" in capsys.readouterr().err
    assert train.main([*args, "--set", "warm_start.teacher=heuristic"]) == 2
    assert "choose one" in capsys.readouterr().err
    assert not (tmp_path / "runs" / "tuned-2").exists()
    shutil.rmtree(tmp_path / "runs" / "lost_cities")  # a resumed run holds its weights: init_from is not read
    assert train.main(["--resume", str(tmp_path / "runs" / "tuned"), "--set", "max_minutes=null"]) == 0
