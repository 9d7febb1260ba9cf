"""The engine contract every game implements (see ``docs/engine_contract.md``).

A game is split the way OpenSpiel splits it:

* :class:`Game` holds the validated options and everything derived from them once (deck tables,
  action-space size, observation layout). It is immutable and shared by all states of that game.
* :class:`State` is one position. It is driven by ``apply_action``; all chance (shuffles, deals, deck
  draws) happens inside the engine through the state's own seeded generator, so there is no chance
  player and every decision belongs to exactly one seat, ``current_player``. An outside driver that needs
  chance as explicit events (OpenSpiel's chance nodes) gives the outcomes instead: ``chance=`` of
  :meth:`Game.new_initial_state` and :meth:`State.child`, which raise :class:`ChanceNeeded` for the next one.

Engines are pure Python + numpy and know nothing of gymnasium or PettingZoo; ``tabletop_rl.envs.core.aec`` adapts
any of them to a PettingZoo ``AECEnv``.
"""

from __future__ import annotations

import importlib
import json
import operator
import re
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from types import ModuleType
from typing import Any, ClassVar

import numpy as np

from . import picture
from .layout import Layout
from .options import Option, resolve

TERMINAL = -1
"""``State.current_player`` once the episode is over (terminated or truncated)."""
FIRST_PLAYER = "first player"
"""The chance event that picks who starts (``State._random_int(n, FIRST_PLAYER)``)."""
_RULE_ID = re.compile(r"^D\d+[a-z]? ")  # a decision's rule id before its name: "D3a turn stack"


def check_seed(seed: Any) -> int | None:
    """``seed`` as a plain int, or None (fresh entropy from the OS); anything else raises.

    numpy alone would take ``True`` as seed 1 and a list as entropy, and Gymnasium refuses numpy integers:
    every entry point that takes a seed checks it here, so they all accept the same seeds with one message.
    """
    if seed is None:
        return None
    message = f"seed={seed!r} is not allowed; expected None or a non-negative integer"
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(message)
    if seed < 0:
        raise ValueError(message)
    return int(seed)


class ChanceNeeded(Exception):
    """Raised by a state whose chance outcomes are given (``chance=``) when its next random event has none left:
    ``event`` names the event, ``outcomes`` are its (outcome, probability) pairs in ascending order of outcome and
    ``names`` their readable names. Append one of the outcomes to ``chance`` and call again."""

    def __init__(self, event: str, outcomes: list[tuple[int, float]], names: list[str]):
        super().__init__(f"{event}: the next chance outcome is not given; possible: "
                         + ", ".join(f"{o} ({name}, p={p:.4g})" for (o, p), name in zip(outcomes, names, strict=True)))
        self.event, self.outcomes, self.names = event, outcomes, names


class Game(ABC):
    """Static description of a game under one set of options."""

    name: ClassVar[str]
    """Registry id, e.g. ``"lost_cities"``."""
    title: ClassVar[str]
    """Human name used in messages, e.g. ``"Lost Cities"``."""
    option_schema: ClassVar[tuple[Option, ...]]
    state_class: ClassVar[type[State]]

    num_players: int
    num_actions: int
    layout: Layout
    state_layout: Layout
    """Named slices of :meth:`State.global_state` (the full state, for centralized critics)."""

    def __init__(self, **options: Any):
        self.options = resolve(self.title, self.option_schema, options)
        self._setup()

    @abstractmethod
    def _setup(self) -> None:
        """Derive constants and tables from ``self.options``; must set num_players, num_actions,
        num_chance_outcomes, layout and state_layout."""

    @property
    def observation_size(self) -> int:
        return self.layout.size

    max_game_length: int | None = None
    """The most decisions an episode can have under these options (its turn caps bound it); None when nothing
    does (no turn cap)."""
    perfect_information: bool = False
    """True when every seat's observation holds the whole position except the order of face-down piles: with the
    draws given as chance outcomes (``chance=``), nothing is hidden."""
    num_chance_outcomes: int
    """Chance outcomes (``chance=``) are ints below this (the card kinds of the piles drawn from, the range of every
    :meth:`State._random_int`); 0 when the options leave nothing to chance."""

    def relabellings(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The game's symmetries as index tables, or None where it declares none: ``(obs_take, action_take)`` of
        shapes (R, ``layout.size``) and (R, ``num_actions``), one row per relabelling of interchangeable labels
        (Lost Cities: its colours), the identity first. If ``obs`` and ``mask`` are a seat's view of a position,
        ``obs[obs_take[r]]`` and ``mask[action_take[r]]`` are its view of the relabelled position, where action
        j is the relabelling of action ``action_take[r, j]``. Training may use them to see more positions than
        were played (``warm_start.relabel``)."""
        return None

    def new_initial_state(self, seed: int | None = None, chance: Sequence[int] | None = None) -> State:
        """A fresh game; ``seed=None`` draws entropy from the OS (not reproducible). With ``chance``, the setup's
        random events (who starts, the deal) take these outcomes in order instead of the generator's (see
        :meth:`State.child`)."""
        return self.state_class(self, check_seed(seed), chance)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.options.items())})"


class Fields:
    """Attribute names of a :class:`State`, grouped by how deep ``clone`` copies them:

    * ``values``: shared, not copied — ints, bools, tuples, and containers that are replaced, never mutated;
    * ``copied``: copied with ``.copy()`` — lists of values, dicts, sets, numpy arrays, objects with ``copy()``;
    * ``rows``: lists whose items are each copied with ``.copy()`` (per-seat lists, lists of dicts);
    * ``nested``: lists of lists whose items are each copied with ``.copy()`` (per seat, per column, a list).

    Each group is a space-separated string of names."""

    __slots__ = ("values", "copied", "rows", "nested")

    def __init__(self, values: str = "", copied: str = "", rows: str = "", nested: str = ""):
        self.values, self.copied = tuple(values.split()), tuple(copied.split())
        self.rows, self.nested = tuple(rows.split()), tuple(nested.split())
        wrong = [name for name in self.names if not name.isidentifier()]
        if wrong:
            raise ValueError(f"Fields: {wrong[0]!r} is not an attribute name")

    @property
    def names(self) -> tuple[str, ...]:
        return self.values + self.copied + self.rows + self.nested

    def __add__(self, other: Fields) -> Fields:
        out = Fields()
        for group in self.__slots__:
            setattr(out, group, getattr(self, group) + getattr(other, group))
        return out

    def copier(self) -> Callable[[Any, Any], None]:
        """``copy(src, dst)`` setting these attributes of ``dst`` to copies of ``src``'s, written out as one
        plain assignment per attribute (as ``dataclasses`` writes ``__init__``): ``clone`` is on the search's
        hot path, and attribute stores keep CPython's compact per-instance attribute storage, which going
        through ``__dict__`` gives up (random playouts on such clones ran about 15% slower)."""
        lines = ["def copy(src, dst):", "    pass"]
        lines += [f"    dst.{k} = src.{k}" for k in self.values]
        lines += [f"    dst.{k} = src.{k}.copy()" for k in self.copied]
        lines += [f"    dst.{k} = [x.copy() for x in src.{k}]" for k in self.rows]
        lines += [f"    dst.{k} = [[x.copy() for x in row] for row in src.{k}]" for k in self.nested]
        namespace: dict[str, Any] = {}
        exec("\n".join(lines), namespace)
        return namespace["copy"]


class State(ABC):
    """One position of a game. Subclasses implement the hooks marked abstract, declare ``fields`` and name their
    ``encoder``.

    Contract (checked by ``tests/contract.py`` for every game):

    * ``current_player`` is the seat to act, or ``TERMINAL``.
    * ``legal_actions()`` is the sorted list of legal ints; ``action_mask()`` the matching int8 vector
      over ``game.num_actions``. Never empty while the game runs.
    * ``apply_action(a)`` raises ``ValueError`` naming the action and the phase when ``a`` is illegal,
      and then leaves the state unchanged.
    * ``returns()`` is zero-sum, in [-1, 1], all zeros unless the game terminated normally.
    * ``to_json()`` / ``from_json()`` round-trip exactly, the generator included.
    * ``observation(p)`` depends only on what seat p may know.
    """

    game: Game
    rng: np.random.Generator
    current_player: int

    encoder: ClassVar[ModuleType]
    """The game's ``observation`` module (docs/engine_contract.md, "How observations are kept current"), which
    ``observation`` and ``global_state`` call: its ``global_state(state)`` and, in a game that marks parts of ``_x``
    stale, ``refresh(state)``."""
    _x: np.ndarray
    """The one seat-absolute vector that every observation gathers from, kept by the encoder's writers."""
    _dirty: int = 0
    """Nonzero while parts of ``_x`` are stale, until ``encoder.refresh`` rewrites them at the next read; 0 for good
    (this default) in a game whose writers keep ``_x`` current as the position changes."""
    truncated: bool = False
    """A field of a game with a turn cap, set once the cap cut the episode (``is_truncated()``)."""

    fields: ClassVar[Fields]
    """The position: what ``clone`` copies and ``to_json`` saves (the game and the generator aside)."""
    derived: ClassVar[Fields] = Fields()
    """Caches derived from the position (tables the hot paths read): ``clone`` copies them, ``to_json`` leaves
    them out and ``_after_load`` rebuilds them."""
    views: ClassVar[tuple[str, ...]] = ()
    """Attributes that are numpy views into a ``derived`` array: neither copied nor saved, but made anew by the
    game's ``clone`` and ``_after_load`` (a copied view would no longer share the array's memory)."""

    def __init_subclass__(cls, **kwargs: Any):
        super().__init_subclass__(**kwargs)
        if hasattr(cls, "fields"):
            cls._copy_fields = staticmethod((cls.fields + cls.derived).copier())

    _given: list[int] | None = None
    """While a state is driven with given chance outcomes: those still to use, the next one last. ``None``
    otherwise: the generator decides (a class default, so that no state carries it between calls)."""

    def __init__(self, game: Game, seed: int | None, chance: Sequence[int] | None = None):
        self.game = game
        self.rng = np.random.default_rng(seed)
        self._legal: list[int] | None = None
        if chance is None:
            self._setup()
        else:
            self._with_given(chance, self._setup)

    # ----------------------------------------------------------------- hooks for subclasses
    @abstractmethod
    def _setup(self) -> None:
        """Deal the initial position using ``self.rng``."""

    @abstractmethod
    def _legal_actions(self) -> list[int]:
        """Sorted legal actions of ``current_player`` (called at most once per position)."""

    @abstractmethod
    def _apply(self, action: int) -> None:
        """Apply a legal action; never called with an illegal one."""

    @property
    @abstractmethod
    def phase(self) -> str:
        """Name of the current decision phase (``"terminal"`` once over); used in messages."""

    @property
    def phase_name(self) -> str:
        """The phase as a player reads it: ``phase`` without the rule id that the code and the rules cite
        (``"D2 setup knight"`` -> ``"setup knight"``; Torres' and Palazzo's decisions carry one)."""
        return _RULE_ID.sub("", self.phase)

    def is_terminal(self) -> bool:
        """True once nobody acts any more: the game ended by its rules *or* was truncated."""
        return self.current_player == TERMINAL

    def is_truncated(self) -> bool:
        """True if the episode was cut by a turn cap (an engine option, not a game rule)."""
        return self.truncated

    @abstractmethod
    def scores(self) -> list[float]:
        """Game points per seat (the game's own score, provisional before the end)."""

    def ranking_key(self) -> list[Any]:
        """Per seat, a value whose order decides the winner; the scores unless a game breaks ties."""
        return self.scores()

    def observation(self, player: int, out: np.ndarray | None = None) -> np.ndarray:
        """float32 vector of ``game.layout.size`` from ``player``'s point of view (seats rotated); written into
        ``out`` (and returned) when given, as ``numpy.take`` does, so that a batch of games fills its rows in
        place. One gather from ``_x``, whose index rotates the seat rows and picks ``player``'s private ones."""
        if self._dirty:
            self.encoder.refresh(self)
        return self._x.take(self.game.obs_index[player], out=out)

    @abstractmethod
    def action_to_string(self, action: int) -> str:
        """Readable, distinct name of any action (``"out of range"`` outside the action space)."""

    def render_text(self, viewer: int | None = None) -> str:
        """The table as text; ``viewer`` hides what that seat cannot see (``None``: everything).
        Drawn by ``text_table(state, viewer)`` of the game package's ``render`` module."""
        return self._render_module().text_table(self, viewer)

    def render_rgb(self, viewer: int | None = None) -> np.ndarray:
        """The table as ``viewer`` may see it (``None``: everything) as a picture, H×W×3 uint8 of one size for the
        game's options: ``render_svg(viewer)`` with no move marked, rasterised (``envs/core/picture.py``; needs the
        ``render`` extra)."""
        return picture.draw(self, viewer)

    def render_svg(self, viewer: int | None = None, legal: Iterable[int] | None = None, you: bool = True) -> str:
        """The table as an SVG document, as ``viewer`` may see it (``None``: everything), with ``legal`` actions
        clickable where they are on the table (by default every legal action, when ``viewer`` is the seat to act
        or None; ``()`` for none), the viewer's seat labelled "you" unless ``you`` is False (a replay: nobody
        plays it): ``svg(state, viewer, legal, you)`` of the game's ``svg`` module."""
        return self._render_module("svg").svg(self, viewer, legal, you)

    def text_legend(self) -> str:
        """What the symbols, abbreviations and numbers of ``render_text`` mean, one line each (the text's
        counterpart of the legend under the picture): ``TEXT_LEGEND`` of the game's ``render`` module."""
        return self._render_module().TEXT_LEGEND

    def describe_action(self, action: int, viewer: int | None = None) -> str:
        """The legal ``action``, before it is applied, in words that stand alone: naming the cards, tiles or
        places it refers to, for a reader who does not see the table; as ``viewer`` may know it (``None``:
        everything), never another seat's hidden cards. ``describe_action(state, action, viewer)`` of the
        game's ``render`` module."""
        return self._render_module().describe_action(self, action, viewer)

    def global_state(self) -> np.ndarray:
        """float32 vector of ``game.state_layout.size``: the whole position, hidden cards included, seats in
        table order (not rotated), with whose decision it is, for centralized critics (PettingZoo's
        ``state()``). Never part of any seat's observation. ``encoder.global_state`` builds it from ``_x``."""
        if self._dirty:
            self.encoder.refresh(self)
        return self.encoder.global_state(self)

    @abstractmethod
    def sample_hidden(self, player: int, rng: np.random.Generator) -> State:
        """A full state consistent with everything ``player`` has seen (for search), own RNG reseeded.

        The result depends only on ``player``'s information and ``rng``: two positions that ``player``
        cannot tell apart resample to the same state under the same generator (sort the unseen pool
        before shuffling it), so a search is a function of its seat's view and its seed."""

    def clone(self) -> State:
        """An independent copy, generator included: ``fields`` and ``derived`` copied as deep as declared."""
        s = object.__new__(type(self))
        s.game = self.game
        s.rng = np.random.default_rng()
        s.rng.bit_generator.state = self.rng.bit_generator.state
        s._legal = self._legal  # replaced, never mutated
        self._copy_fields(self, s)
        return s

    # ----------------------------------------------------------------- chance (the generator, or given outcomes)
    def _draw(self, pile: list[int], event: str, index: int = -1, start: int = 0) -> int:
        """Take the card at ``index`` (the top, by default) of a face-down ``pile`` of card kinds. Every draw of a
        card nobody has seen goes through here: with given outcomes, the given kind is first swapped to ``index``
        (the order of a face-down pile is hidden, so any card of it is equally likely to be there). Only
        ``pile[start:]`` is face down when the cards below were seen and put there (Torres' personal decks)."""
        if self._given is None:
            return pile.pop(index)
        hidden = pile[start:]
        counts = sorted(Counter(hidden).items())
        outcome = self._outcome(event, [(kind, n / len(hidden)) for kind, n in counts])
        j = pile.index(outcome, start)
        pile[j], pile[index] = pile[index], pile[j]
        return pile.pop(index)

    def _random_int(self, n: int, event: str) -> int:
        """A uniform integer in ``0..n-1`` (who starts, a card turned face up): the generator's, or given."""
        if self._given is None:
            return int(self.rng.integers(n))
        return self._outcome(event, [(i, 1 / n) for i in range(n)])

    def _outcome(self, event: str, outcomes: list[tuple[int, float]]) -> int:
        if not self._given:
            raise ChanceNeeded(event, outcomes, [self.outcome_to_string(event, o) for o, _ in outcomes])
        given = self._given.pop()
        if all(given != o for o, _ in outcomes):
            raise ValueError(f"{self.game.title}: chance outcome {given!r} is not possible at {event}; possible: "
                             + ", ".join(str(o) for o, _ in outcomes))
        return int(given)

    def outcome_to_string(self, event: str, outcome: int) -> str:
        """A readable name of a chance outcome of ``event``, distinct among the event's outcomes: ``"player k"``
        for who starts (the event ``"first player"``), the card kind drawn otherwise; a game whose other events
        draw no cards names their outcomes here."""
        return f"player {outcome}" if event == FIRST_PLAYER else self.card_to_string(outcome)

    def card_to_string(self, kind: int) -> str:
        """A readable name of card kind ``kind`` (the number itself unless a game names its cards)."""
        return str(kind)

    def child(self, action: Any, chance: Sequence[int]) -> State:
        """A copy of this state after ``action``, whose random events (draws, the next round's deal) take the
        outcomes ``chance`` in order instead of the generator's; the state itself is unchanged. When the action has
        more random events than ``chance`` holds, raises :class:`ChanceNeeded` for the first one not given; an
        impossible or left-over outcome raises ``ValueError``. Given the same actions and outcomes, every seat's
        observation is the same whatever the seed (only the order of face-down piles is the generator's)."""
        a = self._check_action(action)
        state = self.clone()
        state._with_given(chance, lambda: state._apply(a))
        state._legal = None
        return state

    def _with_given(self, chance: Sequence[int], run: Callable[[], None]) -> None:
        """``run()`` with the random events taking the outcomes ``chance``; all of them must be used."""
        given = []
        for outcome in chance:
            try:
                if isinstance(outcome, (bool, np.bool_)):
                    raise TypeError
                given.append(operator.index(outcome))
            except TypeError:
                raise ValueError(f"{self.game.title}: chance outcome {outcome!r} is not an integer") from None
        self._given = given[::-1]
        try:
            run()
            if self._given:
                raise ValueError(f"{self.game.title}: {len(self._given)} of the {len(given)} chance outcomes given "
                                 "were not used; the random events took the first "
                                 f"{len(given) - len(self._given)}")
        finally:
            del self._given

    def _to_dict(self) -> dict[str, Any]:
        """The position (``fields``) as JSON-able data; override to save a field in another form."""
        return {key: getattr(self, key) for key in self.fields.names}

    def _load_dict(self, data: dict[str, Any]) -> None:
        """Inverse of ``_to_dict`` on a state object created without ``_setup``: sets ``fields``, then
        ``_after_load(data)``."""
        missing = [key for key in self.fields.names if key not in data]
        if missing:  # a state saved by another version of the engine
            raise ValueError(f"this {self.game.title} state JSON lacks the field(s) {', '.join(missing)}: it was "
                             "written by another version of tabletop-rl; replay its game from the seed and actions")
        for key in self.fields.names:
            setattr(self, key, data[key])
        self._after_load(data)

    @abstractmethod
    def _after_load(self, data: dict[str, Any]) -> None:
        """Rebuild the ``derived`` caches once ``fields`` are loaded (and turn back what ``_to_dict`` saved in
        another form; ``data`` is the saved dict)."""

    def end_info(self) -> dict[str, Any]:
        """Extra facts reported in the env's ``infos`` when the episode ends."""
        return {"scores": self.scores()}

    # ----------------------------------------------------------------- the public contract
    @property
    def num_players(self) -> int:
        return self.game.num_players

    def legal_actions(self) -> list[int]:
        return list(self._cached_legal())

    def _cached_legal(self) -> list[int]:
        """The legal actions, computed once per position; callers must not mutate the list."""
        if self._legal is None:
            self._legal = [] if self.current_player == TERMINAL else self._legal_actions()
        return self._legal

    def action_mask(self) -> np.ndarray:
        mask = np.zeros(self.game.num_actions, dtype=np.int8)
        mask.put(self._cached_legal(), 1)  # put() takes a list faster than mask[list] = 1 (no index array built)
        return mask

    def apply_action(self, action: Any) -> None:
        a = self._check_action(action)
        self._apply(a)
        self._legal = None

    def is_legal(self, action: int) -> bool:
        return action in self._cached_legal()

    def returns(self) -> np.ndarray:
        """Zero-sum pairwise outcome: (#seats beaten − #seats that beat me) / (n − 1)."""
        n = self.num_players
        out = np.zeros(n, dtype=np.float64)
        if not self.is_terminal() or self.is_truncated():
            return out
        key = self.ranking_key()
        for i in range(n):
            beaten = sum(key[i] > key[j] for j in range(n))
            lost = sum(key[i] < key[j] for j in range(n))
            out[i] = (beaten - lost) / (n - 1)
        return out

    def string_to_action(self, text: str) -> int:
        """Inverse of ``action_to_string`` over all actions (case and spacing ignored)."""
        wanted = " ".join(text.lower().split())
        for a in range(self.game.num_actions):
            if " ".join(self.action_to_string(a).lower().split()) == wanted:
                return a
        raise ValueError(f"{self.game.title}: no action is called {text!r}")

    def to_json(self) -> str:
        return json.dumps({
            "game": self.game.name,
            "options": self.game.options,
            "rng": self.rng.bit_generator.state,
            "state": self._to_dict(),
        }, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> State:
        """Rebuild any registered game's state from ``to_json`` output (``State.from_json`` works too)."""
        from .registry import game_class

        data = json.loads(text)
        game = game_class(data["game"])(**data["options"])
        if not issubclass(game.state_class, cls):
            raise ValueError(f"this JSON holds a {data['game']!r} state, not a {cls.__name__}")
        state = object.__new__(game.state_class)
        state.game = game
        state.rng = np.random.default_rng()
        state.rng.bit_generator.state = data["rng"]
        state._legal = None
        state._load_dict(data["state"])
        return state

    def __str__(self) -> str:
        return self.render_text()

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self.to_json() == other.to_json()

    __hash__ = None  # states are mutable

    # ----------------------------------------------------------------- helpers
    def _check_action(self, action: Any) -> int:
        name = self.game.title
        try:
            if isinstance(action, (bool, np.bool_)):  # True would silently mean action 1
                raise TypeError
            a = operator.index(action)
        except TypeError:
            raise ValueError(f"{name}: action {action!r} is not an integer") from None
        if self.current_player == TERMINAL:
            raise ValueError(f"{name}: action {a} was given after the game ended")
        if not 0 <= a < self.game.num_actions:
            raise ValueError(f"{name}: action {a} is out of range 0..{self.game.num_actions - 1} "
                             f"(phase {self.phase})")
        if not self.is_legal(a):
            raise ValueError(
                f"{name}: action {a} ({self.action_to_string(a)}) is illegal for player "
                f"{self.current_player} in phase {self.phase}; legal actions: "
                + ", ".join(f"{b} ({self.action_to_string(b)})" for b in self._legal))
        return a

    def _render_module(self, name: str = "render") -> Any:
        """The ``render`` (or ``name``) module beside the module that defines this state's class."""
        return importlib.import_module(type(self).__module__.rpartition(".")[0] + "." + name)

