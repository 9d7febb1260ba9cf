"""One game of the learner against its opponents, driven on the engine itself, and the opponents of many such
games played together.

A :class:`Table` holds what one single-seat episode is: the learner's seat, the agents in the other seats
(drawn from its own :class:`~tabletop_rl.training.runtime.opponents.OpponentMix`), the engine state and its own
generator. :class:`~tabletop_rl.training.runtime.single_seat.SingleSeatEnv` is one table;
:class:`~tabletop_rl.training.runtime.vector_env.SeatVectorEnv` is many. Both play the opponents with
:func:`play_opponents`: the opponents that need no network play on at once, and every table waiting on the same
network (the shipped policy, a self-play snapshot) is decided in one forward pass. A table consumes its generator
and its agents' generators in the same order whatever else is played beside it, so table i of a batch seeded
``seed + i`` plays exactly the games of a single env seeded ``seed + i``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.utils import seeding

from ...envs.core.agents import BATCH, PICK, Agent, attach_view, decided_by
from ...envs.core.game import TERMINAL, Game, State
from ...envs.core.match import first_place_shares, score_margins
from .opponents import OpponentMix

MAX_RESETS = 100  # deals in a row that end before the learner's first decision: surely a bug
OUTCOMES = ("pairwise", "first_place")  # what the outcome part of the training reward is (training_rewards)
ILLEGAL_REWARD = -1.0  # PettingZoo's illegal-move convention (TerminateIllegalWrapper(illegal_reward=-1))


class Table:
    """One seat of ``game`` for the learner, the other seats played by agents drawn from ``mix`` per episode."""

    def __init__(self, game: Game, mix: OpponentMix, seat: int | str = "random", margin_reward: float = 0.0,
                 skip_forced: bool = False, outcome_reward: float = 1.0, outcome: str = "pairwise"):
        n = game.num_players
        if outcome not in OUTCOMES:
            raise ValueError(f"outcome={outcome!r} is not allowed; expected one of {', '.join(OUTCOMES)}")
        if type(skip_forced) is not bool:
            raise ValueError(f"skip_forced={skip_forced!r} is not allowed; expected True or False")
        if not (seat == "random" or (type(seat) is int and 0 <= seat < n)):
            raise ValueError(f"seat={seat!r} is not allowed; expected 'random' or a seat 0..{n - 1}")
        self.game = game
        self.mix = mix
        self.seat_choice = seat
        self.margin_reward = margin_reward
        self.outcome_reward = outcome_reward
        self.outcome_kind = outcome  # (outcome() is the end of an episode)
        self.skip_forced = skip_forced  # the learner's decisions with one legal action are played for it
        self.forced = 0  # its decisions played for it since it last got an observation
        self.forced_in_episode = 0
        self.np_random: np.random.Generator | None = None
        self.np_random_seed: int | None = None  # the seed of np_random, as Gymnasium's Env.np_random_seed
        self.seat = 0
        self.seated: list[tuple[str, Any] | None] = [None] * n  # (name, agent) per seat; None for the learner's
        self.state: State | None = None
        self.forfeited = False  # the learner ended the episode with an illegal action
        self.deals = 0  # deals of the current reset (MAX_RESETS)

    # ----------------------------------------------------------------- a new episode
    def seed(self, seed: int | None) -> None:
        """What ``gymnasium.Env.reset(seed=...)`` does to the env's generator, and fresh opponents from it;
        without a seed the sequence goes on (a first unseeded episode draws its generator from the OS)."""
        if seed is not None:
            self.np_random, self.np_random_seed = seeding.np_random(seed)
            self.mix.reseed(self.np_random)
        elif self.np_random is None:
            self.np_random, self.np_random_seed = seeding.np_random()

    def deal(self) -> None:
        """The seat, the opponents and the first position of a new game; the opponents have not played yet."""
        rng = self.np_random
        n = self.game.num_players
        self.forfeited = False
        self.forced = self.forced_in_episode = 0
        self.seat = int(rng.integers(n)) if self.seat_choice == "random" else self.seat_choice
        self.seated = [None if p == self.seat else self.mix.draw(p) for p in range(n)]
        # The seed the PettingZoo env would give the engine when reset with this one (TabletopEnv.reset).
        game_seed = int(np.random.default_rng(int(rng.integers(2**63))).integers(2**63))
        self.state = self.game.new_initial_state(game_seed)
        for p, seated in enumerate(self.seated):
            if seated is not None:  # a searching opponent gets its seat's view
                attach_view(seated[1], self._live, p)
        self.deals += 1

    def _live(self) -> State:
        return self.state

    def ready(self) -> bool:
        """After a deal and the opponents' moves: is it the learner's decision? Deals again when the game ended
        first (``RuntimeError`` after ``MAX_RESETS`` such deals)."""
        if not self.state.is_terminal():
            self.deals = 0
            return True
        if self.deals >= MAX_RESETS:
            raise RuntimeError(f"{MAX_RESETS} games of {self.game.name} in a row ended before seat {self.seat} "
                               "had a decision")
        self.deal()
        return False

    # ----------------------------------------------------------------- during an episode
    def over(self) -> bool:
        return self.forfeited or self.state.is_terminal()

    def play(self, action: int) -> str | None:
        """The learner's ``action``, played when legal; an illegal one is not played and ends the episode
        (PettingZoo's convention): then the reason is returned."""
        self.forced = 0
        state = self.state
        if state.current_player == self.seat and state.is_legal(action):
            state.apply_action(action)
            return None
        self.forfeited = True
        return (f"action {action} ({state.action_to_string(action)}) is illegal for seat {self.seat} in phase "
                f"{state.phase!r}: the episode ends with reward {ILLEGAL_REWARD}")

    # ----------------------------------------------------------------- what the learner gets
    def observation(self) -> np.ndarray:
        return self.state.observation(self.seat)

    def mask(self) -> np.ndarray:
        """The learner's int8 mask, all zeros when it is not its decision (a fresh array)."""
        if self.over() or self.state.current_player != self.seat:
            return np.zeros(self.game.num_actions, np.int8)
        return self.state.action_mask()

    def outcome(self) -> tuple[float, bool, bool]:
        """(reward, terminated, truncated) of a finished episode."""
        if self.forfeited:
            return ILLEGAL_REWARD, True, False
        truncated = self.state.is_truncated()
        rewards = training_rewards(self.state, self.outcome_reward, self.margin_reward, self.outcome_kind)
        reward = float(rewards[self.seat])
        return reward, not truncated, truncated

    def end_info(self) -> dict[str, Any]:
        """Seat, opponents, the (all-zero) mask and, once the game ended, the scores and the score margin (own
        score minus the mean of the others')."""
        info = {"seat": self.seat, "opponents": [s[0] for s in self.seated if s is not None],
                "action_mask": self.mask()}
        if self.skip_forced:
            info.update(forced=self.forced, forced_in_episode=self.forced_in_episode)
        if self.state.is_terminal():
            scores = self.state.end_info().get("scores")
            if scores is not None:
                info.update(scores=list(scores), margin=float(score_margins(scores)[self.seat]))
        return info


def training_rewards(state: State, outcome_reward: float = 1.0, margin_reward: float = 0.0,
                     outcome: str = "pairwise") -> np.ndarray:
    """Every seat's reward for a game that ended: ``outcome_reward`` × its outcome plus ``margin_reward`` × its score
    margin (own score − the others' mean; none when the game was truncated). The outcome is ``"pairwise"``: the
    return (``State.returns``: seats beaten − seats that beat it, over n − 1; win/loss at 2 players), or
    ``"first_place"``: its share of first place (1 for the sole winner, 1/k in a k-way tie, 0 otherwise, as the
    evaluations count; none for a truncated game). With ``outcome_reward=0`` the objective is the margin alone (Lost
    Cities: ``margin_reward=0.02`` is the score difference / 50)."""
    returns = state.returns()
    if outcome == "first_place":
        returns = np.zeros(len(returns)) if state.is_truncated() else first_place_shares(returns)
    rewards = outcome_reward * returns
    if margin_reward and not state.is_truncated():
        rewards = rewards + margin_reward * np.asarray(score_margins(state.scores()), float)
    return rewards


def play_opponents(tables: Sequence[Table]) -> None:
    """Play the opponents of every table until each waits on its learner or is over.

    A table that skips forced decisions also plays its learner's decisions that have one legal action (the learner
    knows its own mask: nothing it could not see is used), counted in ``table.forced``.
    Agents decided alone play on at once — one that picks from the legal actions (the random agent) without an
    observation, any other on its seat's view — until each table waits on its learner, is over, or waits on an agent
    decided in a batch (the agent protocol, ``envs/core/agents.py``); then every table waiting on agents of the same
    batch key (the shipped policy, a self-play snapshot: one network) is decided in one call, and the round begins
    again. A batched agent's decision with one legal action needs no batch (``only``). Each table's decisions come
    in its own order whatever the other tables do."""
    waiting = tables
    while waiting:
        batches: dict[int, list[tuple[Table, Agent]]] = {}
        for table in waiting:
            state = table.state
            while True:
                p = state.current_player
                if p == TERMINAL or table.forfeited:
                    break
                if p == table.seat:
                    if table.skip_forced and len(legal := state.legal_actions()) == 1:
                        state.apply_action(legal[0])
                        table.forced += 1
                        table.forced_in_episode += 1
                        continue
                    break
                agent = table.seated[p][1]
                how = decided_by(agent)
                if how is BATCH:
                    if len(legal := state.legal_actions()) == 1:  # no forward pass for a forced decision
                        state.apply_action(agent.only(legal[0]))
                        continue
                    batches.setdefault(id(agent.batch_key), []).append((table, agent))
                    break
                if how is PICK:
                    state.apply_action(agent.pick(state.legal_actions()))
                else:
                    state.apply_action(agent.act(state.observation(p), state.action_mask()))
        for batch in batches.values():
            states = [table.state for table, _ in batch]
            agents = [agent for _, agent in batch]
            actions = agents[0].act_batch(agents, np.stack([s.observation(s.current_player) for s in states]),
                                          np.stack([s.action_mask() for s in states]))
            for state, action in zip(states, actions, strict=True):
                state.apply_action(action)
        waiting = [table for batch in batches.values() for table, _ in batch]


def settle(tables: Sequence[Table]) -> None:
    """Play the opponents of freshly dealt tables until each waits on its learner, dealing again a table whose game
    ended before the learner's first decision."""
    while tables:
        play_opponents(tables)
        tables = [t for t in tables if not t.ready()]
