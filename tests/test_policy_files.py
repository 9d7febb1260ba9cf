"""Policy files: numpy inference equals torch's, and loading never runs code from a file.

Every crafted file below carries a payload that creates a marker file when unpickled; the loader, the
evaluation CLI and the play CLI must refuse each one with one clear line and leave no marker.
"""

from __future__ import annotations

import base64
import dataclasses
import io
import json
import math
import os
import pickle
import re
import struct
import subprocess
import sys
import threading
import warnings
import zipfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.numpy import save as safetensors_bytes

import tabletop_rl
from tabletop_rl import envs
from tabletop_rl.envs.core.match import play_game
from tabletop_rl.envs.core.versions import VersionWarning
from tabletop_rl.training import evaluate, play, train
from tabletop_rl.training.ppo.config import load_config
from tabletop_rl.training.ppo.network import load_weights, weights_of
from tabletop_rl.training.runtime.agents import load_agent
from tabletop_rl.training.runtime.policy import (
    FORMAT_VERSION,
    MAX_HEADER_BYTES,
    MAX_PARAMETERS,
    MAX_POOL,
    MLPPolicy,
    PolicyAgent,
    PolicyFileError,
    PolicyInfo,
    _safetensors_header,
    convert_policy,
    load_policy,
    policy_file_bytes,
    read_policy_info,
    save_policy,
)
from tabletop_rl.training.runtime.policy_paths import PRETRAINED_DIR
from tests.policy_helpers import network, random_policy_file, random_weights, seeded_torch_policy

ROOT = Path(__file__).parent.parent
LOST_CITIES = envs.make("lost_cities", wrapped=False).game


def observations(game_name: str, games: int = 6, **options) -> np.ndarray:
    """Real observations from random play."""
    env = envs.make(game_name, wrapped=False, **options)
    rng = np.random.default_rng(0)
    seen = []
    for seed in range(games):
        env.reset(seed=seed)
        for _agent in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            seen.append(obs["observation"])
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return np.array(seen)


# ----------------------------------------------------------------------------- numpy = torch
@pytest.mark.parametrize("game_name, options, net", [
    ("lost_cities", {}, {"pi": [64, 32], "vf": [48], "activation": "relu"}),
    ("five_towers", {"num_players": 3}, {"pi": [32], "vf": [], "activation": "tanh"}),
    ("palazzo", {"num_players": 4}, {"shared": [64, 32], "pi": [16], "vf": [], "activation": "relu"}),
    ("torres", {"num_players": 2}, {"shared": [48], "pi": [], "vf": [], "activation": "tanh"}),
])
def test_numpy_logits_and_values_equal_torch(game_name, options, net):
    """The training policy (sparse-input first layers, an optional shared trunk) and the numpy runtime agree
    to 1e-5, one observation and batches."""
    game = envs.make(game_name, wrapped=False, **options).game
    torch_policy = seeded_torch_policy(game, seed=1, **net)
    policy = MLPPolicy(weights_of(torch_policy), PolicyInfo.for_game(game, net))
    x = observations(game_name, **options)
    x = np.concatenate([x, x[:1] * 0])  # an all-zero observation: nothing to gather
    with torch.no_grad():
        latent_pi, latent_vf = torch_policy.mlp_extractor(torch.as_tensor(x))
        logits, values = torch_policy.action_net(latent_pi).numpy(), torch_policy.value_net(latent_vf).numpy()[:, 0]
    np.testing.assert_allclose(policy.logits(x), logits, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(policy.value(x), values, rtol=1e-5, atol=1e-5)
    single = np.array([policy.logits(o) for o in x])  # the batch-1 path, through preallocated buffers
    np.testing.assert_allclose(single, logits, rtol=1e-5, atol=1e-5)
    assert policy.value(x[0]).shape == () and policy.logits(x[:3]).shape == (3, game.num_actions)
    for o, mask in zip(x[:50], np.random.default_rng(0).random((50, game.num_actions)) < 0.5, strict=True):
        mask[0] = True
        chosen, _ = torch_policy.predict(o, deterministic=True, action_masks=mask)
        assert PolicyAgent(policy).act(o, mask) == chosen


def test_shipped_policies_round_trip_through_torch():
    """The shipped files hold exactly an sb3 policy's weights: loaded into torch, the logits agree."""
    for path in sorted(PRETRAINED_DIR.glob("*.safetensors")):
        policy = load_policy(path)  # (its game may have changed its observation since: not checked here)
        torch_policy = seeded_torch_policy(policy.info, **policy.info.network)
        load_weights(torch_policy, policy.weights)
        x = (np.random.default_rng(0).random((500, policy.info.observation_size)) < 0.2).astype(np.float32)
        with torch.no_grad():
            expected = torch_policy.action_net(torch_policy.mlp_extractor.forward_actor(torch.as_tensor(x))).numpy()
        np.testing.assert_allclose(policy.logits(x), expected, rtol=1e-4, atol=1e-4)
        assert (policy.logits(x).argmax(1) == expected.argmax(1)).mean() > 0.99


def test_policy_agent_is_seeded_and_plays_legal_actions(tmp_path):
    path = random_policy_file(tmp_path / "p.safetensors", LOST_CITIES)
    env = envs.make("lost_cities", wrapped=False)
    for deterministic in (True, False):
        agents = [load_agent(str(path), env.game, seed=1, deterministic=deterministic),
                  load_agent("random", env.game, seed=2)]
        returns, _ = play_game(env, agents, seed=4)  # an illegal action would raise
        assert returns.sum() == 0
    env.reset(seed=4)
    obs = env.observe(env.agent_selection)
    a, b = (load_agent(str(path), env.game, seed=9, deterministic=False) for _ in range(2))
    picks = [a.act(obs["observation"], obs["action_mask"]) for _ in range(30)]
    assert picks == [b.act(obs["observation"], obs["action_mask"]) for _ in range(30)]
    assert len(set(picks)) > 1 and all(obs["action_mask"][p] for p in picks)
    with pytest.raises(ValueError, match="no legal action"):
        a.act(obs["observation"], np.zeros_like(obs["action_mask"]))


# ----------------------------------------------------------------------------- what a file must be
def dtypes(path: Path) -> set[str]:
    """The safetensors dtypes of a file's network tensors, as its header states them."""
    found = _safetensors_header(path)[1]
    return {found[name][1] for name in read_policy_info(path).tensor_shapes()}


def test_save_and_load_keep_metadata_and_the_weights_rounded_to_float16(tmp_path):
    info = PolicyInfo.for_game(LOST_CITIES, network(pi=[64, 32], vf=[48]), num_timesteps=99, run="r1")
    weights = random_weights(info)
    with pytest.raises(ValueError, match="missing"):
        policy_file_bytes({k: v for k, v in weights.items() if k != "action_net.bias"}, info)
    path = tmp_path / "p.safetensors"
    path.write_bytes(policy_file_bytes(weights, info))
    assert dtypes(path) == {"F16"} and _safetensors_header(path)[0]["format_version"] == FORMAT_VERSION == "2"
    policy = load_policy(path, LOST_CITIES)
    assert policy.info == info and policy.info.provenance == {"run": "r1"}
    assert all(policy.weights[k].dtype == np.float32 for k in weights)  # inference runs in float32
    assert all(np.array_equal(policy.weights[k], w.astype(np.float16).astype(np.float32)) for k, w in weights.items())
    (tmp_path / "again.safetensors").write_bytes(policy_file_bytes(policy.weights, info))  # rounded once only
    again = load_policy(tmp_path / "again.safetensors")
    assert all(np.array_equal(again.weights[k], w) for k, w in policy.weights.items())
    # within the tolerance the shipped policies were held to (docs/training.md, "Policy files")
    x, exact = observations("lost_cities"), MLPPolicy(weights, info)
    assert np.abs(softmax(policy.logits(x)) - softmax(exact.logits(x))).max() < 5e-3


def softmax(logits: np.ndarray) -> np.ndarray:
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_float32_files_of_version_1_still_load_and_play_as_before(tmp_path):
    """What this module wrote before float16 (and what users may have): read as it was, bit for bit."""
    info = PolicyInfo.for_game(LOST_CITIES, network())
    weights = random_weights(info)
    path = tmp_path / "old.safetensors"
    path.write_bytes(valid_bytes(**weights))
    assert dtypes(path) == {"F32"} and _safetensors_header(path)[0]["format_version"] == "1"
    policy, exact = load_policy(path, LOST_CITIES), MLPPolicy(weights, info)
    assert all(np.array_equal(policy.weights[k], w) for k, w in weights.items())
    x = observations("lost_cities", games=2)
    assert np.array_equal(policy.logits(x), exact.logits(x)) and np.array_equal(policy.value(x), exact.value(x))
    env = envs.make("lost_cities", wrapped=False)
    played = [[], []]  # every decision, with the policy's noted probabilities and value
    for agent, decisions in zip((load_agent(str(path), env.game), PolicyAgent(exact)), played, strict=True):
        play_game(env, [agent, load_agent("random", env.game, seed=2)], 4, decisions)
    assert played[0] == played[1] and sum(d.notes is not None for d in played[0]) > 20

    convert_policy(path, tmp_path / "new.safetensors")  # what was done to the shipped policies
    new = read_policy_info(tmp_path / "new.safetensors")
    assert dtypes(tmp_path / "new.safetensors") == {"F16"}
    assert new.provenance == {"converted": "F32 weights rounded to F16 (convert_policy)"}
    assert dataclasses.replace(new, provenance={}) == info


def test_a_checkpoint_keeps_its_weights_in_float32(tmp_path):
    """Resuming continues the network it stopped with, not a rounded one; its policy is converted on request."""
    info = PolicyInfo.for_game(LOST_CITIES, network(), run="r")
    weights = random_weights(info)
    path = tmp_path / "checkpoint.safetensors"
    path.write_bytes(policy_file_bytes(weights, info, {"rng/torch": np.zeros(8, np.uint8)}))
    assert dtypes(path) == {"F32"}
    assert all(np.array_equal(load_policy(path).weights[k], w) for k, w in weights.items())
    convert_policy(path, tmp_path / "policy.safetensors")
    assert dtypes(tmp_path / "policy.safetensors") == {"F16"}
    assert _safetensors_header(tmp_path / "policy.safetensors")[0]["format"] == "tabletop-rl-policy"


def test_the_shipped_policies_are_float16():
    """Half the size of float32 (issue 35); a newly trained policy is float16 as written, an older file is converted
    with convert_policy (docs/training.md, "Policy files")."""
    paths = sorted(PRETRAINED_DIR.glob("*.safetensors"))
    assert len(paths) >= 11
    for path in paths:
        assert dtypes(path) == {"F16"}, path.name


def test_a_weight_beyond_float16_is_refused_by_the_writer_in_one_line():
    info = PolicyInfo.for_game(LOST_CITIES, network())
    weights = random_weights(info)
    weights["action_net.bias"][3] = 7e4
    with pytest.raises(ValueError, match=r"^cannot write a policy: tensor action_net.bias holds values beyond F16's "
                                         r"±65,504$"):
        policy_file_bytes(weights, info)


def test_a_policy_file_names_the_versions_it_was_trained_at(tmp_path):
    info = PolicyInfo.for_game(LOST_CITIES, network())
    assert (info.game_version, info.tabletop_rl) == (envs.game_version("lost_cities"), tabletop_rl.__version__)
    before = {k: v for k, v in info.__dict__.items() if k not in ("game_version", "tabletop_rl")}  # by 0.1.0
    path = tmp_path / "old.safetensors"
    path.write_bytes(safetensors_bytes(random_weights(info), metadata={
        "format": "tabletop-rl-policy", "format_version": "1", "policy": json.dumps(before)}))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # version 0 of the game, as every policy file without versions
        old = load_policy(path, LOST_CITIES)
    assert (old.info.game_version, old.info.tabletop_rl) == (0, "0.1.0")


def test_a_policy_of_another_game_version_plays_with_one_line_warning(tmp_path):
    info = replace(PolicyInfo.for_game(LOST_CITIES, network()), game_version=2, tabletop_rl="0.9.0")
    path = tmp_path / "p.safetensors"
    save_policy(path, random_weights(info), info)
    expected = (f"{path} was trained at lost_cities version 2 (tabletop-rl 0.9.0); this is version 0 "
                "(tabletop/lost_cities-v0), whose rules, observations or rewards differ")
    with pytest.warns(VersionWarning) as caught:
        load_policy(path, LOST_CITIES)
    assert [str(w.message) for w in caught] == [expected]
    done = subprocess.run([sys.executable, "-m", "tabletop_rl.training.evaluate", "lost_cities", "random", str(path),
                           "--games", "2", "--quiet", "--out", str(tmp_path / "eval")], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stderr == f"warning: {expected}\n"


def evil_payload(marker: Path) -> bytes:
    """A pickle that creates ``marker`` when it is loaded."""
    class Evil:
        def __reduce__(self):
            return open, (str(marker), "w")
    return pickle.dumps(Evil())


def sb3_zip(marker: Path) -> bytes:
    """A stable-baselines3 style zip whose ``data`` carries a crafted serialized action_space."""
    data = {"action_space": {":type:": "<class 'gymnasium.spaces.discrete.Discrete'>",
                             ":serialized:": base64.b64encode(evil_payload(marker)).decode()},
            "tabletop": {"game": "lost_cities", "options": {}, "num_timesteps": 0}}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("data", json.dumps(data))
        z.writestr("policy.pth", b"")
    return buffer.getvalue()


def torch_save_file(marker: Path) -> bytes:
    class Evil:
        def __reduce__(self):
            return open, (str(marker), "w")
    buffer = io.BytesIO()
    torch.save({"policy": Evil()}, buffer)
    return buffer.getvalue()


def header_file(metadata: dict | None, tensors: dict[str, np.ndarray] | None = None) -> bytes:
    return safetensors_bytes(tensors or {"x": np.zeros(1, np.float32)}, metadata=metadata)


def raw_header(text: bytes) -> bytes:
    """A file made of a safetensors header length and ``text`` as its header."""
    return struct.pack("<Q", len(text)) + text


def valid_bytes(**changes) -> bytes:
    """A policy file of network() as the version 1 writer made it (float32), with ``changes`` to its tensors."""
    info = PolicyInfo.for_game(LOST_CITIES, network())
    weights = random_weights(info)
    weights.update(changes)
    return safetensors_bytes(weights, metadata={"format": "tabletop-rl-policy", "format_version": "1",
                                                "policy": json.dumps(info.__dict__)})


def good_doc(**changes) -> str:
    doc = dict(PolicyInfo.for_game(LOST_CITIES, network()).__dict__, **changes)
    return json.dumps(doc)


BAD_FILES = {
    "sb3 zip": (lambda m: sb3_zip(m), "zip archive"),
    "pickle": (lambda m: evil_payload(m), "pickle"),
    "torch.save": (lambda m: torch_save_file(m), "zip archive"),
    "empty": (lambda m: b"", "empty"),
    "text": (lambda m: b"hello, I am not a policy\n", "not a tabletop-rl policy"),
    "truncated": (lambda m: valid_bytes()[:-100], "not a tabletop-rl policy"),
    "huge header length": (lambda m: struct.pack("<Q", 2**40) + b"{}", "not a tabletop-rl policy"),
    "no metadata": (lambda m: header_file(None), "no 'format'"),
    "other format": (lambda m: header_file({"format": "something-else"}), "no 'format'"),
    "newer version": (lambda m: header_file({"format": "tabletop-rl-policy", "format_version": "4"}),
                      "format_version '4'; this tabletop-rl reads versions 1, 2, 3"),
    "policy not JSON": (lambda m: header_file({"format": "tabletop-rl-policy", "format_version": "1",
                                              "policy": "{not json"}), "not valid JSON"),
    "missing key": (lambda m: header_file({"format": "tabletop-rl-policy", "format_version": "1",
                                          "policy": json.dumps({"game": "lost_cities"})}), "missing 'options'"),
    "bad activation": (lambda m: header_file({"format": "tabletop-rl-policy", "format_version": "1",
                                             "policy": good_doc(network=network(activation="gelu"))}),
                       "activation"),
    "negative game version": (lambda m: header_file({"format": "tabletop-rl-policy", "format_version": "1",
                                                    "policy": good_doc(game_version=-1)}), "game_version >= 0"),
    "bad sizes": (lambda m: header_file({"format": "tabletop-rl-policy", "format_version": "1",
                                        "policy": good_doc(network=network(pi=[-3]))}), "network.pi"),
    "tensors of another network": (lambda m: header_file({"format": "tabletop-rl-policy", "format_version": "1",
                                                          "policy": good_doc()}), "is missing"),
    "wrong shape": (lambda m: valid_bytes(**{"action_net.bias": np.zeros(5, np.float32)}), r"shape \(5,\)"),
    "float64 weights": (lambda m: valid_bytes(**{"action_net.bias": np.zeros(106, np.float64)}),
                        r"tensor action_net.bias is 'F64', expected F16 \(float16\) or F32 \(float32\) \(network"),
    "int32 weights": (lambda m: valid_bytes(**{"action_net.weight": np.zeros((106, 8), np.int32)}),
                      r"tensor action_net.weight is 'I32', expected F16 \(float16\) or F32"),
    "extra tensor": (lambda m: valid_bytes(**{"pool/0/x": np.zeros(1, np.float32)}), "unexpected tensor"),
    "NaN weights": (lambda m: valid_bytes(**{"action_net.bias": np.full(106, np.nan, np.float32)}), "NaN"),
    "infinite float16 weights": (lambda m: valid_bytes(**{"action_net.bias": np.full(106, np.inf, np.float16)}),
                                 "infinite"),
    "policy nested too deeply": (lambda m: header_file({"format": "tabletop-rl-policy", "format_version": "1",
                                                       "policy": "[" * 100_000 + "]" * 100_000}),
                                 r"'policy' metadata is not valid JSON \(nested too deeply\)"),
    "5,001-digit integer": (lambda m: header_file({"format": "tabletop-rl-policy", "format_version": "1",
                                                  "policy": good_doc().replace('"observation_size": 433',
                                                                               '"observation_size": ' + "9" * 5001)}),
                            r"'policy' metadata is not valid JSON \(an integer has too many digits\)"),
    "header nested too deeply": (lambda m: raw_header(b"[" * 100_000 + b"]" * 100_000),
                                 r"safetensors header is not valid JSON \(nested too deeply\)"),
    "malformed header entry": (lambda m: raw_header(b'{"x": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 0]}}'),
                               "entry for tensor 'x' is malformed"),
    "header larger than the limit": (lambda m: raw_header(b" " * (MAX_HEADER_BYTES + 1)), "more than the 1,048,576"),
}


@pytest.mark.parametrize("kind", BAD_FILES)
def test_anything_but_a_policy_file_is_refused_and_never_run(tmp_path, kind):
    make, message = BAD_FILES[kind]
    marker = tmp_path / "marker"
    path = tmp_path / "their_policy.zip"
    path.write_bytes(make(marker))
    with pytest.raises(PolicyFileError, match=message) as error:
        load_agent(str(path), LOST_CITIES)
    text = str(error.value)
    assert str(path) in text and "\n" not in text
    assert not marker.exists()


def test_the_payloads_are_live(tmp_path):
    """The crafted files really are dangerous: unpickling them the way the old loader did runs the payload."""
    pickle.loads(evil_payload(tmp_path / "a"))
    torch.load(io.BytesIO(torch_save_file(tmp_path / "b")), weights_only=False)
    assert (tmp_path / "a").exists() and (tmp_path / "b").exists()


def refused_by_evaluate_and_play(path: Path, tmp_path: Path, capsys, monkeypatch) -> list[str]:
    """``evaluate`` and ``play`` given ``path`` as an agent both exit 2; the lines they printed on stderr."""
    with pytest.raises(SystemExit) as exit_code:
        evaluate.main(["lost_cities", "random", str(path), "--quiet", "--out", str(tmp_path / "eval")])
    assert exit_code.value.code == 2
    monkeypatch.setattr("sys.stdin", io.StringIO("q\n"))
    with pytest.raises(SystemExit) as exit_code:
        play.main(["lost_cities", "--opponent", str(path)])
    assert exit_code.value.code == 2
    return capsys.readouterr().err.strip().splitlines()


@pytest.mark.parametrize("kind", ["sb3 zip", "pickle", "torch.save", "truncated"])
def test_the_command_lines_print_one_line_and_run_nothing(tmp_path, capsys, monkeypatch, kind):
    marker = tmp_path / "marker"
    path = tmp_path / "their_policy.zip"
    path.write_bytes(BAD_FILES[kind][0](marker))
    lines = refused_by_evaluate_and_play(path, tmp_path, capsys, monkeypatch)
    assert len(lines) == 2 and all(str(path) in line and "Traceback" not in line for line in lines)
    assert not marker.exists() and not (tmp_path / "eval").exists()


def sparse_file(path: Path, info: PolicyInfo, extra: dict[str, tuple[int, ...]] | None = None) -> Path:
    """A file whose header declares the float32 tensors of ``info``'s network (and ``extra`` ones, as a checkpoint's)
    with the right offsets and file size, but whose data is a hole: a few KB on disk, whatever it declares."""
    header, end = {"__metadata__": {"format": "tabletop-rl-checkpoint" if extra else "tabletop-rl-policy",
                                    "format_version": "1", "policy": json.dumps(info.__dict__)}}, 0
    for name, shape in {**info.tensor_shapes(), **(extra or {})}.items():
        header[name] = {"dtype": "F32", "shape": list(shape), "data_offsets": [end, end + 4 * math.prod(shape)]}
        end = header[name]["data_offsets"][1]
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(raw_header(text))
        f.truncate(8 + len(text) + end)
    return path


OVERSIZED = {  # what the header declares, and the limit the refusal names
    "the issue's pi [65536, 16384]": (network(pi=[65536, 16384]), None,
                                      "a hidden layer of 65,536 units, more than the 4,096"),
    "4 x 4096 in each part": (network(pi=[4096] * 4, vf=[4096] * 4), None,
                              "parameters, more than the 50,000,000"),
    "17 layers": (network(pi=[4] * 17), None, "17 hidden layers, more than the 16"),
    "a checkpoint's 4 GB pool tensor": (network(), {"pool/0/x": (2**30,)}, "training state .* more than the"),
    "a checkpoint's 4 GB critic tensor": (network(), {"critic/critic.0.weight": (2**30,)},
                                         "critic/ tensors declare .* more than"),
}


def test_oversized_files_are_refused_from_their_header_quickly_and_in_little_memory(tmp_path, capsys):
    """Sparse files that declare gigabytes of weights: refused in one line naming the limit, before any tensor is
    read (old loaders read 8.5 GB for the issue's file, in a minute or two)."""
    paths = [sparse_file(tmp_path / f"{i}.safetensors", PolicyInfo("lost_cities", {}, net, 433, 106), extra)
             for i, (net, extra, _) in enumerate(OVERSIZED.values())]
    assert all(paths[i].stat().st_size > 4 * MAX_PARAMETERS for i in (0, 1, 3, 4))  # they declare that much
    # in a fresh process: its peak memory says what loading allocated
    code = ("import json, resource, sys, time\n"
            "from tabletop_rl.training.runtime.policy import PolicyFileError, load_policy\n"
            "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
            "for path in sys.argv[1:]:\n"
            "    start = time.perf_counter()\n"
            "    try:\n"
            "        load_policy(path)\n"
            "    except PolicyFileError as error:\n"
            "        print(json.dumps([str(error), time.perf_counter() - start]))\n"
            "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024)\n")
    done = subprocess.run([sys.executable, "-c", code, *map(str, paths)], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)
    *results, megabytes = done.stdout.splitlines()
    assert done.returncode == 0 and len(results) == len(paths), done.stderr
    for path, (_, _, limit), (message, seconds) in zip(paths, OVERSIZED.values(), map(json.loads, results),
                                                        strict=True):
        assert message.startswith(f"{path}: ") and re.search(limit, message) and "\n" not in message
        assert seconds < 1
    assert int(megabytes) < 50
    with pytest.raises(SystemExit) as exit_code:  # and the command line says the same in one line
        evaluate.main(["lost_cities", "random", str(paths[0]), "--quiet", "--out", str(tmp_path / "eval")])
    assert exit_code.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "more than the 4,096" in err and "Traceback" not in err


def test_the_writer_refuses_what_the_reader_would(tmp_path):
    """Training refuses a network too large for a policy file before it starts; a checkpoint with more
    snapshots than the limit is never written."""
    with pytest.raises(ValueError, match="a hidden layer of 8,192 units, more than the 4,096 a policy file may have"):
        train.Trainer(load_config(None, ["game=lost_cities", "network.pi=[8192]"]))
    with pytest.raises(ValueError, match="opponents.pool_size must be <= 64"):
        load_config(None, ["game=lost_cities", f"opponents.pool_size={MAX_POOL + 1}"])
    info = PolicyInfo.for_game(LOST_CITIES, network(pi=[64], vf=[64]))
    weights = random_weights(info)
    state = {f"optimizer/{i}/{key}": np.zeros_like(w) if key != "step" else np.float32(9)
             for i, w in enumerate(weights.values()) for key in ("step", "exp_avg", "exp_avg_sq")}
    state["rng/torch"] = np.zeros(5056, np.uint8)
    pool = {f"pool/{k}/{name}": w for k in range(MAX_POOL + 1) for name, w in weights.items()}
    with pytest.raises(ValueError, match="cannot write a policy: its training state .* more than the"):
        policy_file_bytes(weights, info, {**state, **pool})
    path = tmp_path / "checkpoint.safetensors"  # a full pool it writes, and reads back
    path.write_bytes(policy_file_bytes(weights, info, {**state, **{k: v for k, v in pool.items() if "/64/" not in k}}))
    assert load_policy(path).info == info
    # with a global-state critic (its tensors and Adam's moments of them) too
    critic = {"critic.0.weight": np.zeros((64, info.observation_size + 543), np.float32),
              "critic.0.bias": np.zeros(64, np.float32)}
    n = len(weights)
    state |= {f"critic/{name}": w for name, w in critic.items()}
    state |= {f"optimizer/{n + i}/{key}": np.zeros_like(w) for i, w in enumerate(critic.values())
              for key in ("exp_avg", "exp_avg_sq")}
    path.write_bytes(policy_file_bytes(weights, info, {**state, **{k: v for k, v in pool.items() if "/64/" not in k}}))
    assert load_policy(path).info == info


def test_a_fifo_or_a_device_is_not_a_regular_file(tmp_path, capsys, monkeypatch):
    fifo, zero = tmp_path / "pipe.safetensors", tmp_path / "zero.safetensors"
    os.mkfifo(fifo)
    zero.symlink_to("/dev/zero")
    errors = []

    def load() -> None:
        with pytest.raises(PolicyFileError) as error:
            load_agent(str(fifo), LOST_CITIES)
        errors.append(str(error.value))

    reader = threading.Thread(target=load, daemon=True)
    reader.start()
    reader.join(30)
    if reader.is_alive():  # the loader opened the FIFO: unblock it, and fail
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail(f"loading {fifo} opened it and waited for a writer")
    assert errors == [f"{fifo} is a named pipe (FIFO), not a regular file: expected a tabletop-rl policy "
                      "(.safetensors written by tabletop_rl.training.train)"]
    with pytest.raises(PolicyFileError, match=f"^{zero} is a device, not a regular file"):
        read_policy_info(zero)
    for path in (fifo, zero):
        lines = refused_by_evaluate_and_play(path, tmp_path, capsys, monkeypatch)
        assert len(lines) == 2 and all(f"{path} is a " in line and "not a regular file" in line for line in lines)


def test_missing_files_and_unknown_agents_are_told_apart(tmp_path):
    with pytest.raises(PolicyFileError, match=f"no such file: {tmp_path / 'nope.safetensors'}"):
        load_agent(str(tmp_path / "nope.safetensors"), LOST_CITIES)
    with pytest.raises(PolicyFileError, match="no such file: runs/x"):
        load_agent("runs/x", LOST_CITIES)
    with pytest.raises(ValueError, match="unknown agent 'heuristc'"):
        load_agent("heuristc", LOST_CITIES)
    (tmp_path / "run").mkdir()
    with pytest.raises(PolicyFileError, match="holds no policy.safetensors"):
        load_agent(str(tmp_path / "run"), LOST_CITIES)


def test_light_install_evaluates_and_plays_without_torch(tmp_path):
    """`pip install -e .` has no torch, sb3 or matplotlib: evaluation and play still work, training says
    which extra it needs."""
    blocker = ("import sys, importlib.abc\n"
               "class Block(importlib.abc.MetaPathFinder):\n"
               "    def find_spec(self, name, path=None, target=None):\n"
               "        if name.split('.')[0] in ('torch', 'stable_baselines3', 'sb3_contrib', 'matplotlib',\n"
               "                                  'tensorboard'):\n"
               "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
               "sys.meta_path.insert(0, Block())\n"
               "import runpy\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def run(module: str, *args: str) -> subprocess.CompletedProcess:
        code = blocker + f"sys.argv = {[module, *args]!r}\nrunpy.run_module({module!r}, run_name='__main__')"
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env,
                              input="q\n", timeout=300)

    done = run("tabletop_rl.training.evaluate", "lost_cities", "random", "pretrained", "--games", "2", "--quiet")
    assert done.returncode == 0, done.stderr
    assert "| **pretrained** |" in done.stdout and "no tournament.png: matplotlib is not installed" in done.stdout
    done = run("tabletop_rl.training.play", "lost_cities", "--opponent", "pretrained", "--seed", "1")
    assert done.returncode == 0 and "Game abandoned." in done.stdout, done.stderr
    done = run("tabletop_rl.training.train", "--config", str(ROOT / "configs" / "lost_cities.yaml"))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"pip install -e '{ROOT.resolve()}[train]'" in done.stderr  # run from another folder: the checkout's path
    assert not (tmp_path / "runs" / "lost_cities").exists()
