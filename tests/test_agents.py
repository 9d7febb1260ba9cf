"""Built-in agents (``envs/core/agents.py`` and each game's ``HeuristicAgent``) read the action mask with one
helper, ``legal_actions``: an empty mask is refused with the same one-line message by all of them. Your own agent
(``module:callable``, ``file.py:callable``; ``tests/custom_agents.py``): what its factory is given and what it
sees, tournaments in both forms and in workers, the example's command, and every bad spec in one line."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from tabletop_rl import envs
from tabletop_rl.envs import list_games
from tabletop_rl.envs.core.agents import SeatView, builtin_agent
from tabletop_rl.envs.core.match import play_game
from tabletop_rl.envs.core.record import Decision, Record
from tabletop_rl.envs.core.registry import game_class
from tabletop_rl.training import evaluate
from tabletop_rl.training.evaluation.tournament import tournament
from tabletop_rl.training.runtime.agents import custom_spec, load_agent
from tests.custom_agents import CALLS


@pytest.mark.parametrize("agent", ["random", "heuristic"])
@pytest.mark.parametrize("name", list_games())
def test_an_empty_action_mask_is_refused_in_one_line(name, agent):
    game = game_class(name)()
    observation = game.new_initial_state(0).observation(0)
    label = "RandomAgent" if agent == "random" else "HeuristicAgent"
    with pytest.raises(ValueError, match=rf"^{label}\.act: the action mask has no legal action$"):
        builtin_agent(agent, game, seed=0).act(observation, np.zeros(game.num_actions, np.int8))


# ----------------------------------------------------------------------------- your own agent (module:callable)
ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "my_agent.py"
EVALUATE = "python -m tabletop_rl.training.evaluate"


@pytest.mark.parametrize("spec, parsed", [
    ("tests.custom_agents:first", ("tests.custom_agents", "first")),
    ("path/to/my_agent.py:make", ("path/to/my_agent.py", "make")),
    ("runs/a:b/my_agent.py:make", ("runs/a:b/my_agent.py", "make")),  # split at the last ':'
    ("runs/a:b/policy.safetensors", None), ("runs/a:b", None), ("search:worlds=8", None), ("heuristic", None),
    ("mod:", None), (":make", None), ("my-agent:make", None),
])
def test_custom_specs_are_module_or_file_then_a_callable(spec, parsed):
    assert custom_spec(spec) == parsed


def test_the_factory_gets_the_game_and_a_seed_and_same_seed_same_games():
    CALLS.clear()
    specs = ["tests.custom_agents:Watcher", "random"]
    played = [tournament("lost_cities", specs, games_per_pairing=4, seed=4).records for _ in range(2)]
    assert played[0] == played[1]
    game = envs.make("lost_cities", wrapped=False).game
    assert all(type(c["game"]) is type(game) and c["game"].options == game.options for c in CALLS)
    seeds = [c["seed"] for c in CALLS]  # a fresh agent per game (and one made first, to check the spec)
    assert all(type(s) is int for s in seeds) and seeds[:5] == seeds[5:] and len(set(seeds)) == 5


def test_the_agent_is_asked_with_its_own_seats_observation_and_mask_only():
    game = envs.make("lost_cities", wrapped=False).game
    env = envs.make("lost_cities")
    agents = [load_agent("random", game, seed=1), load_agent("tests.custom_agents:Watcher", game, seed=0)]
    decisions: list[Decision] = []
    play_game(env, agents, seed=2, decisions=decisions)
    watcher = CALLS[-1]["agent"]
    assert [(type(view), view.seat) for view in watcher.views] == [(SeatView, 1)]  # it defines attach
    assert not hasattr(load_agent("tests.custom_agents:first", game), "attach")  # a function gets no view
    seen = watcher.seen
    record = Record.played(env.unwrapped, ["random", "tests.custom_agents:Watcher"], decisions)
    asked = [(state.observation(1), state.action_mask()) for state, d in record.states() if d and d.seat == 1]
    assert len(seen) == len(asked) > 10
    for (observation, mask), (expected, expected_mask) in zip(seen, asked, strict=True):
        np.testing.assert_array_equal(observation, expected)
        np.testing.assert_array_equal(mask, expected_mask)


def test_the_examples_agents_play_the_same_tournament_from_the_file_or_the_module_and_in_workers():
    """examples/my_agent.py named by its path and as a module (the checkout is on the path, also in the workers)."""
    played = {(spec, workers): tournament("lost_cities", [spec, "heuristic"], games_per_pairing=4, seed=5,
                                          workers=workers).records
              for spec in (f"{EXAMPLE}:Mostly", "examples.my_agent:Mostly") for workers in (1, 2)}
    first = next(iter(played.values()))
    assert len(first) == 4 and all(records == first for records in played.values())


def test_the_examples_evaluate_command_runs(monkeypatch, tmp_path, capsys):
    commands = re.findall(r"^ +python -m (\S+) (.*)$", EXAMPLE.read_text(), re.M)
    assert [module for module, _ in commands] == ["tabletop_rl.training.evaluate", "tabletop_rl.training.play",
                                                  "tabletop_rl.web"]
    monkeypatch.chdir(ROOT)  # the paths in the example are the checkout's
    evaluate.main([*commands[0][1].split(), "--games", "2", "--quiet", "--out", str(tmp_path)])
    assert "| examples/my_agent.py:highest |" in capsys.readouterr().out


@pytest.fixture
def broken_modules(tmp_path, monkeypatch):
    """Files that fail on import, and one without callables, in a folder on the path."""
    (tmp_path / "syntax_error.py").write_text("x = (\n")
    (tmp_path / "needs_missing.py").write_text("import no_such_dependency_xyz\n")
    (tmp_path / "constants.py").write_text("X = 1\n")
    (tmp_path / "folder.py").mkdir()
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


SAYS = "expected an object with act(observation, action_mask) -> int, or a function of those two"


@pytest.mark.parametrize("spec, problem", [
    ("no_such_module_xyz:make", "no module named 'no_such_module_xyz' (modules are found on the Python path: the "
                                "current folder, PYTHONPATH, installed packages); for a file, give its path: "
                                "path/to/file.py:callable"),
    ("{tmp}/missing.py:make", "no such file: {tmp}/missing.py"),
    ("{tmp}/folder.py:make", "{tmp}/folder.py is a directory, not a regular file"),
    ("needs_missing:make", "importing needs_missing raised ModuleNotFoundError: No module named "
                           "'no_such_dependency_xyz'"),
    ("{tmp}/syntax_error.py:make", "importing {tmp}/syntax_error.py raised SyntaxError: "),
    ("tests.custom_agents:hihgest", "tests.custom_agents has no 'hihgest'; its callables: Watcher, broken, first, "
                                    "lost_cities_only, masked, number, one_argument, out_of_range, …"),
    ("{tmp}/constants.py:make", "{tmp}/constants.py has no 'make'; it defines no callables"),
    ("tests.custom_agents:LIMIT", "LIMIT is 3 (of type int), not callable: name a factory, called as "
                                  "LIMIT(game=..., seed=...)"),
    ("tests.custom_agents:broken", "the factory raised ZeroDivisionError: division by zero"),
    ("tests.custom_agents:wrong", f"the factory returned 42 (of type int); {SAYS}"),
    ("tests.custom_agents:one_argument", f"the factory returned one_argument.<locals>.<lambda>(observation); {SAYS}"),
    ("tests.custom_agents:out_of_range", "act returned {actions}, which is not a legal action: it must be one of the "
                                         "legal actions, the indices where action_mask is 1 (now "),
])
def test_a_bad_custom_spec_is_one_line_that_names_it(broken_modules, tmp_path, capsys, spec, problem):
    spec = spec.format(tmp=broken_modules)
    actions = envs.make("lost_cities", wrapped=False).game.num_actions
    with pytest.raises(SystemExit) as stop:
        evaluate.main(["lost_cities", spec, "random", "--games", "2", "--quiet", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.count("\n") == 1  # one line: no traceback
    assert err.startswith(f"{EVALUATE}: error: agent {spec}: {problem.format(tmp=broken_modules, actions=actions)}")
    assert not (tmp_path / "out").exists()


def test_an_illegal_answer_in_a_worker_is_the_same_one_line(capsys, tmp_path):
    with pytest.raises(SystemExit) as stop:
        evaluate.main(["lost_cities", "tests.custom_agents:masked", "random", "--games", "2", "--workers", "2",
                       "--quiet", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.count("\n") == 1
    assert err.startswith(f"{EVALUATE}: error: agent tests.custom_agents:masked: act returned ")


@pytest.mark.parametrize("spec, shown", [("masked", r"\d+"), ("number", r"\d+\.0"), ("out_of_range", r"\d+")])
def test_an_answer_that_is_no_legal_action_is_refused(spec, shown):
    game = envs.make("lost_cities", wrapped=False).game
    state = game.new_initial_state(0)
    agent = load_agent(f"tests.custom_agents:{spec}", game, seed=0)
    legal = ", ".join(map(str, state.legal_actions()[:8]))
    with pytest.raises(ValueError, match=rf"^agent tests\.custom_agents:{spec}: act returned {shown}, which is not a "
                                         rf"legal action: it must be one of the legal actions, the indices where "
                                         rf"action_mask is 1 \(now {legal}(, …)?\)$"):
        agent.act(state.observation(state.current_player), state.action_mask())


def test_a_policy_decides_a_batch_as_it_decides_each_decision_alone():
    """``act_batch`` (one forward pass and one draw for many games) gives every agent the move ``act`` gives it,
    drawing the same numbers from its generator: the batched env plays the single env's games."""
    from tabletop_rl.training.runtime.policy import MLPPolicy, PolicyAgent, PolicyInfo
    from tests.policy_helpers import network, random_weights

    game = envs.make("palazzo", wrapped=False, num_players=3).game
    info = PolicyInfo.for_game(game, network(pi=(16,), vf=(8,)))
    policy = MLPPolicy({k: 3 * w for k, w in random_weights(info, 1).items()}, info)  # peaked: draws that differ
    rng = np.random.default_rng(0)
    observations = (rng.random((40, game.observation_size)) < 0.05).astype(np.float32)
    masks = rng.random((40, game.num_actions)) < 0.3
    masks[np.arange(40), rng.integers(game.num_actions, size=40)] = True

    def agents() -> list[PolicyAgent]:
        return [PolicyAgent(policy, deterministic=i % 3 == 0, seed=i) for i in range(40)]

    alone, batched = agents(), agents()
    for _ in range(3):
        expected = [agent.act(o, m) for agent, o, m in zip(alone, observations, masks.astype(np.int8), strict=True)]
        assert PolicyAgent.act_batch(batched, observations, masks.astype(np.int8)) == expected
    assert len(set(expected)) > 5 and all(masks[i, a] for i, a in enumerate(expected))
    assert [a.rng.random() for a in alone] == [a.rng.random() for a in batched]
    assert batched[5].notes() == alone[5].notes()
