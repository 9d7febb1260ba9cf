"""A game in the terminal (``python -m tabletop_rl.training.play``): a person as an agent (:class:`HumanAgent`)
against any agents, narrated move by move (:class:`Narrated`); and a recorded game told decision by decision
(:func:`replay_text`, ``python -m tabletop_rl.training.replay``). What the person sees and may type is described
in docs/training.md, the replay in docs/records.md.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from ... import envs
from ...envs.core.agents import Agent, SeatView, agent_notes, pass_view
from ...envs.core.files import write_new
from ...envs.core.match import play_game
from ...envs.core.record import HUMAN, Decision, Record
from .. import cli
from ..runtime.agents import load_agent
from ..runtime.printed_commands import command

QUIT_WORDS = ("q", "quit", "exit")
HELP_WORDS = ("?", "h", "help")


class QuitGame(Exception):
    """The human left the game (``q`` or end of input)."""


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


class HumanAgent:
    """Asks a person for each move through a pair of text streams.

    It is an ordinary agent (``act(observation, action_mask)``); the env is held only to print the table
    from this seat's point of view and to name the actions.
    """

    def __init__(self, env: Any, seat: int, input_stream: TextIO, output_stream: TextIO):
        self.env, self.seat = env, seat
        self.input, self.output = input_stream, output_stream
        self.shown: list[str] = []  # the table as last printed

    def say(self, text: str = "") -> None:
        print(text, file=self.output, flush=True)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        state = self.env.game_state
        legal = np.flatnonzero(action_mask).tolist()
        names = [state.action_to_string(a) for a in legal]
        if len(legal) == 1:  # nothing to choose: no prompt
            self.say(f"you: {state.describe_action(legal[0], self.seat)} (your only legal action)")
            return legal[0]
        self.show(state.render_text(viewer=self.seat))
        self.say(f"you are player {self.seat}; " + self._listing(names))
        while True:
            self.output.write(f"your move (1-{len(legal)}, text, ? or q)> ")
            self.output.flush()
            line = self.input.readline()
            if not line:
                raise QuitGame("end of input")
            if not getattr(self.input, "isatty", bool)():  # a terminal echoes what is typed; a pipe does not
                self.say(line.rstrip("\n"))
            text = _normal(line)
            if text in QUIT_WORDS:
                raise QuitGame(text)
            if text in HELP_WORDS:
                self.say(f"what the table shows:\n{state.text_legend()}\n{self._listing(names)}")
                continue
            try:
                action = self.choose(text, legal, names)
            except ValueError as error:
                self.say(str(error))
                continue
            self.say(f"you: {state.describe_action(action, self.seat)}")
            return action

    def show(self, table: str) -> None:
        """Print the table, or only its changed line when just one changed (nothing if none did)."""
        lines = table.splitlines()
        changed = [new for old, new in zip(self.shown, lines, strict=False) if old != new]
        if len(lines) == len(self.shown) and len(changed) <= 1:
            if changed:
                self.say(changed[0])
        else:
            self.say()
            self.say(table)
        self.shown = lines

    def choose(self, text: str, legal: list[int], names: list[str]) -> int:
        """The legal action meant by ``text`` (a list number, a name or a unique beginning of one)."""
        if not text:
            raise ValueError("Type the number of an action or its text ('?' lists them, 'q' quits).")
        k = cli.integer(text)
        if k is not None:
            if 1 <= k <= len(legal):
                return legal[k - 1]
            raise ValueError(f"There is no action {k}: type a number from 1 to {len(legal)} "
                             "or an action's text.")
        wanted = [_normal(n) for n in names]
        if text in wanted:
            return legal[wanted.index(text)]
        starting = [i for i, n in enumerate(wanted) if n.startswith(text)]
        if len(starting) == 1:
            return legal[starting[0]]
        if starting:
            raise ValueError(f"{text!r} could be any of: " + "; ".join(names[i] for i in starting) + ".")
        try:
            self.env.game_state.string_to_action(text)
        except ValueError:
            raise ValueError(f"There is no action called {text!r}: type a number from 1 to {len(legal)} or an "
                             "action's text ('?' lists them, 'q' quits).") from None
        raise ValueError(f"{text!r} is not legal now ('?' lists the legal actions).")

    @staticmethod
    def _listing(names: list[str]) -> str:
        width = len(str(len(names)))
        return "your legal actions:\n" + "\n".join(f"  {i:>{width}}. {n}" for i, n in enumerate(names, 1))


class Narrated:
    """An opponent whose every move is printed as it is made, as the human (seat ``viewer``) may know it."""

    def __init__(self, agent: Agent, env: Any, label: str, viewer: int, output_stream: TextIO):
        self.agent, self.env, self.label, self.viewer, self.output = agent, env, label, viewer, output_stream

    def attach(self, view: SeatView) -> None:
        """A searching opponent gets its seat's view (``play_game`` hands one to every agent that asks)."""
        pass_view(self.agent, view)

    def notes(self) -> dict | None:
        return agent_notes(self.agent)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        action = self.agent.act(observation, action_mask)
        print(f"{self.label}: {self.env.game_state.describe_action(action, self.viewer)}", file=self.output,
              flush=True)
        return action


def outcome(returns: Sequence[float], seat: int) -> str:
    """The human's result, from the ranking in the env's returns."""
    n = len(returns)
    place = 1 + sum(r > returns[seat] for r in returns)
    tied = sum(r == returns[seat] for r in returns) - 1
    if place == 1 and not tied:
        return "You win!"
    if place == 1:
        return "It is a draw." if n == 2 else f"You share first place with {tied}."
    return "You lose." if n == 2 else f"You finish in place {place} of {n}" + (" (shared)." if tied else ".")


def play(game_name: str, opponents: Sequence[str], *, seat: int | str = "random", seed: int | None = None,
         options: dict[str, Any] | None = None, input_stream: TextIO | None = None,
         output_stream: TextIO | None = None, record_dir: str | Path | None = None) -> np.ndarray | None:
    """Play one game of ``game_name`` as ``seat`` against ``opponents`` (one spec, or one per other seat).

    Returns the env's final returns, or ``None`` if the human quit. The seed fixes the human's seat (if
    ``"random"``), the opponents' seeds and the deal. With ``record_dir``, the game's record (docs/records.md),
    finished or not, is written there as ``<game>-<date>-<time>.json`` (``-2``, … if taken) and its path printed.
    """
    inp = input_stream or sys.stdin
    out = output_stream or sys.stdout
    env = envs.make(game_name, wrapped=False, **(options or {}))
    game = env.game
    n = game.num_players
    rng = np.random.default_rng(seed)
    human = int(rng.integers(n)) if seat == "random" else seat
    if human not in range(n):
        raise ValueError(f"seat {seat!r} is not allowed; expected 'random' or a seat 0..{n - 1}")
    others = [s for s in range(n) if s != human]
    if len(opponents) not in (1, len(others)):
        raise ValueError(f"{game.title} with {n} players needs 1 opponent spec (used for every other seat) "
                         f"or {len(others)}, got {len(opponents)}")
    specs = dict(zip(others, opponents if len(opponents) > 1 else opponents * len(others), strict=True))
    agents: list[Agent] = []
    for s in range(n):
        if s == human:
            agents.append(HumanAgent(env, s, inp, out))
        else:
            opponent = load_agent(specs[s], game, seed=int(rng.integers(2**63)))
            agents.append(Narrated(opponent, env, f"player {s} ({specs[s]})", human, out))
    print(f"{game.title}, {n} players. You are player {human}; "
          + ", ".join(f"player {s} is {specs[s]}" for s in others) + ".", file=out)
    print("Answer with the number of an action or its text; '?' explains the table and lists the actions, "
          "'q' quits.", file=out)
    decisions: list[Decision] = []
    try:
        returns, scores = play_game(env, agents, int(rng.integers(2**63)), decisions)
    except (QuitGame, KeyboardInterrupt):
        print("\nGame abandoned.", file=out, flush=True)
        returns = None
    else:
        print("\n" + env.game_state.render_text(viewer=human), file=out)
        if scores is not None:
            who = {human: "you", **specs}
            print("final scores: " + ", ".join(f"player {s} ({who[s]}) {scores[s]}" for s in range(n)), file=out)
        if env.game_state.is_truncated():
            print("The game was cut off by the turn cap: no winner.", file=out, flush=True)
        else:
            print(outcome(returns, human), file=out, flush=True)
    if record_dir is not None:
        record = Record.played(env, [HUMAN if s == human else specs[s] for s in range(n)], decisions,
                               {"command": "play"})
        try:
            path = write_new(Path(record_dir) / f"{game.name}-{time.strftime('%Y%m%d-%H%M%S')}.json",
                             record.to_json().encode())
        except OSError as error:  # a --record that is a file, a folder not writable: the game is not lost for it
            print(f"The record of this game could not be written in {record_dir}: {error.strerror or error}",
                  file=out, flush=True)
        else:
            print(f"The record of this game{'' if returns is not None else ' (unfinished)'}: {path}; replay it "
                  "with: " + command("tabletop_rl.training.replay", path), file=out, flush=True)
    return returns


def replay_text(record: Record, viewer: int | None = None, step: int | None = None) -> Iterator[str]:
    """A recorded game as text, line by line: at each decision the table (as ``viewer`` sees it: ``None`` for the
    whole table), who is to move and each seat's score, then the move in words and what its agent noted (a
    ``viewer`` sees only its own seat's notes); the final table and the result at the end. ``step``: only the
    position before that decision (the number of decisions: the end)."""
    game = record.new_game()
    labels = [f"player {s} ({spec})" for s, spec in enumerate(record.agents)]
    if step is None:
        options = ", ".join(f"{k}={v!r}" for k, v in record.options.items())
        yield f"{game.title} ({record.game}), seed {record.seed}, options: {options}"
        yield "; ".join(labels) + (f"; seen by player {viewer}" if viewer is not None else "")
        if record.info:
            yield "info: " + ", ".join(f"{k}={v!r}" for k, v in record.info.items())
    for k, (state, decision) in enumerate(record.states()):
        if step is not None and k != step:
            continue
        scores = ", ".join(map(str, state.scores()))
        if decision is None:
            yield f"\n== end after {k} decisions; scores {scores}"
        else:
            yield f"\n== decision {k}: {labels[decision.seat]} to move ({state.phase_name}); scores {scores}"
        yield state.render_text(viewer=viewer)
        if decision is None:
            yield _result_text(record, viewer)
            continue
        yield f"{labels[decision.seat]}: {state.describe_action(decision.action, viewer)}"
        if decision.notes and viewer in (None, decision.seat):
            yield from _notes_text(state, decision.notes, viewer)


def _result_text(record: Record, viewer: int | None) -> str:
    result = record.result
    if result is None:
        return "unfinished: the game was left before its end"
    if result.truncated:
        return "cut off by the turn cap: no winner"
    best = max(result.returns)
    winners = [s for s, r in enumerate(result.returns) if r == best]
    if len(winners) == len(result.returns):
        return "a draw"
    return " and ".join(f"player {s} ({record.agents[s]})" for s in winners) + (" wins" if len(winners) == 1
                                                                                 else " share first place")


def _notes_text(state: Any, notes: dict, viewer: int | None) -> Iterator[str]:
    """A decision's notes (docs/records.md), one line per part."""
    policy, search = notes.get("policy"), notes.get("search")
    if policy:
        parts = [f"value {policy['value']:+.2f}"] if "value" in policy else []
        parts += [f"{state.describe_action(m['action'], viewer)} {m['probability']:.0%}" for m in policy.get("top", [])]
        yield "  policy: " + "; ".join(parts)
    if search:
        ranked = sorted(search["candidates"], key=lambda c: -c["mean"])
        yield f"  search (mean {search['measure']} per candidate): " + "; ".join(
            f"{state.describe_action(c['action'], viewer)} {c['mean']:+.2f} (prior {c['prior']:.0%}, "
            f"{c['worlds']} worlds)" for c in ranked)
