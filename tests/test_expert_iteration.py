"""Expert iteration (``tabletop_rl.training.expert_iteration``): what is recorded (the search seat's real
choices only, legal, deterministic), what the fit changes (the actor, towards the search; never the critic),
resuming (only missing games are played, an earlier policy is kept) and bad settings."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from tabletop_rl.training.expert_iteration import main
from tabletop_rl.training.ppo.expert_iteration import Settings, fit, load_chunks, record_chunk
from tabletop_rl.training.runtime.policy import load_policy
from tabletop_rl.training.runtime.policy_paths import policy_path

SMALL = "worlds=2,k=2"  # budgets small enough for tests


@pytest.fixture(scope="module")
def lost_cities():
    import tabletop_rl

    return tabletop_rl.make("lost_cities").unwrapped.game


def small_settings(game, games=2, seed=3) -> Settings:
    return Settings("lost_cities", {}, str(policy_path("pretrained", game)), SMALL, "heuristic", games, seed)


def test_recording_holds_only_real_choices_of_the_search_seat_and_is_deterministic(lost_cities):
    settings = small_settings(lost_cities)
    data = record_chunk(settings, 0)
    assert len(data["margins"]) == 2
    assert (data["masks"].sum(1) >= 2).all(), "single-option decisions carry nothing to learn"
    assert data["masks"][np.arange(len(data["actions"])), data["actions"]].all(), "every recorded move is legal"
    assert 0 < data["searched"].sum() < len(data["actions"])
    assert data["obs"].shape == (len(data["actions"]), lost_cities.observation_size)
    again = record_chunk(settings, 0)
    for key in data:
        np.testing.assert_array_equal(data[key], again[key])
    other = record_chunk(replace(settings, seed=4), 0)
    assert not np.array_equal(data["margins"], other["margins"]) or len(data["actions"]) != len(other["actions"])


def test_fit_moves_the_actor_towards_the_search_and_keeps_the_critic(lost_cities):
    policy = load_policy(policy_path("pretrained", lost_cities))
    data = record_chunk(small_settings(lost_cities, games=2), 0)
    # make the targets disagree with the network on purpose: the least likely legal move everywhere
    logits = policy.logits(data["obs"])
    logits[~data["masks"]] = np.inf
    data["actions"] = logits.argmin(1)
    lines: list[str] = []
    weights = fit(policy, data, data, epochs=10, learning_rate=1e-3, batch_size=16, seed=0, report=lines.append)
    for name, value in policy.weights.items():
        if "value_net" in name:
            np.testing.assert_array_equal(weights[name], value)
    after = type(policy)(weights, policy.info).logits(data["obs"])
    after[~data["masks"]] = -np.inf
    before = policy.logits(data["obs"])
    before[~data["masks"]] = -np.inf
    agree = lambda x: (x.argmax(1) == data["actions"]).mean()  # noqa: E731
    assert agree(before) == 0 and agree(after) > 0.5
    assert lines[0].startswith("before") and lines[-1].startswith("epoch 10")


def test_a_run_writes_a_policy_and_resumes_without_replaying(lost_cities, tmp_path, capsys):
    out = tmp_path / "ei"
    args = ["lost_cities", "--games", "2", "--search", SMALL, "--epochs", "1", "--seed", "3", "--out", str(out),
            "--quiet"]
    assert main(args) == out / "policy.safetensors"
    policy = load_policy(out / "policy.safetensors", lost_cities)
    assert policy.info.provenance["expert_iteration"]["games"] == 2
    assert json.loads((out / "settings.json").read_text())["search"] == SMALL
    chunk = out / "chunks" / "chunk_00000.npz"
    recorded = chunk.stat().st_mtime_ns
    data, held_out = load_chunks(out, 2)
    assert len(data["margins"]) == 2 and len(held_out["actions"]) == 0
    # a refit with other fit settings: nothing replayed, the first policy kept beside the new one
    main(["--resume", str(out), "--epochs", "2", "--quiet"])
    assert chunk.stat().st_mtime_ns == recorded
    assert (out / "policy-1.safetensors").is_file() and (out / "report-1.json").is_file()
    assert json.loads((out / "report.json").read_text())["settings"]["epochs"] == 2
    assert "games of search:policy=" in capsys.readouterr().out


@pytest.mark.parametrize("args, message", [
    (["--search", "worlds=many"], "is not an integer"),
    (["--search", "policy=x.safetensors"], "--policy"),
    (["--epochs", "0"], "argument --epochs: expected an integer >= 1, got '0'"),
    (["--seed", "-1"], "argument --seed: expected a non-negative integer, got '-1'"),
    (["--opponent", "heuristc"], "unknown agent"),
    (["--opponent", "tests.custom_agents:broken"], "agent tests.custom_agents:broken: the factory raised "
                                                   "ZeroDivisionError: division by zero"),
    (["--policy", "missing.safetensors"], "no such file"),
])
def test_bad_settings_fail_before_any_game(tmp_path, capsys, args, message):
    with pytest.raises(SystemExit):
        main(["lost_cities", "--out", str(tmp_path / "ei"), "--quiet", *args])
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1  # one line
    assert not (tmp_path / "ei").exists()


def test_resume_needs_a_run_folder(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["--resume", str(tmp_path)])
    assert "not an expert-iteration run folder" in capsys.readouterr().err


@pytest.mark.parametrize("content, message", [
    (b"\xff{", "is not the JSON an expert-iteration run writes: 'utf-8' codec can't decode byte 0xff"),
    (b"{not json", "is not the JSON an expert-iteration run writes: Expecting property name"),
    (b"[]", "does not hold an expert-iteration run's settings: expected a JSON object with the keys game, options"),
    (b'{"game": "lost_cities"}', "does not hold an expert-iteration run's settings"),
])
def test_resume_with_damaged_settings_says_so_in_one_line(tmp_path, capsys, content, message):
    (tmp_path / "settings.json").write_bytes(content)
    with pytest.raises(SystemExit) as stop:
        main(["--resume", str(tmp_path)])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and message in err and str(tmp_path / "settings.json") in err
    assert err.count("\n") == 1


def test_resume_with_a_wrong_type_in_the_settings_names_it(tmp_path, capsys):
    settings = {"game": "lost_cities", "options": {}, "policy": "p", "search": "", "opponent": "heuristic",
                "games": "many", "seed": 0, "epochs": 2, "learning_rate": 1e-4, "batch_size": 256}
    (tmp_path / "settings.json").write_text(json.dumps(settings))
    with pytest.raises(SystemExit):
        main(["--resume", str(tmp_path)])
    err = capsys.readouterr().err
    assert "games='many' is not of the type an expert-iteration run writes" in err and err.count("\n") == 1


def test_a_custom_agent_is_an_opponent(tmp_path):
    out = tmp_path / "ei"
    main(["lost_cities", "--games", "1", "--search", SMALL, "--epochs", "1", "--out", str(out), "--quiet",
          "--opponent", "tests.custom_agents:first"])
    assert json.loads((out / "settings.json").read_text())["opponent"] == "tests.custom_agents:first"
    assert (out / "policy.safetensors").is_file()
