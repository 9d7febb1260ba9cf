"""Play one game between agents through a PettingZoo AEC env, and score its outcome per seat.

Game-agnostic (any number of seats): evaluation, training and tests share this one loop, so every
agent is driven exactly the way a PettingZoo user would drive it — by ``observation`` and
``action_mask`` only — and every report counts wins and margins the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pettingzoo import AECEnv

from .agents import Agent, agent_notes, attach_view, wants_view
from .record import Decision


def play_game(env: AECEnv, agents: Sequence[Agent], seed: int | None = None,
              decisions: list[Decision] | None = None) -> tuple[np.ndarray, list | None]:
    """Reset ``env`` with ``seed`` and play it out; ``agents[i]`` plays ``env.possible_agents[i]``.

    Returns ``(returns, scores)``: the final reward of each seat (float array in seat order) and the
    game's ``infos[...]["scores"]`` at the end (``None`` if the game reports none). Agents that search
    (define ``attach``) get their seat's :class:`~tabletop_rl.envs.core.agents.SeatView` of this game first.
    With a list ``decisions``, every decision is appended to it as it is made, with its agent's notes:
    ``Record.played(env.unwrapped, specs, decisions)`` is then the game's record, even one left unfinished.
    """
    seats = {name: i for i, name in enumerate(env.possible_agents)}
    if len(agents) != len(seats):
        raise ValueError(f"play_game: {len(agents)} agents given for {len(seats)} seats")
    searchers = [id(a) for a in agents if wants_view(a)]
    if len(set(searchers)) < len(searchers):
        raise ValueError("play_game: one searching agent (with attach) cannot sit in two seats; make one per seat")
    env.reset(seed=seed)
    for i, agent in enumerate(agents):
        attach_view(agent, lambda: env.unwrapped.game_state, i)  # the view follows the game move by move
    returns = np.zeros(len(seats))
    scores = None
    for name in env.agent_iter():
        observation, reward, terminated, truncated, info = env.last()
        if terminated or truncated:
            # Each seat is visited once more after the end: collect its result, then retire it.
            returns[seats[name]] = reward
            scores = info.get("scores", scores)
            env.step(None)
            continue
        agent = agents[seats[name]]
        action = agent.act(observation["observation"], observation["action_mask"])
        if decisions is not None:
            decisions.append(Decision(seats[name], int(action), agent_notes(agent)))
        env.step(action)
    return returns, scores


def seat_among(agent: Agent, others: Sequence[Agent], seat: int) -> list[Agent]:
    """``agent`` in ``seat`` and ``others`` in the remaining seats, in their order: the seating of one agent's
    seat-balanced games against the others (game g of such a series puts it in seat ``g % num_players``; the
    evaluations of training and the games expert iteration records)."""
    return [*others[:seat], agent, *others[seat:]]


def first_place_shares(returns: Sequence[float]) -> np.ndarray:
    """Per seat: 1 for the sole winner, 1/k for each of k seats tied for first, 0 otherwise."""
    returns = np.asarray(returns, dtype=float)
    best = returns == returns.max()
    return best / best.sum()


def score_margins(scores: Sequence[float], rounds: int = 1) -> np.ndarray:
    """Per seat: own score minus the mean of the other seats' scores, per round of the match."""
    scores = np.asarray(scores, dtype=float)
    others = (scores.sum() - scores) / (len(scores) - 1)
    return (scores - others) / rounds
