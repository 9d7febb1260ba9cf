"""Reference rules, the invariant checker and scenario builders for the Lost Cities tests
(``docs/rules/lost_cities.md``).

Positions are made only through the public API: take ``to_json()`` of a real state, rewrite its
``"state"`` dict and load it with ``State.from_json``. The builder keeps every card in exactly one zone
(L5, L39): cards the scenario does not place fill the hands, then the draw pile, and whatever is left
goes to the *bottom* of the discard piles of its colour, so the tops a scenario sets stay on top.
"""

from __future__ import annotations

import json
from functools import cache
from itertools import combinations
from typing import Any

import numpy as np

from tabletop_rl.envs.core.game import State
from tabletop_rl.envs.lost_cities import Game
from tabletop_rl.envs.lost_cities.actions import CARD_STEP, DRAW_STEP
from tabletop_rl.envs.lost_cities.game import MAX_TURNS_PER_ROUND

COLOURS = ("yellow", "blue", "white", "green", "red", "purple")  # L2
YELLOW, BLUE, WHITE, GREEN, RED, PURPLE = range(6)
HAND = 8  # L6, L15
MAX_EXTRA_ROUNDS = 5  # L27


def kind(colour: int, card: int | str) -> int:
    """L4: ``k = 10·c + r``; ``card`` is ``"W"`` (wager) or a value 2..10."""
    if card in ("W", 0):
        return 10 * colour
    assert 2 <= int(card) <= 10, card
    return 10 * colour + int(card) - 1


def cards(colour: int, spec: str) -> list[int]:
    """``cards(RED, "W W 2 3")`` → the kinds, in the written order."""
    return [kind(colour, c if c == "W" else int(c)) for c in spec.split()]


def is_wager(k: int) -> bool:
    return k % 10 == 0


@cache
def multiplicity(num_kinds: int) -> list[int]:
    """L3: copies per kind, three of each wager card."""
    return [3 if is_wager(k) else 1 for k in range(num_kinds)]


def ref_expedition_score(column: list[int]) -> int:
    """L23 written out independently of the engine: (s − 20)·(1 + w) + 20 if n ≥ 8; 0 if empty."""
    if not column:
        return 0
    wagers = sum(is_wager(k) for k in column)
    total = sum(k % 10 + 1 for k in column if not is_wager(k))
    return (total - 20) * (1 + wagers) + (20 if len(column) >= 8 else 0)


def ref_score(state: State, player: int) -> int:
    """L23, L24: ``player``'s score of the round in play, from its expeditions."""
    return sum(ref_expedition_score(column) for column in state.expeditions[player])


def expected_legal(state: State) -> list[int]:
    """L18–L22: the legal actions of the player to act."""
    p, K = state.current_player, state.game.num_kinds
    held = sorted(state.hands[p])
    if state.step == CARD_STEP:
        plays = []
        for k in held:  # L19
            numbers = [x % 10 for x in state.expeditions[p][k // 10] if x % 10]
            if (not numbers) if k % 10 == 0 else (not numbers or k % 10 > max(numbers)):
                plays.append(k)
        return plays + [K + k for k in held]  # L20: every held kind may be discarded
    # L21, L22: the deck always, every non-empty pile except the one discarded to this turn
    return [2 * K] + [2 * K + 1 + c for c in range(state.game.n_colours) if state.piles[c] and c != state.forbidden]


def numbers_scoring(target: int) -> list[int]:
    """Values (2..10, ascending, at most 7 so no bonus) of one wager-less expedition scoring ``target``."""
    for n in range(1, 8):
        for combo in combinations(range(2, 11), n):
            if sum(combo) - 20 == target:
                return list(combo)
    raise ValueError(f"no single expedition without wagers scores {target}")


def expeditions_scoring(player: int, target: int) -> dict[tuple[int, int], list[int]]:
    """Expeditions of ``player`` worth ``target`` in total: seat 0 uses yellow/blue, seat 1 white/green."""
    first, second = (YELLOW, BLUE) if player == 0 else (WHITE, GREEN)
    if target == 0:
        return {}
    try:
        return {(player, first): [kind(first, v) for v in numbers_scoring(target)]}
    except ValueError:
        rest = target - 29 if target > 0 else target + 18
        return {(player, first): [kind(first, v) for v in numbers_scoring(target - rest)],
                (player, second): [kind(second, v) for v in numbers_scoring(rest)]}


def state_dict(state: State) -> dict[str, Any]:
    """The engine's serialised position (the ``"state"`` part of ``to_json``)."""
    return json.loads(state.to_json())["state"]


def obs(state: State, player: int) -> dict[str, np.ndarray]:
    """Player ``player``'s observation split into its named fields."""
    return state.game.layout.unpack(state.observation(player))


def hand_counts(state: State, player: int) -> np.ndarray:
    """True hand of ``player`` as counts per kind (from the JSON, i.e. hidden information included)."""
    counts = np.zeros(state.game.num_kinds, np.int64)
    for k in state_dict(state)["hands"][player]:
        counts[k] += 1
    return counts


def build(options: dict[str, Any] | None = None, *, base: State | None = None, seed: int = 0,
          hands: tuple[list[int] | None, list[int] | None] = (None, None),
          expeditions: dict[tuple[int, int], list[int]] | None = None,
          piles: dict[int, list[int]] | None = None,
          deck_top: list[int] = (), deck_size: int | None = None,
          known: dict[tuple[int, int], int] | None = None,
          current_player: int = 0, step: str = "card", forbidden: int = -1, turn: int = 0,
          **fields: Any) -> State:
    """A legal-looking position of a game with ``options`` (or the game and match data of ``base``).

    * ``hands[p]``: cards of seat p; the rest of its hand (8, or 7 for the actor in a draw step, L15)
      is filled with unplaced cards.
    * ``expeditions[(p, c)]`` and ``piles[c]`` (bottom → top) are ordered kinds.
    * ``deck_top``: the next cards of the draw pile, first drawn first; ``deck_size`` the total size
      (default: every unplaced card). Extra unplaced cards go under the discard piles.
    * ``fields`` overwrite other JSON fields (round, starter, cumulative, round_scores, extra_rounds, …).
    """
    base = base if base is not None else Game(**(options or {})).new_initial_state(seed)
    data = json.loads(base.to_json())
    game = base.game
    C, K = game.n_colours, game.num_kinds
    left = {k: (3 if is_wager(k) else 1) for k in range(K)}

    def take(k: int) -> int:
        if left.get(k, 0) <= 0:
            raise ValueError(f"scenario uses more copies of kind {k} than exist (L3)")
        left[k] -= 1
        return k

    exps = [[[] for _ in range(C)] for _ in (0, 1)]
    for (p, c), column in (expeditions or {}).items():
        exps[p][c] = [take(k) for k in column]
    pile_tops = [[take(k) for k in (piles or {}).get(c, [])] for c in range(C)]
    held = [[take(k) for k in (h or [])] for h in hands]
    top = [take(k) for k in deck_top]
    unplaced = [k for k in range(K) for _ in range(left[k])]
    for p in (0, 1):
        size = HAND - (step == "draw" and p == current_player)
        if len(held[p]) > size:
            raise ValueError(f"hand {p} holds {len(held[p])} cards, more than {size} (L15)")
        while len(held[p]) < size:
            held[p].append(unplaced.pop())
    rest = len(unplaced) if deck_size is None else deck_size - len(top)
    if not 0 <= rest <= len(unplaced):
        raise ValueError(f"deck_size={deck_size} does not fit the {len(unplaced) + len(top)} free cards")
    deck = unplaced[len(unplaced) - rest:] + top[::-1]  # the last element is the top (drawn first)
    under = unplaced[:len(unplaced) - rest]
    pile_lists = [[k for k in under if k // 10 == c] + pile_tops[c] for c in range(C)]
    known_lists = [[0] * K, [0] * K]
    for (p, k), n in (known or {}).items():
        known_lists[p][k] = n
    data["state"].update({
        "hands": [sorted(h) for h in held], "expeditions": exps, "piles": pile_lists, "deck": deck,
        "known": known_lists, "current_player": current_player, "step": 0 if step == "card" else 1,
        "forbidden": forbidden, "turn": turn, "round_open": True, "truncated": False, **fields,
    })
    return State.from_json(json.dumps(data))


def last_draw(options: dict[str, Any] | None = None, *, scores: tuple[int, int] = (0, 0),
              base: State | None = None, **kw: Any) -> State:
    """A draw step with one card left in the draw pile whose expeditions score ``scores`` (L14b, L26)."""
    expeditions = {**expeditions_scoring(0, scores[0]), **expeditions_scoring(1, scores[1])}
    kw.setdefault("turn", 60)
    return build(options, base=base, expeditions=expeditions, deck_size=1, step="draw", **kw)


def draw_deck(state: State) -> None:
    state.apply_action(2 * state.game.num_kinds)  # DRAW_DECK is action 2K (L36)


def check_conservation(state: State) -> None:
    """L39: every kind's copies over draw pile, hands, piles and expeditions equal its multiplicity (L3)."""
    K = state.game.num_kinds
    counts = [0] * K
    for zone in (state.deck, *state.piles, *state.expeditions[0], *state.expeditions[1]):
        for k in zone:
            counts[k] += 1
    for hand in state.hands:
        for k, n in hand.items():
            counts[k] += n
    expected = multiplicity(K)
    assert counts == expected, \
        f"L39: cards are not conserved: {[c - e for c, e in zip(counts, expected, strict=True)]}"


def expected_observation(state: State, player: int, d: dict[str, Any] | None = None) -> dict[str, np.ndarray]:
    """L34 recomputed from the serialised position ``d``, independently of the engine's incremental tables."""
    d = d or state_dict(state)
    game = state.game
    C, K = game.n_colours, game.num_kinds
    rounds, cap = game.options["rounds"], game.options["max_turns_per_round"]
    initial = 12 * C - 2 * HAND  # the initial draw pile (L6)
    cap = 7 * initial if cap == "auto" else cap  # L29
    me, opp = player, 1 - player

    def count(zone: list[int]) -> np.ndarray:
        return np.bincount(np.asarray(zone, np.int64), minlength=K).astype(np.float32)

    pile_cards = [k for pile in d["piles"] for k in pile]
    order = np.zeros((C, 12), np.float32)
    for c, pile in enumerate(d["piles"]):
        order[c, :len(pile)] = [0.1 if is_wager(k) else (k % 10 + 1) / 10 for k in pile]
    running = d["current_player"] != -1
    step, forbidden = np.zeros(2, np.float32), np.zeros(C + 1, np.float32)
    if running:
        step[d["step"]] = 1
        forbidden[1 + d["forbidden"]] = 1
    live = [sum(ref_expedition_score(col) for col in d["expeditions"][p]) for p in (0, 1)] if d["round_open"] \
        else [0, 0]
    known_opp = np.array(d["known"][opp], np.float32)
    return {
        "hand": count(d["hands"][me]),
        "my_expeditions": count([k for col in d["expeditions"][me] for k in col]),
        "opp_expeditions": count([k for col in d["expeditions"][opp] for k in col]),
        "discard_counts": count(pile_cards),
        "discard_tops": count([pile[-1] for pile in d["piles"] if pile]),
        "opp_known": known_opp,
        "unseen": count(d["deck"]) + count(d["hands"][opp]) - known_opp,  # L32
        "discard_order": order,
        "draw_pile": np.array([len(d["deck"]) / initial], np.float32),
        "hand_sizes": np.array([len(d["hands"][me]) / HAND, len(d["hands"][opp]) / HAND], np.float32),
        "to_move": np.array([d["current_player"] == me], np.float32),
        "step": step,
        "forbidden": forbidden,
        "match": np.array([min(d["round"], rounds) / rounds, d["extra_rounds"] / 5, 1 / rounds,
                           d["starter"] == me], np.float32),
        "cap_progress": np.array([0 if cap is None else d["turn"] / cap], np.float32),
        "turn_cap": np.array([0 if cap is None else 7 * initial / cap], np.float32),  # 1 for the default cap
        "turn": np.array([d["turn"] / (initial if cap else d["turn"] + initial)], np.float32),
        "scores": np.array([d["cumulative"][me], d["cumulative"][opp], live[me], live[opp]]) / 100,
    }


def check_observation(state: State, player: int, d: dict[str, Any] | None = None) -> None:
    """Every observation field equals its recomputation from the position (L34)."""
    layout = state.game.layout
    want = np.empty(layout.size, np.float32)
    for name, value in expected_observation(state, player, d).items():
        want[layout[name].slice] = np.ravel(value)
    got = state.observation(player)
    if not np.allclose(got, want, rtol=1e-6, atol=1e-7):
        wrong = [f.name for f in layout if not np.allclose(got[f.slice], want[f.slice], rtol=1e-6, atol=1e-7)]
        raise AssertionError(f"observation of seat {player} differs from the position in fields {wrong}")


# ===================================================================== invariants (§9)
class Checker:
    """§9 invariants. ``position`` looks at one state only (it also vets ``sample_hidden`` results);
    ``transition`` follows one played game step by step and recomputes every change independently."""

    def __init__(self, game: Game):
        self.game = game
        self.K = game.num_kinds
        self.deck_action = 2 * self.K
        self.pile_draws = 0  # this round's draws from discard piles (L43)
        self.from_pile: list[set[int]] = [set(), set()]  # number kinds taken from a pile, still held (L47)

    @staticmethod
    def snapshot(state: State) -> State:
        return state.clone()

    # ----------------------------------------------------------------- one position
    def position(self, s: State) -> None:
        check_conservation(s)
        for q in (0, 1):  # L47: known cards are a true lower bound
            held = s.hands[q]
            assert all(n <= held.get(k, 0) for k, n in enumerate(s.known[q]) if n), f"L47: known[{q}]"
        sizes = [sum(h.values()) for h in s.hands]
        if s.is_terminal():
            assert sizes == [8, 8], f"L40: hands {sizes} at the end"
            return
        p = s.current_player
        assert sizes[p] == (8 if s.step == CARD_STEP else 7) and sizes[1 - p] == 8, f"L40: hands {sizes}"
        assert s.deck, "L43: the draw pile is empty at a decision"
        assert s.legal_actions() == expected_legal(s), "L18–L22, L44, L45: wrong legal actions"

    # ----------------------------------------------------------------- one step
    def transition(self, before: State, a: int, after: State) -> None:
        g, K = self.game, self.K
        p = before.current_player
        if before.turn == 0 and before.step == CARD_STEP:  # first decision of a round (L7, L8, L9)
            self.pile_draws, self.from_pile = 0, [set(), set()]
            assert p == before.starter and not any(map(any, before.known)), "L7: round start"
            if before.round == 1 and g.options["first_player"] != "random":
                assert p == g.options["first_player"], "L8"
        hands = [dict(h) for h in before.hands]
        piles = [list(x) for x in before.piles]
        expeditions = [[list(col) for col in exp] for exp in before.expeditions]
        known = [list(x) for x in before.known]
        deck = list(before.deck)
        if a < 2 * K:  # card step (L12)
            card = a % K
            c = card // 10
            hands[p][card] -= 1
            known[p][card] = max(0, known[p][card] - 1)  # L33
            self.from_pile[p].discard(card)
            column = expeditions[p][c] if a < K else piles[c]
            column.append(card)
            ranks = [k % 10 for k in column]
            wagers = ranks.count(0)
            if a < K:  # L41: 0–3 wagers, then strictly increasing numbers
                assert ranks[:wagers] == [0] * wagers and wagers <= 3 and 0 not in ranks[wagers:] \
                    and ranks[wagers:] == sorted(set(ranks[wagers:])), f"L41: column {column}"
            assert all(k // 10 == c for k in column), f"L41, L42: {column} in colour {c}"
            assert after.current_player == p and after.step == DRAW_STEP, "L11: the same player draws"
            assert after.forbidden == (-1 if a < K else c), "L21, L44: forbidden pile after the card step"
            assert after.turn == before.turn
        else:  # draw step (L13, L14)
            if a == self.deck_action:
                card = deck.pop()
            else:
                card = piles[a - self.deck_action - 1].pop()
                known[p][card] += 1  # L33
                self.pile_draws += 1
                if card % 10:
                    self.from_pile[p].add(card)
            hands[p][card] = hands[p].get(card, 0) + 1
            if not deck:  # L14b: the round ends at once
                assert before.turn + 1 == g.initial_draw_pile + self.pile_draws, "L43: round length"
                self._check_round_end(before, after)
                return
            if before.turn + 1 == g.turn_cap:  # L14c, L29, L50
                assert after.is_terminal() and after.is_truncated(), "L50: the cap must truncate"
                assert after.cumulative == before.cumulative and after.round_scores == before.round_scores, \
                    "L29: a truncated round is not scored"
            else:
                assert not after.is_terminal() and (after.current_player, after.step) == (1 - p, CARD_STEP), \
                    "L14d: the other player starts a turn"
            assert after.turn == before.turn + 1, "L14a"
        assert {k: n for k, n in hands[p].items() if n} == after.hands[p], "hand change"
        assert after.hands[1 - p] == before.hands[1 - p]
        assert after.piles == piles, "L42: a pile changes by one push or one pop"
        assert after.expeditions == expeditions, "L41: expeditions only grow"
        assert after.deck == deck
        assert len(deck) == g.initial_draw_pile - (after.turn - self.pile_draws), "L43: draw pile size"
        assert after.known == known, "L33: known-card bookkeeping"
        for q in (0, 1):  # L47: for number kinds the bound is exact
            numbers = {k for k, n in enumerate(after.known[q]) if n and k % 10}
            assert numbers == self.from_pile[q], f"L47: known[{q}] number kinds {numbers}"

    def _check_round_end(self, before: State, after: State) -> None:
        """L23–L27, L46, L49: score the round, then the next round or the end of the match."""
        o = self.game.options
        scores = [ref_score(before, p) for p in (0, 1)]
        cumulative = [before.cumulative[p] + scores[p] for p in (0, 1)]
        assert after.round_scores == [*before.round_scores, scores], "L24, L26: round scores"
        assert after.cumulative == cumulative, "L46: cumulative = sum of the round scores"
        tied = cumulative[0] == cumulative[1]
        extra = o["match_tie"] == "extra_rounds" and tied and before.extra_rounds < MAX_EXTRA_ROUNDS
        if before.round >= o["rounds"] and not extra:  # L27
            assert after.is_terminal() and not after.is_truncated(), "L27: the match ends"
            assert after.round == before.round == o["rounds"] + after.extra_rounds
            return
        assert after.round == before.round + 1 and after.extra_rounds == max(0, after.round - o["rounds"])
        if o["next_round_starter"] == "cumulative_leader" and not tied:  # L9
            starter = 0 if cumulative[0] > cumulative[1] else 1
        else:
            starter = 1 - before.starter
        assert after.starter == after.current_player == starter, "L9, L37: starter of the next round"
        assert after.step == CARD_STEP and after.turn == 0 and after.forbidden == -1, "L7"
        assert not any(after.piles) and not any(map(any, after.expeditions)), "L7: empty table"
        assert len(after.deck) == self.game.initial_draw_pile, "L6"


# ===================================================================== information (L30–L34)
def visible_facts(state: State, player: int) -> dict[str, Any]:
    """What ``player`` may know and L34 asks the observation to carry (L30, L31, L33): own hand, all
    expeditions, the ordered discard piles, the draw-pile size, the opponent's known cards and hand size,
    whose turn and which step, the forbidden pile, round, rounds, extra rounds, the starter, the turn
    counter and cap, the scores; the step and forbidden pile only while the game runs."""
    d = state_dict(state)
    g = state.game
    opp = 1 - player
    running = d["current_player"] != -1
    return {
        "hand": sorted(d["hands"][player]), "expeditions": d["expeditions"], "piles": d["piles"],
        "draw_pile_size": len(d["deck"]), "opp_known": d["known"][opp], "opp_hand_size": len(d["hands"][opp]),
        "to_act": d["current_player"], "step": d["step"] if running else None,
        "forbidden": d["forbidden"] if running else None, "round": d["round"], "rounds": g.options["rounds"],
        "extra_rounds": d["extra_rounds"], "starter": d["starter"], "turn": d["turn"], "turn_cap": g.turn_cap,
        "cumulative": d["cumulative"], "round_open": d["round_open"],
    }


def public_changes(state: State, rng: np.random.Generator) -> list[State]:
    """Positions that differ from ``state`` in one public fact: another turn cap (L29, L34g), two different
    cards of a discard pile swapped (L34c), the turn counter one lower (L34g)."""
    d = json.loads(state.to_json())
    s = d["state"]
    out = []
    for cap in ("auto", None, max(s["turn"] + 1, state.game.initial_draw_pile), MAX_TURNS_PER_ROUND):
        if cap != d["options"]["max_turns_per_round"]:
            out.append(_changed(d, lambda d, cap=cap: d["options"].update(max_turns_per_round=cap)))
    piles = [c for c, pile in enumerate(s["piles"]) if len(set(pile)) > 1]
    if piles:
        c = piles[int(rng.integers(len(piles)))]
        i, j = rng.choice(len(s["piles"][c]), 2, replace=False)
        if s["piles"][c][i] != s["piles"][c][j]:
            def swap(d):
                pile = d["state"]["piles"][c]
                pile[i], pile[j] = pile[j], pile[i]
            out.append(_changed(d, swap))
    if s["turn"]:
        out.append(_changed(d, lambda d: d["state"].update(turn=d["state"]["turn"] - 1)))
    return out


def _changed(d: dict[str, Any], change) -> State:
    new = json.loads(json.dumps(d))
    change(new)
    return State.from_json(json.dumps(new))
