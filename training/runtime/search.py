"""Search at play time: determinized Monte-Carlo search over worlds sampled from the seat's information.

At a decision with a real choice :class:`SearchAgent` keeps the prior network's likeliest moves as candidates,
plays each in the same sampled worlds (``SeatView.sample``) to the end with the rollout player, all worlds in
lockstep (one batched network call per ply), and plays the best mean value + ``c`` · ln π. The agent spec is
``search`` or ``search:key=value,…`` (:class:`SearchSettings`); the algorithm, every option, the cost and the
measured strength are described in docs/search.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ...envs.core.agents import PICK, Agent, SeatView, decided_by, legal_actions
from ...envs.core.game import Game, State
from ...envs.core.match import score_margins
from .policy import MLPPolicy, limit_blas_threads, load_policy
from .policy_paths import policy_path, pretrained_path
from .spec_options import parse_options

PREFIX = "search"
NETWORK_ROLLOUT = "policy"
SAME_AS_ROLLOUT = "rollout"
AUTO_WORLDS = {True: 32, False: 4}  # network / agent play-outs (docs/search.md: cost per decision)
PLAY_OUT_VALUES = ("margin", "returns")  # what a played-out state is worth to the searched seat
CRITIC = "critic"  # value=critic: play-outs cut at the horizon are scored by the network's value head
VALUES = (*PLAY_OUT_VALUES, CRITIC)


@dataclass(frozen=True)
class SearchSettings:
    """The options of the ``search`` agent spec (see the module docstring)."""

    policy: str = "pretrained"
    rollout: str = NETWORK_ROLLOUT
    worlds: int = 0  # 0: auto (AUTO_WORLDS)
    max_worlds: int = 0  # 0: worlds (no racing)
    z: float = 1.0
    k: int = 4
    min_prior: float = 0.02
    c: float = 2.0
    temperature: float = 0.0
    horizon: int = 0
    value: str = "margin"
    opponents: str = SAME_AS_ROLLOUT

    def __post_init__(self) -> None:
        problems = []
        if self.worlds < 0:
            problems.append(f"worlds={self.worlds} (expected at least 1, or 0 = auto)")
        if self.max_worlds < 0 or 0 < self.max_worlds < self.worlds:
            problems.append(f"max_worlds={self.max_worlds} (expected 0 = no racing, or at least worlds="
                            f"{self.worlds or 'auto'})")
        if self.max_worlds > self.worlds == 1:
            problems.append("max_worlds with worlds=1 (racing needs at least 2 worlds per batch)")
        if not (np.isfinite(self.z) and self.z >= 0):
            problems.append(f"z={self.z} (expected a finite number >= 0)")
        if self.k < 1:
            problems.append(f"k={self.k} (expected at least 1)")
        if not 0 <= self.min_prior <= 1:
            problems.append(f"min_prior={self.min_prior} (expected 0..1)")
        if not (np.isfinite(self.c) and self.c >= 0):
            problems.append(f"c={self.c} (expected a finite number >= 0)")
        if not (np.isfinite(self.temperature) and self.temperature >= 0):
            problems.append(f"temperature={self.temperature} (expected a finite number >= 0)")
        if self.horizon < 0:
            problems.append(f"horizon={self.horizon} (expected 0 = to the end, or a number of plies)")
        if self.value not in VALUES:
            problems.append(f"value={self.value!r} (expected one of {', '.join(VALUES)})")
        if self.value == CRITIC and not self.horizon:
            problems.append("value=critic without a horizon (the critic scores play-outs cut at horizon=N plies; "
                            "a play-out to the end is scored by its returns)")
        if ":" in self.rollout:
            problems.append(f"rollout={self.rollout!r} (expected '{NETWORK_ROLLOUT}' or an agent spec without options)")
        if ":" in self.opponents:
            problems.append(f"opponents={self.opponents!r} (expected '{SAME_AS_ROLLOUT}', '{NETWORK_ROLLOUT}' or an "
                            "agent spec without options)")
        if problems:
            raise ValueError("search: bad option " + "; ".join(problems))

    @classmethod
    def parse(cls, spec: str) -> SearchSettings:
        """``search`` or ``search:key=value,…`` → settings; a clear ``ValueError`` for anything else."""
        return parse_options(cls, PREFIX, spec)


# --------------------------------------------------------------------------- rollout players
class NetworkPlayer:
    """A policy network playing whichever seat is on move, for many states at once (one forward pass)."""

    def __init__(self, policy: MLPPolicy, temperature: float, rng: np.random.Generator):
        self.policy, self.temperature, self.rng = policy, temperature, rng

    def choose(self, states: Sequence[State], legal: Sequence[list[int]]) -> list[int]:
        observations = np.stack([s.observation(s.current_player) for s in states])
        logits = self.policy.logits(observations)
        rows = np.repeat(np.arange(len(states)), [len(actions) for actions in legal])
        cols = np.concatenate(legal)
        masked = np.full_like(logits, -np.inf)
        masked[rows, cols] = logits[rows, cols]
        if self.temperature == 0:
            return masked.argmax(1).tolist()
        z = (masked - masked.max(1, keepdims=True)) / self.temperature
        cdf = np.cumsum(np.exp(z, dtype=np.float64), axis=1)
        draws = self.rng.random(len(states)) * cdf[:, -1]
        return [int(np.searchsorted(row, u, side="right")) for row, u in zip(cdf, draws, strict=True)]


class AgentPlayer:
    """Any agent (the heuristic, say) playing whichever seat is on move, one state at a time."""

    def __init__(self, agent: Agent):
        self.agent = agent

    def choose(self, states: Sequence[State], legal: Sequence[list[int]]) -> list[int]:
        if decided_by(self.agent) is PICK:  # the random agent: the same moves, without building observations
            return [self.agent.pick(actions) for actions in legal]
        return [self.agent.act(s.observation(s.current_player), s.action_mask()) for s in states]


Player = NetworkPlayer | AgentPlayer


class SplitPlayer:
    """The searching seat's player for its own moves, an opponent model for every other seat's."""

    def __init__(self, own: Player, others: Player):
        self.own, self.others = own, others
        self.seat = -1  # set by SearchAgent.attach

    def choose(self, states: Sequence[State], legal: Sequence[list[int]]) -> list[int]:
        moves = [0] * len(states)
        for player, mine in ((self.own, True), (self.others, False)):
            rows = [i for i, s in enumerate(states) if (s.current_player == self.seat) == mine]
            if rows:
                for i, move in zip(rows, player.choose([states[i] for i in rows], [legal[i] for i in rows]),
                                   strict=True):
                    moves[i] = move
        return moves


def play_out(states: Sequence[State], player: Player | SplitPlayer, horizon: int = 0) -> None:
    """Advance all ``states`` in lockstep until each ends (or ``horizon`` plies, if not 0): every ply, the
    states with a single legal move make it and ``player`` chooses for all the others at once."""
    live = [s for s in states if not s.is_terminal()]
    plies = 0
    while live and (not horizon or plies < horizon):
        waiting, legal = [], []
        for s in live:
            actions = s.legal_actions()
            if len(actions) == 1:
                s.apply_action(actions[0])
            else:
                waiting.append(s)
                legal.append(actions)
        if waiting:
            for s, a in zip(waiting, player.choose(waiting, legal), strict=True):
                s.apply_action(a)
        live = [s for s in live if not s.is_terminal()]
        plies += 1


def seat_values(state: State, value: str) -> np.ndarray:
    """Every seat's value of a played-out state: its score margin (``value="margin"``) or its return (provisional
    for a play-out cut at a horizon)."""
    if value == "margin":
        return np.asarray(score_margins(state.scores()), dtype=float)
    return np.asarray(state.returns(), dtype=float)


def outcomes(states: Sequence[State], seat: int, value: str, critic: MLPPolicy | None = None) -> np.ndarray:
    """The searched seat's value of each played-out state (:func:`seat_values`) or, with ``value=critic``, the
    return of an ended play-out and the critic's estimate of it, on the seat's observation, for one cut short."""
    values = np.array([seat_values(s, "returns" if value == CRITIC else value)[seat] for s in states])
    cut = [i for i, s in enumerate(states) if not s.is_terminal()] if value == CRITIC else []
    if cut:
        values[cut] = critic.value(np.stack([states[i].observation(seat) for i in cut]))
    return values


def one_candidate(prior: float, min_prior: float) -> str:
    """Why a search did not search (the browser app and records show it): the prior, ``prior`` on the move played,
    leaves no other move at ``min_prior`` or above."""
    return (f"the prior leaves one candidate, this move at {100 * prior:.1f} %: every other legal move is under "
            f"min_prior={min_prior:g}")


# --------------------------------------------------------------------------- the agent
class SearchAgent:
    """Determinized root search (see the module docstring). Needs its seat's view: whoever drives the game
    calls ``attach(view)`` at the start of each game (``tabletop_rl.envs.core.match.play_game`` does)."""

    def __init__(self, game: Game, settings: SearchSettings, prior: MLPPolicy | None,
                 make_player: Callable[[np.random.Generator], NetworkPlayer | AgentPlayer | SplitPlayer],
                 seed: int | None = None):
        self.game, self.settings, self.prior = game, settings, prior
        self.rng = np.random.default_rng(seed)
        self.player = make_player(self.rng)
        self.view: SeatView | None = None
        self.searched = 0  # decisions that ran play-outs (the others cost one network call or nothing)
        self._tally: tuple | None = None  # the last search: candidates, log prior, value sums, worlds (notes())
        self.unsearched: str | None = None  # why the last decision was not searched, in words (None if it was)

    def attach(self, view: SeatView) -> None:
        if view.game.name != self.game.name or view.game.options != self.game.options:
            raise ValueError(f"SearchAgent for {self.game!r} was attached to a game of {view.game!r}")
        self.view = view
        if isinstance(self.player, SplitPlayer):
            self.player.seat = view.seat

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = legal_actions(action_mask, "SearchAgent")
        self._tally = self.unsearched = None
        if len(legal) == 1:
            self.unsearched = "only one move is legal here"
            return legal[0]
        candidates, log_prior = self.candidates(observation, legal)
        if len(candidates) == 1:
            self.unsearched = self._one_candidate(float(np.exp(log_prior[0])))
            return candidates[0]
        choice = self.race(candidates, log_prior)
        self.searched += 1
        return candidates[choice]

    def notes(self) -> dict[str, Any] | None:
        """Its last decision's notes for a game record, if it searched: every candidate with its prior, its mean
        value (``value``: margin or returns) and the worlds it was played in (fewer for those a race dropped)."""
        if self._tally is None:
            return None
        candidates, log_prior, sums, worlds = self._tally
        # without a network every legal move is a candidate, uniformly likely (its log prior 0 only drops out)
        priors = np.exp(log_prior) if self.prior is not None else np.full(len(candidates), 1 / len(candidates))
        return {"search": {"measure": self.settings.value, "candidates": [
            {"action": int(a), "prior": float(p), "mean": float(total / n), "worlds": int(n)}
            for a, p, total, n in zip(candidates, priors, sums, worlds, strict=True)]}}

    def _one_candidate(self, prior: float) -> str:
        """Why the prior left one candidate (with more than one legal move): ``prior`` is that move's."""
        if self.settings.k == 1:
            return f"k=1 keeps only the prior's likeliest move, this one at {100 * prior:.1f} %"
        return one_candidate(prior, self.settings.min_prior)

    def candidates(self, observation: np.ndarray, legal: list[int]) -> tuple[list[int], np.ndarray]:
        """The moves worth searching, most likely first, and their log prior (uniform without a network)."""
        if self.prior is None:
            return legal, np.zeros(len(legal))
        logits = self.prior.logits(observation)[legal].astype(np.float64)
        log_p = logits - logits.max()
        log_p -= np.log(np.exp(log_p).sum())
        order = np.argsort(-log_p, kind="stable")
        s = self.settings
        keep = [i for rank, i in enumerate(order[:s.k]) if rank == 0 or log_p[i] >= np.log(max(s.min_prior, 1e-300))]
        return [legal[i] for i in keep], log_p[keep]

    def race(self, candidates: list[int], log_prior: np.ndarray) -> int:
        """Index of the candidate to play: the highest mean value + c · ln π. While worlds are left (up to
        ``max_worlds``), candidates that trail the leader by ``z`` standard errors or more are dropped and the
        others played in ``worlds`` new worlds; every survivor has been played in the same worlds."""
        s = self.settings
        alive = np.arange(len(candidates))
        values = np.empty((len(candidates), 0))
        sums, worlds = np.zeros(len(candidates)), np.zeros(len(candidates), dtype=int)  # for notes(), never read here
        self._tally = (candidates, log_prior, sums, worlds)
        while True:
            batch = self.evaluate([candidates[i] for i in alive])
            sums[alive] += batch.sum(axis=1)
            worlds[alive] += batch.shape[1]
            values = np.hstack([values, batch])
            score = values.mean(axis=1) + s.c * log_prior[alive]
            lead = int(np.argmax(score))
            if values.shape[1] + s.worlds > max(s.max_worlds, s.worlds):
                return int(alive[lead])
            error = (values[lead] - values).std(axis=1, ddof=1) / np.sqrt(values.shape[1])
            keep = score[lead] - score < s.z * error
            keep[lead] = True
            if keep.sum() == 1:
                return int(alive[lead])
            alive, values = alive[keep], values[keep]

    def evaluate(self, candidates: list[int]) -> np.ndarray:
        """Each candidate's value in each of ``worlds`` new sampled worlds (the same worlds for every
        candidate), shape (candidates, worlds)."""
        if self.view is None:
            raise ValueError("SearchAgent has no view of the game: drive it with "
                             "tabletop_rl.envs.core.match.play_game, or call attach(SeatView) at the start of a game")
        s = self.settings
        seat = self.view.seat
        worlds = [self.view.sample(self.rng) for _ in range(s.worlds)]
        if worlds[0].current_player != seat:
            raise ValueError(f"SearchAgent of seat {seat} was asked to move while seat {worlds[0].current_player} "
                             "is on move")
        states = []
        for i, action in enumerate(candidates):
            last = i == len(candidates) - 1
            for world in worlds:
                state = world if last else world.clone()
                state.apply_action(action)
                states.append(state)
        with limit_blas_threads(1):  # extra threads only thrash a shared, busy CPU
            play_out(states, self.player, s.horizon)
            values = outcomes(states, seat, s.value, self.prior)
        return values.reshape(len(candidates), s.worlds)


# --------------------------------------------------------------------------- loading
def search_factory(spec: str, game: Game, load_agent: Callable[..., Agent]) -> Callable[[int | None], SearchAgent]:
    """Parse ``spec``, load its network once, and return ``seed -> SearchAgent``; ``load_agent`` (the agent loader,
    :func:`tabletop_rl.training.runtime.agents.load_agent`) makes the play-out agents a spec names."""
    settings = SearchSettings.parse(spec)
    network = _network(settings.policy, game)
    if network is None and settings.rollout == NETWORK_ROLLOUT:
        settings = replace(settings, rollout="heuristic")
    if not settings.worlds:
        settings = replace(settings, worlds=AUTO_WORLDS[settings.rollout == NETWORK_ROLLOUT])
    for needs, what in ((settings.opponents == NETWORK_ROLLOUT, f"opponents={NETWORK_ROLLOUT}"),
                        (settings.value == CRITIC, f"value={CRITIC}")):
        if needs and network is None:
            raise ValueError(f"search: {what} needs a policy network, and {spec!r} has none for {game!r}")

    def player_maker(name: str) -> Callable[[np.random.Generator], Player]:
        if name == NETWORK_ROLLOUT:
            return lambda rng: NetworkPlayer(network, settings.temperature, rng)
        load_agent(name, game)  # a bad spec fails now, not at the first decision
        return lambda rng: AgentPlayer(load_agent(name, game, seed=int(rng.integers(2**63))))

    own = player_maker(settings.rollout)
    if settings.opponents in (SAME_AS_ROLLOUT, settings.rollout):
        return lambda seed: SearchAgent(game, settings, network, own, seed)
    others = player_maker(settings.opponents)
    return lambda seed: SearchAgent(game, settings, network, lambda rng: SplitPlayer(own(rng), others(rng)), seed)


def _network(policy: str, game: Game) -> MLPPolicy | None:
    """The prior network: ``none``, a policy path, or ``pretrained`` if a shipped policy fits ``game``."""
    if policy == "none":
        return None
    if policy == "pretrained":
        try:
            path = pretrained_path(game)
        except ValueError:  # none trained for these options (another player count, say): search without a prior
            return None
        return load_policy(path, game)
    return load_policy(policy_path(policy, game), game)
