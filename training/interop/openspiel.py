"""Every game as an OpenSpiel Python game (extra ``openspiel``; docs/interop.md, "OpenSpiel").

``import tabletop_rl.openspiel`` (this module) registers ``tabletop_<game>`` for each game, its options as game
parameters: ``pyspiel.load_game("tabletop_lost_cities(n_colours=6,rounds=3)")``. An OpenSpiel state wraps an
engine state (``envs/core/game.py``):

* Chance. The engine takes its random events as given outcomes (``chance=``): each of them — who starts, every
  card of the deal, every later draw — is an OpenSpiel chance node whose outcomes are the card kinds in the pile
  drawn from, with their frequencies as probabilities. A decision is applied to the engine with the outcomes
  chosen so far (``State.child``); when it needs one more, the state is a chance node for that event
  (``ChanceNeeded``), and once it is chosen the decision is applied again. The engine's own shuffles then order
  only the cards left face down, which nothing observes (its seed is fixed: a state is a function of its history).
* Observations. ``observation_tensor`` and ``information_state_tensor`` are the seat's observation vector
  (``State.observation``; the observer's ``dict`` holds its named fields), the strings its nonzero entries; both
  hold everything the seat knows of the position and nothing more (the engines' no-leak guarantee), not the
  order of past moves. Before the deal is complete they are zeros and empty; at a chance node that resolves a
  decision (a draw), they are those of the position before it.
* ``resample_from_infostate`` is ``State.sample_hidden``; OpenSpiel's clone and serialisation copy the engine
  state (``to_json`` for serialisation); ``returns`` are the engine's, zero-sum in [-1, 1].
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...envs import list_games
from ...envs.core.extras import needs_extra

try:
    import pyspiel
except ImportError as error:
    raise needs_extra("tabletop_rl.openspiel", "openspiel", error) from None
from ...envs.core.game import ChanceNeeded
from ...envs.core.game import Game as EngineGame
from ...envs.core.game import State as EngineState
from ...envs.core.registry import game_class

PREFIX = "tabletop_"


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split()]


# OpenSpiel gives a parameter one type (its default's) and a game string cannot quote, so an option whose values
# mix types is spelled in one type: (OpenSpiel default, OpenSpiel value -> option value, what is allowed).
_SPELLED: dict[tuple[str, str], tuple[Any, Any, str]] = {
    ("lost_cities", "first_player"): (-1, lambda v: "random" if v == -1 else v, "-1 (random), 0 or 1"),
    ("lost_cities", "max_turns_per_round"): (0, lambda v: "auto" if v == 0 else v,
                                             "0 ('auto') or a turn cap from 44 (OpenSpiel needs one)"),
    ("five_towers", "first_player"): (-1, lambda v: "random" if v == -1 else v, "-1 (random) or a seat"),
    ("palazzo", "first_player"): (-1, lambda v: None if v == -1 else v, "-1 (random) or a seat"),
    ("torres", "master_card"): ("random", lambda v: None if v == "random" else v, "random or M1 … M8"),
    ("torres", "stack_table"): ("default", lambda v: None if v == "default" else [_ints(x) for x in v.split("/")],
                                "default, or the 3 phases separated by / of stack sizes separated by spaces"),
    ("torres", "start_castles"): ("3 18 21 31 32 42 45 60", _ints, "8 squares separated by spaces"),
}


def parameter_specification(name: str) -> dict[str, Any]:
    """``tabletop_<name>``'s parameters and their defaults: the game's options, spelled as :data:`_SPELLED` says
    where their values mix types."""
    return {o.name: _SPELLED[name, o.name][0] if (name, o.name) in _SPELLED else o.default
            for o in game_class(name).option_schema}


def engine_game(name: str, params: dict[str, Any]) -> EngineGame:
    """The engine game of ``tabletop_<name>`` under OpenSpiel parameters; a bad value raises ``ValueError`` naming
    it and what is allowed."""
    cls = game_class(name)
    schema = {o.name: o for o in cls.option_schema}
    options = {}
    for key, value in params.items():
        if (name, key) in _SPELLED:
            _, decode, allowed = _SPELLED[name, key]
            try:
                option = decode(value)
                good = schema[key].check(option)
            except ValueError:
                good = False
            if not good:
                raise ValueError(f"{PREFIX}{name}: parameter {key}={value!r} is not allowed; expected {allowed}")
            value = option
        options[key] = value
    return cls(**options)  # the spellings leave out None turn caps: every game is bounded


def game_type(name: str, game: EngineGame | None = None) -> pyspiel.GameType:
    """``tabletop_<name>``'s GameType: that of the option set of ``game`` (chance mode, information), by default
    of the default options."""
    cls = game_class(name)
    game = game or cls()
    seats = next((o for o in cls.option_schema if o.name == "num_players"), None)
    players = [n for n in range(1, 11) if seats.check(n)] if seats else [game.num_players]
    modes = pyspiel.GameType.ChanceMode
    return pyspiel.GameType(
        short_name=PREFIX + name,
        long_name=f"tabletop-rl {cls.title}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=modes.DETERMINISTIC if game.num_chance_outcomes == 0 else modes.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.PERFECT_INFORMATION if game.perfect_information
        else pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=max(players),
        min_num_players=min(players),
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=parameter_specification(name),
    )


@dataclass(frozen=True)
class ChanceNode:
    """The chance event a state waits for: its name, (outcome, probability) pairs, the outcomes' names."""

    event: str
    outcomes: list[tuple[int, float]]
    names: dict[int, str]

    @staticmethod
    def of(needed: ChanceNeeded) -> ChanceNode:
        return ChanceNode(needed.event, needed.outcomes,
                          dict(zip((o for o, _ in needed.outcomes), needed.names, strict=True)))

    def name(self, outcome: int) -> str:
        return f"{self.event}: {self.names.get(outcome, outcome)}"


class OpenSpielGame(pyspiel.Game):
    """``tabletop_<name>`` under one parameter set: OpenSpiel's view of one engine ``Game``. Each game has its
    subclass, setting ``name`` (OpenSpiel creates a game by calling the class registered)."""

    name: str

    def __init__(self, params: dict[str, Any] | None = None):
        params = {**parameter_specification(self.name), **(params or {})}
        self.engine = engine_game(self.name, params)
        info = pyspiel.GameInfo(
            num_distinct_actions=self.engine.num_actions,
            max_chance_outcomes=self.engine.num_chance_outcomes,
            num_players=self.engine.num_players,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=self.engine.max_game_length,
        )
        super().__init__(game_type(self.name, self.engine), info, params)
        # Every state starts here (OpenSpiel makes a new initial state for each clone, too): found once.
        self.root = Position()
        self.root.resolve(self)

    def new_initial_state(self) -> OpenSpielState:
        return OpenSpielState(self)

    def make_py_observer(self, iig_obs_type: pyspiel.IIGObservationType | None = None,
                         params: dict[str, Any] | None = None) -> Observer:
        return Observer(self.engine, iig_obs_type, params)


class Position:
    """An OpenSpiel state's content: the engine state at the last decision node and, at a chance node, the
    decision being resolved (None: the setup) with the outcomes chosen so far. One object, so that OpenSpiel's
    clone (a deep copy of the state's attributes) and serialisation (a pickle of them) go through
    ``__deepcopy__`` (engine states are never changed in place here: copies share them) and ``__reduce__`` (the
    engine's JSON)."""

    def __init__(self, engine: EngineState | None = None, action: int | None = None, given: list[int] | None = None,
                 chance: ChanceNode | None = None):
        self.engine = engine
        self.action = action
        self.given = given or []
        self.chance = chance

    def resolve(self, game: OpenSpielGame) -> None:
        """Apply the pending step with the outcomes given; a chance node when it needs one more."""
        try:
            if self.engine is None:  # the setup
                engine = game.engine.new_initial_state(0, self.given)
            else:
                engine = self.engine.child(self.action, self.given)
        except ChanceNeeded as needed:
            self.chance = ChanceNode.of(needed)
            return
        self.engine, self.action, self.given, self.chance = engine, None, [], None

    def __deepcopy__(self, memo: dict) -> Position:
        return Position(self.engine, self.action, list(self.given), self.chance)

    def __reduce__(self) -> tuple:
        return _load_position, (None if self.engine is None else self.engine.to_json(), self.action, self.given,
                                self.chance)


def _load_position(engine: str | None, action: int | None, given: list[int], chance: ChanceNode | None) -> Position:
    """Unpickling, for OpenSpiel's deserialisation."""
    return Position(None if engine is None else EngineState.from_json(engine), action, given, chance)


class OpenSpielState(pyspiel.State):
    """One OpenSpiel state of a ``tabletop_<game>``: see the module docstring."""

    def __init__(self, game: OpenSpielGame, position: Position | None = None):
        super().__init__(game)
        self._position = position or game.root.__deepcopy__({})

    @property
    def engine(self) -> EngineState | None:
        """The engine state (at a chance node: before the decision being resolved; None before the setup)."""
        return self._position.engine

    def current_player(self) -> int:
        p = self._position
        if p.chance is not None:
            return pyspiel.PlayerId.CHANCE
        return pyspiel.PlayerId.TERMINAL if p.engine.is_terminal() else p.engine.current_player

    def _legal_actions(self, player: int) -> list[int]:
        return self._position.engine.legal_actions()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return self._position.chance.outcomes

    def _apply_action(self, action: int) -> None:
        p = self._position
        if p.chance is None:
            p.action = action
        else:
            p.given.append(action)
        p.resolve(self.get_game())

    def _action_to_string(self, player: int, action: int) -> str:
        p = self._position
        if player != pyspiel.PlayerId.CHANCE:
            return p.engine.action_to_string(action)
        return f"chance outcome {action}" if p.chance is None else p.chance.name(action)

    def is_terminal(self) -> bool:
        p = self._position
        return p.chance is None and p.engine.is_terminal()

    def returns(self) -> list[float]:
        if not self.is_terminal():
            return [0.0] * self.num_players()
        return [float(r) for r in self._position.engine.returns()]

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> OpenSpielState:
        """A state ``player_id`` cannot tell from this one (``State.sample_hidden``), drawn with the generator
        seeded by ``probability_sampler()`` (a float in [0, 1), e.g. ``pyspiel.UniformProbabilitySampler``)."""
        p = self._position
        if p.chance is not None:
            raise ValueError(f"{self.get_game().engine.title}: resample_from_infostate needs a decision node, not "
                             "a chance node")
        rng = np.random.default_rng(int(probability_sampler() * 2**53))
        return OpenSpielState(self.get_game(), Position(p.engine.sample_hidden(player_id, rng)))

    def __str__(self) -> str:
        p = self._position
        text = "" if p.engine is None else p.engine.render_text()
        if p.chance is not None:
            pending = "the setup" if p.engine is None else p.engine.action_to_string(p.action)
            text += f"\nchance: {p.chance.event}, resolving {pending}, outcomes so far {p.given}"
        return text


class Observer:
    """OpenSpiel's observer (``make_py_observer``) of one engine game: a seat's observation vector, the fields of
    the game's layout as ``dict``. A seat sees its own private information and the public one, so the observation
    types asked must be those (``private_info=SINGLE_PLAYER``, ``public_info=True``); perfect recall or not, the
    vector is the same (what the seat knows of the position)."""

    def __init__(self, game: EngineGame, iig_obs_type: pyspiel.IIGObservationType | None,
                 params: dict[str, Any] | None):
        if params:
            raise ValueError(f"{game.title}: the observer takes no parameters; got {sorted(params)}")
        if iig_obs_type is not None and (iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER
                                         or not iig_obs_type.public_info):
            raise ValueError(f"{game.title}: only a seat's own observation (private_info=SINGLE_PLAYER, "
                             f"public_info=True) exists; got {iig_obs_type}")
        self.layout = game.layout
        self.tensor = np.zeros(self.layout.size, np.float32)
        self.dict = self.layout.unpack(self.tensor)
        self._starts = np.array([f.start for f in self.layout])
        self._names = [f.name for f in self.layout]

    def set_from(self, state: OpenSpielState, player: int) -> None:
        engine = state.engine
        if engine is None:
            self.tensor.fill(0)
        else:
            self.tensor[:] = engine.observation(player)

    def string_from(self, state: OpenSpielState, player: int) -> str:
        """The nonzero entries of the observation as ``field[i]=value`` (``i`` the flat index in the field, the
        value the shortest decimal that reads back as the same float32)."""
        engine = state.engine
        if engine is None:
            return ""
        vector = engine.observation(player)
        where = np.flatnonzero(vector)
        fields = np.searchsorted(self._starts, where, side="right") - 1
        return " ".join(f"{self._names[f]}[{i - self._starts[f]}]={v}"
                        for i, f, v in zip(where.tolist(), fields.tolist(), vector[where], strict=True))


def register() -> None:
    """Register ``tabletop_<game>`` for every game (once: OpenSpiel keeps the first registration)."""
    registered = set(pyspiel.registered_names())
    for name in list_games():
        if PREFIX + name not in registered:
            # a class, not a closure: OpenSpiel keeps the creator in a C++ static freed after Python has shut down,
            # and freeing a closure then aborts the interpreter (a class is still referenced by its own cycles)
            pyspiel.register_game(game_type(name), type(f"OpenSpiel_{name}", (OpenSpielGame,), {"name": name}))


register()
