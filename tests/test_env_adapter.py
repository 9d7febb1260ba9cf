"""The generic PettingZoo adapter (``envs/core/aec.py``) on Lost Cities: truncation, illegal moves, seeding
and rendering errors. The game-agnostic API checks are in ``tests/contract.py`` (``check_env_api``)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tabletop_rl.envs.lost_cities import Game, env, raw_env


def scripted(state, stall: bool) -> int:
    """Player 0 plays whenever it can; player 1 always discards. In the draw step a staller takes from
    any pile it may (each pile draw adds a turn, L17), anyone else draws from the deck."""
    legal = state.legal_actions()
    g = state.game
    if state.phase == "card":
        plays = [a for a in legal if a < g.num_kinds]
        return plays[0] if plays and state.current_player == 0 else next(a for a in legal if a >= g.num_kinds)
    piles = [a for a in legal if a > g.draw_deck_action]
    return piles[0] if stall and piles else g.draw_deck_action


def run_script(e, stall_from_round: int = 1) -> None:
    """Step ``e`` with :func:`scripted` actions until its game ends."""
    state = e.unwrapped.game_state
    while not state.is_terminal():
        e.step(scripted(state, stall=state.round >= stall_from_round))


def finish(e) -> dict[str, tuple]:
    """Step every finished agent out; what ``last()`` showed each: (reward, terminated, truncated, info)."""
    seen = {}
    for agent in e.agent_iter():
        _, reward, terminated, truncated, info = e.last()
        assert terminated or truncated, f"{agent} is still playing"
        seen[agent] = (reward, terminated, truncated, info)
        e.step(None)
    assert e.agents == []
    return seen


# ===================================================================== truncation (L29, L50)
def test_L29_turn_cap_truncates_with_zero_rewards_and_provisional_scores():
    e = raw_env(max_turns_per_round=44)
    e.reset(seed=4)
    run_script(e)
    state = e.game_state
    assert state.is_truncated() and state.turn == 44 and state.deck, "the cap fired before the deck ran out"
    assert all(e.truncations.values()) and not any(e.terminations.values())
    provisional = state.provisional_scores()
    assert provisional[0] != 0  # player 0 played cards: the provisional score is worth reporting
    for agent, (reward, terminated, truncated, info) in finish(e).items():
        assert (reward, terminated, truncated) == (0, False, True), agent
        assert info["scores"] == [0, 0] and info["round_scores"] == []
        assert info["provisional_round_scores"] == provisional
        assert not info["action_mask"].any()


def test_L50_emptying_the_deck_on_the_cap_turn_ends_the_round_then_round_2_truncates():
    e = raw_env(max_turns_per_round=44, rounds=2)
    e.reset(seed=9)
    state = e.game_state
    while state.round == 1:  # nobody draws from a pile: 44 turns empty the deck exactly at the cap
        e.step(scripted(state, stall=False))
    round_1 = state.round_scores[0]
    assert not state.is_terminal() and state.turn == 0 and not any(e.truncations.values())
    assert round_1 != [0, 0]
    run_script(e)  # round 2 stalls into the cap
    assert state.is_truncated() and state.round == 2
    for reward, terminated, truncated, info in finish(e).values():
        assert (reward, terminated, truncated) == (0, False, True)
        assert info["scores"] == round_1 and info["round_scores"] == [round_1]
        assert info["provisional_round_scores"] == state.provisional_scores()


# ===================================================================== illegal moves
def test_raw_env_rejects_bad_actions_and_stays_usable():
    e = raw_env()
    e.reset(seed=2)
    agent = e.agent_selection
    before = e.observe(agent)
    before = {k: v.copy() for k, v in before.items()}
    illegal = int(np.flatnonzero(before["action_mask"] == 0)[0])
    for action, message in [(illegal, f"action {illegal} .* phase card"), (-1, "out of range"),
                            (106, "out of range"), ("draw pile", "not an integer")]:
        with pytest.raises(ValueError, match=message):
            e.step(action)
        assert e.agent_selection == agent and not any(e.rewards.values())
        after = e.observe(agent)
        assert np.array_equal(after["observation"], before["observation"])
        assert np.array_equal(after["action_mask"], before["action_mask"])
    legal = int(np.flatnonzero(before["action_mask"])[0])
    e.step(legal)
    assert e.game_state.phase == "draw" and e.agent_selection == agent  # L37: same seat draws


@pytest.mark.parametrize("decision", ["card", "draw"])
def test_wrapped_env_ends_the_episode_on_an_illegal_move(decision):
    """PettingZoo's TerminateIllegalWrapper: -1 for the author, 0 for the other player, both done."""
    e = env()
    e.reset(seed=3)
    if decision == "draw":
        e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[-1]))  # a discard
    author = e.agent_selection
    mask = e.observe(author)["action_mask"]
    e.step(int(np.flatnonzero(mask == 0)[0]))
    outcome = finish(e)
    assert set(outcome) == {"player_0", "player_1"}
    for agent, (reward, terminated, _, _) in outcome.items():
        assert reward == (-1 if agent == author else 0) and terminated


GAME_OVER = "step() was called after the game is over; call reset() to start a new game"


@pytest.mark.parametrize(("make", "ending"), [(raw_env, "played"), (env, "played"), (env, "illegal move")])
def test_a_step_after_the_game_is_over_raises_the_same_error_raw_and_wrapped(make, ending):
    """Dead agents are stepped with None while ``agents`` is non-empty (PettingZoo's protocol); after that
    any step is refused with PettingZoo's error type for steps out of order (its wrapper would only warn)."""
    e = make()
    e.reset(seed=5)
    if ending == "played":
        run_script(e)
    else:  # the wrapper ends the game on an illegal move
        e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"] == 0)[0]))
    finish(e)
    snapshot = e.unwrapped.game_state.to_json()
    for action in (None, 0, "junk", -7):
        with pytest.raises(AssertionError, match=f"^{re.escape(GAME_OVER)}$") as error:
            e.step(action)
        assert type(error.value) is AssertionError
    assert e.agents == [] and e.unwrapped.game_state.to_json() == snapshot
    e.reset(seed=5)
    assert e.agents == ["player_0", "player_1"] and not e.unwrapped.game_state.is_terminal()


def test_wrapped_env_rejects_out_of_range_actions():
    e = env()
    e.reset(seed=3)
    with pytest.raises(AssertionError, match="action is not in action space"):  # AssertOutOfBoundsWrapper
        e.step(106)


# ===================================================================== seeding
def trace(e, seed: int | None, steps: int = 60) -> list[bytes]:
    """Reset ``e`` with ``seed``; observations and masks of ``steps`` decisions with seeded actions."""
    e.reset(seed=seed)
    rng = np.random.default_rng(0)
    out = []
    for _ in range(steps):
        obs = e.observe(e.agent_selection)
        out.append(obs["observation"].tobytes() + obs["action_mask"].tobytes())
        e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return out


def test_reset_with_a_seed_is_reproducible():
    a, b = env(), env()
    first = trace(a, 5)
    assert trace(a, 5) == first and trace(b, 5) == first
    assert trace(b, 6)[0] != first[0]


def test_unseeded_resets_continue_the_seeded_sequence():
    a, b = env(), env()
    trace(a, 5)
    b.reset(seed=5)  # however much of the episode was played
    follow_a = [trace(a, None), trace(a, None)]
    follow_b = [trace(b, None), trace(b, None)]
    assert follow_a == follow_b
    assert follow_a[0] != follow_a[1] and follow_a[0] != trace(a, 5)


@pytest.mark.parametrize(("seed", "error"), [(True, TypeError), ([1, 2], TypeError), (-1, ValueError),
                                             (1.5, TypeError), ("3", TypeError), (np.int64(-2), ValueError),
                                             (np.bool_(True), TypeError)])
def test_a_seed_is_none_or_a_non_negative_integer(seed, error):
    """numpy alone would play True as seed 1 and take a list as entropy: refused, and nothing changes."""
    message = f"^{re.escape(f'seed={seed!r} is not allowed; expected None or a non-negative integer')}$"
    for make in (raw_env, env):
        e = make()
        e.reset(seed=0)
        e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0]))
        state = e.unwrapped.game_state
        snapshot = state.to_json()
        with pytest.raises(error, match=message):
            e.reset(seed=seed)
        assert e.unwrapped.game_state is state and state.to_json() == snapshot
    with pytest.raises(error, match=message):
        Game().new_initial_state(seed)


def test_a_numpy_integer_seed_is_the_same_seed():
    assert trace(env(), np.int64(3)) == trace(env(), 3)
    assert Game().new_initial_state(np.uint8(3)) == Game().new_initial_state(3)


def test_never_seeded_envs_draw_fresh_games():
    assert trace(env(), None, steps=1) != trace(env(), None, steps=1)


def test_the_same_seat_makes_both_decisions_of_a_turn():
    """L11, L37: card step and draw step by the same agent, then the other agent."""
    e = raw_env(first_player=1)
    e.reset(seed=0)
    seats = []
    for _ in range(6):
        seats.append(e.agent_selection)
        e.step(scripted(e.game_state, stall=False))
    assert seats == ["player_1", "player_1", "player_0", "player_0", "player_1", "player_1"]


# ===================================================================== rendering
def test_render_errors_are_clear():
    with pytest.raises(ValueError, match="before reset"):
        raw_env(render_mode="ansi").render()
    with pytest.raises(AssertionError, match="reset\\(\\) needs to be called before render"):  # PettingZoo's
        env(render_mode="ansi").render()
    for make in (raw_env, env):
        e = make()
        e.reset(seed=0)
        with pytest.raises(ValueError, match="needs a render_mode"):
            e.render()
    with pytest.raises(ValueError, match="render_mode='rgb'.*rgb_array"):
        raw_env(render_mode="rgb")


def test_human_render_prints_the_table_after_each_step(capsys):
    e = env(render_mode="human")
    e.reset(seed=0)
    assert e.render() is None
    e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0]))
    printed = capsys.readouterr().out
    assert printed.count("Lost Cities · round 1 of 1") == 2 and "to draw: the draw pile or a discard pile" in printed


# ----------------------------------------------------------------------------- our wrappers = PettingZoo's
def _outcome(call):
    """A call's result in comparable form, or its exception's type and message."""
    def plain(x):
        if isinstance(x, dict):
            return {k: plain(v) for k, v in x.items()}
        if isinstance(x, list | tuple):
            return [plain(v) for v in x]
        if isinstance(x, np.ndarray):
            return (x.dtype.str, x.shape, x.tobytes())
        return (type(x).__name__, x)
    try:
        return "ok", plain(call())
    except Exception as error:  # noqa: BLE001 — the point is to compare what each raises
        return type(error).__name__, str(error)


@pytest.mark.parametrize("name", ["lost_cities", "five_towers", "palazzo", "torres"])
def test_wrapped_env_answers_every_call_as_pettingzoos_own_wrappers(name):
    """env()'s wrappers read the bookkeeping directly for speed (envs/core/aec.py): legal, illegal, out-of-range,
    numpy, bool, float and None actions, dead steps, steps after the end and calls before reset all give what
    PettingZoo's TerminateIllegalWrapper and AssertOutOfBoundsWrapper give, call for call."""
    import random
    import warnings

    from pettingzoo.utils import wrappers
    from pettingzoo.utils.env_logger import EnvLogger

    from tabletop_rl import envs
    from tabletop_rl.envs.core import aec

    class Reference(wrappers.OrderEnforcingWrapper):  # ours before the fast paths: PettingZoo's, refusing late steps
        def step(self, action):
            if self._has_reset and not self.env.unwrapped.agents:
                raise AssertionError(aec.GAME_OVER)
            super().step(action)

    EnvLogger.suppress_output()
    reference = Reference(wrappers.AssertOutOfBoundsWrapper(
        wrappers.TerminateIllegalWrapper(envs.make(name, wrapped=False), illegal_reward=-1)))
    ours = envs.make(name)
    rng = random.Random(0)
    n = ours.unwrapped.game.num_actions

    def both(call):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert _outcome(lambda: call(reference)) == _outcome(lambda: call(ours))

    for call in (lambda e: e.last(), lambda e: e.step(0), lambda e: e.observe("player_0")):
        both(call)  # before reset
    both(lambda e: e.reset(seed=1))
    for _ in range(1500):
        r = rng.random()
        if r < 0.2:
            both(lambda e: e.last())
        elif r < 0.25:
            agent = rng.choice(ours.possible_agents)
            both(lambda e, agent=agent: e.observe(agent))
        elif r < 0.28:
            seed = rng.randrange(100)
            both(lambda e, seed=seed: e.reset(seed=seed))
        else:
            bare = ours.unwrapped
            mask = bare.infos.get(bare.agent_selection, {}).get("action_mask") if bare.agents else None
            legal = np.flatnonzero(mask).tolist() if mask is not None else []
            k = rng.random()
            action = (rng.choice(legal) if legal and k < 0.7 else rng.randrange(n) if k < 0.78 else
                      rng.choice([-1, n, 2**70]) if k < 0.82 else np.int64(rng.choice(legal or [0])) if k < 0.88
                      else True if k < 0.9 else float(rng.choice(legal or [0])) if k < 0.92 else None)
            both(lambda e, action=action: e.step(action))
        both(lambda e: (e.unwrapped.agents, e.unwrapped.agent_selection, e.unwrapped.rewards,
                        e.unwrapped._cumulative_rewards, e.unwrapped.terminations, e.unwrapped.truncations,
                        e.unwrapped.infos))
