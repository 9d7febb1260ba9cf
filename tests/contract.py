"""Game-agnostic contract checks, reused unchanged by every game's tests.

Everything here is driven only by the engine contract (``tabletop_rl.envs.core.game.Game`` / ``State``) and the
PettingZoo env functions, so a new game gets the whole battery by calling these functions with its
``Game`` and ``env`` / ``raw_env``; game rules enter only through a :class:`Checker` (each game's is
``tests/<game>_helpers.py: Checker``, the spec's invariants).

* :func:`check_random_play` — seeded random legal games with per-step contract checks, sparse deep checks
  (clone / JSON copies replay the same future, no information leak via ``sample_hidden``) and end checks.
* :func:`checked_random_games` — many more random games in the same time, with the game's checker only.
* :func:`check_observations_tell_apart` — positions a seat can tell apart (by a fact list written from the
  spec) give it different observations, positions it cannot the same.
* :func:`check_determinism` — same seed and actions, same trajectory; different seeds, different deals.
* :func:`check_bad_input` — illegal, out-of-range and non-integer actions raise ``ValueError`` and change
  nothing.
* :func:`check_given_chance` — random games whose chance outcomes are given from outside (OpenSpiel's chance
  nodes): well-formed chance events, the outcome given is what happens, bad outcomes refused.
* :func:`check_env_api` — PettingZoo ``api_test`` / ``seed_test`` / ``render_test``, pickling, masks,
  infos and rewards of the AEC adapter, steps after the end.
* :func:`check_global_state` — ``State.global_state()`` and the env's ``state()`` / ``state_space``:
  bounded, deterministic, carrying the hidden information, the same for every agent
  (:func:`check_env_state`: the env half alone).
* :func:`golden_playthrough` / :func:`assert_matches_golden` — a seeded game as text, compared with a
  stored file; ``TABLETOP_REGEN_GOLDEN=1 python -m pytest tests -k golden`` rewrites the files.
"""

from __future__ import annotations

import difflib
import json
import os
import pickle
import random
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pettingzoo
from pettingzoo.test import api_test, render_test, seed_test

from tabletop_rl import envs
from tabletop_rl.envs.core.agents import Agent, RandomAgent
from tabletop_rl.envs.core.game import TERMINAL, ChanceNeeded, Game, State
from tabletop_rl.envs.core.layout import Layout
from tabletop_rl.envs.core.match import first_place_shares, score_margins


class Checker(Protocol):
    """A game's rule checker (``tests/<game>_helpers.py: Checker(game, ...)``): the spec's invariants."""

    def snapshot(self, state: State) -> Any:
        """What :meth:`transition` needs of the position before an action (a clone, or less)."""

    def position(self, state: State) -> None:
        """Check one position (any: also terminal states and ``sample_hidden`` results)."""

    def transition(self, before: Any, action: int, after: State) -> None:
        """Check one step of a game; ``before`` is :meth:`snapshot` of the position before ``action``."""


# ===================================================================== helpers
def random_action(state: State, rng: np.random.Generator) -> int:
    """A uniformly random legal action."""
    legal = state.legal_actions()
    return legal[int(rng.integers(len(legal)))]


def random_playout(state: State, rng: np.random.Generator, max_steps: int | None = None) -> list[int]:
    """Play random legal actions on ``state`` (mutating it) until the end or ``max_steps``; the actions."""
    actions = []
    while not state.is_terminal() and (max_steps is None or len(actions) < max_steps):
        actions.append(random_action(state, rng))
        state.apply_action(actions[-1])
    return actions


def _position(state: State) -> Any:
    """The state's content without its generator (two deals differ here, not just in the RNG state)."""
    return json.loads(state.to_json())["state"]


def _where(game: Game, indices: np.ndarray, layout: Layout | None = None) -> str:
    """Indices of an observation (or of a vector of ``layout``) as ``field[i]`` names, for messages."""
    names = []
    for i in indices[:8]:
        field = next(f for f in layout or game.layout if f.start <= i < f.stop)
        names.append(f"{field.name}[{i - field.start}]")
    return ", ".join(names) + (" …" if len(indices) > 8 else "")


def _assert_same_observations(game: Game, a: State, b: State, what: str) -> None:
    for p in range(game.num_players):
        oa, ob = a.observation(p), b.observation(p)
        differ = np.flatnonzero(oa != ob)
        assert differ.size == 0, f"{what}: observation of player {p} differs at {_where(game, differ)}"


# ===================================================================== random play
@dataclass
class PlayStats:
    """What a :func:`check_random_play` run covered, so tests can assert it was a real run."""

    episodes: int = 0
    decisions: int = 0
    truncated: int = 0
    longest: int = 0  # decisions in the longest episode
    deep_checks: int = 0
    hidden_changed: int = 0  # sample_hidden results that differed from the true state


def check_random_play(game: Game, episodes: int, seed: int, checker: Checker | None = None,
                      deep_every: int = 50, horizon: int = 6) -> PlayStats:
    """Play ``episodes`` uniformly random legal games and check the engine contract throughout.

    The layout's bounds are finite, low below high. At every position: ``current_player`` is a seat,
    ``legal_actions()`` sorted distinct ints, never empty, equal to the int8 ``action_mask()``; every seat's
    ``observation`` is float32 of ``layout.size``, finite and inside ``layout.bounds()``;
    ``checker.position(state)`` passes (game rules, also applied to terminal states and to every
    ``sample_hidden`` result). After every action, ``checker.transition(before, action, after)`` passes.

    Every ``deep_every`` decisions: ``clone()`` and ``State.from_json(to_json())`` are equal to the
    state, play the same ``horizon`` actions to the same result as the original, and mutating the clone
    leaves the original alone; returned arrays are fresh copies; action strings round-trip; every legal action
    has a description for every viewer (``describe_action``) that tells apart no two moves the viewer's
    observation cannot; and no information leaks: for each seat p, ``sample_hidden(p, rng)`` gives the same
    ``observation(p)``, ``render_text(p)``, player to act and (for the player to act) legal actions; and resampling that
    sample with a given generator gives exactly what resampling the true state gives (``sample_hidden``
    depends on p's information only).

    At the end: the leak check again, ``TERMINAL``, no legal action, zero-sum ``returns()`` in [-1, 1]
    that follow ``ranking_key()``, all zero when truncated; no episode is longer than ``game.max_game_length``.
    """
    rng = np.random.default_rng(seed)
    low, high = game.layout.bounds()
    _check_bounds(game.layout)
    stats = PlayStats()
    for _ in range(episodes):
        state = game.new_initial_state(int(rng.integers(2**63)))
        decisions = 0
        script: list[int] = []  # actions already played on copies in a deep check
        expected: State | None = None  # where a copy ended up after the script
        while True:
            _check_position(state, low, high, checker)
            if state.is_terminal():
                break
            if not script and deep_every and stats.decisions % deep_every == 0:
                _check_no_leak(state, rng, checker, stats)
                _check_fresh_copies(state)
                _check_descriptions(state)
                script, expected = _play_copies(state, rng, horizon)
                stats.deep_checks += 1
            action = script.pop(0) if script else random_action(state, rng)
            before = checker.snapshot(state) if checker else None
            state.apply_action(action)
            if checker:
                checker.transition(before, action, state)
            decisions += 1
            stats.decisions += 1
            if expected is not None and not script:
                assert state.to_json() == expected.to_json(), \
                    "the original and its clone / JSON copy diverged under the same actions"
                _assert_same_observations(game, state, expected, "original vs copy after the same actions")
                assert state.legal_actions() == expected.legal_actions()
                expected = None
        _check_end(state)
        _check_no_leak(state, rng, checker, stats)  # hidden information may remain after the end
        assert game.max_game_length is None or decisions <= game.max_game_length, \
            f"{decisions} decisions, more than max_game_length {game.max_game_length}"
        stats.episodes += 1
        stats.truncated += state.is_truncated()
        stats.longest = max(stats.longest, decisions)
    return stats


def checked_random_games(game: Game, episodes: int, seed: int, checker: Checker) -> list[tuple[State, int]]:
    """``episodes`` uniformly random legal games with ``checker.position`` on every position and
    ``checker.transition`` after every action, and none of :func:`check_random_play`'s contract checks (so
    many more games in the same time); each game's final state and number of decisions."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(episodes):
        state = game.new_initial_state(int(rng.integers(2**63)))
        decisions = 0
        checker.position(state)
        while not state.is_terminal():
            action = random_action(state, rng)
            before = checker.snapshot(state)
            state.apply_action(action)
            checker.transition(before, action, state)
            checker.position(state)
            decisions += 1
        out.append((state, decisions))
    return out


def _check_bounds(layout: Layout) -> None:
    """Every field has finite bounds with low < high (Gymnasium's and PettingZoo's checkers warn otherwise)."""
    for f in layout:
        assert np.isfinite([f.low, f.high]).all() and f.low < f.high, \
            f"field {f.name} has bounds [{f.low}, {f.high}]; they must be finite, low below high"


def _check_position(state: State, low: np.ndarray, high: np.ndarray, checker: Checker | None) -> None:
    game = state.game
    legal = state.legal_actions()
    mask = state.action_mask()
    assert mask.dtype == np.int8 and mask.shape == (game.num_actions,), \
        f"action_mask() must be int8 of shape ({game.num_actions},), got {mask.dtype} {mask.shape}"
    assert np.flatnonzero(mask).tolist() == legal and (mask[legal] == 1).all(), \
        "action_mask() does not match legal_actions()"
    if state.is_terminal():
        assert state.current_player == TERMINAL and legal == [], "a finished game has no player to act"
    else:
        assert 0 <= state.current_player < game.num_players, f"current_player={state.current_player}"
        assert legal, f"no legal action for player {state.current_player} in phase {state.phase}"
        assert all(type(a) is int for a in legal), "legal_actions() must hold Python ints"
        assert legal == sorted(set(legal)), "legal_actions() must be sorted and distinct"
        assert 0 <= legal[0] and legal[-1] < game.num_actions, "legal action out of range"
        assert state.phase != "terminal"
    for p in range(game.num_players):
        obs = state.observation(p)
        assert isinstance(obs, np.ndarray) and obs.dtype == np.float32 and obs.shape == (game.layout.size,), \
            f"observation({p}) must be float32 of shape ({game.layout.size},)"
        outside = np.flatnonzero(~((obs >= low) & (obs <= high)))  # NaN counts as outside
        assert outside.size == 0, f"observation({p}) outside the layout bounds at {_where(game, outside)}: " \
            f"{obs[outside[:8]].tolist()}"
    if checker:
        checker.position(state)


def _check_end(state: State) -> None:
    n = state.num_players
    assert state.current_player == TERMINAL and state.legal_actions() == []
    assert state.phase == "terminal", f"phase of a finished game is {state.phase!r}"
    returns = state.returns()
    assert isinstance(returns, np.ndarray) and returns.shape == (n,)
    assert abs(returns.sum()) < 1e-9, f"returns {returns} are not zero-sum"
    assert np.all((returns >= -1) & (returns <= 1)), f"returns {returns} outside [-1, 1]"
    if state.is_truncated():
        assert not returns.any(), f"a truncated episode returns {returns}, not zeros"
    else:
        key = state.ranking_key()
        for i in range(n):
            for j in range(n):
                assert (returns[i] > returns[j]) == (key[i] > key[j]), \
                    f"returns {returns} do not follow ranking_key {key}"
    assert len(state.scores()) == n
    info = state.end_info()
    assert isinstance(info, dict) and list(info["scores"]) == list(state.scores())
    json.dumps(info)  # infos must be plain data
    assert isinstance(state.render_text(), str)


def _play_copies(state: State, rng: np.random.Generator, horizon: int) -> tuple[list[int], State]:
    """Play a random future on a clone and the same actions on a JSON copy; the original must not move."""
    snapshot = state.to_json()
    clone = state.clone()
    copy = State.from_json(snapshot)
    assert type(clone) is type(state) and type(copy) is type(state)
    assert clone.to_json() == snapshot, "clone() differs from the original"
    assert copy.to_json() == snapshot, "State.from_json(to_json()) does not round-trip"
    _assert_same_observations(state.game, state, copy, "JSON copy")
    actions = random_playout(clone, np.random.default_rng(int(rng.integers(2**63))), horizon)
    assert state.to_json() == snapshot, "playing on a clone changed the original"
    for a in actions:
        copy.apply_action(a)
    assert copy.to_json() == clone.to_json(), "clone and JSON copy diverged under the same actions"
    return actions, clone


def _check_no_leak(state: State, rng: np.random.Generator, checker: Checker | None,
                   stats: PlayStats) -> None:
    """Resampling what seat p cannot see changes nothing p observes."""
    snapshot = state.to_json()
    position = _position(state)
    for p in range(state.num_players):
        sample = state.sample_hidden(p, rng)
        assert sample is not state and type(sample) is type(state)
        assert state.to_json() == snapshot, "sample_hidden changed the original state"
        differ = np.flatnonzero(sample.observation(p) != state.observation(p))
        assert differ.size == 0, f"information leak: observation({p}) changed when its hidden part was " \
            f"resampled, at {_where(state.game, differ)}"
        assert sample.render_text(p) == state.render_text(p), \
            f"information leak: render_text({p}) shows something player {p} cannot know"
        assert sample.current_player == state.current_player and sample.phase == state.phase
        if state.current_player == p:
            assert sample.legal_actions() == state.legal_actions(), \
                f"information leak: player {p}'s legal actions depend on hidden information"
        if checker:
            checker.position(sample)
        stats.hidden_changed += _position(sample) != position
        # Search agents rely on this: what sample_hidden returns depends on p's information and the
        # generator only, never on the true hidden cards (sort the unseen pool before shuffling it).
        seed = int(rng.integers(2**63))
        here, there = (s.sample_hidden(p, np.random.default_rng(seed)) for s in (state, sample))
        assert here.to_json() == there.to_json(), \
            f"sample_hidden({p}) depends on hidden information: two worlds player {p} cannot tell apart " \
            "resample to different states under the same generator"


def _check_fresh_copies(state: State) -> None:
    """Returned observations, masks and action lists are the caller's to keep and to mutate; action
    strings are distinct and round-trip through ``string_to_action``."""
    for p in range(state.num_players):
        a, b = state.observation(p), state.observation(p)
        assert not np.shares_memory(a, b), "observation() returns a shared buffer"
        a[:] = -7
        assert np.array_equal(state.observation(p), b), "writing into an observation changed the state"
    mask = state.action_mask()
    mask[:] = 0
    assert state.action_mask().any(), "writing into action_mask() changed the state"
    legal = state.legal_actions()
    legal.clear()
    assert state.legal_actions(), "mutating the legal_actions() list changed the state"
    names = [state.action_to_string(a) for a in state.legal_actions()]
    assert len(set(names)) == len(names), f"two legal actions share a name: {names}"
    for a, name in zip(state.legal_actions(), names, strict=True):
        assert state.string_to_action(name) == a, f"string_to_action({name!r}) is not {a}"


def _check_descriptions(state: State) -> None:
    """Every legal action has a description for every viewer, and a seat's description of another seat's move
    tells apart no two moves that the seat cannot: moves to different positions (global states) that it
    observes alike (it would show hidden cards)."""
    afters = []
    for a in state.legal_actions():
        after = state.clone()
        after.apply_action(a)
        afters.append((a, after))
    for viewer in (None, *range(state.num_players)):
        said: dict[bytes, tuple[int, str, State]] = {}
        for a, after in afters:
            text = state.describe_action(a, viewer)
            assert isinstance(text, str) and text, f"describe_action({a}, {viewer}) is {text!r}"
            if viewer in (None, state.current_player):
                continue
            b, earlier, other = said.setdefault(after.observation(viewer).tobytes(), (a, text, after))
            assert earlier == text or np.array_equal(after.global_state(), other.global_state()), \
                f"information leak: player {viewer} cannot tell actions {b} and {a} apart, described as " \
                f"{earlier!r} and {text!r}"


# ===================================================================== complete observations
Information = Callable[[State, int], dict[str, Any]]
Variants = Callable[[State, np.random.Generator], list[State]]


def check_observations_tell_apart(game: Game, episodes: int, seed: int, information: Information,
                                  variants: Variants, stride: int = 20) -> tuple[int, int]:
    """Observations carry every fact their seat may know, and only those.

    ``information(state, p)`` names what seat p may know (a dict of facts, written from the spec's
    information section, never from the observation code); ``variants(state, rng)`` builds positions that
    differ from ``state`` in public facts (a card swapped between two public zones, a pile reordered,
    another option). Over ``episodes`` seeded random games, every 1 to ``stride`` decisions the position is
    paired with each variant and with ``sample_hidden(p)`` for every seat p, and for every pair and seat:
    ``observation(p)`` is the same for both exactly when ``information(·, p)`` is. The variants test that
    nothing public is missing, the resamples that nothing hidden leaks.

    Returns ``(told_apart, alike)``: the (pair, seat) cases with different and with equal information, so
    tests can assert both directions were exercised.
    """
    rng = np.random.default_rng(seed)
    told_apart = alike = 0
    for _ in range(episodes):
        state = game.new_initial_state(int(rng.integers(2**63)))
        while not state.is_terminal():
            others = variants(state, rng) + [state.sample_hidden(p, rng) for p in range(game.num_players)]
            for other in others:
                for p in range(game.num_players):
                    same = _same_view(state, other, p, information)
                    told_apart += not same
                    alike += same
            random_playout(state, rng, int(rng.integers(1, stride + 1)))
    return told_apart, alike


def _same_view(a: State, b: State, p: int, information: Information) -> bool:
    """Whether seat p knows the same facts in ``a`` and ``b``; its observations must agree with that."""
    facts_a, facts_b = information(a, p), information(b, p)
    differ = np.flatnonzero(a.observation(p) != b.observation(p))
    if facts_a == facts_b:
        assert differ.size == 0, f"seat {p} knows the same facts in both positions, but its observation " \
            f"differs at {_where(a.game, differ)}"
        return True
    changed = sorted(k for k in facts_a.keys() | facts_b.keys() if facts_a.get(k) != facts_b.get(k))
    assert differ.size, f"seat {p} can tell the positions apart by {changed}, its observation cannot"
    return False


# ===================================================================== determinism
def check_determinism(game: Game, seeds: list[int] | range) -> None:
    """Same seed and same (seeded) action choices give identical states, observations and masks at
    every step — even with Python's and numpy's global generators seeded differently; different
    seeds give different deals."""
    deals = set()
    for seed in seeds:
        runs = []
        for global_seed in (1, 2):  # an engine using a global generator would diverge here
            random.seed(global_seed)
            np.random.seed(global_seed)
            runs.append((game.new_initial_state(seed), np.random.default_rng(seed)))
        (a, rng_a), (b, rng_b) = runs
        deals.add(json.dumps(_position(a), sort_keys=True))
        step = 0
        while True:
            assert a.to_json() == b.to_json(), f"seed {seed}: runs diverged at step {step}"
            _assert_same_observations(game, a, b, f"seed {seed}, step {step}")
            assert np.array_equal(a.action_mask(), b.action_mask())
            if a.is_terminal():
                break
            random.seed(step)  # the global generators move between the two runs' steps
            a.apply_action(random_action(a, rng_a))
            np.random.seed(step + 1)
            b.apply_action(random_action(b, rng_b))
            step += 1
        assert b.is_terminal() and np.array_equal(a.returns(), b.returns())
    assert len(deals) > 1 or len(seeds) < 2, f"seeds {list(seeds)} all gave the same deal"


# ===================================================================== given chance
def given_chance(step: Callable[[list[int]], State], rng: np.random.Generator,
                 events: list[ChanceNeeded] | None = None) -> tuple[State, list[int]]:
    """``step(outcomes)`` (``game.new_initial_state(seed, outcomes)``, ``state.child(action, outcomes)``), each
    missing outcome drawn with the probabilities its :class:`ChanceNeeded` gives (appended to ``events``); the
    state and the outcomes."""
    given: list[int] = []
    while True:
        try:
            return step(given), given
        except ChanceNeeded as needed:
            if events is not None:
                events.append(needed)
            outcomes, probabilities = zip(*needed.outcomes, strict=True)
            given.append(int(rng.choice(outcomes, p=probabilities)))


def _check_chance_event(game: Game, needed: ChanceNeeded) -> None:
    outcomes = [o for o, _ in needed.outcomes]
    probabilities = np.array([p for _, p in needed.outcomes])
    assert outcomes == sorted(set(outcomes)) and all(type(o) is int for o in outcomes), \
        f"{needed.event}: outcomes {outcomes} are not distinct ints in ascending order"
    assert 0 <= outcomes[0] and outcomes[-1] < game.num_chance_outcomes, \
        f"{needed.event}: outcomes {outcomes} outside 0..{game.num_chance_outcomes - 1}"
    assert np.all((probabilities > 0) & (probabilities <= 1)) and abs(probabilities.sum() - 1) < 1e-9, \
        f"{needed.event}: probabilities {probabilities.tolist()}"
    assert len(set(needed.names)) == len(outcomes), f"{needed.event}: names {needed.names} are not distinct"


def check_given_chance(game: Game, episodes: int, seed: int, checker: Checker | None = None) -> int:
    """Play ``episodes`` uniformly random games whose chance outcomes are given (``chance=`` of
    ``game.new_initial_state`` and ``State.child``), each drawn from the :class:`ChanceNeeded` that asks for it.
    Every chance event lists distinct int outcomes in ascending order below ``game.num_chance_outcomes``, with
    distinct names and probabilities in (0, 1] summing to 1; ``checker.position`` holds at every position (not
    ``transition``: the card given was not the top of the pile); and the same outcomes under another seed give
    every seat the same observations and the same legal actions at every step, and the same returns (the
    generator only orders the cards left face down). Then the bad input of :func:`check_bad_chance`. Returns the
    number of chance events."""
    rng = np.random.default_rng(seed)
    events: list[ChanceNeeded] = []
    for _ in range(episodes):
        seeds = [int(s) for s in rng.integers(2**63, size=2)]
        state, given = given_chance(partial(game.new_initial_state, seeds[0]), rng, events)
        twin = game.new_initial_state(seeds[1], given)
        while True:
            _assert_same_observations(game, state, twin, "the same chance outcomes under another seed")
            assert state.legal_actions() == twin.legal_actions() and state.current_player == twin.current_player
            if checker:
                checker.position(state)
            if state.is_terminal():
                break
            action = random_action(state, rng)
            state, given = given_chance(partial(state.child, action), rng, events)
            twin = twin.child(action, given)
        assert twin.is_terminal() and np.array_equal(state.returns(), twin.returns())
    for needed in events:
        _check_chance_event(game, needed)
    check_bad_chance(game, rng)
    return len(events)


def check_bad_chance(game: Game, rng: np.random.Generator) -> None:
    """An impossible, a non-integer or a left-over chance outcome raises ``ValueError`` with one line naming it,
    and a refused ``child`` leaves the state unchanged."""
    try:
        game.new_initial_state(0, [])
    except ChanceNeeded as needed:
        first = needed
    else:
        first = None
    if first is not None:
        impossible = next(o for o in range(game.num_chance_outcomes + 1) if all(o != x for x, _ in first.outcomes))
        messages = [_refused(lambda: game.new_initial_state(0, [impossible]))]
        assert messages[0] == f"{game.title}: chance outcome {impossible} is not possible at {first.event}; " \
            "possible: " + ", ".join(str(o) for o, _ in first.outcomes), messages[0]
        messages.append(_refused(lambda: game.new_initial_state(0, [True])))
        assert messages[1] == f"{game.title}: chance outcome True is not an integer", messages[1]
    state, given = given_chance(lambda outcomes: game.new_initial_state(0, outcomes), rng)
    message = _refused(lambda: game.new_initial_state(0, [*given, 0]))
    assert message == f"{game.title}: 1 of the {len(given) + 1} chance outcomes given were not used; the " \
        f"random events took the first {len(given)}", message
    snapshot = state.to_json()
    action = state.legal_actions()[0]
    _refused(lambda: state.child(action, [game.num_chance_outcomes] * 200))
    _refused(lambda: state.child(-1, []))
    assert state.to_json() == snapshot, "a refused child() changed the state"


def _refused(call: Callable[[], Any]) -> str:
    try:
        call()
    except ValueError as error:
        message = str(error)
        assert "\n" not in message, f"a multi-line message: {message!r}"
        return message
    raise AssertionError("a bad chance outcome was accepted")


# ===================================================================== bad input
def check_bad_input(state: State) -> list[str]:
    """Illegal, out-of-range and non-integer actions raise ``ValueError`` naming the action (and the
    phase, for integers while the game runs) and leave the state unchanged; numpy integers are accepted.
    Works on running and finished states. Returns the error messages (for eyeballing)."""
    game = state.game
    snapshot = state.to_json()
    running = not state.is_terminal()
    legal = set(state.legal_actions())
    illegal = [a for a in range(game.num_actions) if a not in legal]
    if running:
        assert illegal, "every action is legal here; pick another state to test bad input"
    bad: list[Any] = [*illegal[:1], *illegal[-1:], -1, game.num_actions, 10**12,
                      "x", 1.5, 2.0, np.float64(1.0), None, [0]]
    messages = []
    for action in bad:
        try:
            state.apply_action(action)
        except ValueError as error:
            message = str(error)
        else:
            raise AssertionError(f"apply_action({action!r}) was accepted in phase {state.phase}")
        messages.append(message)
        if isinstance(action, int):
            assert re.search(rf"(?<![\w-]){re.escape(str(action))}(?!\w)", message), \
                f"the error for action {action} does not name it: {message!r}"
            if running:
                assert state.phase in message, f"the error for action {action} does not name the phase " \
                    f"{state.phase!r}: {message!r}"
        else:
            assert repr(action) in message or str(action) in message, \
                f"the error for action {action!r} does not name it: {message!r}"
        assert state.to_json() == snapshot, f"the rejected action {action!r} changed the state"
        assert set(state.legal_actions()) == legal
    if running:
        a = min(legal)
        with_numpy, with_int = state.clone(), state.clone()
        with_numpy.apply_action(np.int64(a))
        with_int.apply_action(a)
        assert with_numpy.to_json() == with_int.to_json(), "a numpy integer action is treated differently"
    return messages


# ===================================================================== PettingZoo adapter
def check_registry(game_class: type[Game], raw_env_fn: Callable[..., Any], **options: Any) -> Any:
    """``tabletop_rl.make`` / ``tabletop_rl.game_class`` / ``pettingzoo.make`` all give this game under ``options``.

    Returns ``tabletop_rl.envs.make(name, wrapped=False, render_mode="ansi", **options)`` for game-specific checks."""
    name = game_class.name
    assert name in envs.list_games() and envs.list_games() == sorted(envs.list_games())
    assert envs.game_class(name) is game_class
    wrapped = envs.make(name)
    assert isinstance(wrapped.unwrapped, raw_env_fn) and wrapped is not wrapped.unwrapped
    raw = envs.make(name, wrapped=False, render_mode="ansi", **options)
    assert type(raw) is raw_env_fn and raw.render_mode == "ansi"
    assert raw.metadata["name"] == f"{name}_v{envs.game_version(name)}"
    assert raw.game.options == game_class(**options).options
    for agent in raw.possible_agents:
        assert raw.observation_space(agent)["observation"].shape == (raw.game.layout.size,)
    pz = pettingzoo.make("aec", envs.env_id(name), **options)
    assert isinstance(pz.unwrapped, raw_env_fn) and pz.unwrapped.game.options == raw.game.options
    return raw


def check_env_api(env_fn: Callable[..., Any], raw_env_fn: Callable[..., Any], seed: int = 0,
                  num_cycles: int = 1000, **options: Any) -> None:
    """The PettingZoo side of a game under ``options``: ``api_test`` (wrapped and raw), ``seed_test``,
    ``render_test`` for every render mode, pickling mid-game, cached spaces, masks and infos, rewards, steps
    after the end.
    ``num_cycles`` must let a random game finish."""
    with warnings.catch_warnings():
        # Advice that does not apply: {"observation", "action_mask"} dicts are the classic PettingZoo way.
        warnings.filterwarnings("ignore", "Observation space for each agent probably should be")
        warnings.filterwarnings("ignore", "Observation is not a NumPy array")
        api_test(env_fn(**options), num_cycles=num_cycles)
        api_test(raw_env_fn(**options), num_cycles=num_cycles)
    seed_test(lambda: env_fn(**options), num_cycles=num_cycles)
    render_test(lambda render_mode=None: env_fn(render_mode=render_mode, **options),
                custom_tests={"rgb_array": _is_picture, "ansi": lambda text: len(text) > 20})
    for make in (env_fn, raw_env_fn):
        _check_pickle(make(**options), seed)
        _check_masks_and_rewards(make(**options), seed)


def _is_picture(image: np.ndarray) -> bool:
    """A real picture: H×W×3 uint8, not tiny, with more than a handful of distinct colours."""
    assert isinstance(image, np.ndarray) and image.dtype == np.uint8 and image.ndim == 3 \
        and image.shape[2] == 3 and min(image.shape[:2]) >= 64, \
        f"render() in rgb_array mode must give an H×W×3 uint8 picture, got {getattr(image, 'shape', image)}"
    rgb = image.astype(np.uint32)
    colours = len(np.unique((rgb[..., 0] << 16) | (rgb[..., 1] << 8) | rgb[..., 2]))
    assert colours > 5, f"the rgb_array picture has only {colours} colours"
    return True


def _trace(env: Any, rng: np.random.Generator, max_steps: int | None = None) -> list[tuple]:
    """Step ``env`` with random legal actions; per step what ``last()`` and ``observe`` show."""
    out = []
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        views = tuple(env.observe(a)["observation"].tobytes() for a in env.agents)
        out.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes(), views, reward,
                    terminated, truncated))
        if terminated or truncated:
            env.step(None)
        else:
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        if max_steps is not None and len(out) >= max_steps:
            break
    return out


def _check_pickle(env: Any, seed: int) -> None:
    """A pickled mid-game env continues exactly like the original."""
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    _trace(env, rng, max_steps=25)
    restored = pickle.loads(pickle.dumps(env))
    assert type(restored) is type(env)
    state = rng.bit_generator.state
    original_future = _trace(env, rng)
    rng.bit_generator.state = state
    assert _trace(restored, rng) == original_future, "an unpickled env does not continue like the original"


def _check_masks_and_rewards(env: Any, seed: int) -> None:
    """Play one game, checking the AEC view against the engine state at every step."""
    env.reset(seed=seed)
    raw = env.unwrapped
    game = raw.game
    rng = np.random.default_rng(seed)
    zeros = np.zeros(game.num_actions, np.int8)
    for agent in env.possible_agents:
        assert env.observation_space(agent) is env.observation_space(agent), "observation space not cached"
        assert env.action_space(agent) is env.action_space(agent), "action space not cached"
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        state = raw.game_state
        seat = raw.agent_name_mapping[agent]
        assert env.observation_space(agent).contains(obs)
        for other in env.agents:
            view = env.observe(other)
            i = raw.agent_name_mapping[other]
            assert np.array_equal(view["observation"], state.observation(i))
            assert view["action_mask"].dtype == np.int8
            expected = state.action_mask() if other == agent and not state.is_terminal() else zeros
            assert np.array_equal(view["action_mask"], expected), f"wrong mask for {other}"
            assert np.array_equal(env.infos[other]["action_mask"], expected), \
                f"infos[{other!r}]['action_mask'] does not mirror the observation's mask"
        if state.is_terminal():
            assert terminated == (not state.is_truncated()) and truncated == state.is_truncated()
            assert reward == state.returns()[seat], f"{agent} got {reward}, returns are {state.returns()}"
            for key, value in state.end_info().items():
                assert info[key] == value, f"infos[{agent!r}][{key!r}] = {info[key]!r}, expected {value!r}"
            env.step(None)
            continue
        assert seat == state.current_player, "agent_selection is not the engine's current player"
        assert not (terminated or truncated) and reward == 0
        assert not any(env.rewards.values()), "a reward before the end of the game"
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert env.agents == [] and raw.game_state.is_terminal()
    _check_step_after_the_end(env)


GAME_OVER = "step() was called after the game is over; call reset() to start a new game"


def _check_step_after_the_end(env: Any) -> None:
    """Once every agent has been stepped out, any step raises PettingZoo's AssertionError saying to reset (raw
    and wrapped env alike; PettingZoo's wrapper alone would warn and ignore it) and changes nothing."""
    snapshot = env.unwrapped.game_state.to_json()
    for action in (None, 0, "junk", -7):
        try:
            env.step(action)
        except AssertionError as error:
            assert str(error) == GAME_OVER, f"step({action!r}) after the end raised {error!r}"
        else:
            raise AssertionError(f"step({action!r}) after the game is over was accepted")
    assert env.agents == [] and env.unwrapped.game_state.to_json() == snapshot


# ===================================================================== global state
@dataclass
class GlobalStateStats:
    """What a :func:`check_global_state` run covered."""

    positions: int = 0
    resamples: int = 0
    resamples_moved: int = 0  # sample_hidden results whose position differs from the true one
    hidden_changed: int = 0  # … whose global state differs


def check_global_state(game: Game, episodes: int, seed: int, deep_every: int = 10,
                       env_episodes: int = 2) -> GlobalStateStats:
    """``State.global_state()`` and the env's ``state()`` / ``state_space``, for centralized critics.

    Engine, over ``episodes`` seeded random games: ``state_layout`` has finite bounds; at every position the
    global state is a fresh float32 vector of ``state_layout.size`` inside them, the same on a second call.
    Every ``deep_every`` decisions: a clone and ``State.from_json(to_json())`` give the same vector, and for
    every seat p ``sample_hidden(p)`` keeps p's observation while the global state changes at least
    sometimes over the run (it carries the hidden information); a resample that leaves the position as it
    was leaves the vector too. The stats let a game assert more (e.g. ``hidden_changed == resamples_moved``:
    every hidden fact is in the vector).

    Env: :func:`check_env_state` over ``env_episodes`` games.
    """
    layout = game.state_layout
    _check_bounds(layout)
    low, high = layout.bounds()
    rng = np.random.default_rng(seed)
    stats = GlobalStateStats()
    decisions = 0
    for _ in range(episodes):
        state = game.new_initial_state(int(rng.integers(2**63)))
        while True:
            vector = _checked_global_state(state, low, high)
            stats.positions += 1
            if decisions % deep_every == 0 or state.is_terminal():
                for copy in (state.clone(), State.from_json(state.to_json())):
                    assert np.array_equal(copy.global_state(), vector), "a copy of the state has another global state"
                _check_hidden_in_global_state(state, vector, rng, stats)
            if state.is_terminal():
                break
            state.apply_action(random_action(state, rng))
            decisions += 1
    assert stats.hidden_changed > 0, "no resample of the hidden information ever changed the global state"
    check_env_state(game, env_episodes, seed)
    return stats


def check_env_state(game: Game, episodes: int, seed: int) -> None:
    """The env half of :func:`check_global_state` (alone for a game where nothing is hidden), over ``episodes``
    random games of the wrapped and the raw env: ``state_space`` is the layout's Box; ``state()`` equals the
    engine's global state, lies in ``state_space`` and is the same whichever agent is selected; PettingZoo's
    ``state_test`` checks pass without a warning."""
    low, high = game.state_layout.bounds()
    for wrapped in (True, False):
        _check_env_state(envs.make(game.name, wrapped=wrapped, **game.options), episodes, seed, low, high)


def _checked_global_state(state: State, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    vector = state.global_state()
    size = state.game.state_layout.size
    assert isinstance(vector, np.ndarray) and vector.dtype == np.float32 and vector.shape == (size,), \
        f"global_state() must be float32 of shape ({size},)"
    outside = np.flatnonzero(~((vector >= low) & (vector <= high)))  # NaN counts as outside
    assert outside.size == 0, f"global_state() outside the state_layout bounds at " \
        f"{_where(state.game, outside, state.game.state_layout)}: {vector[outside[:8]].tolist()}"
    again = state.global_state()
    assert np.array_equal(again, vector) and not np.shares_memory(again, vector), \
        "global_state() must give the same fresh vector on every call"
    return vector


def _check_hidden_in_global_state(state: State, vector: np.ndarray, rng: np.random.Generator,
                                  stats: GlobalStateStats) -> None:
    position = _position(state)
    for p in range(state.num_players):
        sample = state.sample_hidden(p, rng)
        assert np.array_equal(sample.observation(p), state.observation(p))
        moved = _position(sample) != position
        changed = not np.array_equal(sample.global_state(), vector)
        assert moved or not changed, "the global state changed although the resampled position did not"
        stats.resamples += 1
        stats.resamples_moved += moved
        stats.hidden_changed += changed


def _check_env_state(env: Any, episodes: int, seed: int, low: np.ndarray, high: np.ndarray) -> None:
    from pettingzoo.test.state_test import test_state, test_state_space

    space = env.state_space
    assert space is env.state_space, "state_space is not cached"
    assert np.array_equal(space.low, low) and np.array_equal(space.high, high) and space.dtype == np.float32
    raw = env.unwrapped
    rng = np.random.default_rng(seed)
    for episode in range(episodes):
        env.reset(seed=seed + episode)
        for agent in env.agent_iter():
            vector = env.state()
            assert np.array_equal(vector, raw.game_state.global_state()), "env.state() is not the global state"
            assert space.contains(vector), "env.state() is outside state_space"
            for other in raw.agents:  # the critic's input must not depend on whose turn the env shows
                raw.agent_selection = other
                assert np.array_equal(env.state(), vector), f"env.state() changes when {other} is selected"
            raw.agent_selection = agent
            obs, _, terminated, truncated, _ = env.last()
            env.step(None if terminated or truncated else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    if env is not raw:  # PettingZoo's test steps unmasked random actions: an illegal one ends the wrapped game
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # PettingZoo only warns about bad state spaces and states
            test_state_space(env)
            test_state(env, num_cycles=50, seed=seed)


# ===================================================================== bots
def bot_against_random(game: Game, bot: Callable[[Game, int], Agent], games: int, seed: int) -> tuple[float, float]:
    """``bot(game, seed)`` in each seat in turn against random players, on the engine: its share of first
    places (ties split, from ``returns()``) and its mean score minus the others' mean score."""
    n = game.num_players
    wins = margin = 0.0
    for i in range(games):
        seat = i % n
        agents = [bot(game, seed + i) if p == seat else RandomAgent(game, seed + 100 * i + p) for p in range(n)]
        state = game.new_initial_state(seed + i)
        while not state.is_terminal():
            p = state.current_player
            state.apply_action(agents[p].act(state.observation(p), state.action_mask()))
        wins += first_place_shares(state.returns())[seat]
        margin += score_margins(state.scores())[seat]
    return wins / games, margin / games


# ===================================================================== golden playthroughs
GOLDEN_ENV = "TABLETOP_REGEN_GOLDEN"


def golden_playthrough(game: Game, seed: int) -> str:
    """A seeded game (state seed and action choices from ``seed``) as text: the table at the start and
    end; per step the player, phase, the acting player's observation, its legal actions and the chosen
    action; finally scores, returns and end info. To keep the file readable, a seat's observation is
    listed in full (non-zero entries, ``name[index]=value``) at its first decision and afterwards as the
    entries that changed since its previous decision."""
    state = game.new_initial_state(seed)
    rng = np.random.default_rng(seed)
    lines = [f"# {game.title}: {game!r}, seed {seed}", "", state.render_text(), ""]
    previous: dict[int, np.ndarray] = {}
    step = 0
    while not state.is_terminal():
        p = state.current_player
        legal = state.legal_actions()
        action = legal[int(rng.integers(len(legal)))]
        obs = state.observation(p)
        if p in previous:
            changed = _entries(game, obs, obs != previous[p]) or "none"
            shown = f"  obs changes: {changed}"
        else:
            shown = f"  obs: {_entries(game, obs, obs != 0)}"
        previous[p] = obs
        lines += [f"step {step}: player {p}, phase {state.phase}", shown,
                  "  legal: " + ", ".join(state.action_to_string(a) for a in legal),
                  f"  action: {action} ({state.action_to_string(action)})"]
        state.apply_action(action)
        step += 1
    lines += ["", f"end after {step} steps: {'truncated' if state.is_truncated() else 'terminated'}",
              f"scores: {state.scores()}", f"returns: {state.returns().tolist()}",
              f"end_info: {json.dumps(state.end_info(), sort_keys=True)}", "", state.render_text()]
    return "\n".join(lines) + "\n"


def _entries(game: Game, obs: np.ndarray, selected: np.ndarray) -> str:
    """The selected observation entries as ``name[index]=value``, index within the field's shape."""
    parts = []
    for field in game.layout:
        values = obs[field.slice].reshape(field.shape)
        for index in np.argwhere(selected[field.slice].reshape(field.shape)):
            parts.append(f"{field.name}[{','.join(map(str, index))}]={float(values[tuple(index)]):.4g}")
    return " ".join(parts)


def assert_matches_golden(text: str, path: str | Path) -> None:
    """Compare ``text`` with the stored golden file (unified diff on failure); with the environment
    variable ``TABLETOP_REGEN_GOLDEN=1`` rewrite the file instead."""
    path = Path(path)
    if os.environ.get(GOLDEN_ENV) == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    assert path.exists(), f"golden file {path} is missing; create it with {GOLDEN_ENV}=1"
    stored = path.read_text(encoding="utf-8")
    if stored == text:
        return
    diff = list(difflib.unified_diff(stored.splitlines(), text.splitlines(), f"{path} (stored)",
                                     "current", lineterm="", n=2))
    shown = diff[:80] + ([f"… {len(diff) - 80} more diff lines"] if len(diff) > 80 else [])
    raise AssertionError(f"the playthrough differs from {path}; if the change is intended, rerun with "
                         f"{GOLDEN_ENV}=1 and review the diff of the file\n" + "\n".join(shown))
