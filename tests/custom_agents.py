"""Agent factories for the tests of custom agent specs: ``tests.custom_agents:<name>`` (the checkout is on the
path) or ``tests/custom_agents.py:<name>``. Good ones, and one for each way a spec can be wrong."""

from __future__ import annotations

import numpy as np

LIMIT = 3  # not callable
CALLS: list[dict] = []  # what Watcher's factory was called with, in this process


def first(game, seed):
    """A plain function: the legal action with the lowest index."""
    return lambda observation, action_mask: int(np.flatnonzero(action_mask)[0])


class Watcher:
    """An object with act, seeded, that keeps what it is given: the game, the seed, its seat's view of each game
    (it defines attach), every observation and mask."""

    def __init__(self, game, seed):
        CALLS.append({"game": game, "seed": seed, "agent": self})
        self.game, self.rng, self.seen, self.views = game, np.random.default_rng(seed), [], []

    def attach(self, view):
        self.views.append(view)

    def act(self, observation, action_mask):
        self.seen.append((observation, action_mask))
        return self.rng.choice(np.flatnonzero(action_mask))  # a numpy integer: accepted as it is


def lost_cities_only(game, seed):
    if game.name != "lost_cities":
        raise ValueError(f"this agent plays lost_cities only, not {game.name}")
    return first(game, seed)


def broken(game, seed):
    return 1 / 0


def wrong(game, seed):
    return 42


def one_argument(game, seed):
    return lambda observation: 0


def out_of_range(game, seed):
    return lambda observation, action_mask: len(action_mask)


def masked(game, seed):
    """The first action the mask forbids."""
    return lambda observation, action_mask: int(np.flatnonzero(action_mask == 0)[0])


def number(game, seed):
    return lambda observation, action_mask: float(np.flatnonzero(action_mask)[0])
