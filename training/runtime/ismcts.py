"""Information-set Monte-Carlo tree search at play time: single-observer ISMCTS (Cowling, Powley & Whitehouse
2012) with AlphaZero's PUCT selection.

Every iteration samples a fresh world from the seat's view (``SeatView.sample``), walks one tree of action
histories — the searching seat's moves and every other seat's — choosing by PUCT among the actions legal in that
world, adds one node, evaluates it with the network (its critic on every seat's observation, or a play-out) and
backs a per-seat value up the path. Iterations run in batches with virtual loss, so that each network call
evaluates a batch of leaves. It plays the most visited move. The agent spec is ``ismcts`` or
``ismcts:key=value,…`` (:class:`IsmctsSettings`); docs/search.md ("Information-set search") describes the
algorithm, the options, the cost and the measured strength.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ...envs.core.agents import Agent, SeatView, legal_actions
from ...envs.core.game import Game, State
from .policy import MLPPolicy, limit_blas_threads
from .search import PLAY_OUT_VALUES, AgentPlayer, NetworkPlayer, _network, one_candidate, play_out, seat_values
from .spec_options import parse_options

PREFIX = "ismcts"
LEAVES = ("value", "rollout")
# (iterations, batch) per searched decision by leaf evaluation, 0.2-0.5 s of CPU in Lost Cities (docs/search.md,
# "Information-set search"): critic, network play-outs (lock-step play-outs are cheap per state only in large
# batches), heuristic play-outs (one state at a time: batching saves nothing)
AUTO = {"value": (400, 16), "rollout": (256, 64), "heuristic": (16, 1)}


@dataclass(frozen=True)
class IsmctsSettings:
    """The options of the ``ismcts`` agent spec (see the module docstring)."""

    policy: str = "pretrained"
    iterations: int = 0  # 0: auto (AUTO)
    batch: int = 0  # 0: auto (AUTO)
    c: float = 1.5
    min_prior: float = 0.02
    leaf: str = "rollout"
    horizon: int = 0
    value: str = "margin"
    temperature: float = 0.0

    def __post_init__(self) -> None:
        problems = []
        if self.iterations < 0:
            problems.append(f"iterations={self.iterations} (expected at least 1, or 0 = auto)")
        if self.batch < 0:
            problems.append(f"batch={self.batch} (expected at least 1, or 0 = auto)")
        if not (np.isfinite(self.c) and self.c >= 0):
            problems.append(f"c={self.c} (expected a finite number >= 0)")
        if not 0 <= self.min_prior <= 1:
            problems.append(f"min_prior={self.min_prior} (expected 0..1)")
        if self.leaf not in LEAVES:
            problems.append(f"leaf={self.leaf!r} (expected one of {', '.join(LEAVES)})")
        if self.horizon < 0:
            problems.append(f"horizon={self.horizon} (expected 0 = to the end, or a number of plies)")
        if self.value not in PLAY_OUT_VALUES:  # the critic is a leaf evaluator here: leaf=value
            problems.append(f"value={self.value!r} (expected one of {', '.join(PLAY_OUT_VALUES)}; the critic is "
                            "leaf=value)")
        if not (np.isfinite(self.temperature) and self.temperature >= 0):
            problems.append(f"temperature={self.temperature} (expected a finite number >= 0)")
        if problems:
            raise ValueError("ismcts: bad option " + "; ".join(problems))

    @classmethod
    def parse(cls, spec: str) -> IsmctsSettings:
        """``ismcts`` or ``ismcts:key=value,…`` → settings; a clear ``ValueError`` for anything else."""
        return parse_options(cls, PREFIX, spec)

    @property
    def measure(self) -> str:
        """What a value means: the critic estimates the env's reward, so critic leaves are scored as returns."""
        return "returns" if self.leaf == "value" else self.value


class Node:
    """One action history's statistics, per action (arrays over the game's actions): visits, availability (the
    times the action was legal when this node was passed) and per-seat value sums of the subtree after it."""

    __slots__ = ("logits", "visits", "available", "totals", "children")

    def __init__(self, num_actions: int, num_players: int):
        self.logits: np.ndarray | None = None  # the prior's, set when the node is first evaluated
        self.visits = np.zeros(num_actions)
        self.available = np.zeros(num_actions)
        self.totals = np.zeros((num_actions, num_players))
        self.children: dict[int, Node] = {}


class IsmctsAgent:
    """Single-observer ISMCTS (see the module docstring). Needs its seat's view: whoever drives the game calls
    ``attach(view)`` at the start of each game (``tabletop_rl.envs.core.match.play_game`` does)."""

    def __init__(self, game: Game, settings: IsmctsSettings, network: MLPPolicy | None,
                 make_player: Callable[[np.random.Generator], NetworkPlayer | AgentPlayer], seed: int | None = None):
        self.game, self.settings, self.network = game, settings, network
        self.rng = np.random.default_rng(seed)
        self.player = make_player(self.rng)
        self.view: SeatView | None = None
        self.searched = 0  # decisions that ran the search (those with one legal move cost nothing)
        self.unsearched: str | None = None  # why the last decision was not searched, in words (None if it was)
        self._root: tuple[list[int], np.ndarray, Node] | None = None  # the last search: legal, prior, root (notes())
        self._low = self._high = 0.0  # the least and greatest values backed up: Q is normalised to [0, 1] by them

    def attach(self, view: SeatView) -> None:
        if view.game.name != self.game.name or view.game.options != self.game.options:
            raise ValueError(f"IsmctsAgent for {self.game!r} was attached to a game of {view.game!r}")
        self.view = view

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = legal_actions(action_mask, "IsmctsAgent")
        self._root = self.unsearched = None
        if len(legal) == 1:
            self.unsearched = "only one move is legal here"
            return legal[0]
        root = self._new_node()
        root.logits = self._logits(observation[None])[0]
        prior = _softmax(root.logits[legal])
        if (prior >= self.settings.min_prior).sum() < 2:  # as search's candidates: a sure prior is not searched
            top = int(np.argmax(prior))
            self.unsearched = one_candidate(float(prior[top]), self.settings.min_prior)
            return legal[top]
        if self.view is None:
            raise ValueError("IsmctsAgent has no view of the game: drive it with "
                             "tabletop_rl.envs.core.match.play_game, or call attach(SeatView) at the start of a game")
        with limit_blas_threads(1):  # extra threads only thrash a shared, busy CPU
            self.search(root)
        self.searched += 1
        self._root = (legal, prior, root)
        visits = root.visits[legal]
        best = max(range(len(legal)), key=lambda i: (visits[i], prior[i]))  # most visited, ties to the prior
        return legal[best]

    def notes(self) -> dict[str, Any] | None:
        """Its last decision's notes for a game record, if it searched: every root move it visited, in the legal
        order, with its prior, its mean value for this seat and its visits (as ``worlds``: one world per visit)."""
        if self._root is None:
            return None
        legal, prior, root = self._root
        seat = self.view.seat
        return {"search": {"measure": self.settings.measure, "candidates": [
            {"action": int(a), "prior": float(p), "mean": float(root.totals[a, seat] / root.visits[a]),
             "worlds": int(root.visits[a])} for a, p in zip(legal, prior, strict=True) if root.visits[a]]}}

    # ------------------------------------------------------------------ the search
    def search(self, root: Node) -> None:
        """Run the settings' iterations from ``root`` in batches: descend each batch's worlds (virtual loss keeps
        them apart), evaluate the new leaves together, back the values up."""
        s = self.settings
        self._low = self._high = 0.0
        root_sum, root_visits = np.zeros(self.game.num_players), 0
        for start in range(0, s.iterations, s.batch):
            walks = [self.descend(root, root_sum / max(root_visits, 1))
                     for _ in range(min(s.batch, s.iterations - start))]
            values = self.evaluate([(state, node) for state, node, _ in walks])
            self._low, self._high = min(self._low, values.min()), max(self._high, values.max())
            for (_, _, path), value in zip(walks, values, strict=True):
                root_sum += value
                root_visits += 1
                for node, action, mover, loss in path:
                    node.totals[action] += value
                    node.totals[action, mover] -= loss  # the virtual loss taken on the way down

    def descend(self, root: Node, root_mean: np.ndarray) -> tuple[State, Node | None, list]:
        """One iteration's walk in a fresh world: from ``root`` by PUCT to the first node not yet evaluated (or to
        the end of the game), taking a virtual loss on every edge. Returns the world where it stopped, that node
        (``None`` at the end) and the path, ``(node, action, mover, virtual loss)`` per edge."""
        state = self.view.sample(self.rng)
        if state.current_player != self.view.seat:
            raise ValueError(f"IsmctsAgent of seat {self.view.seat} was asked to move while seat "
                             f"{state.current_player} is on move")
        node, mean, path = root, root_mean, []
        while True:
            legal = state.legal_actions() if not state.is_terminal() else []
            if len(legal) == 1:  # forced moves are played through: no node, no network call
                state.apply_action(legal[0])
                continue
            if not legal or node.logits is None:
                return state, (node if legal else None), path
            mover = state.current_player
            action = self.select(node, legal, mover, mean[mover])
            node.visits[action] += 1
            node.totals[action, mover] += self._low
            path.append((node, action, mover, self._low))
            mean = node.totals[action] / node.visits[action]
            if action not in node.children:
                node.children[action] = self._new_node()
            node = node.children[action]
            state.apply_action(action)

    def select(self, node: Node, legal: list[int], mover: int, first: float) -> int:
        """PUCT over the actions legal in this world: normalised mean value for ``mover`` (``first`` for an
        action never tried) + c · prior · √(times available) / (1 + visits)."""
        node.available[legal] += 1
        visits = node.visits[legal]
        mean = np.divide(node.totals[legal, mover], visits, out=np.full(len(legal), first), where=visits > 0)
        spread = self._high - self._low
        q = (mean - self._low) / spread if spread > 0 else np.full(len(legal), 0.5)
        u = self.settings.c * _softmax(node.logits[legal]) * np.sqrt(node.available[legal]) / (1 + visits)
        return legal[int(np.argmax(q + u))]

    def evaluate(self, leaves: list[tuple[State, Node | None]]) -> np.ndarray:
        """Per-seat values of the leaves, shape (leaves, players), in few network calls; new nodes get the prior's
        logits on the mover's observation in the world that reached them first."""
        s, n = self.settings, self.game.num_players
        values = np.zeros((len(leaves), n))
        open_ = [i for i, (_, node) in enumerate(leaves) if node is not None]
        states = [leaves[i][0] for i in open_]
        if open_:
            logits = self._logits(np.stack([st.observation(st.current_player) for st in states]))
            for i, row in zip(open_, logits, strict=True):
                node = leaves[i][1]
                if node.logits is None:
                    node.logits = row
            if s.leaf == "value":
                seats = np.stack([st.observation(p) for st in states for p in range(n)])
                critic = self.network.value(seats).reshape(len(states), n)
                # less the seats' mean: zero-sum like the returns (the critic's estimates share a bias, PPO's
                # reward adding a margin term to the result)
                values[open_] = critic - critic.mean(axis=1, keepdims=True)
            else:
                play_out(states, self.player, s.horizon)
        for i, (state, node) in enumerate(leaves):
            if node is None or s.leaf == "rollout":
                values[i] = seat_values(state, s.measure)
        return values

    def _logits(self, observations: np.ndarray) -> np.ndarray:
        """The prior's logits, a row per observation; zeros (a uniform prior) without a network."""
        if self.network is None:
            return np.zeros((len(observations), self.game.num_actions))
        return self.network.logits(observations).astype(np.float64)

    def _new_node(self) -> Node:
        return Node(self.game.num_actions, self.game.num_players)


def _softmax(logits: np.ndarray) -> np.ndarray:
    z = np.exp(logits - logits.max())
    return z / z.sum()


# --------------------------------------------------------------------------- loading
def ismcts_factory(spec: str, game: Game, load_agent: Callable[..., Agent]) -> Callable[[int | None], IsmctsAgent]:
    """Parse ``spec``, load its network once, and return ``seed -> IsmctsAgent``. Without a network (``policy=none``,
    or no shipped policy fits the game) the prior is uniform and the heuristic plays the play-outs
    (``load_agent``, the agent loader, makes it)."""
    settings = IsmctsSettings.parse(spec)
    network = _network(settings.policy, game)
    if network is None:
        settings = replace(settings, leaf="rollout")

        def make_player(rng: np.random.Generator) -> AgentPlayer:
            return AgentPlayer(load_agent("heuristic", game, seed=int(rng.integers(2**63))))
    else:
        def make_player(rng: np.random.Generator) -> NetworkPlayer:
            return NetworkPlayer(network, settings.temperature, rng)
    iterations, batch = AUTO["heuristic" if network is None else settings.leaf]
    settings = replace(settings, iterations=settings.iterations or iterations, batch=settings.batch or batch)
    return lambda seed: IsmctsAgent(game, settings, network, make_player, seed)
