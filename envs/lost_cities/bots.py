"""A rule-based Lost Cities player that sees only what a PettingZoo agent sees.

``HeuristicAgent.act(observation, action_mask)`` decodes the observation with the game's layout and
scores every legal action; the cheapest one is played. The scoring rests on two per-card tables:

* ``value`` — what a card is worth to me: a number above the top of an expedition I have started
  (or am likely to start) will score its face value times the wager multiplier; a card below my top,
  or of a colour I will not open, is worth nothing.
* ``danger`` — what a card is worth to the opponent if I discard it: a number above the top of one of
  their expeditions will be picked up and scored; cards below their top are harmless.

Card step: discarding card k costs ``value[k] + danger[k]``; playing the lowest playable card of a
colour costs the expected value of the unseen cards it skips (L19: they can never be played after it).
When the turns left are fewer than the worthwhile plays in hand, a small knapsack picks which to make.
Draw step: the top card of a pile is taken when it is worth more to me than an average deck card;
late in the round the deck is preferred when ahead (it ends the round sooner, L14b) and pile cards
are taken when behind with plays still to make (pile draws stretch the round, L17).
"""

from __future__ import annotations

import numpy as np

from ..core.agents import legal_actions
from .game import Game, expedition_score

NO_ACTION = np.inf

# The constants were tuned by seat-balanced self-play matches against earlier versions.
# Opening an expedition costs 20 (L23): open only if the projected sum beats it by this margin.
OPEN_MARGIN = 3.0
VIABLE_FROM = 12.0  # an unopened colour's cards start to be worth keeping at this projected sum
# Of the unseen cards I may draw, the share expected to fit into a column in time (some arrive
# after a higher card of their colour was played).
EXPECT_SHARE = 0.5
# A wager multiplies (sum - 20) (L23): play one early, with support, when the projected sum clears
# this (below 20 because the projection counts only part of what will be drawn).
WAGER_SUM = 19.0
WAGER_MIN_DECK = 0.5  # fraction of the initial draw pile still to come
WAGER_MIN_SUPPORT = 2  # playable number cards of that colour in hand
PLAY_BONUS = 1.0  # a free play (skipping nothing) beats discarding a worthless card
URGENT = 50.0  # the end-game plan's plays beat any discard
PILE_MIN_VALUE = 2.0  # a pile card must be worth this much to me to be taken
DENY_SHARE = 0.5  # weight of keeping a pile card away from the opponent
LATE_DECK = 10  # with this many draw-pile cards left, the score decides whether to hurry or stretch
CLOCK_BONUS = 5.0  # how much hurrying (deck draw) or stretching (pile draw) is worth then


class HeuristicAgent:
    """Plays from ``(observation, action_mask)`` only; deterministic for a given ``seed``."""

    def __init__(self, game: Game, seed: int | None = None):
        if game.name != "lost_cities":
            raise ValueError(f"HeuristicAgent plays lost_cities, not {game.name!r}")
        self.game = game
        self.rng = np.random.default_rng(seed)
        C, K = game.n_colours, game.num_kinds
        self.C, self.K = C, K
        self.layout = game.layout
        self.initial_deck = game.initial_draw_pile
        # Per-kind tables, shaped (colour, rank) like the observation's per-kind fields reshaped.
        self.values = np.tile(np.array([0, *range(2, 11)], np.float64), (C, 1))  # L4: rank r is value r+1
        self.ranks = np.tile(np.arange(10), (C, 1))
        self.is_number = self.ranks > 0
        self.deck_action = game.draw_deck_action

    # ----------------------------------------------------------------- entry point
    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = legal_actions(action_mask, "HeuristicAgent")
        view = self._read(observation)
        cost = self._draw_costs(view) if view["draw_step"] else self._card_costs(view)
        masked = np.full(cost.size, NO_ACTION)
        masked[legal] = cost[legal]
        # Tiny noise breaks exact ties from the agent's own generator (deterministic for a seed);
        # drawn on every call so that the stream does not depend on which ties occurred.
        cost = masked + 1e-6 * self.rng.random(cost.size)
        return int(np.argmin(cost))

    # ----------------------------------------------------------------- reading the observation
    def _read(self, observation: np.ndarray) -> dict:
        """Decode the observation into per-colour facts and the two per-card tables."""
        f = self.layout.unpack(np.asarray(observation, np.float64))
        C = self.C
        grid = {name: f[name].reshape(C, 10) for name in
                ("hand", "my_expeditions", "opp_expeditions", "discard_tops", "opp_known", "unseen")}
        deck = int(round(float(f["draw_pile"][0]) * self.initial_deck))
        unseen = grid["unseen"]
        # Chance that a given unseen card reaches me: I draw about half the remaining deck, and the
        # unseen pool is the deck plus the opponent's unknown cards (L32).
        p_get = min(1.0, 0.5 * deck / max(unseen.sum(), 1.0))
        # My card steps left if nobody draws from a pile (L14b); in a draw step this counts the
        # current turn once more, which is close enough.
        turns_left = (deck + 1) // 2

        mine = self._expeditions(grid["my_expeditions"])
        theirs = self._expeditions(grid["opp_expeditions"])
        hand = grid["hand"]
        playable = self.is_number & (self.ranks > mine["top"][:, None])
        hand_sum = (hand * self.values * playable).sum(1)
        hand_count = (hand * playable).sum(1)
        # Projected number sum: what is already down, what I hold, and my share of what is unseen.
        projected = mine["sum"] + hand_sum + EXPECT_SHARE * p_get * (unseen * self.values * playable).sum(1)
        # How sure I am to play a colour: 1 once started, rising with the projection otherwise.
        viability = (projected - VIABLE_FROM) / (20.0 + OPEN_MARGIN - VIABLE_FROM)
        viability = np.where(mine["started"], 1.0, np.clip(viability, 0.0, 1.0))
        viability[hand_count > turns_left] *= 0.5  # cannot play them all in time

        scores = f["scores"]
        return {
            "draw_step": f["step"][1] > 0.5, "deck": deck, "p_get": p_get, "turns_left": turns_left,
            "hand": hand, "tops": grid["discard_tops"], "unseen": unseen, "mine": mine, "playable": playable,
            "hand_count": hand_count, "projected": projected,
            "value": self._value(mine, playable, projected, viability, deck),
            "danger": self._danger(theirs, grid["opp_known"], deck),
            # Match standing: cumulative plus this round's provisional score (L34h).
            "lead": float(scores[0] + scores[2] - scores[1] - scores[3]) * 100,
            "pending": int((hand_count * mine["started"]).sum()),  # plays waiting in started colours
        }

    def _expeditions(self, counts: np.ndarray) -> dict:
        """Per colour: started, highest number rank (0 = none), wagers, number sum (L19, L23)."""
        has = counts[:, 1:] > 0
        top = np.where(has.any(1), 9 - np.argmax(has[:, ::-1], axis=1), 0)
        return {"started": counts.sum(1) > 0, "count": counts.sum(1), "top": top, "wagers": counts[:, 0],
                "sum": (counts * self.values).sum(1)}

    def _value(self, mine: dict, playable: np.ndarray, projected: np.ndarray, viability: np.ndarray,
               deck: int) -> np.ndarray:
        """What holding each kind is worth to me (0 for dead cards)."""
        mult = 1.0 + mine["wagers"]
        value = playable * self.values * (mult * viability)[:, None]
        # A wager is only playable before any number (L19) and gains (sum - 20) per wager (L23);
        # it is worth holding only early, for a colour that looks strong.
        early = deck / self.initial_deck
        value[:, 0] = np.where(mine["top"] == 0, viability * np.maximum(projected - 20.0, 0.0) * early, 0.0)
        return value

    def _danger(self, theirs: dict, known: np.ndarray, deck: int) -> np.ndarray:
        """What a discarded kind is worth to the opponent, who may take it from the pile next turn."""
        above = self.is_number & (self.ranks > theirs["top"][:, None])
        time = deck / self.initial_deck
        # Opened colour: they play it at face value times their multiplier.  Unopened colour: a
        # small worth that grows with the cards of that colour they are known to collect (L33).
        interest = 0.2 + 0.3 * np.minimum(known.sum(1), 2.0)
        per_colour = np.where(theirs["started"], 1.0 + theirs["wagers"], interest * time)
        danger = above * self.values * per_colour[:, None]
        # A wager helps them only before their first number (L19): a lot if they opened with wagers.
        danger[:, 0] = np.where(theirs["top"] > 0, 0.0,
                                np.where(theirs["started"], 10.0, 3.0 * interest * time))
        return danger

    # ----------------------------------------------------------------- card step (L12)
    def _card_costs(self, v: dict) -> np.ndarray:
        K = self.K
        cost = np.full(self.game.num_actions, NO_ACTION)
        # Discard: lose the card's worth to me, and hand the opponent its worth to them.
        cost[K:2 * K] = (v["value"] + v["danger"]).ravel()
        rush = self._endgame_plan(v)
        for c in range(self.C):
            play = self._play_cost(v, c, rush)
            if play is not None:
                kind, c_cost = play
                cost[kind] = c_cost
        return cost

    def _play_cost(self, v: dict, c: int, rush: np.ndarray | None) -> tuple[int, float] | None:
        """The one sensible play in colour c (a wager, or the lowest playable number) and its cost."""
        mine, hand = v["mine"], v["hand"][c]
        if rush is None and mine["top"][c] == 0 and hand[0] > 0 and self._wants_wager(v, c):
            return 10 * c, -PLAY_BONUS - 1.0  # wagers go before numbers (L19)
        held = np.flatnonzero(hand * v["playable"][c])
        if rush is not None:  # the end-game plan says which cards are worth the remaining turns
            held = held[held >= rush[c]]
        elif not mine["started"][c] and not self._wants_to_open(v, c):
            return None
        if held.size == 0:
            return None
        r = int(held[0])  # the lowest playable number: it skips the fewest cards
        # Cards skipped by playing r now that I might still draw: unseen ones and pile tops.
        skipped = v["playable"][c] & (self.ranks[c] < r)
        chance = (v["unseen"][c] + v["tops"][c]) * v["p_get"]
        gap = float((skipped * chance * self.values[c]).sum()) * (1.0 + mine["wagers"][c])
        return 10 * c + r, gap - PLAY_BONUS - (URGENT if rush is not None else 0.0)

    def _wants_to_open(self, v: dict, c: int) -> bool:
        """Open a colour only when it projects above the 20-point cost and there is time to build it."""
        return v["projected"][c] >= 20.0 + OPEN_MARGIN and v["hand_count"][c] <= v["turns_left"]

    def _wants_wager(self, v: dict, c: int) -> bool:
        """Bet on a colour only early, with number cards in hand to back it, when it looks strong."""
        return (v["deck"] >= WAGER_MIN_DECK * self.initial_deck
                and v["hand_count"][c] >= WAGER_MIN_SUPPORT
                and v["projected"][c] >= WAGER_SUM)

    def _endgame_plan(self, v: dict) -> np.ndarray | None:
        """When I hold more worthwhile plays than turns left, choose which to make.

        Returns, per colour, the lowest rank worth playing (10 = none), or None while turns are not
        short.  Each colour's best use of m turns is its m highest playable cards (L19 allows gaps);
        a small knapsack over colours spends the turns where they score most (L23).
        """
        T = v["turns_left"]
        if v["hand_count"].sum() < T:
            return None  # even every playable card fits in the turns left
        mine, hand, playable = v["mine"], v["hand"], v["playable"]
        options = []  # per colour: its playable ranks (highest first) and the gain of playing m of them
        for c in range(self.C):
            ranks = np.flatnonzero(hand[c] * playable[c])[::-1]
            sums = np.cumsum(self.values[c, ranks])
            n, w, s = int(mine["count"][c]), int(mine["wagers"][c]), int(mine["sum"][c])
            now = expedition_score(n, w, s)
            options.append((ranks, [0.0] + [expedition_score(n + m, w, s + int(sums[m - 1])) - now
                                            for m in range(1, ranks.size + 1)]))
        if sum(r.size for r, g in options if max(g) > 0) < T:
            return None
        best = {0: (0.0, ())}  # turns used -> (gain, cards per colour)
        for ranks, gains in options:
            nxt: dict[int, tuple[float, tuple]] = {}
            for used, (gain, picks) in best.items():
                for m in range(min(ranks.size, T - used) + 1):
                    cand = (gain + gains[m], picks + (m,))
                    if cand[0] > nxt.get(used + m, (-np.inf,))[0]:
                        nxt[used + m] = cand
            best = nxt
        _, picks = max(best.values(), key=lambda x: x[0])
        return np.array([ranks[m - 1] if m else 10 for (ranks, _), m in zip(options, picks, strict=True)])

    # ----------------------------------------------------------------- draw step (L13)
    def _draw_costs(self, v: dict) -> np.ndarray:
        cost = np.full(self.game.num_actions, NO_ACTION)
        value, danger, unseen = v["value"], v["danger"], v["unseen"]
        # A deck card is on average worth the mean value of the unseen pool.
        deck_gain = float((unseen * value).sum() / max(unseen.sum(), 1.0))
        late = v["deck"] <= LATE_DECK
        if late and v["lead"] > 0:
            deck_gain += CLOCK_BONUS  # ahead: every deck draw brings the end closer (L14b)
        cost[self.deck_action] = -deck_gain
        # Behind with more plays than turns: any pile draw buys one more turn (L17).
        stretch = late and v["lead"] < 0 and v["pending"] >= v["turns_left"]
        for c in range(self.C):
            top = np.flatnonzero(v["tops"][c])
            if top.size == 0:
                continue
            r = int(top[0])
            gain = value[c, r] + DENY_SHARE * danger[c, r]  # taking it also keeps it from the opponent
            # Take a pile card only when it is useful to me — a card I merely deny would come back
            # as a discard — unless I need the extra turn.
            if value[c, r] >= PILE_MIN_VALUE or stretch:
                cost[self.deck_action + 1 + c] = -(gain + (CLOCK_BONUS if stretch else 0.0))
        return cost
