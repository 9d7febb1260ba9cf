"""Lost Cities rules engine (``docs/rules/lost_cities.md``; rule ids L1…L50 cited inline).

Cards are handled as *kinds* (L4): ``k = 10·colour + r`` with ``r = 0`` for a wager and ``r = v − 1``
for the number card of value v. Hands are multisets ``{kind: count}``, expeditions and discard piles
ordered lists of kinds, the draw pile a list whose last element is the top card.

A turn is two decisions by the same seat (L11): the card step (PLAY or DISCARD) and the draw step
(DRAW_DECK or DRAW_PILE). The action indices (L36) and when each is legal are tabled in the package
docstring (``envs/lost_cities/__init__.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import options as opt
from ..core.game import FIRST_PLAYER, TERMINAL, Fields
from ..core.game import Game as BaseGame
from ..core.game import State as BaseState
from . import observation as obs
from .actions import CARD_STEP, DRAW_STEP, STEP_NAMES
from .cards import COLOUR_NAMES, HAND_SIZE, MAX_EXTRA_ROUNDS, kind_value

# Generous ranges for options (a match is usually 3 rounds; the default cap is 308 or 392 turns)
MAX_ROUNDS = 100
MAX_TURNS_PER_ROUND = 10_000
# rows of State._counts, the per-kind count tables at the start of the observation vector (hand, expeditions,
# known and unseen have one row per seat; observation.COUNT_ROWS)
HAND, EXPEDITIONS, PILES, TOPS, KNOWN, UNSEEN = 0, 2, 4, 5, 6, 8


def expedition_score(n: int, wagers: int, total: int) -> int:
    """L23: score of an expedition with n cards, of which ``wagers`` wagers, numbers summing to total."""
    if n == 0:
        return 0
    return (total - 20) * (1 + wagers) + (20 if n >= 8 else 0)


class Game(BaseGame):
    """Lost Cities under one option set (L1–L10 options table, §10)."""

    name = "lost_cities"
    title = "Lost Cities"
    option_schema = (
        opt.one_of("n_colours", (5, 6), 5, "number of expeditions; 6 adds purple (L2)"),
        opt.integer("rounds", 1, 1, MAX_ROUNDS, "rounds in the match, scores carried over (L10)"),
        opt.one_of("first_player", ("random", 0, 1), "random", "who starts round 1 (L8)"),
        opt.one_of("next_round_starter", ("cumulative_leader", "alternate"), "cumulative_leader",
                   "who starts later rounds (L9)"),
        opt.one_of("match_tie", ("draw", "extra_rounds"), "draw",
                   "a tied match is a draw, or extra rounds are played (at most 5) (L27)"),
        opt.integer("max_turns_per_round", "auto", 44, MAX_TURNS_PER_ROUND, allow_none=True, extra=("auto",),
                    doc="turn cap per round, truncates the episode (L29); 'auto' = 7 × the initial draw "
                        "pile, an integer must be at least the initial draw pile (44 or 56)"),
    )

    def _setup(self) -> None:
        o = self.options
        self.n_colours = C = o["n_colours"]
        self.num_kinds = K = 10 * C  # L4
        self.num_players = 2  # L1
        self.num_actions = 2 * K + 1 + C  # L36
        self.multiplicity = [3 if k % 10 == 0 else 1 for k in range(K)]  # L3
        self.deck_size = sum(self.multiplicity)
        self.initial_draw_pile = self.deck_size - 2 * HAND_SIZE  # L6: 44 or 56
        cap = o["max_turns_per_round"]
        if cap == "auto":
            cap = 7 * self.initial_draw_pile  # L29: 308 or 392
        elif cap is not None and cap < self.initial_draw_pile:
            raise ValueError(f"Lost Cities: option max_turns_per_round={cap} is not allowed; expected 'auto', "
                             f"None or an integer from {self.initial_draw_pile} (the initial draw pile) to "
                             f"{MAX_TURNS_PER_ROUND}")
        self.turn_cap = cap
        rounds = o["rounds"] + (MAX_EXTRA_ROUNDS if o["match_tie"] == "extra_rounds" else 0)  # L27
        self.max_game_length = None if cap is None else 2 * cap * rounds  # two decisions a turn (L11)
        self.draw_deck_action = 2 * K
        self.num_chance_outcomes = K  # chance outcomes: the kind drawn (deal, draw pile), who starts (0, 1)
        obs.build_layouts(self)

    def relabellings(self) -> tuple[np.ndarray, np.ndarray]:
        """Every permutation of the colours (L2: they follow the same rules): 120 or 720 rows."""
        return obs.colour_relabellings(self)


class State(BaseState):
    """A Lost Cities position; see the module docstring for the action layout."""

    game: Game
    encoder = obs

    # ----------------------------------------------------------------- setup (L6–L10)
    def _setup(self) -> None:
        g = self.game
        first = g.options["first_player"]
        self.starter = self._random_int(2, FIRST_PLAYER) if first == "random" else first  # L8
        self.round = 1
        self.extra_rounds = 0
        self.cumulative = [0, 0]
        self.round_scores: list[list[int]] = []
        self.truncated = False
        self._start_round()

    def _start_round(self) -> None:
        """L6, L7: shuffle, deal 8 each, empty piles and expeditions, turn counter 0, known cards 0."""
        g = self.game
        C, K = g.n_colours, g.num_kinds
        cards = [k for k in range(K) for _ in range(g.multiplicity[k])]
        self.deck = [cards[i] for i in self.rng.permutation(len(cards))]  # top of the draw pile = last element
        self.hands: list[dict[int, int]] = [{}, {}]
        for p in (0, 1):  # the first 16 cards of the shuffle, 8 each; the rest is the draw pile
            for _ in range(HAND_SIZE):
                k = self._draw(self.deck, f"deal to player {p}", 0)
                self.hands[p][k] = self.hands[p].get(k, 0) + 1
        self.piles: list[list[int]] = [[] for _ in range(C)]
        self.expeditions: list[list[list[int]]] = [[[] for _ in range(C)] for _ in (0, 1)]
        self.known = [[0] * K, [0] * K]  # L33
        self.drawn = [-1, -1]  # the kind each seat took in its latest draw step this round (L13), for the table
        self.current_player = self.starter
        self.step = CARD_STEP
        self.forbidden = -1
        self.turn = 0
        self.round_open = True
        self._rebuild_derived()

    def _rebuild_derived(self) -> None:
        """Tables derived from the zones, kept up to date move by move because the hot paths read them:
        expedition stats for L19 and L23, and the per-kind counts and pile slots, which the observation vector
        holds."""
        g = self.game
        C = g.n_colours
        # per (player, colour): highest number rank r (0 = no number yet), cards, wagers, number sum
        self._top = [[0] * C, [0] * C]
        self._n = [[0] * C, [0] * C]
        self._w = [[0] * C, [0] * C]
        self._sum = [[0] * C, [0] * C]
        self._round_score = [0, 0]
        obs.reset(self)
        counts = self._counts
        for p in (0, 1):
            for k, n in self.hands[p].items():
                counts[HAND + p, k] = n
            counts[KNOWN + p] = self.known[p]
            for col in self.expeditions[p]:
                for k in col:
                    self._add_to_expedition_stats(p, k)
        for c, pile in enumerate(self.piles):
            for j, k in enumerate(pile):
                counts[PILES, k] += 1
                self._pile_slots[c, j] = obs.slot_code(k)
            if pile:
                counts[TOPS, pile[-1]] = 1
        # L32: unseen by p = everything minus p's hand, expeditions, piles and the opponent's known cards
        seen = counts[EXPEDITIONS] + counts[EXPEDITIONS + 1] + counts[PILES]
        for p in (0, 1):
            counts[UNSEEN + p] = np.array(g.multiplicity) - counts[HAND + p] - seen - counts[KNOWN + 1 - p]

    # ----------------------------------------------------------------- decisions (L11–L22)
    @property
    def phase(self) -> str:
        return "terminal" if self.current_player == TERMINAL else STEP_NAMES[self.step]

    def _legal_actions(self) -> list[int]:
        g = self.game
        if self.step == CARD_STEP:
            p = self.current_player
            top = self._top[p]
            held = sorted(self.hands[p])
            # L19: a wager needs no number in the column yet; a number must beat the highest number.
            plays = [k for k in held if (top[k // 10] == 0 if k % 10 == 0 else k % 10 > top[k // 10])]
            return plays + [g.num_kinds + k for k in held]  # L20: every held kind can be discarded
        piles = [g.draw_deck_action + 1 + c for c, pile in enumerate(self.piles) if pile and c != self.forbidden]
        return [g.draw_deck_action, *piles]  # L22: the draw pile is never empty here (L16)

    def _apply(self, a: int) -> None:
        g = self.game
        p = self.current_player
        K = g.num_kinds
        counts = self._counts
        self._dirty = True  # the observation's scalars
        if a < 2 * K:  # card step (L12)
            kind = a % K
            self._remove_from_hand(p, kind)
            # L33: playing or discarding lowers what the opponent may know, floored at 0; a card the
            # opponent did not know about leaves its unseen pool
            if self.known[p][kind]:
                self.known[p][kind] -= 1
                counts[KNOWN + p, kind] -= 1
            else:
                counts[UNSEEN + 1 - p, kind] -= 1
            c = kind // 10
            if a < K:  # PLAY
                self.expeditions[p][c].append(kind)
                self._add_to_expedition_stats(p, kind)
                self.forbidden = -1  # L21: after a play no pile is forbidden
            else:  # DISCARD
                pile = self.piles[c]
                if pile:
                    counts[TOPS, pile[-1]] = 0
                self._pile_slots[c, len(pile)] = obs.slot_code(kind)
                pile.append(kind)
                counts[PILES, kind] += 1
                counts[TOPS, kind] = 1
                self.forbidden = c  # L21
            self.step = DRAW_STEP
            return
        if a == g.draw_deck_action:
            kind = self._draw(self.deck, f"player {p} draws")
            counts[UNSEEN + p, kind] -= 1  # the opponent still cannot see it
        else:  # DRAW_PILE
            c = a - g.draw_deck_action - 1
            pile = self.piles[c]
            kind = pile.pop()
            self._pile_slots[c, len(pile)] = 0
            counts[PILES, kind] -= 1
            counts[TOPS, kind] = 0
            if pile:
                counts[TOPS, pile[-1]] = 1
            self.known[p][kind] += 1  # L33
            counts[KNOWN + p, kind] += 1
        self.hands[p][kind] = self.hands[p].get(kind, 0) + 1
        counts[HAND + p, kind] += 1
        self.drawn[p] = kind
        self._end_turn()

    def _end_turn(self) -> None:
        """L14: count the turn; an empty draw pile ends the round before the cap is looked at."""
        self.turn += 1
        self.forbidden = -1
        self.step = CARD_STEP
        if not self.deck:
            self._end_round()
        elif self.turn == self.game.turn_cap:
            self.truncated = True  # L29: the unfinished round is not scored
            self.current_player = TERMINAL
        else:
            self.current_player = 1 - self.current_player

    def _end_round(self) -> None:
        """L26, L27: score the round, then start the next one or end the match."""
        scores = self.provisional_scores()
        self.round_scores.append(scores)
        self.cumulative = [self.cumulative[0] + scores[0], self.cumulative[1] + scores[1]]
        self.round_open = False
        rounds = self.game.options["rounds"]
        tied = self.cumulative[0] == self.cumulative[1]
        if self.round < rounds:
            pass
        elif tied and self.game.options["match_tie"] == "extra_rounds" and self.extra_rounds < MAX_EXTRA_ROUNDS:
            self.extra_rounds += 1
        else:
            self.current_player = TERMINAL
            return
        self.round += 1
        self.starter = self._next_starter()
        self._start_round()

    def _next_starter(self) -> int:
        """L9: the cumulative leader starts; on a tie (or with 'alternate') the previous non-starter."""
        c = self.cumulative
        if self.game.options["next_round_starter"] == "cumulative_leader" and c[0] != c[1]:
            return 0 if c[0] > c[1] else 1
        return 1 - self.starter

    def _remove_from_hand(self, p: int, kind: int) -> None:
        hand = self.hands[p]
        if hand[kind] == 1:
            del hand[kind]
        else:
            hand[kind] -= 1
        self._counts[HAND + p, kind] -= 1

    def _add_to_expedition_stats(self, p: int, kind: int) -> None:
        c, r = divmod(kind, 10)
        n, w, total = self._n[p], self._w[p], self._sum[p]
        before = expedition_score(n[c], w[c], total[c])
        n[c] += 1
        self._counts[EXPEDITIONS + p, kind] += 1
        if r == 0:
            w[c] += 1
        else:
            self._top[p][c] = r
            total[c] += r + 1
        self._round_score[p] += expedition_score(n[c], w[c], total[c]) - before

    # ----------------------------------------------------------------- outcome (L23–L29)
    def provisional_scores(self) -> list[int]:
        """L23, L24: the current expeditions' round score per player."""
        return list(self._round_score)

    def scores(self) -> list[int]:
        """Cumulative scores of the completed rounds (L24, L28)."""
        return list(self.cumulative)

    def end_info(self) -> dict[str, Any]:
        info = {"scores": self.scores(), "round_scores": [list(r) for r in self.round_scores]}
        if self.truncated:  # L29: for analysis only
            info["provisional_round_scores"] = self.provisional_scores()
        return info

    # ----------------------------------------------------------------- information (L30–L34)
    def _hand_size(self, p: int) -> int:
        """L40: 7 for the player in a draw step, 8 otherwise."""
        return HAND_SIZE - (p == self.current_player and self.step == DRAW_STEP)

    def sample_hidden(self, player: int, rng: np.random.Generator) -> State:
        """L47: redistribute the unseen pool between the draw pile and the opponent's unknown cards."""
        g = self.game
        opp = 1 - player
        state = self.clone()
        known = self.known[opp]
        unseen = self._counts[UNSEEN + player]
        pool = [k for k in range(g.num_kinds) for _ in range(int(unseen[k]))]
        pool = [pool[i] for i in rng.permutation(len(pool))]
        n_unknown = self._hand_size(opp) - sum(known)
        hand = {k: n for k, n in enumerate(known) if n}
        for k in pool[:n_unknown]:
            hand[k] = hand.get(k, 0) + 1
        state.hands[opp] = hand
        state.drawn[opp] = -1  # which card the opponent drew may be hidden: not part of the sample
        state.deck = pool[n_unknown:]
        state.rng = np.random.default_rng(int(rng.integers(2**63)))
        state._rebuild_derived()
        state._legal = None
        return state

    # ----------------------------------------------------------------- text
    def card_to_string(self, kind: int) -> str:
        v = kind_value(kind)
        return f"{COLOUR_NAMES[kind // 10]} {'wager' if v == 0 else v}"

    def action_to_string(self, action: int) -> str:
        g = self.game
        K = g.num_kinds
        if not 0 <= action < g.num_actions:
            return "out of range"
        if action < K:
            return "play " + self.card_to_string(action)
        if action < 2 * K:
            return "discard " + self.card_to_string(action - K)
        if action == g.draw_deck_action:
            return "draw pile"
        return "draw " + COLOUR_NAMES[action - g.draw_deck_action - 1]

    # ----------------------------------------------------------------- copy and JSON
    fields = Fields(
        values="starter round extra_rounds round_open truncated current_player step forbidden turn",
        copied="cumulative deck drawn",
        rows="round_scores hands piles known",
        nested="expeditions",
    )
    derived = Fields(values="_dirty", copied="_round_score _x", rows="_top _n _w _sum")
    views = ("_counts", "_pile_slots")  # of the observation vector _x

    def clone(self) -> State:
        s = super().clone()
        obs.use_vector(s, s._x, s._dirty)
        return s

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Unpickling: pickle copies the count tables apart from the vector; make them its views again."""
        self.__dict__.update(state)
        obs.use_vector(self, self._x, self._dirty)

    def _to_dict(self) -> dict[str, Any]:
        hands = [sorted(k for k, n in h.items() for _ in range(n)) for h in self.hands]  # JSON keys are strings
        return {**super()._to_dict(), "hands": hands}

    def _load_dict(self, data: dict[str, Any]) -> None:
        super()._load_dict({"drawn": [-1, -1], **data})  # drawn is absent from states saved before it existed

    def _after_load(self, data: dict[str, Any]) -> None:
        self.hands = [{}, {}]
        for p, kinds in enumerate(data["hands"]):
            for k in kinds:
                self.hands[p][k] = self.hands[p].get(k, 0) + 1
        self._rebuild_derived()


Game.state_class = State
