"""Built-in agents. Every agent — random, heuristic, trained policy, human — has one method,

    act(observation, action_mask) -> action

taking exactly what the PettingZoo env gives its seat. An agent therefore cannot use information its
player does not have: the observation is leak-tested, the engine state is never handed over.

An agent that searches (``tabletop_rl.training.runtime.search``) needs more than its observation: whole
positions to play out. It may define ``attach(view)``; whoever drives the game
(``tabletop_rl.envs.core.match.play_game``, the training env's opponents, ``tabletop_rl.training.play``) then hands
it a :class:`SeatView` at the start of every game. The view samples full states consistent with what the seat has
seen (``State.sample_hidden``, which depends
only on that seat's information and the generator) and never gives out the live state.

An agent may also say what it thought of its last decision (``notes()``, :func:`agent_notes`), which a game record
keeps beside the decision. What else an agent may offer a driver is in :class:`Agent`; drivers read those abilities
only through the functions here, so that a new kind of agent (or a subclass of one) needs no change of the loops.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Protocol

import numpy as np

from .game import Game, State


class Agent(Protocol):
    """Every agent has ``act``. It may also offer, each read by one function below:

    * ``pick(legal) -> action`` (:func:`decided_by` says ``PICK``): the decision ``act`` would make, from the
      ascending list of legal actions alone; a driver that has the list then builds no observation (the random
      agent).
    * ``batch_key``, ``act_batch(agents, observations, masks) -> actions`` and ``only(action)`` (:func:`decided_by`
      says ``BATCH``): agents whose ``batch_key`` is the same object are decided together, in one call of the first
      one's ``act_batch`` with all of them and their stacked observations and masks, each decision the one its own
      ``act`` would make (a network decides in one forward pass); ``only(action)`` is its decision when ``action``
      is the only legal one, without the batch (drawing from its generator as a batched decision would).
    * ``attach(view)`` (:func:`wants_view`, :func:`attach_view`): it searches, and gets its seat's
      :class:`SeatView` at the start of every game (one agent object per seat).
    * ``notes() -> dict | None`` (:func:`agent_notes`): what it thought of its last decision, for a game record.

    ``pick`` and ``act_batch`` are methods of the agent's class and stand in for ``act``: a subclass that overrides
    ``act`` but not them is asked through its ``act`` (its own decisions are not bypassed), and one that overrides
    nothing keeps them.
    """

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int: ...


class SeatView:
    """One seat's handle on a running game, for search: ``sample(rng)`` is a full state consistent with
    everything ``seat`` has seen so far, drawn by ``rng``.

    It is backed by the live state (``live()`` returns it) but only ever hands out what
    ``State.sample_hidden(seat, rng)`` makes of it: a fresh state whose hidden cards and deck order are
    resampled, so two positions the seat cannot tell apart give the same samples for the same generator.
    """

    __slots__ = ("game", "seat", "_live")

    def __init__(self, live: Callable[[], State], seat: int):
        self._live = live
        self.seat = seat
        self.game: Game = live().game

    def sample(self, rng: np.random.Generator) -> State:
        return self._live().sample_hidden(self.seat, rng)


def wants_view(agent: Agent) -> bool:
    """Does ``agent`` search (define ``attach``)? It then needs a :class:`SeatView`, and an agent object per seat."""
    return hasattr(agent, "attach")


def attach_view(agent: Agent, live: Callable[[], State], seat: int) -> None:
    """Give ``agent`` a :class:`SeatView` of ``seat`` if it asks for one (defines ``attach``)."""
    if wants_view(agent):
        agent.attach(SeatView(live, seat))


def pass_view(agent: Agent, view: SeatView) -> None:
    """For wrappers of an agent (timing, narrating it): hand their ``view`` on if the agent asks for one."""
    if wants_view(agent):
        agent.attach(view)


def agent_notes(agent: Agent) -> dict | None:
    """What ``agent`` noted about its last decision, if it notes anything (defines ``notes()``): a game record's
    per-decision notes (docs/records.md: its likeliest moves with their probabilities, its value estimate, a
    search's candidates). Asked for only when a game is recorded; asking changes nothing the agent does."""
    return agent.notes() if hasattr(agent, "notes") else None


ACT, PICK, BATCH = "act", "pick", "batch"  # how a driver asks an agent for a decision (decided_by)


def decided_by(agent: Agent) -> str:
    """How a driver asks ``agent`` for a decision: ``BATCH`` (with the others of its ``batch_key``), ``PICK`` (from
    the legal actions alone) or ``ACT``. Read once per class: the loops ask it at every decision."""
    return _decided_by(type(agent))


@cache
def _decided_by(cls: type) -> str:
    if all(hasattr(cls, name) for name in ("batch_key", "act_batch", "only")) and _stands_in(cls, "act_batch"):
        return BATCH
    if hasattr(cls, "pick") and _stands_in(cls, "pick"):
        return PICK
    return ACT


def _stands_in(cls: type, ability: str) -> bool:
    """Is ``cls``'s ``ability`` defined in the same class as its ``act``, or in a subclass of it? (Not when a
    subclass overrides ``act`` alone: the ability would bypass its decisions.)"""
    def owner(name: str) -> int:
        return next((i for i, c in enumerate(cls.__mro__) if name in vars(c)), len(cls.__mro__))

    return owner(ability) <= owner("act")


class RandomAgent:
    """Uniformly random over the legal actions."""

    def __init__(self, game: Game | None = None, seed: int | None = None):
        self.rng = np.random.default_rng(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return self.pick(legal_actions(action_mask, "RandomAgent"))

    def pick(self, legal: list[int]) -> int:
        """One of the ``legal`` actions (ascending), as ``act`` draws it: a driver that has the list need not
        build an observation this agent would not read."""
        return legal[self.rng.integers(len(legal))]


def legal_actions(action_mask: np.ndarray, agent: str) -> list[int]:
    """The actions an int8 mask allows, as ints; ``ValueError`` naming the agent if it allows none."""
    legal = np.asarray(action_mask).nonzero()[0].tolist()  # flatnonzero's ravel costs a microsecond per call
    if not legal:
        raise ValueError(f"{agent}.act: the action mask has no legal action")
    return legal


def builtin_agent(name: str, game: Game, seed: int | None = None) -> Agent:
    """``"random"`` or ``"heuristic"`` (the game package's ``HeuristicAgent``) for ``game``."""
    if name == "random":
        return RandomAgent(game, seed)
    if name == "heuristic":
        from .registry import game_module

        return game_module(game.name).HeuristicAgent(game, seed)
    raise ValueError(f"unknown built-in agent {name!r}; expected 'random' or 'heuristic'")
