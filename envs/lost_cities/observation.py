"""Lost Cities observation and global state (L30–L34): layouts, gather indices and the vector they read, the one
idiom of ``docs/engine_contract.md`` ("How observations are kept current").

The state keeps one seat-absolute vector ``_x`` (``game.internal``): the per-kind count rows (hands,
expeditions, discard counts and tops, known cards, unseen pools, a row per seat where there is one per seat), the
discard piles' slots, then the scalar context (draw-pile size, hand sizes, whose turn, step, match, turns,
scores). The count rows and pile slots are tables the rules keep move by move anyway (``State._counts`` and
``State._pile_slots`` are views of ``_x``); nearly every scalar changes with every decision, so the rules only mark
the context stale and a read rewrites it once. ``observation(p)`` is ``_x.take(obs_index[p])``, which picks p's rows
(own hand and unseen pool, the opponent's known cards) and puts p's scalars first; ``global_state()`` is
``_x.take(state_index)`` with the draw pile's order filled in.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

import numpy as np

from ..core.layout import Layout, seats_from
from ..core.piles import card_depths, first_copies
from .cards import HAND_SIZE, MAX_EXTRA_ROUNDS, MAX_PILE, kind_value

if TYPE_CHECKING:
    from .game import Game, State

COUNT_ROWS = (("hands", 2), ("expeditions", 2), ("discard_counts", 1), ("discard_tops", 1), ("known", 2),
              ("unseen", 2))
"""The per-kind count rows at the start of the vector, in order (``State._counts``)."""
CONTEXT = (("draw_pile", 1), ("hand_sizes", 2), ("to_act", 2), ("step", 2), ("forbidden", None), ("match", 3),
           ("starter", 2), ("turns", 3), ("cumulative", 2), ("round_scores", 2))
"""The scalar context at the end of the vector (``forbidden`` has n_colours + 1 values)."""


def turn_code(game: Game, turn: int) -> float:
    """L34g: the turn counter in units of the initial draw pile; without a cap nothing bounds it, so it is
    squashed below 1 instead (still one value per turn count)."""
    if game.turn_cap is None:
        return turn / (turn + game.initial_draw_pile)
    return turn / game.initial_draw_pile


def build_layouts(game: Game) -> None:
    """Set ``game.layout``, ``game.state_layout``, ``game.internal`` and the gather indices."""
    C, K, cap = game.n_colours, game.num_kinds, game.turn_cap
    # L34g: the cap relative to the default one, so that the default observation reads 1 here
    game.turn_cap_code = 0.0 if cap is None else 7 * game.initial_draw_pile / cap
    score_bound = 156 * C * (game.options["rounds"] + MAX_EXTRA_ROUNDS) / 100  # L25, loose
    piles = [
        ("discard_counts", K, "cards of each kind in the discard piles", 0, 3),
        ("discard_tops", K, "1 for the kind on top of each non-empty discard pile", 0, 1),
    ]
    pile_order = ("discard_order", (C, MAX_PILE), "pile c, slot j from the bottom: value/10, a wager 0.1, "
                  "empty 0 (L34c)", 0, 1)
    draw_pile = ("draw_pile", 1, "draw-pile size / initial size (L34d)", 0, 1)
    steps = [
        ("step", 2, "one-hot step of the player to act: card step, draw step (L34f)", 0, 1),
        ("forbidden", C + 1, "one-hot forbidden pile in a draw step: none, then colour 0… (L21)", 0, 1),
    ]
    turns = [
        ("cap_progress", 1, "turns this round / turn cap: truncation comes at 1; 0 without a cap (L29, L34g)",
         0, 1),
        ("turn_cap", 1, "the turn cap as default cap / cap: 1 for 'auto', up to 7 for the smallest cap "
         "allowed; 0 without a cap (L29, L34g)", 0, 7),
        ("turn", 1, "turns this round / initial draw-pile size, at most cap / initial draw pile; without a "
         "cap turns / (turns + initial draw pile), below 1 (L34g)", 0, 1 if cap is None else turn_code(game, cap)),
    ]
    game.layout = Layout([
        ("hand", K, "my hand: cards of each kind (L34a)", 0, 3),
        ("my_expeditions", K, "my expeditions: cards of each kind (L34b)", 0, 3),
        ("opp_expeditions", K, "opponent's expeditions: cards of each kind (L34b)", 0, 3),
        *piles,
        ("opp_known", K, "cards the opponent is known to hold, lower bound per kind (L33, L34e)", 0, 3),
        ("unseen", K, "cards I have not seen: draw pile + opponent's unknown cards (L32)", 0, 3),
        pile_order,
        draw_pile,
        ("hand_sizes", 2, "my and the opponent's hand size / 8 (L34e)", 0, 1),
        ("to_move", 1, "1 if I am the player to act", 0, 1),
        *steps,
        ("match", 4, "round/rounds (capped at 1), extra rounds played/5, 1/rounds, I started this round "
         "(L34g)", 0, 1),
        *turns,
        ("scores", 4, "cumulative scores (me, opp) and current round provisional scores (me, opp), "
         "/100 (L34h)", -score_bound, score_bound),
    ])
    # The whole position for centralized critics: hidden cards included, seats in table order.
    game.state_layout = Layout([
        ("hands", (2, K), "cards of each kind in the hand of seat 0, seat 1 (L31)", 0, 3),
        ("expeditions", (2, K), "cards of each kind in the expeditions of seat 0, seat 1 (L30)", 0, 3),
        ("known", (2, K), "cards of each kind seat 0, seat 1 is known to hold (L33)", 0, 3),
        *piles,
        pile_order,
        ("draw_order", game.deck_size, "per card of the deck (kinds in order, a wager's 3 copies side by "
         "side): depth in the draw pile / initial draw-pile size, the next card drawn 1/initial; 0 if "
         "not in the draw pile (L32)", 0, 1),
        draw_pile,
        ("to_act", 2, "one-hot seat to act; all 0 at the end", 0, 1),
        *steps,
        ("match", 3, "round/rounds (capped at 1), extra rounds played/5, 1/rounds (L10, L27)", 0, 1),
        ("starter", 2, "one-hot seat that started this round (L8, L9)", 0, 1),
        *turns,
        ("scores", 4, "cumulative scores (seat 0, seat 1) and current round provisional scores (seat 0, "
         "seat 1), /100 (L24, L28)", -score_bound, score_bound),
    ])
    game.internal = internal = Layout(
        [(name, (rows, K), "", 0, 0) for name, rows in COUNT_ROWS] + [(pile_order[0], pile_order[1], "", 0, 0)]
        + [(name, C + 1 if size is None else size, "", 0, 0) for name, size in CONTEXT])
    game.counts_stop = internal["unseen"].stop
    game.context_start = internal["draw_pile"].start
    game.obs_index = []
    for p in range(2):
        me_first, opp = seats_from(p, 2), [1 - p]
        game.obs_index.append(internal.gather_index([
            ("hands", [p]), ("expeditions", me_first), ("discard_counts", None), ("discard_tops", None),
            ("known", opp), ("unseen", [p]), ("discard_order", None), ("draw_pile", None), ("hand_sizes", me_first),
            ("to_act", [p]), ("step", None), ("forbidden", None), ("match", None), ("starter", [p]),
            ("turns", None), ("cumulative", me_first), ("round_scores", me_first)], 2))
    both = [0, 1]
    head = internal.gather_index([("hands", both), ("expeditions", both), ("known", both), ("discard_counts", None),
                                  ("discard_tops", None), ("discard_order", None)], 2)
    tail = internal.gather_index([("draw_pile", None), ("to_act", both), ("step", None), ("forbidden", None),
                                  ("match", None), ("starter", both), ("turns", None), ("cumulative", both),
                                  ("round_scores", both)], 2)
    game.draw_order = game.state_layout["draw_order"].slice
    # draw_order's entries are filled by card_depths after the gather: any index will do there
    game.state_index = np.concatenate((head, np.zeros(game.deck_size, int), tail))
    game.first_copy = first_copies(game.multiplicity)


def colour_relabellings(game: Game) -> tuple[np.ndarray, np.ndarray]:
    """``Game.relabellings`` for the colours: new colour c shows old colour ``perm[c]``, for every permutation
    (``itertools.permutations``' order, the identity first). Fields of K kinds map kind 10c + r to 10 perm[c] + r,
    the discard piles' slots move by rows, ``forbidden`` by its colours; the scalars stay."""
    C, K = game.n_colours, game.num_kinds
    obs_take, action_take = [], []
    for perm in itertools.permutations(range(C)):
        kinds = (10 * np.array(perm)[:, None] + np.arange(10)).ravel()
        index = np.arange(game.layout.size)
        for field in game.layout:
            start = field.start
            if field.shape == (K,):
                index[field.slice] = start + kinds
            elif field.name == "discard_order":
                index[field.slice] = (start + np.array(perm)[:, None] * MAX_PILE + np.arange(MAX_PILE)).ravel()
            elif field.name == "forbidden":
                index[start + 1:field.stop] = start + 1 + np.array(perm)
        obs_take.append(index)
        action_take.append(np.concatenate((kinds, K + kinds, [2 * K], 2 * K + 1 + np.array(perm))))
    return np.array(obs_take), np.array(action_take)


# ===================================================================== reads
def reset(state: State) -> None:
    """A new zero vector, its context stale (the rules refill the count rows and pile slots)."""
    g = state.game
    use_vector(state, np.zeros(g.internal.size, np.float32), True)


def use_vector(state: State, x: np.ndarray, stale: bool) -> None:
    """Give ``state`` the vector ``x``: ``_counts`` (the count rows) and ``_pile_slots`` are views of it."""
    g = state.game
    state._x = x
    state._counts = x[:g.counts_stop].reshape(-1, g.num_kinds)
    state._pile_slots = x[g.internal["discard_order"].slice].reshape(g.n_colours, MAX_PILE)
    state._dirty = stale


def global_state(state: State) -> np.ndarray:
    """The whole position in table order (``game.state_layout``): both hands and the draw pile's order too
    (``State.global_state`` refreshes ``_x`` first)."""
    g = state.game
    out = state._x.take(g.state_index)
    card_depths(state.deck, g.first_copy, out[g.draw_order], g.initial_draw_pile)
    return out


# ===================================================================== writers
def slot_code(kind: int) -> float:
    """discard_order encoding: a card's value / 10, a wager 0.1."""
    return max(kind_value(kind), 1) / 10


def refresh(state: State) -> None:
    """Rewrite the stale context: the scalars after the count rows and pile slots (``CONTEXT``), seats in table
    order."""
    g = state.game
    rounds = g.options["rounds"]
    score = state._round_score if state.round_open else (0, 0)
    step = [0.0] * (3 + g.n_colours)  # ``step`` and ``forbidden`` one-hots (L34f, L21); all zero at the end
    if state.current_player >= 0:
        step[state.step] = 1.0
        step[3 + state.forbidden] = 1.0
    state._x[g.context_start:] = [
        len(state.deck) / g.initial_draw_pile,
        state._hand_size(0) / HAND_SIZE, state._hand_size(1) / HAND_SIZE,
        state.current_player == 0, state.current_player == 1, *step,
        min(state.round, rounds) / rounds, state.extra_rounds / MAX_EXTRA_ROUNDS, 1 / rounds,
        state.starter == 0, state.starter == 1,
        0.0 if g.turn_cap is None else state.turn / g.turn_cap, g.turn_cap_code, turn_code(g, state.turn),
        state.cumulative[0] / 100, state.cumulative[1] / 100, score[0] / 100, score[1] / 100,
    ]
    state._dirty = False
