"""``python -m tabletop_rl.training.play``: a scripted human plays Lost Cities through the terminal CLI."""

from __future__ import annotations

import io
import re

import pytest

from tabletop_rl import envs
from tabletop_rl.envs.lost_cities import State as LostCitiesState
from tabletop_rl.training.cli.terminal import outcome, play
from tabletop_rl.training.play import main


class Answers:
    """An input stream: the scripted lines, then ``forever`` on every later prompt (or end of input)."""

    def __init__(self, *lines: str, forever: str | None = None):
        self.lines = list(lines)
        self.forever = forever
        self.prompts = 0

    def readline(self) -> str:
        self.prompts += 1
        if self.lines:
            return self.lines.pop(0) + "\n"
        return "" if self.forever is None else self.forever + "\n"


def run(*lines: str, forever: str | None = None, seat: int = 0, seed: int = 4, **kwargs):
    answers, out = Answers(*lines, forever=forever), io.StringIO()
    returns = play("lost_cities", ["heuristic"], seat=seat, seed=seed, input_stream=answers,
                   output_stream=out, **kwargs)
    return returns, out.getvalue(), answers


def test_bad_input_gets_a_clear_message_and_a_new_prompt():
    returns, text, answers = run("hello there", "99", "0", "-3", "", "draw pile", "play purple 5", "d", "q")
    assert returns is None and "Game abandoned." in text
    assert answers.prompts == 9 and text.count("your move (1-16") == 9  # card step: 8 cards, play or discard
    assert "There is no action called 'hello there'" in text
    assert "There is no action 99: type a number from 1 to 16" in text
    assert "There is no action 0:" in text and "There is no action -3:" in text
    assert "Type the number of an action or its text" in text
    assert "'draw pile' is not legal now" in text  # a real action, but not in the card step (L11)
    assert "There is no action called 'play purple 5'" in text  # 5 colours: no purple (L2)
    assert "'d' could be any of: discard" in text
    assert "you:" not in text  # nothing was played


def test_what_is_neither_a_number_nor_a_name_gets_told_what_the_prompt_takes():
    answers = ["+-5", "²", "5²", "9" * 5000]
    returns, text, _ = run(*answers, "q")
    for answer in answers:
        assert (f"There is no action called {answer!r}: type a number from 1 to 16 or an action's text ('?' lists "
                "them, 'q' quits).") in text
    assert "invalid literal" not in text and "you:" not in text


def test_numbers_names_and_unique_beginnings_are_accepted():
    returns, text, _ = run("?", "2", "DRAW   Pile", "discard", "draw pi", "q")
    assert returns is None
    assert text.count("your legal actions:") == 4  # three decisions plus the '?' listing
    played = re.findall(r"^you: (.*)$", text, re.MULTILINE)
    assert len(played) == 2 and played[1] == "draw pile"
    assert played[0] == re.search(r"^ +2\. (.*)$", text, re.MULTILINE).group(1)
    assert "'discard' could be any of" in text


def test_end_of_input_leaves_the_game_cleanly():
    returns, text, _ = run()
    assert returns is None and text.rstrip().endswith("Game abandoned.")


def opponent_hand(table: str) -> str:
    return re.search(r"^player 0 hand: .*$", table, re.MULTILINE).group(0)


def test_a_full_game_never_shows_the_opponents_hand(monkeypatch):
    """Always answering 1 plays a whole game; no table shown reveals the opponent's unknown cards (L30)."""
    viewers, hands = [], []
    original = LostCitiesState.render_text

    def spy(self, viewer=None):
        viewers.append(viewer)
        hands.append((opponent_hand(original(self, None)), opponent_hand(original(self, viewer))))
        return original(self, viewer)

    monkeypatch.setattr(LostCitiesState, "render_text", spy)
    returns, text, answers = run(forever="1", seat=1, seed=9)
    assert sorted(returns.tolist()) in ([-1.0, 1.0], [0.0, 0.0])
    assert set(viewers) == {1}
    assert answers.prompts > 20
    assert len(viewers) == answers.prompts + 1  # a table per decision, one at the end
    shown = set(re.findall(r"^player 0 hand: .*$", text, re.MULTILINE))
    assert "player 0 hand: ?, ?, ?, ?, ?, ?, ?, ?" in shown  # nothing is known about it at the start
    for real, visible in hands:
        assert visible in shown
        assert real == visible or real not in shown
    final = r"^final scores: player 0 \(heuristic\) -?\d+, player 1 \(you\) -?\d+$"
    assert re.search(final, text, re.MULTILINE)
    assert re.search(r"^(You win!|You lose\.|It is a draw\.)$", text, re.MULTILINE)
    assert text.count("player 0 (heuristic): ") >= 20  # every opponent move is announced


def test_seat_seed_and_opponent_checks():
    with pytest.raises(ValueError, match="seat 2 is not allowed"):
        run(seat=2)
    with pytest.raises(ValueError, match="needs 1 opponent spec"):
        play("lost_cities", ["random", "random"], seat=0, input_stream=Answers(), output_stream=io.StringIO())
    first = run("q", seat="random", seed=21)[1]
    assert first == run("q", seat="random", seed=21)[1]  # the seed fixes seat, deal and opponent


@pytest.mark.parametrize("returns, seat, message", [
    ([1.0, -1.0], 0, "You win!"), ([1.0, -1.0], 1, "You lose."), ([0.0, 0.0], 1, "It is a draw."),
    ([0.5, 0.5, -1.0], 1, "You share first place with 1."),
    ([1.0, -0.5, -0.5], 2, "You finish in place 2 of 3 (shared)."),
    ([1.0, 0.0, -1.0], 2, "You finish in place 3 of 3."),
])
def test_outcome(returns, seat, message):
    assert outcome(returns, seat) == message


def test_command_line(monkeypatch, capsys, tmp_path):
    monkeypatch.chdir(tmp_path)  # the game's record goes to runs/games/ (tests/test_records.py)
    monkeypatch.setattr("sys.stdin", io.StringIO("1\nq\n"))
    assert main(["lost_cities", "--opponent", "random", "--seat", "0", "--seed", "2",
                 "--set", "n_colours=6"]) is None
    printed = capsys.readouterr().out
    assert "You are player 0; player 1 is random." in printed and "purple" in printed
    assert "Game abandoned." in printed and "The record of this game (unfinished): runs/games/" in printed
    with pytest.raises(SystemExit):
        main(["lost_cities", "--seat", "north"])
    assert "expected a seat number or 'random'" in capsys.readouterr().err


@pytest.mark.parametrize("bad, message", [
    (["--set", "n_colours=[5"], "error: --set 'n_colours=[5': the value is not valid YAML: expected ',' or ']', but "
                                "got '<stream end>' while parsing a flow sequence (line 1, column 3)"),
    (["--seed", "-1"], "error: argument --seed: expected a non-negative integer, got '-1'"),
    (["--seat", "²"], "error: argument --seat: expected a seat number or 'random', got '²'"),
])
def test_bad_flags_get_one_line_naming_the_flag(monkeypatch, capsys, bad, message):
    monkeypatch.setattr("sys.stdin", io.StringIO("q\n"))
    with pytest.raises(SystemExit) as exit_code:
        main(["lost_cities", *bad])
    captured = capsys.readouterr()
    assert exit_code.value.code == 2 and captured.err == f"python -m tabletop_rl.training.play: {message}\n"
    assert captured.out == ""  # refused before any game


def test_a_decision_with_one_legal_action_is_made_with_a_notice():
    """Five Towers: bidding 5 on the first display leaves the winner nothing to choose (every card fits):
    the tear-down, five takes and the placements are made for the player, one line each, no prompt."""
    answers, out = Answers("bid 5", "1", "q"), io.StringIO()
    play("five_towers", ["random"], seat=0, seed=3, input_stream=answers, output_stream=out)
    text = out.getvalue()
    forced = re.findall(r"^you: (.*) \(your only legal action\)$", text, re.MULTILINE)
    display = ["sand 4", "tree 3", "sand 9", "tree 10", "scary 8"]
    assert forced[:7] == ["tear down nothing", *(f"take {card} from the display (slot {s})"
                                                 for s, card in enumerate(display)), "place scary 8 on the scary tower"]
    assert answers.prompts == 3 and text.count("your move (") == 3  # bid, one real placement choice, quit


def test_the_card_just_drawn_is_marked():
    """After drawing from the deck, the next table marks that card in the player's hand (and only there)."""
    _, text, _ = run("1", "draw pile", "q", seat=0, seed=4)
    hands = re.findall(r"^player 0 hand: (.*)$", text, re.MULTILINE)  # card step, draw step, card step
    assert len(hands) == 3 and "(new)" not in hands[0] + hands[1] and hands[2].count("(new)") == 1
    assert text.count("(new)") == 1  # nothing marked in the opponent's hand
    before, after = hands[1].split(", "), hands[2].split(", ")  # 7 cards in the draw step, then 8
    new = next(card for card in after if card.endswith(" (new)")).removesuffix(" (new)")
    assert after.count(new + " (new)") + after.count(new) == before.count(new) + 1


def test_the_table_is_printed_again_only_where_it_changed():
    from tabletop_rl.training.cli.terminal import HumanAgent

    out = io.StringIO()
    human = HumanAgent(None, 0, Answers(), out)
    table = "header\nplayer 0 to act: bid\nplayer 0: tree 3\nplayer 1: -"
    human.show(table)
    assert out.getvalue() == "\n" + table + "\n"
    for shown, expected in [(table, ""),  # nothing changed: nothing printed
                            (table.replace("bid", "take"), "player 0 to act: take\n"),  # one line: that line
                            (table.replace("3", "3 2").replace("-", "tree 9"), "\n" + table.replace("3", "3 2")
                             .replace("-", "tree 9") + "\n")]:  # more: the whole table
        out.seek(0)
        out.truncate()
        human.show(shown)
        assert out.getvalue() == expected


@pytest.mark.parametrize("game, symbols", [
    ("lost_cities", ["W = a wager", "? = a card you have not seen", "(new) = the card just drawn", "forbidden"]),
    ("five_towers", ["H: the high bid", "k: cards in the display", "blocked =", "rubble:", "(taken) / (placed)"]),
    ("palazzo", ["b1.3 = brick", "X3:", "pickers:", "c* =", "T = the value", "V =", "MB:", "BestPay =", "A3 ="]),
    ("torres", ["(r,c)", "K = the king", "R B G Y", "action points left:", "turn's stack:", ". = ground", "fresh:"]),
])
def test_a_question_mark_explains_the_table_and_lists_the_actions(game, symbols):
    """Each game's key to its text table (State.text_legend, kept beside the renderer), then the actions."""
    answers, out = Answers("?", "q"), io.StringIO()
    play(game, ["random"], seat=0, seed=1, input_stream=answers, output_stream=out)
    text = out.getvalue()
    legend = envs.make(game, wrapped=False).game.new_initial_state(0).text_legend()
    assert "'?' explains the table and lists the actions" in text
    assert f"> ?\nwhat the table shows:\n{legend}\nyour legal actions:\n" in text
    for symbol in symbols:
        assert symbol in legend, symbol


def test_the_opponents_moves_name_what_they_take_and_where_it_goes():
    """Five Towers: the bid winner's takes and placements name the cards (the display changes every round)."""
    answers, out = Answers("pass", "q"), io.StringIO()
    play("five_towers", ["heuristic"], seat=0, seed=3, input_stream=answers, output_stream=out)
    moves = re.findall(r"^player 1 \(heuristic\): (.*)$", out.getvalue(), re.MULTILINE)
    assert moves[:10] == ["bid 4", "tear down nothing", "take sand 4 from the display (slot 0)",
                          "take sand 9 from the display (slot 2)", "take tree 10 from the display (slot 3)",
                          "take scary 8 from the display (slot 4)", "place scary 8 on the scary tower",
                          "place tree 10 on the tree tower", "place sand 4 on the sand tower",
                          "place sand 9 on the sand tower"]
    assert not any(re.match(r"(take|place) slot", move) for move in moves)  # the action names, said alone


def test_a_custom_agent_is_an_opponent(monkeypatch, capsys):
    """Your own agent (tests/custom_agents.py) plays a whole game, the same for the same seed; an illegal answer
    ends the command in one line."""
    texts = []
    for _ in range(2):
        out = io.StringIO()
        returns = play("lost_cities", ["tests.custom_agents:Watcher"], seat=0, seed=6,
                       input_stream=Answers(forever="1"), output_stream=out)
        texts.append(out.getvalue())
    assert returns is not None and texts[0] == texts[1]
    assert "player 1 is tests.custom_agents:Watcher." in texts[0]
    assert texts[0].count("player 1 (tests.custom_agents:Watcher): ") >= 20  # every move announced
    monkeypatch.setattr("sys.stdin", io.StringIO("1\n" * 200))
    with pytest.raises(SystemExit) as stop:
        main(["lost_cities", "--opponent", "tests.custom_agents:masked", "--seat", "1", "--no-record"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.count("\n") == 1
    assert err.startswith("python -m tabletop_rl.training.play: error: agent tests.custom_agents:masked: act returned ")
