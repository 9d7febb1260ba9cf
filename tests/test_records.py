"""Game records (docs/records.md): every game and option set replays exactly; every bad file is refused in one line;
``evaluate --record``, ``play`` and ``replay`` write and read them."""

from __future__ import annotations

import io
import json
import math
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import tabletop_rl
from tabletop_rl.envs.core.agents import RandomAgent
from tabletop_rl.envs.core.match import play_game
from tabletop_rl.envs.core.record import MAX_BYTES, Decision, Record, RecordError, Result, load_record
from tabletop_rl.envs.core.versions import VersionWarning
from tabletop_rl.training import evaluate, replay
from tabletop_rl.training import play as play_command
from tabletop_rl.training.cli.terminal import play
from tabletop_rl.training.evaluation.tournament import tournament
from tabletop_rl.training.runtime.agents import load_agent

ROOT = Path(__file__).resolve().parents[1]

# the option sets of the golden playthroughs (tests/test_<game>_contract.py)
OPTION_SETS = [
    ("lost_cities", {}), ("lost_cities", {"n_colours": 6, "rounds": 2}),
    ("five_towers", {}),
    ("five_towers", {"num_players": 3, "canonical_order": False, "auto_resolve_forced": True,
                     "zero_starts_tower": False, "rebuild_removed_tower": False, "first_player": 1}),
    ("palazzo", {"num_players": 2}),
    ("palazzo", {"num_players": 3, "canonical_order": False, "auto_resolve_forced": True,
                 "stack_split": "by_floor_shuffled", "removed_tiles_public": False, "reshuffle_timing": "on_empty",
                 "first_player": 1}),
    ("torres", {}),
    ("torres", {"num_players": 3, "action_deck": "personal", "auto_resolve_forced": True,
                "door_model": "monotone_tunnel", "forced_redistribution": False}),
    ("torres", {"num_players": 4, "action_deck": "master", "phase_start": "king_mover"}),
]


class Watched(RandomAgent):
    """A random agent that keeps the live position (as JSON) at each of its decisions."""

    def __init__(self, env, seed, seen: list[str]):
        super().__init__(env.game, seed)
        self.env, self.seen = env, seen

    def act(self, observation, action_mask):
        self.seen.append(self.env.game_state.to_json())
        return super().act(observation, action_mask)


def played(name: str, options: dict, seed: int = 7) -> tuple[Record, list[str]]:
    """A random game through ``play_game``: its record and every position it went through (the last at the end)."""
    env = tabletop_rl.make(name, wrapped=False, **options)
    seen: list[str] = []
    decisions: list[Decision] = []
    play_game(env, [Watched(env, seed + s, seen) for s in range(env.game.num_players)], seed, decisions)
    seen.append(env.game_state.to_json())
    return Record.played(env, ["random"] * env.game.num_players, decisions, {"test": name}), seen


@pytest.mark.parametrize(("name", "options"), OPTION_SETS,
                         ids=[f"{name}-{'-'.join(map(str, options.values())) or 'default'}"[:60]
                              for name, options in OPTION_SETS])
def test_a_record_replays_every_position_exactly(tmp_path, name, options):
    record, seen = played(name, options)
    path = tmp_path / "game.json"
    record.save(path)
    loaded = load_record(path)
    assert loaded == record and loaded.result is not None and loaded.info == {"test": name}
    replayed = [(state.to_json(), decision) for state, decision in loaded.states()]
    assert [text for text, _ in replayed] == seen  # every position, the generator's state included
    assert [d for _, d in replayed] == [*record.decisions, None]
    assert loaded.state(len(seen) // 2).to_json() == seen[len(seen) // 2]
    final = loaded.state(len(loaded.decisions))
    assert Result.of(final) == loaded.result and final.is_terminal()


def test_states_are_copies_and_steps_are_checked():
    record, seen = played("lost_cities", {})
    states = record.states()
    (first, _), (second, _) = next(states), next(states)
    first.apply_action(first.legal_actions()[0])  # changing one position changes no other
    assert second.to_json() == seen[1] and record.state(0).to_json() == seen[0]
    with pytest.raises(ValueError, match=rf"^step {len(seen)} is not in this record: 0 to {len(seen) - 1} \("):
        record.state(len(seen))


def test_an_unfinished_game_has_no_result(tmp_path):
    record, _ = played("five_towers", {})
    cut = Record(record.game, record.options, record.seed, record.agents, record.decisions[:10])
    cut.save(tmp_path / "cut.json")
    assert load_record(tmp_path / "cut.json").result is None
    assert not cut.state(10).is_terminal()


# --------------------------------------------------------------------------- refusals
@pytest.fixture(scope="module")
def good() -> dict:
    """A valid record of a Lost Cities game between random agents, as a JSON document."""
    record, _ = played("lost_cities", {}, seed=3)
    return json.loads(record.to_json())


def refused(tmp_path: Path, content: bytes | dict) -> str:
    path = tmp_path / "bad.json"
    path.write_bytes(content if isinstance(content, bytes) else json.dumps(content).encode())
    with pytest.raises(RecordError) as error:
        load_record(path)
    message = str(error.value)
    assert "\n" not in message
    return message.replace(str(path), "FILE")


def edited(doc: dict, **changes) -> dict:
    return {**json.loads(json.dumps(doc)), **changes}


def test_refused_format_version_game_and_options(tmp_path, good):
    assert refused(tmp_path, edited(good, format="tabletop-rl-policy")) == (
        "FILE is not a tabletop-rl game record (.json): its 'format' is 'tabletop-rl-policy', expected "
        "'tabletop-rl-record'")
    assert refused(tmp_path, [1, 2]) == (
        "FILE is not a tabletop-rl game record (.json): not a JSON object, expected 'tabletop-rl-record'")
    assert refused(tmp_path, edited(good, version=2)) == (
        "FILE has record version 2; this tabletop-rl reads version 1 (a newer release may read it)")
    assert refused(tmp_path, edited(good, version="1")) == (
        "FILE has record version '1'; this tabletop-rl reads version 1 (a newer release may read it)")
    assert refused(tmp_path, edited(good, game="chess")) == (
        f"FILE: unknown game 'chess'; available games: {tabletop_rl.list_games()}")
    assert refused(tmp_path, edited(good, options={"n_colours": 7})) == (
        "FILE: Lost Cities: option n_colours=7 is not allowed; expected one of 5, 6")
    assert refused(tmp_path, edited(good, options={"colours": 5})) == (
        "FILE: Lost Cities: unknown option(s) ['colours']; known options: ['first_player', 'match_tie', "
        "'max_turns_per_round', 'n_colours', 'next_round_starter', 'rounds']")


def test_refused_shapes_and_types(tmp_path, good):
    missing = {k: v for k, v in good.items() if k != "seed"}
    assert refused(tmp_path, missing) == "FILE: the record has no 'seed'"
    assert refused(tmp_path, edited(good, moves=[])) == (
        "FILE: the record has an unknown key 'moves'; allowed: format, version, game, options, seed, agents, "
        "decisions, tabletop_rl, game_version, result, info")
    assert refused(tmp_path, edited(good, seed=-1)) == "FILE: seed must be an integer >= 0, got -1"
    assert refused(tmp_path, edited(good, seed=True)) == "FILE: seed must be an integer >= 0, got True"
    assert refused(tmp_path, edited(good, agents=["random"])) == (
        "FILE: 'agents' names 1 seats, but Lost Cities with these options has 2 players")
    assert refused(tmp_path, edited(good, agents=["random", 3])) == (
        "FILE: agents[1] must be an agent spec (text), got 3")
    decisions = good["decisions"][:3] + [{"seat": 0}]
    assert refused(tmp_path, edited(good, decisions=decisions)) == "FILE: decisions[3] has no 'action'"
    nan = json.dumps(edited(good, result={**good["result"], "returns": [float("nan"), 0.0]})).encode()
    assert refused(tmp_path, nan) == "FILE: result.returns[0] must be a finite number, got nan"
    assert refused(tmp_path, edited(good, info=[])) == "FILE: info must be a JSON object, got []"


def test_refused_decisions_that_do_not_replay(tmp_path, good):
    state = tabletop_rl.envs.game_class("lost_cities")().new_initial_state(good["seed"])
    for decision in good["decisions"][:5]:
        state.apply_action(decision["action"])
    illegal = next(a for a in range(state.game.num_actions) if not state.is_legal(a))
    decisions = json.loads(json.dumps(good["decisions"]))
    decisions[5]["action"] = illegal
    assert refused(tmp_path, edited(good, decisions=decisions)) == (
        f"FILE: decision 5: action {illegal} ({state.action_to_string(illegal)}) is not legal for seat "
        f"{state.current_player} in phase {state.phase}")
    decisions = json.loads(json.dumps(good["decisions"]))
    decisions[5]["seat"] = 1 - state.current_player
    assert refused(tmp_path, edited(good, decisions=decisions)) == (
        f"FILE: decision 5: recorded for seat {1 - state.current_player}, but seat {state.current_player} is on "
        f"move (phase {state.phase})")
    n = len(good["decisions"])
    extra = good["decisions"] + [good["decisions"][-1]]
    assert refused(tmp_path, edited(good, decisions=extra)) == f"FILE: decision {n}: the game is already over"
    assert refused(tmp_path, edited(good, decisions=good["decisions"][:-1])) == (
        f"FILE: the record has a result, but after {n - 1} decisions the game is not over (seat "
        f"{good['decisions'][-1]['seat']} to move, phase draw)")
    assert refused(tmp_path, edited(good, result=None)) == (
        f"FILE: the game is over after {n} decisions, but the record has no result")
    result = good["result"]
    wrong = {**result, "scores": result["scores"][::-1]}
    assert refused(tmp_path, edited(good, result=wrong)) == (
        f"FILE: the recorded result (returns {result['returns']}, scores {wrong['scores']}) is not the game's "
        f"(returns {result['returns']}, scores {result['scores']})")


def test_refused_notes(tmp_path, good):
    state = tabletop_rl.envs.game_class("lost_cities")().new_initial_state(good["seed"])
    illegal = next(a for a in range(state.game.num_actions) if not state.is_legal(a))
    legal = state.legal_actions()

    def with_notes(notes: dict) -> str:
        decisions = json.loads(json.dumps(good["decisions"]))
        decisions[0]["notes"] = notes
        return refused(tmp_path, edited(good, decisions=decisions))

    assert with_notes({"policy": {"top": [{"action": legal[0], "probability": 1.5}]}}) == (
        "FILE: decisions[0].notes.policy.top[0].probability must be a number from 0 to 1, got 1.5")
    assert with_notes({"search": {"measure": "margin", "candidates": []}}) == (
        "FILE: decisions[0].notes.search.candidates must be a list of at least one item, got []")
    assert with_notes({"search": {"measure": "margin", "candidates": [
        {"action": legal[0], "prior": 0.5, "mean": 1.0, "worlds": 0}]}}) == (
        "FILE: decisions[0].notes.search.candidates[0].worlds must be an integer >= 1, got 0")
    assert with_notes({"hint": 1}) == (
        "FILE: decisions[0].notes has an unknown key 'hint'; allowed: policy, search")
    assert with_notes({"policy": {"top": [{"action": illegal, "probability": 0.5}]}}) == (
        f"FILE: decision 0: notes.policy.top names action {illegal} ({state.action_to_string(illegal)}), which is "
        "not legal here")
    twice = {"action": legal[0], "prior": 0.5, "mean": 1.0, "worlds": 2}
    assert with_notes({"search": {"measure": "returns", "candidates": [twice, twice]}}) == (
        "FILE: decision 0: notes.search.candidates names an action twice")


def test_refused_files(tmp_path, good):
    assert refused(tmp_path, b"") == (
        "FILE is not a tabletop-rl game record (.json): not valid JSON (Expecting value: line 1 column 1 (char 0))")
    assert refused(tmp_path, b"\xff\xfe{}") == (
        "FILE is not a tabletop-rl game record (.json): not valid JSON (not UTF-8 text)")
    assert refused(tmp_path, b"[" * 100_000 + b"]" * 100_000) == (
        "FILE is not a tabletop-rl game record (.json): not valid JSON (nested too deeply)")
    assert refused(tmp_path, b'{"seed": 1' + b"0" * 5000 + b"}") == (
        "FILE is not a tabletop-rl game record (.json): not valid JSON (an integer has too many digits)")
    big = json.dumps(edited(good, info={"padding": "x" * MAX_BYTES})).encode()
    assert refused(tmp_path, big) == f"FILE is {len(big):,} bytes, more than the 5,000,000 a record may have"
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    with pytest.raises(RecordError, match=r"^\S+fifo\.json is a named pipe \(FIFO\), not a regular file: expected "
                                          r"a tabletop-rl game record \(\.json\)$"):
        load_record(fifo)  # never opened: it would block
    with pytest.raises(RecordError, match=r"^\S+ is a directory, not a regular file"):
        load_record(tmp_path)
    with pytest.raises(RecordError, match=r"^no such file: \S+nothing\.json$"):
        load_record(tmp_path / "nothing.json")


def test_a_record_that_would_be_refused_is_never_written(tmp_path):
    record, _ = played("lost_cities", {})
    bad = Record(record.game, record.options, record.seed, record.agents, record.decisions[1:], record.result)
    with pytest.raises(RecordError, match="^record: decision 0: "):
        bad.save(tmp_path / "bad.json")
    with pytest.raises(RecordError, match="^record: cannot be written as JSON: "):
        Record(record.game, record.options, record.seed, record.agents, record.decisions, record.result,
               {"when": object()}).to_json()
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- versions
def test_a_record_names_the_versions_it_was_played_at(tmp_path, good):
    assert (good["tabletop_rl"], good["game_version"]) == (tabletop_rl.__version__, tabletop_rl.game_version(
        "lost_cities"))
    before = {k: v for k, v in good.items() if k not in ("tabletop_rl", "game_version")}  # written by 0.1.0
    (tmp_path / "old.json").write_text(json.dumps(before))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # version 0 of the game, as every record without versions
        old = load_record(tmp_path / "old.json")
    assert (old.tabletop_rl, old.game_version) == ("0.1.0", 0)
    assert json.loads(old.to_json()) == {**before, "tabletop_rl": "0.1.0", "game_version": 0}  # kept as it was
    assert refused(tmp_path, edited(good, game_version=-1)) == "FILE: game_version must be an integer >= 0, got -1"
    assert refused(tmp_path, edited(good, tabletop_rl=2)) == "FILE: tabletop_rl must be a version (text), got 2"


def test_a_record_of_another_game_version_replays_with_one_line_warning(tmp_path, good):
    path = tmp_path / "future.json"
    path.write_text(json.dumps(edited(good, tabletop_rl="0.9.0", game_version=3)))
    expected = (f"{path} was played at lost_cities version 3 (tabletop-rl 0.9.0); this is version 0 "
                "(tabletop/lost_cities-v0), whose rules, observations or rewards differ")
    with pytest.warns(VersionWarning) as caught:
        record = load_record(path)
    assert [str(w.message) for w in caught] == [expected] and record.game_version == 3
    done = subprocess.run([sys.executable, "-m", "tabletop_rl.training.replay", str(path), "--step", "0"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stderr == f"warning: {expected}\n"
    with warnings.catch_warnings():
        warnings.simplefilter("error", VersionWarning)  # a researcher who wants such records refused
        with pytest.raises(VersionWarning):
            load_record(path)
    # one that no longer replays says which version it was played at
    assert refused(tmp_path, edited(good, game_version=3, decisions=good["decisions"][1:])).endswith(
        "(it was played at lost_cities version 3; this is version 0)")


# --------------------------------------------------------------------------- writers
SEARCH = "search:policy=none,rollout=random,worlds=2,horizon=4"  # cheap: play-outs of 4 plies


def test_evaluate_records_every_game_with_search_notes_and_the_same_results(tmp_path):
    written: dict[str, Record] = {}
    kwargs = {"games_per_pairing": 2, "seed": 5}
    plain = tournament("lost_cities", ["random", SEARCH], **kwargs)
    recorded = tournament("lost_cities", ["random", SEARCH], on_record=written.__setitem__, **kwargs)
    assert recorded.to_markdown(times=False) == plain.to_markdown(times=False)
    assert recorded.games_csv() == plain.games_csv()
    assert sorted(written) == ["table0-deal0-rotation0.json", "table0-deal0-rotation1.json"]
    for outcome in recorded.records:
        record = written[f"table0-deal0-rotation{outcome.seating.index(0)}.json"]
        assert record.agents == tuple(["random", SEARCH][a] for a in outcome.seating)
        assert record.result.returns == outcome.returns and record.result.scores == outcome.scores
        assert record.info["deal_seed"] == outcome.seed
        searched = [d.notes["search"] for d in record.decisions if d.notes]
        assert searched and all(d.seat == record.agents.index(SEARCH) for d in record.decisions if d.notes)
        for notes in searched:  # uniform prior without a network; every candidate played in 2 worlds
            candidates = notes["candidates"]
            assert notes["measure"] == "margin" and {c["worlds"] for c in candidates} == {2}
            assert all(c["prior"] == pytest.approx(1 / len(candidates)) for c in candidates)


def test_evaluate_command_writes_one_file_per_game(tmp_path, capsys):
    args = ["lost_cities", "random", "heuristic", "--games", "2", "--quiet", "--out", str(tmp_path / "eval"),
            "--record", str(tmp_path / "records")]
    results = evaluate.main(args)
    printed = capsys.readouterr().out
    files = sorted((tmp_path / "records").iterdir())
    assert [f.name for f in files] == ["table0-deal0-rotation0.json", "table0-deal0-rotation1.json"]
    assert f"the records of the 2 games played are in {tmp_path / 'records'}; replay one with: " in printed
    assert [load_record(f).result.scores for f in files] == [r.scores for r in results.records]
    evaluate.main([*args, "--workers", "2"])  # a second tournament never writes into the first one's folder
    assert f"are in {tmp_path / 'records'}-2;" in capsys.readouterr().out
    assert sorted((tmp_path / "records").iterdir()) == files
    again = sorted((tmp_path / "records-2").iterdir())  # the workers' games are the same games
    assert [f.name for f in again] == [f.name for f in files]
    assert [f.read_bytes() for f in again] == [f.read_bytes() for f in files]


def test_a_policy_notes_its_likeliest_moves_and_its_value():
    env = tabletop_rl.make("lost_cities", wrapped=False)
    decisions: list[Decision] = []
    play_game(env, [load_agent("pretrained", env.game), RandomAgent(env.game, 0)], 1, decisions)
    noted = [d for d in decisions if d.seat == 0]
    assert noted and all(d.notes is not None for d in noted) and all(d.notes is None for d in decisions if d.seat)
    for decision in noted:
        top = decision.notes["policy"]["top"]
        probabilities = [m["probability"] for m in top]
        assert 1 <= len(top) <= 5 and top[0]["action"] == decision.action  # it plays its likeliest move
        assert probabilities == sorted(probabilities, reverse=True) and sum(probabilities) <= 1 + 1e-9
        assert math.isfinite(decision.notes["policy"]["value"])
    Record.played(env, ["pretrained", "random"], decisions).check()


def test_evaluate_refused_before_any_game_makes_no_record_folder(tmp_path, capsys):
    with pytest.raises(SystemExit):
        evaluate.main(["lost_cities", "random", "nobody", "--quiet", "--record", str(tmp_path / "records")])
    assert "unknown agent 'nobody'" in capsys.readouterr().err and not (tmp_path / "records").exists()


class Answers:
    def readline(self) -> str:
        return "1\n"


def test_play_records_the_game_and_prints_the_path(tmp_path):
    out = io.StringIO()
    returns = play("lost_cities", ["random"], seat=1, seed=4, input_stream=Answers(), output_stream=out,
                   record_dir=tmp_path)
    printed = out.getvalue().splitlines()[-1]
    path = Path(re.match(r"The record of this game: (\S+); replay it with: ", printed).group(1))
    assert printed.endswith(f"-m tabletop_rl.training.replay {path}")
    record = load_record(path)
    assert path.parent == tmp_path and path.name.startswith("lost_cities-")
    assert record.agents == ("random", "human") and record.result.returns == tuple(returns)
    assert record.info == {"command": "play"}
    play("lost_cities", ["random"], seat=1, seed=4, input_stream=Answers(), output_stream=io.StringIO(),
         record_dir=tmp_path)
    assert len(list(tmp_path.iterdir())) == 2  # the same second: another name, never an overwrite
    out = io.StringIO()
    play("lost_cities", ["random"], seat=1, seed=4, input_stream=Answers(), output_stream=out,
         record_dir=path)  # a file, not a folder
    assert out.getvalue().splitlines()[-1] == f"The record of this game could not be written in {path}: File exists"


def test_play_command_records_by_default_even_an_abandoned_game(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.stdin", io.StringIO("1\nq\n"))
    play_command.main(["lost_cities", "--opponent", "random", "--seat", "0", "--seed", "2"])
    printed = capsys.readouterr().out
    (path,) = (tmp_path / "runs" / "games").iterdir()
    assert f"The record of this game (unfinished): {path.relative_to(tmp_path)}; replay it with:" in printed
    record = load_record(path)
    assert record.result is None and record.agents == ("human", "random") and 0 in [d.seat for d in record.decisions]
    monkeypatch.setattr("sys.stdin", io.StringIO("q\n"))
    play_command.main(["lost_cities", "--opponent", "random", "--seed", "2", "--no-record"])
    assert len(list((tmp_path / "runs" / "games").iterdir())) == 1 and "record" not in capsys.readouterr().out


# --------------------------------------------------------------------------- replay
@pytest.fixture(scope="module")
def noted(tmp_path_factory) -> Path:
    """A Lost Cities game of the search agent (seat 0) against random, with its notes."""
    written: dict[str, Record] = {}
    tournament("lost_cities", [SEARCH, "random"], games_per_pairing=1, seed=2, on_record=written.__setitem__)
    path = tmp_path_factory.mktemp("records") / "game.json"
    written["table0-deal0-rotation0.json"].save(path)
    return path


def test_replay_prints_every_decision_with_the_scores(noted, capsys):
    record = replay.main([str(noted)])
    text = capsys.readouterr().out
    n = len(record.decisions)
    assert text.startswith(f"Lost Cities (lost_cities), seed {record.seed}, options: n_colours=5, ")
    assert text.count("\n== decision ") == n and f"\n== end after {n} decisions; scores " in text
    moves = re.findall(r"^player (\d) \(\S+\): (.*)$", text, re.MULTILINE)
    expected = [(str(d.seat), s.describe_action(d.action)) for s, d in record.states() if d is not None]
    assert moves == expected
    assert text.count("  search (mean margin per candidate): ") == sum(1 for d in record.decisions if d.notes) > 0
    final = record.state(n)
    assert f"scores {', '.join(map(str, final.scores()))}\n{final.render_text()}" in text
    assert text.rstrip().endswith(("wins", "a draw", "share first place"))


def test_replay_as_one_seat_shows_only_what_it_saw(noted, capsys):
    record = replay.main([str(noted), "--viewer", "1"])
    text = capsys.readouterr().out
    assert "player 0 hand: ?, ?, ?, ?, ?, ?, ?, ?" in text and "search (" not in text  # seat 0's notes hidden
    assert record.state(0).render_text(viewer=1) in text
    replay.main([str(noted), "--step", "4"])
    text = capsys.readouterr().out
    assert text.startswith("\n== decision 4: ") and text.count("== ") == 1
    assert record.state(4).render_text() in text


@pytest.mark.parametrize("command", ["replay", "evaluate"])
def test_a_reader_that_stops_reading_ends_the_command_quietly(noted, command):
    """``... | head``: the reader closes the pipe, and the command ends with exit code 1, no traceback."""
    args = {"replay": [str(noted)],
            "evaluate": ["lost_cities", "random", "random", "--games", "2", "--quiet", "--out", noted.parent / "eval"]}
    args = [str(a) for a in args[command]]
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line is written
    done = subprocess.run([sys.executable, "-m", f"tabletop_rl.training.{command}", *args], cwd=ROOT, stdout=write,
                          stderr=subprocess.PIPE, text=True)
    os.close(write)
    assert done.returncode == 1 and "Error" not in done.stderr, done.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["--viewer", "2"], "argument --viewer: seat 2 is not in this 2-player game (0 to 1)"),
    (["--step", "100000"], "argument --step: this record has decisions 0 to {last} and the end, {n}; got 100000"),
    (["--step", "-1"], "argument --step: expected a non-negative integer, got '-1'"),
])
def test_replay_refuses_bad_flags(noted, capsys, args, message):
    n = len(load_record(noted).decisions)
    with pytest.raises(SystemExit) as exit_code:
        replay.main([str(noted), *args])
    err = capsys.readouterr().err
    assert exit_code.value.code == 2
    assert err == f"python -m tabletop_rl.training.replay: error: {message.format(last=n - 1, n=n)}\n"


def test_replay_refuses_a_bad_file_in_one_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "tabletop-rl-record", "version": 1}')
    done = subprocess.run([sys.executable, "-m", "tabletop_rl.training.replay", str(bad)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == f"python -m tabletop_rl.training.replay: error: {bad}: the record has no 'game'\n"


def test_the_api_is_exported_everywhere():
    assert tabletop_rl.load_record is tabletop_rl.envs.load_record is load_record
    assert tabletop_rl.Record is Record and tabletop_rl.RecordError is RecordError
    assert issubclass(RecordError, ValueError)


def test_the_example_in_the_docs_is_a_record(tmp_path):
    """docs/records.md's example loads (an unfinished game), and its field table names every field it has."""
    doc = (ROOT / "docs" / "records.md").read_text()
    example = re.search(r"### Example.*?```json\n(.*?)```", doc, re.S).group(1)
    (tmp_path / "example.json").write_text(example)
    record = load_record(tmp_path / "example.json")
    assert record.result is None and record.decisions[2].notes["search"]["candidates"][0]["worlds"] == 8
    assert record.state(0).action_to_string(83) == "discard green 4"  # as the text says
    fields = {"format", "version", "tabletop_rl", "game", "game_version", "options", "seed", "agents", "decisions",
              "decisions[k].seat", "decisions[k].action", "decisions[k].notes", "result", "result.returns",
              "result.scores", "result.truncated", "info", "notes.policy.top", "notes.policy.value",
              "notes.search.measure", "notes.search.candidates"}
    assert set(re.findall(r"^\| `([^`]+)` \|", doc, re.M)) == fields
