"""Expert iteration (``tabletop_rl.training.expert_iteration``): what is recorded (the search seat's real
choices only, legal, deterministic, with their games' outcomes), what the fit changes (the actor towards the
search; the critic towards the outcomes, or not at all), generations (files, the gate, resuming after a stop,
a rejected candidate), resuming (only missing games are played, an earlier policy is kept) and bad settings."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from tabletop_rl.training.expert_iteration import main
from tabletop_rl.training.ppo.distil import Settings, fit, load_chunks, record_chunk
from tabletop_rl.training.runtime.policy import load_policy
from tabletop_rl.training.runtime.policy_paths import policy_path

SMALL = "worlds=2,k=2"  # budgets small enough for tests
TINY = "worlds=2,horizon=4"  # the smallest search: generations in seconds


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    """The fits here are tiny: a second torch thread only spins on a CPU busy with other work (seconds a step)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


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
    assert set(np.unique(data["outcomes"])) <= {-1.0, 0.0, 1.0} and len(data["outcomes"]) == len(data["actions"])
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
    weights, measures = fit(policy, data, data, epochs=10, learning_rate=1e-3, batch_size=16, seed=0,
                            report=lines.append)
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
    assert measures["agreement"][0] == 0 and measures["agreement"][-1] > 0.5 and len(measures["value_mse"]) == 11


def test_the_value_fit_lowers_the_held_out_value_error_and_leaves_out_unknown_outcomes(lost_cities):
    policy = load_policy(policy_path("pretrained", lost_cities))
    settings = replace(small_settings(lost_cities), search=TINY)
    data, held_out = record_chunk(settings, 0), record_chunk(replace(settings, seed=5), 0)
    data["outcomes"] = np.ones(len(data["actions"]), np.float32)
    held_out["outcomes"] = np.ones(len(held_out["actions"]), np.float32)  # a constructed target: always a win
    weights, measures = fit(policy, data, held_out, epochs=5, learning_rate=1e-3, batch_size=32, seed=0,
                            report=lambda line: None, value_coef=1.0)
    assert measures["value_mse"][-1] < 0.5 * measures["value_mse"][0]
    assert any(not np.array_equal(weights[k], v) for k, v in policy.weights.items() if "value_net" in k)
    # decisions recorded without their outcome (an older chunk): the critic is not fitted on them
    data["outcomes"][:] = np.nan
    weights, _ = fit(policy, data, held_out, epochs=1, learning_rate=1e-3, batch_size=32, seed=0,
                     report=lambda line: None, value_coef=1.0)
    for name, value in policy.weights.items():
        if "value_net" in name:
            np.testing.assert_array_equal(weights[name], value)


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
    (["--generations", "0"], "argument --generations: expected an integer >= 1, got '0'"),
    (["--gate-deals", "-2"], "argument --gate-deals: expected an integer >= 1, got '-2'"),
    (["--gate-rule", "median"], "argument --gate-rule: invalid choice: 'median' (choose from"),
    (["--value-coef", "-1"], "value_coef=-1.0 (expected a number >= 0)"),
    (["--value-coef", "nan"], "value_coef=nan (expected a number >= 0)"),
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
                "games": "many", "seed": 0, "epochs": 2, "learning_rate": 1e-4, "batch_size": 256, "generations": 2}
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


def test_a_run_of_one_round_from_before_generations_resumes_and_fits_its_actor_only(lost_cities, tmp_path, capsys):
    out = tmp_path / "ei"
    main(["lost_cities", "--games", "1", "--search", SMALL, "--epochs", "1", "--out", str(out), "--quiet"])
    # as an older version left it: no generations, gate or value settings, chunks without outcomes
    settings = json.loads((out / "settings.json").read_text())
    (out / "settings.json").write_text(json.dumps({k: v for k, v in settings.items() if k not in Settings.NEWER}))
    chunk = out / "chunks" / "chunk_00000.npz"
    with np.load(chunk) as data:
        old = {k: data[k] for k in ("obs", "masks", "actions", "searched", "margins")}
    np.savez_compressed(chunk, **old)
    capsys.readouterr()
    main(["--resume", str(out), "--quiet"])
    assert capsys.readouterr().out.count("recorded without their game's outcome: the critic is not fitted") == 1
    before, after = load_policy(settings["policy"]), load_policy(out / "policy.safetensors")
    for name, value in before.weights.items():
        if "value_net" in name:
            np.testing.assert_array_equal(after.weights[name], value)
    with pytest.raises(SystemExit):
        main(["--resume", str(out), "--generations", "2"])
    assert "a run of one round keeps its files in another layout" in capsys.readouterr().err
    assert not (out / "gen-1").exists()



def generations_args(out, *more):
    return ["lost_cities", "--generations", "2", "--games", "2", "--search", TINY, "--gate-deals", "3",
            "--epochs", "1", "--seed", "2", "--out", str(out), "--quiet", *more]


def rows(out):
    import csv

    return list(csv.DictReader((out / "generations.csv").open()))


def test_two_generations_write_their_folders_a_table_and_the_last_accepted_policy(tmp_path, capsys):
    out = tmp_path / "ei"
    assert main(generations_args(out)) == out / "policy.safetensors"
    for k in (1, 2):
        for name in ("chunks/chunk_00000.npz", "policy.safetensors", "report.json", "gate.json", "gate-games.csv"):
            assert (out / f"gen-{k}" / name).is_file(), f"gen-{k}/{name}"
    table = rows(out)
    assert [r["generation"] for r in table] == ["1", "2"]
    for r in table:
        assert float(r["gate_low"]) <= float(r["gate_margin"]) <= float(r["gate_high"]) and r["gate_deals"] == "3"
        assert r["accepted"] == str(float(r["gate_low"]) > 0)  # the default rule: the interval's low end above 0
    gate = json.loads((out / "gen-1" / "gate.json").read_text())
    assert len((out / "gen-1" / "gate-games.csv").read_text().splitlines()) == 1 + 2 * gate["deals"]
    last = out / "gen-2" / "policy.safetensors" if table[1]["accepted"] == "True" else \
        out / "gen-1" / "policy.safetensors" if table[0]["accepted"] == "True" else Path(table[0]["searched_with"])
    assert (out / "policy.safetensors").read_bytes() == last.read_bytes()
    printed = capsys.readouterr().out
    assert printed.count("generation 1: 2 games") == 1 and "generation 2: 2 games" in printed


def test_a_rejected_candidate_is_not_searched_with_and_its_games_are_pooled(tmp_path, monkeypatch):
    """A candidate no better than the last accepted policy (here: identical play, a fit at a vanishing learning
    rate, margin exactly 0) is kept on disk; the next generation searches with the last accepted policy and fits
    on both generations' decisions."""
    out = tmp_path / "ei"
    main(generations_args(out, "--learning-rate", "1e-12"))
    first, second = rows(out)
    assert first["accepted"] == "False" and float(first["gate_margin"]) == 0.0
    assert (out / "gen-1" / "policy.safetensors").is_file()
    start = json.loads((out / "settings.json").read_text())["policy"]
    assert second["searched_with"] == start
    assert json.loads((out / "gen-2" / "report.json").read_text())["settings"]["policy"] == start
    assert int(second["decisions_fitted"]) == int(first["decisions_fitted"]) + len(
        load_chunks(out / "gen-2", 2)[0]["actions"])
    assert (out / "policy.safetensors").read_bytes() == Path(start).read_bytes()


@pytest.mark.parametrize("mean, low, rule, verdict", [
    (0.4, -0.9, "mean", True), (0.0, 0.0, "mean", False), (-0.1, -1.0, "mean", False),
    (0.4, -0.9, "interval", False), (1.2, 0.1, "interval", True),
])
def test_the_gate_rule(mean, low, rule, verdict):
    from tabletop_rl.training.evaluation.stats import Estimate
    from tabletop_rl.training.ppo.distil import accepted

    assert accepted(Estimate(mean, low, 2 * mean - low, 100), rule) is verdict


def test_an_accepted_candidate_is_the_next_search_network_and_its_games_are_not_pooled(tmp_path, monkeypatch):
    from tabletop_rl.training.ppo import distil as ei

    monkeypatch.setattr(ei, "gate", lambda settings, candidate, last, folder, start: {
        "against": last, "deals": 1, "margin": [1.0, 0.5, 1.5], "accepted": True, "minutes": 0.0})
    out = tmp_path / "ei"
    main(generations_args(out))
    first, second = rows(out)
    assert second["searched_with"] == str(out / "gen-1" / "policy.safetensors")
    assert second["pooled_generations"] == "1"
    assert (out / "policy.safetensors").read_bytes() == (out / "gen-2" / "policy.safetensors").read_bytes()


def test_a_run_stopped_in_a_generation_resumes_without_recomputing(tmp_path, monkeypatch, capsys):
    from tabletop_rl.training.ppo import distil as ei

    real_gate = ei.gate

    def stop_in_the_second_gate(settings, candidate, last, folder, start):
        if folder.name == "gen-2":
            raise KeyboardInterrupt
        return real_gate(settings, candidate, last, folder, start)

    out = tmp_path / "ei"
    monkeypatch.setattr(ei, "gate", stop_in_the_second_gate)
    with pytest.raises(SystemExit) as stop:
        main(generations_args(out))
    assert stop.value.code == 130
    assert "1 of 2 generations are done" in capsys.readouterr().err
    assert not (out / "gen-2" / "gate.json").exists() and not (out / "generations.csv").read_text().count("\n2,")
    settings = (out / "settings.json").read_text()
    saved = {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()
             and p.name not in ("generations.csv", "settings.json")}
    monkeypatch.setattr(ei, "gate", real_gate)
    main(["--resume", str(out), "--quiet"])
    assert all(p.stat().st_mtime_ns == t for p, t in saved.items()), "nothing saved is written again"
    assert (out / "gen-2" / "gate.json").is_file() and len(rows(out)) == 2
    assert (out / "settings.json").read_text() == settings


def test_a_fresh_fit_does_not_start_from_the_policys_weights(lost_cities):
    policy = load_policy(policy_path("pretrained", lost_cities))
    data = record_chunk(small_settings(lost_cities, games=2), 0)
    shifted = type(policy)({name: w + 0.5 for name, w in policy.weights.items()}, policy.info)
    fitted = [fit(p, data, data, epochs=1, learning_rate=1e-3, batch_size=16, seed=4, report=lambda _: None,
                  value_coef=0.5, fresh=True)[0] for p in (policy, shifted)]
    for name in policy.weights:  # the same fresh network from either: its sizes, its seed and the data alone
        np.testing.assert_array_equal(fitted[0][name], fitted[1][name])
    assert not np.allclose(fitted[0]["action_net.weight"], policy.weights["action_net.weight"], atol=0.05)


def test_the_gate_against_the_opponent_pairs_the_deals_and_checks_the_first_policy(tmp_path):
    """A candidate that plays as the last accepted policy (a fit at a vanishing learning rate) has exactly the same
    margin against the opponent on every deal: the difference is 0, interval and all."""
    out = tmp_path / "ei"
    main(generations_args(out, "--gate", "opponent", "--learning-rate", "1e-12", "--window", "2"))
    first, second = rows(out)
    for row in (first, second):
        assert float(row["gate_margin"]) == float(row["gate_low"]) == float(row["gate_high"]) == 0.0
        assert row["accepted"] == "False"
        assert float(row["fixed_low"]) <= float(row["fixed_margin"]) <= float(row["fixed_high"])
    gate = json.loads((out / "gen-1" / "gate.json").read_text())
    assert gate["against"].startswith("heuristic, beside ") and gate["fixed"]["against"] == first["searched_with"]
    assert second["pooled_generations"] == "2"  # the window: both generations' decisions


def test_a_window_of_one_fits_each_generations_own_decisions_and_fresh_needs_the_critic_fit(tmp_path, capsys,
                                                                                            monkeypatch):
    from tabletop_rl.training.ppo import distil as ei

    out = tmp_path / "ei"
    monkeypatch.setattr(ei, "gate", lambda settings, candidate, last, folder, start: {
        "against": last, "deals": 1, "margin": [-1.0, -1.5, -0.5], "accepted": False, "minutes": 0.0})
    main(generations_args(out, "--window", "1", "--fresh"))
    assert [row["pooled_generations"] for row in rows(out)] == ["1", "1"]  # rejected, yet not pooled
    with pytest.raises(SystemExit):
        main(generations_args(tmp_path / "other", "--fresh", "--value-coef", "0"))
    assert "fresh=True with value_coef=0" in capsys.readouterr().err
