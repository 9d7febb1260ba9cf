"""Game records: a played game as a small JSON document that replays exactly (the format: docs/records.md).

Every engine draws all chance from its state's seeded generator, so a game's name, options and seed and the
actions in order reproduce every position. A record holds these, each seat's agent spec, what the agents noted
about their decisions (optional), the result, and the versions it was played at (of tabletop-rl and of the game).
Loading reads nothing but JSON, checks all of it and replays it through the engine: a file that is not a valid
record is refused with one line naming it (:class:`RecordError`); one played at another version of its game is
replayed with a one-line warning (:class:`~tabletop_rl.envs.core.versions.VersionWarning`). The engine knows no
agents: whoever plays (``play_game``) collects the decisions.

>>> import tabletop_rl
>>> record = tabletop_rl.load_record("runs/games/lost_cities-20260101-120000.json")
>>> record.game, record.agents, record.result.scores
('lost_cities', ('human', 'heuristic'), (31, 12))
>>> for state, decision in record.states():  # every position, with the decision taken there (None at the end)
...     if decision is not None:
...         print(decision.seat, state.describe_action(decision.action))
>>> print(record.state(10).render_text(viewer=0))  # the position before decision 10, as seat 0 saw it
"""

from __future__ import annotations

import json
import math
import reprlib
import stat
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .files import atomic_write, file_kind, parse_json
from .game import Game, State
from .registry import game_class, game_version, list_games
from .versions import FIRST_RELEASE, PACKAGE_VERSION, warn_if_other_version

FORMAT, VERSION = "tabletop-rl-record", 1
MAX_BYTES = 5_000_000  # a long game with search notes at every decision is about 200 KB
HUMAN = "human"  # the agent spec of a seat played by a person
MEASURES = ("margin", "returns")  # what a search candidate's mean is (the search's ``value`` setting)
EXPECTED = "a tabletop-rl game record (.json)"


class RecordError(ValueError):
    """A game record that cannot be used; the message is one line naming the file (or ``record``)."""


@dataclass(frozen=True)
class Decision:
    """``seat`` played ``action``; ``notes`` is what its agent noted about the decision (docs/records.md: its
    likeliest moves, a value, a search's candidates), or None."""

    seat: int
    action: int
    notes: dict[str, Any] | None = None


@dataclass(frozen=True)
class Result:
    """How the game ended: ``State.returns()``, ``State.scores()`` and whether a turn cap cut it."""

    returns: tuple[float, ...]
    scores: tuple[float, ...]
    truncated: bool = False

    @classmethod
    def of(cls, state: State) -> Result | None:
        """The result of ``state``, or None while the game goes on."""
        if not state.is_terminal():
            return None
        return cls(tuple(float(r) for r in state.returns()), tuple(state.scores()), state.is_truncated())


@dataclass(frozen=True)
class Record:
    """One game: ``Game(**options)`` of ``game``, its first position ``new_initial_state(seed)``, each seat's
    agent spec (``"human"`` for a person), the decisions in order, the result (None if the game was left
    unfinished), ``info``, free-form facts about where it was played (never interpreted), and the versions it was
    played at: ``tabletop_rl``, the package's, and ``game_version``, the game's (by default the running ones).

    :func:`load_record` reads one; :meth:`states` and :meth:`state` replay it, :meth:`check` all of it;
    :meth:`save` writes it.
    """

    game: str
    options: dict[str, Any]
    seed: int
    agents: tuple[str, ...]
    decisions: tuple[Decision, ...]
    result: Result | None = None
    info: dict[str, Any] = field(default_factory=dict)
    tabletop_rl: str = PACKAGE_VERSION
    game_version: int | None = None  # None: the running version of the game

    def __post_init__(self):
        if self.game_version is None and self.game in list_games():  # an unknown game is refused by check()
            object.__setattr__(self, "game_version", game_version(self.game))

    @classmethod
    def played(cls, env: Any, agents: Sequence[str], decisions: Sequence[Decision],
               info: Mapping[str, Any] | None = None) -> Record:
        """The record of the game played so far in ``env`` (a raw env of ``tabletop_rl.make``; its
        ``game_seed`` is the game's seed) with these ``decisions`` (``play_game`` collects them)."""
        game = env.game
        return cls(game.name, dict(game.options), env.game_seed, tuple(agents), tuple(decisions),
                   Result.of(env.game_state), dict(info or {}))

    # ----------------------------------------------------------------- replay
    def new_game(self) -> Game:
        """``Game(**options)`` of the record's game (:class:`RecordError` if there is no such game or option)."""
        return self._game("record")

    def states(self) -> Iterator[tuple[State, Decision | None]]:
        """Every position in order with the decision taken there, the final position last with None. Each
        state is a copy of its own (keep or change it freely); a record that does not replay raises
        :class:`RecordError` where it goes wrong."""
        for state, decision in self._replay("record"):
            yield state.clone(), decision

    def state(self, step: int) -> State:
        """The position before decision ``step`` (0 … ``len(decisions)``, the last being the final position)."""
        if not 0 <= step <= len(self.decisions):
            raise ValueError(f"step {step} is not in this record: 0 to {len(self.decisions)} (the final position)")
        for k, (state, _) in enumerate(self._replay("record")):
            if k == step:
                return state
        raise AssertionError("unreachable: _replay yields every position")

    def check(self, where: str = "record") -> State:
        """Check everything and replay the whole game; its final position, or :class:`RecordError` in one line
        starting with ``where``. ``load_record`` and ``to_json`` check."""
        for state, decision in self._replay(where):
            if decision is None:
                return state
        raise AssertionError("unreachable: _replay ends with the final position")

    # ----------------------------------------------------------------- writing
    def to_json(self) -> str:
        """The record as a JSON document (after :meth:`check`: a record that loading would refuse is never
        written)."""
        self.check()
        try:
            text = json.dumps(self._document(), allow_nan=False, separators=(",", ":"))
        except (TypeError, ValueError) as error:  # something in info that JSON cannot hold
            raise RecordError(f"record: cannot be written as JSON: {error}") from None
        if len(text.encode()) > MAX_BYTES:
            raise RecordError(f"record: {len(text.encode()):,} bytes as JSON, more than the {MAX_BYTES:,} a record "
                              "may have")
        return text

    def save(self, path: str | Path) -> None:
        """Write the record to ``path`` atomically (the commands use ``files.write_new``: never an overwrite)."""
        atomic_write(path, self.to_json().encode())

    def _document(self) -> dict[str, Any]:
        decisions = [{"seat": d.seat, "action": d.action, **({} if d.notes is None else {"notes": d.notes})}
                     for d in self.decisions]
        result = None if self.result is None else {
            "returns": list(self.result.returns), "scores": list(self.result.scores),
            "truncated": self.result.truncated}
        played_at = {} if self.game_version is None else {"game_version": self.game_version}  # None: an unknown game
        return {"format": FORMAT, "version": VERSION, "tabletop_rl": self.tabletop_rl, "game": self.game, **played_at,
                "options": self.options, "seed": self.seed, "agents": list(self.agents), "decisions": decisions,
                "result": result, "info": self.info}

    # ----------------------------------------------------------------- checks
    def _game(self, where: str) -> Game:
        try:
            return game_class(self.game)(**self.options)
        except (TypeError, ValueError) as error:  # an unknown game; an option the game refuses
            raise RecordError(f"{where}: {error}") from None

    def _replay(self, where: str) -> Iterator[tuple[State, Decision | None]]:
        """The live positions (not copies) with their decisions, each checked before it is yielded; what goes wrong
        in a record of another version of its game says so."""
        try:
            yield from self._checked_replay(where)
        except RecordError as error:
            if self.game in list_games() and self.game_version != game_version(self.game):
                raise RecordError(f"{error} (it was played at {self.game} version {self.game_version}; this is "
                                  f"version {game_version(self.game)})") from None
            raise

    def _checked_replay(self, where: str) -> Iterator[tuple[State, Decision | None]]:
        problem = _document_problem(self._document())
        if problem:
            raise RecordError(f"{where}: {problem}")
        game = self._game(where)
        n = game.num_players
        if len(self.agents) != n:
            raise RecordError(f"{where}: 'agents' names {len(self.agents)} seats, but {game.title} with these options "
                              f"has {n} players")
        state = game.new_initial_state(self.seed)
        for step, decision in enumerate(self.decisions):
            problem = _decision_problem(state, decision)
            if problem:
                raise RecordError(f"{where}: decision {step}: {problem}")
            yield state, decision
            state.apply_action(decision.action)
        final = Result.of(state)
        ended = f"after {len(self.decisions)} decisions"
        if final is None and self.result is not None:
            raise RecordError(f"{where}: the record has a result, but {ended} the game is not over (seat "
                              f"{state.current_player} to move, phase {state.phase})")
        if final is not None and self.result is None:
            raise RecordError(f"{where}: the game is over {ended}, but the record has no result")
        if final != self.result:
            raise RecordError(f"{where}: the recorded result ({_result_text(self.result)}) is not the game's "
                              f"({_result_text(final)})")
        yield state, None


def load_record(path: str | Path) -> Record:
    """The record in the file ``path``, checked in full and replayed (see the module docstring); anything else
    raises :class:`RecordError`, one line naming the file. Nothing in the file is run: it is read as JSON."""
    path, data = Path(path), b""
    try:
        found = path.stat()
        if stat.S_ISREG(found.st_mode) and found.st_size <= MAX_BYTES:  # never opened otherwise: a FIFO would block
            with open(path, "rb") as f:
                data = f.read(MAX_BYTES + 1)
    except FileNotFoundError:
        raise RecordError(f"no such file: {path}") from None
    except OSError as error:
        raise RecordError(f"{path} cannot be read: {error.strerror or error}") from None
    if not stat.S_ISREG(found.st_mode):
        raise RecordError(f"{path} is {file_kind(found.st_mode)}, not a regular file: expected {EXPECTED}")
    size = max(found.st_size, len(data))  # it may have grown after the check
    if size > MAX_BYTES:
        raise RecordError(f"{path} is {size:,} bytes, more than the {MAX_BYTES:,} a record may have")
    return parse_record(data, str(path))


def parse_record(data: bytes, path: str) -> Record:
    """The record in ``data``, the bytes of a file called ``path`` in messages (an upload, say), checked as
    :func:`load_record` checks a file: one line :class:`RecordError` for anything else."""
    if len(data) > MAX_BYTES:
        raise RecordError(f"{path} is {len(data):,} bytes, more than the {MAX_BYTES:,} a record may have")
    try:
        doc = parse_json(data)
    except ValueError as reason:
        raise RecordError(f"{path} is not {EXPECTED}: not valid JSON ({reason})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        found = f"its 'format' is {_short(doc.get('format'))}" if isinstance(doc, dict) else "not a JSON object"
        raise RecordError(f"{path} is not {EXPECTED}: {found}, expected {FORMAT!r}")
    version = doc.get("version")
    if version != VERSION or type(version) is not int:
        raise RecordError(f"{path} has record version {_short(version)}; this tabletop-rl reads version {VERSION} "
                          "(a newer release may read it)")
    problem = _document_problem(doc)
    if problem:
        raise RecordError(f"{path}: {problem}")
    record = Record(doc["game"], doc["options"], doc["seed"], tuple(doc["agents"]),
                    tuple(Decision(d["seat"], d["action"], d.get("notes")) for d in doc["decisions"]),
                    None if doc.get("result") is None else Result(
                        tuple(doc["result"]["returns"]), tuple(doc["result"]["scores"]), doc["result"]["truncated"]),
                    doc.get("info", {}), doc.get("tabletop_rl", FIRST_RELEASE), doc.get("game_version", 0))
    record.check(path)
    warn_if_other_version(path, "played", record.game, record.game_version, record.tabletop_rl)
    return record


# --------------------------------------------------------------------------- the schema
# A check takes a value and its name in the document and says what is wrong with it, or None.
Check = Callable[[Any, str], "str | None"]


def _integer(least: int) -> Check:
    def check(value: Any, name: str) -> str | None:
        if type(value) is not int or value < least:
            return f"{name} must be an integer >= {least}, got {_short(value)}"
        return None
    return check


def _number(low: float = -math.inf, high: float = math.inf) -> Check:
    def check(value: Any, name: str) -> str | None:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                or not low <= value <= high:
            within = "a finite number" if math.isinf(low) else f"a number from {low:g} to {high:g}"
            return f"{name} must be {within}, got {_short(value)}"
        return None
    return check


def _kind(kind: type, text: str) -> Check:
    def check(value: Any, name: str) -> str | None:
        return None if isinstance(value, kind) else f"{name} must be {text}, got {_short(value)}"
    return check


def _one_of(values: Sequence[str]) -> Check:
    def check(value: Any, name: str) -> str | None:
        return None if value in values and isinstance(value, str) else \
            f"{name} must be one of {', '.join(map(repr, values))}, got {_short(value)}"
    return check


def _list(item: Check, least: int = 0) -> Check:
    def check(value: Any, name: str) -> str | None:
        if not isinstance(value, list) or len(value) < least:
            return f"{name} must be a list{' of at least one item' if least else ''}, got {_short(value)}"
        return next((p for i, v in enumerate(value) if (p := item(v, f"{name}[{i}]"))), None)
    return check


def _object(required: Mapping[str, Check], optional: Mapping[str, Check] | None = None,
            nullable: bool = False) -> Check:
    optional = optional or {}

    def check(value: Any, name: str) -> str | None:
        if value is None and nullable:
            return None
        if not isinstance(value, dict):
            return f"{name} must be a JSON object, got {_short(value)}"
        unknown = sorted(set(value) - set(required) - set(optional), key=str)
        if unknown:
            return f"{name} has an unknown key {_short(unknown[0])}; allowed: {', '.join([*required, *optional])}"
        missing = [key for key in required if key not in value]
        if missing:
            return f"{name} has no {missing[0]!r}"
        return next((p for key, c in {**required, **optional}.items() if key in value
                     and (p := c(value[key], key if name == _ROOT else f"{name}.{key}"))), None)
    return check


_ROOT = "the record"  # its fields are named by their path: seed, decisions[3].notes.search.candidates[0].mean
_ACTION = _integer(0)
NOTES = _object({}, {
    "policy": _object({}, {"top": _list(_object({"action": _ACTION, "probability": _number(0, 1)})),
                           "value": _number()}),
    "search": _object({"measure": _one_of(MEASURES),
                       "candidates": _list(_object({"action": _ACTION, "prior": _number(0, 1), "mean": _number(),
                                                    "worlds": _integer(1)}), least=1)}),
})
_DOCUMENT = _object(
    {"format": _one_of([FORMAT]), "version": _integer(VERSION), "game": _kind(str, "a game name"),
     "options": _kind(dict, "a JSON object of game options"), "seed": _integer(0),
     "agents": _list(_kind(str, "an agent spec (text)")),
     "decisions": _list(_object({"seat": _integer(0), "action": _ACTION}, {"notes": NOTES}))},
    {"tabletop_rl": _kind(str, "a version (text)"), "game_version": _integer(0),
     "result": _object({"returns": _list(_number()), "scores": _list(_number()),
                        "truncated": _kind(bool, "true or false")}, nullable=True),
     "info": _kind(dict, "a JSON object")})


def _document_problem(doc: Any) -> str | None:
    return _DOCUMENT(doc, _ROOT)


def _decision_problem(state: State, decision: Decision) -> str | None:
    """What is wrong with ``decision`` in ``state`` (whose seat, which action, the actions its notes name)."""
    if state.is_terminal():
        return "the game is already over"
    if decision.seat != state.current_player:
        return f"recorded for seat {decision.seat}, but seat {state.current_player} is on move (phase {state.phase})"
    if not state.is_legal(decision.action):
        return (f"action {decision.action} ({state.action_to_string(decision.action)}) is not legal for seat "
                f"{decision.seat} in phase {state.phase}")
    notes = decision.notes or {}
    lists = {"policy.top": notes.get("policy", {}).get("top", []),
             "search.candidates": notes.get("search", {}).get("candidates", [])}
    for name, items in lists.items():
        actions = [item["action"] for item in items]
        illegal = next((a for a in actions if not state.is_legal(a)), None)
        if illegal is not None:
            return f"notes.{name} names action {illegal} ({state.action_to_string(illegal)}), which is not legal here"
        if len(set(actions)) < len(actions):
            return f"notes.{name} names an action twice"
    return None


def _result_text(result: Result | None) -> str:
    if result is None:
        return "none"
    return (f"returns {list(result.returns)}, scores {list(result.scores)}"
            + (", truncated" if result.truncated else ""))


_SHORT = reprlib.Repr()  # values from a file, shown in one line of reasonable length
_SHORT.maxstring, _SHORT.maxother = 60, 60
_short = _SHORT.repr
