"""A rule-based Lost Cities player that sees only what a PettingZoo agent sees.

``HeuristicAgent.act(observation, action_mask)`` scores every legal action; the cheapest one is played.
The scoring rests on two per-card quantities:

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

How it runs fast (the opponents of the training env call it at every decision).  Every per-kind
field it reads holds, per colour, a wager count (0–3) and one 0/1 per number rank, so one dot product
turns the per-kind fields into a small integer *code* per field and colour: ``wagers + 4·mask``, bit
``r − 1`` of ``mask`` standing for rank r.  Everything else is Python integer work on those codes —
the highest number is ``mask.bit_length()``, the playable ranks a shifted mask, sums of card values a
lookup in a table over the 512 masks.  Only legal actions are valued, in action order, and only as far
as needed: every discard costs at least 0, so a play that costs less ends the card step before any
discard is valued; a draw step with no pile worth taking draws from the deck without valuing it.  The
costs are the numbers the numpy version computed (a few sums are added in another order, which can
move their last bits, far below the tie-breaking noise).
"""

from __future__ import annotations

import math
from bisect import bisect_left

import numpy as np

from ..core.agents import legal_actions
from .game import Game, expedition_score

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
NOISE = 1e-6  # scale of the tie-breaking noise
VIABLE_SPAN = 20.0 + OPEN_MARGIN - VIABLE_FROM  # from no chance of opening to a sure opening

# ----------------------------------------------------------------- row codes and the tables over them
RANKS = 10  # kinds per colour: rank 0 is the wager, rank r >= 1 the number of value r + 1 (L4)
WAGER_BITS = 2  # up to 3 wagers of a colour (L3)
CODE_WEIGHTS = np.array([1] + [1 << (WAGER_BITS + r - 1) for r in range(1, RANKS)], np.float32)
"""``row · CODE_WEIGHTS`` = wagers + 4·mask; exact in float32 (at most 2047)."""
WAGERS = (1 << WAGER_BITS) - 1
ALL_NUMBERS = (1 << (RANKS - 1)) - 1
CODES = (WAGERS + 1) * (ALL_NUMBERS + 1)
MASK_VALUE = [sum(r + 1 for r in range(1, RANKS) if m >> (r - 1) & 1) for m in range(ALL_NUMBERS + 1)]
"""Sum of the values of the number ranks in a mask."""
MASK_SIZE = [m.bit_count() for m in range(ALL_NUMBERS + 1)]
DESCENDING = [[r for r in range(RANKS - 1, 0, -1) if m >> (r - 1) & 1] for m in range(ALL_NUMBERS + 1)]
"""The ranks of a mask, highest first."""
LOWEST = [(m & -m).bit_length() for m in range(ALL_NUMBERS + 1)]
"""The lowest rank of a mask (0 if empty)."""
ABOVE = [ALL_NUMBERS >> top << top for top in range(RANKS)]
"""The number ranks above a top (0 = no number yet): those an expedition can still take (L19)."""
BELOW = [0] + [(1 << r - 1) - 1 for r in range(1, RANKS + 1)]
"""The number ranks below a rank (``BELOW[10]``: all)."""
CODE_SIZE = [(code & WAGERS) + MASK_SIZE[code >> WAGER_BITS] for code in range(CODES)]
"""Cards in a row of this code."""
CODE_TOP = [(code >> WAGER_BITS).bit_length() for code in range(CODES)]
"""The highest number rank of a row (0 = none)."""
CODE_RANKS = [([0] if code & WAGERS else []) + DESCENDING[code >> WAGER_BITS] for code in range(CODES)]
"""The ranks present in a row, the wager first."""
# The per-kind fields of the observation, in layout order, from the first read to the last.
FIELDS = ("hand", "my_expeditions", "opp_expeditions", "discard_counts", "discard_tops", "opp_known", "unseen")


DEAD = (RANKS - 1, 0, 0, 0.0, 0.0, 0.0)
"""``HeuristicAgent._mine`` of a colour where I hold nothing playable: every card there is worth 0 to me."""


def worth(r: int, top: int, per_value: float, wager: float) -> float:
    """A colour's rank r to a player whose expedition there has ``top``: ``wager`` for the wager, the value times
    ``per_value`` for a number still playable (L19), 0 for one below the top."""
    if r == 0:
        return wager
    return (r + 1) * per_value if r > top else 0.0


class HeuristicAgent:
    """Plays from ``(observation, action_mask)`` only; deterministic for a given ``seed``."""

    def __init__(self, game: Game, seed: int | None = None):
        if game.name != "lost_cities":
            raise ValueError(f"HeuristicAgent plays lost_cities, not {game.name!r}")
        self.game = game
        self.rng = np.random.default_rng(seed)
        self.C, self.K = game.n_colours, game.num_kinds
        self.num_actions = game.num_actions
        self.deck_action = game.draw_deck_action
        self.initial_deck = game.initial_draw_pile
        layout = game.layout
        # The per-kind fields are read as one span of rows of 10 kinds (a colour each), field after field.
        starts = [layout[name].start for name in FIELDS]
        if starts != list(range(starts[0], starts[0] + len(FIELDS) * self.K, self.K)):
            raise ValueError(f"HeuristicAgent expects the fields {FIELDS} side by side in the observation")
        self.span = slice(starts[0], starts[0] + len(FIELDS) * self.K)
        self.obs_size = layout.size
        scores = layout["scores"].start
        self.scalars = np.array([layout["draw_pile"].start, layout["step"].start + 1, *range(scores, scores + 4)])

    # ----------------------------------------------------------------- entry point
    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        # legal_actions' flatnonzero costs about 1 µs more; it runs only to raise on an empty mask
        legal = np.asarray(action_mask).nonzero()[0].tolist() or legal_actions(action_mask, "HeuristicAgent")
        v = self._read(observation)
        # Tiny noise breaks exact ties from the agent's own generator (deterministic for a seed);
        # drawn on every call so that the stream does not depend on which ties occurred.
        noise = memoryview(self.rng.random(self.num_actions))  # reads a few values as floats, converts no others
        choice = self._draw_choice(v, legal, noise) if v.draw_step else self._card_choice(v, legal, noise)
        return legal[0] if choice is None else choice  # None: the mask allows nothing sensible

    # ----------------------------------------------------------------- reading the observation
    def _read(self, observation: np.ndarray) -> _View:
        """The row codes per colour and the few numbers every decision uses."""
        observation = np.asarray(observation)
        if observation.shape != (self.obs_size,):
            raise ValueError(f"expected an observation of shape ({self.obs_size},), got {observation.shape}")
        v = _View()
        # per colour: the codes of hand, my expedition, theirs, discards, pile top, their known cards, unseen
        v.rows = rows = (observation[self.span].reshape(-1, RANKS).dot(CODE_WEIGHTS).reshape(len(FIELDS), self.C).T
                         .astype(np.int64).tolist())
        draw_pile, step, *v.scores = observation.take(self.scalars).tolist()
        v.deck = deck = round(draw_pile * self.initial_deck)
        v.draw_step = step > 0.5
        v.early = deck / self.initial_deck
        # Chance that a given unseen card reaches me: I draw about half the remaining deck, and the
        # unseen pool is the deck plus the opponent's unknown cards (L32).
        v.n_unseen = n_unseen = float(sum([CODE_SIZE[row[6]] for row in rows]))
        v.p_get = p_get = min(1.0, 0.5 * deck / max(n_unseen, 1.0))
        v.half_p = EXPECT_SHARE * p_get  # the share of the unseen cards I expect to play
        # My card steps left if nobody draws from a pile (L14b); in a draw step this counts the
        # current turn once more, which is close enough.
        v.turns_left = (deck + 1) // 2
        return v

    def _mine(self, v: _View, row: list[int], hand_only: bool = False) -> tuple[int, int, int, float, float, float]:
        """My side of a colour: my top, the playable numbers I hold and their count, the projected sum, and the
        ``worth`` arguments of its cards to me (a card below my top, or of a colour I will not open, is dead).
        With ``hand_only``, only the cards in my hand are valued: ``DEAD`` when none of them is playable."""
        hand, e, _, _, _, _, unseen = row
        top = CODE_TOP[e]
        playable = ABOVE[top]
        held = hand >> WAGER_BITS & playable
        if hand_only and not held and (top or not hand & WAGERS):
            return DEAD
        count = MASK_SIZE[held]
        # Projected number sum: what is already down, what I hold, and my share of what is unseen.
        projected = (MASK_VALUE[e >> WAGER_BITS] + MASK_VALUE[held]
                     + v.half_p * MASK_VALUE[unseen >> WAGER_BITS & playable])
        # How sure I am to play a colour: 1 once started, rising with the projection otherwise.
        viability = 1.0 if e else min(max((projected - VIABLE_FROM) / VIABLE_SPAN, 0.0), 1.0)
        if count > v.turns_left:
            viability *= 0.5  # cannot play them all in time
        # A wager is only playable before any number (L19) and gains (sum - 20) per wager (L23);
        # it is worth holding only early, for a colour that looks strong.
        wager = viability * max(projected - 20.0, 0.0) * v.early if top == 0 else 0.0
        return top, held, count, projected, (1.0 + (e & WAGERS)) * viability, wager

    def _danger(self, v: _View, row: list[int]) -> tuple[int, float, float]:
        """The ``worth`` arguments of a colour's cards to the opponent: what a card I discard is worth to them, as
        they may take it from the pile next turn."""
        theirs = row[2]
        top = CODE_TOP[theirs]
        if theirs:  # opened: they play a number at face value times their multiplier
            # A wager helps them only before their first number (L19): a lot if they opened with wagers.
            return top, 1.0 + (theirs & WAGERS), 10.0 if top == 0 else 0.0
        # Unopened: a small worth that grows with the cards of that colour they are known to collect (L33).
        interest = 0.2 + 0.3 * min(CODE_SIZE[row[5]], 2.0)
        return 0, interest * v.early, 3.0 * interest * v.early

    # ----------------------------------------------------------------- card step (L12)
    def _card_choice(self, v: _View, legal: list[int], noise: memoryview) -> int | None:
        """The cheapest legal play or discard.  Legal actions come in ascending order, plays (kinds) before
        discards (K + kinds), and every discard costs at least 0: when a play costs less, the discards are not
        valued at all."""
        K = self.K
        mine = [self._mine(v, row, True) for row in v.rows]
        rush = self._endgame_plan(v, mine)
        plays = {}
        for c, m in enumerate(mine):
            if m is not DEAD:
                self._play_cost(v, c, m, rush, plays)
        n_plays = bisect_left(legal, K)
        best, choice = math.inf, None
        for a in legal[:n_plays]:
            cost = plays.get(a)  # None for the plays that are not the sensible one of their colour
            if cost is not None and cost + NOISE * noise[a] < best:
                best, choice = cost + NOISE * noise[a], a
        if best < 0.0:
            return choice  # a discard, at least 0 with its noise, cannot beat it
        # Discard: lose the card's worth to me, and hand the opponent its worth to them.
        colour = -1
        for a in legal[n_plays:]:
            if a >= 2 * K:
                break
            c, r = divmod(a - K, RANKS)
            if c != colour:  # legal discards come colour by colour
                colour, row = c, v.rows[c]
                top, _, _, _, per_value, wager = mine[c]
                their_top, their_per_value, their_wager = self._danger(v, row)
            if r:
                cost = ((r + 1) * per_value if r > top else 0.0) + ((r + 1) * their_per_value if r > their_top else 0.0)
            else:
                cost = wager + their_wager
            if cost + NOISE * noise[a] < best:
                best, choice = cost + NOISE * noise[a], a
        return choice

    def _play_cost(self, v: _View, c: int, mine: tuple, rush: list[int] | None, plays: dict[int, float]) -> None:
        """The one sensible play in colour c (a wager, or the lowest playable number) and its cost, into plays."""
        hand, e, _, _, tops, _, unseen = v.rows[c]
        top, held, count, projected, _, _ = mine
        if rush is None and top == 0 and hand & WAGERS and self._wants_wager(v, count, projected):
            plays[RANKS * c] = -PLAY_BONUS - 1.0  # wagers go before numbers (L19)
            return
        if rush is not None:  # the end-game plan says which cards are worth the remaining turns
            held &= ~BELOW[rush[c]]
        elif not e and not self._wants_to_open(v, count, projected):
            return
        if not held:
            return
        r = LOWEST[held]  # the lowest playable number: it skips the fewest cards
        # Cards skipped by playing r now that I might still draw: unseen ones and pile tops.
        skipped = ABOVE[top] & BELOW[r]
        gap = (MASK_VALUE[unseen >> WAGER_BITS & skipped] + MASK_VALUE[tops >> WAGER_BITS & skipped]) * v.p_get
        gap *= 1.0 + (e & WAGERS)
        plays[RANKS * c + r] = gap - PLAY_BONUS - (URGENT if rush is not None else 0.0)

    @staticmethod
    def _wants_to_open(v: _View, count: int, projected: float) -> bool:
        """Open a colour only when it projects above the 20-point cost and there is time to build it."""
        return projected >= 20.0 + OPEN_MARGIN and count <= v.turns_left

    def _wants_wager(self, v: _View, count: int, projected: float) -> bool:
        """Bet on a colour only early, with number cards in hand to back it, when it looks strong."""
        return v.deck >= WAGER_MIN_DECK * self.initial_deck and count >= WAGER_MIN_SUPPORT and projected >= WAGER_SUM

    def _endgame_plan(self, v: _View, mine: list) -> list[int] | None:
        """When I hold more worthwhile plays than turns left, choose which to make.

        Returns, per colour, the lowest rank worth playing (10 = none), or None while turns are not
        short.  Each colour's best use of m turns is its m highest playable cards (L19 allows gaps);
        a small knapsack over colours spends the turns where they score most (L23).
        """
        T = v.turns_left
        if sum([m[2] for m in mine]) < T:
            return None  # even every playable card fits in the turns left
        # Per colour worth playing in: its playable ranks (highest first) and the gain of playing m of them.  A colour
        # where no play gains is left out: the plan would not use it (the best gain is reached without spending
        # its turns, and the fewest turns reaching the best gain are chosen).
        options = []
        for c, m in enumerate(mine):
            if not m[1]:
                continue
            ranks = DESCENDING[m[1]]
            e = v.rows[c][1]
            w, mask = e & WAGERS, e >> WAGER_BITS
            n, total = w + MASK_SIZE[mask], MASK_VALUE[mask]
            now = expedition_score(n, w, total)
            gains = [0]
            for r in ranks:
                total += r + 1
                gains.append(expedition_score(n + len(gains), w, total) - now)
            if max(gains) > 0:
                options.append((c, ranks, gains))
        if sum([len(ranks) for _, ranks, _ in options]) < T:
            return None
        # best[used]: the best gain using that many turns; back[i][used]: the cards of colour i that reach it.
        # Candidates come in order of turns used, then of cards, and only a strictly better one replaces, as
        # first found wins.
        best, back = [0], []
        for _, ranks, gains in options:
            size = min(len(best) + len(ranks), T + 1)
            nxt, cards = [-math.inf] * size, [0] * size
            for used, gain in enumerate(best):
                for m in range(min(len(ranks), T - used) + 1):
                    if gain + gains[m] > nxt[used + m]:
                        nxt[used + m], cards[used + m] = gain + gains[m], m
            best = nxt
            back.append(cards)
        used = best.index(max(best))  # the fewest turns reaching the best gain
        rush = [RANKS] * self.C
        for (c, ranks, _), cards in zip(reversed(options), reversed(back), strict=True):
            m = cards[used]
            if m:
                rush[c] = ranks[m - 1]
            used -= m
        return rush

    # ----------------------------------------------------------------- draw step (L13)
    def _draw_choice(self, v: _View, legal: list[int], noise: memoryview) -> int | None:
        """The deck, or the pile whose top is worth more.  Piles whose top is not worth taking are not candidates;
        without a candidate the deck is drawn and the deck card's worth is not needed."""
        deck = self.deck_action
        late = v.deck <= LATE_DECK
        # Match standing: cumulative plus this round's provisional score (L34h).
        lead = (v.scores[0] + v.scores[2] - v.scores[1] - v.scores[3]) * 100
        # Behind with more plays than turns: any pile draw buys one more turn (L17).
        stretch = late and lead < 0 and self._pending(v) >= v.turns_left
        piles = []
        for a in legal:
            c = a - deck - 1
            if not 0 <= c < self.C or not v.rows[c][4]:
                continue
            row = v.rows[c]
            r = CODE_TOP[row[4]]  # the rank on top (0 for a wager)
            if not stretch and (r <= CODE_TOP[row[1]] if r else row[1] >> WAGER_BITS):
                continue  # I can no longer play it (L19): worth nothing to me
            top, _, _, _, per_value, wager = self._mine(v, row)
            value = worth(r, top, per_value, wager)
            # Take a pile card only when it is useful to me — a card I merely deny would come back
            # as a discard — unless I need the extra turn.
            if value >= PILE_MIN_VALUE or stretch:
                gain = value + DENY_SHARE * worth(r, *self._danger(v, row))  # it also keeps it from the opponent
                piles.append((a, -(gain + (CLOCK_BONUS if stretch else 0.0))))
        if not piles:
            return deck if deck in legal else None
        # A deck card is on average worth the mean value of the unseen pool.
        pool = 0.0
        for row in v.rows:
            top, _, _, _, per_value, wager = self._mine(v, row)
            pool += (row[6] & WAGERS) * wager + MASK_VALUE[row[6] >> WAGER_BITS & ABOVE[top]] * per_value
        deck_gain = pool / max(v.n_unseen, 1.0)
        if late and lead > 0:
            deck_gain += CLOCK_BONUS  # ahead: every deck draw brings the end closer (L14b)
        best, choice = math.inf, None
        for a, cost in ([(deck, -deck_gain)] if deck in legal else []) + piles:
            if cost + NOISE * noise[a] < best:
                best, choice = cost + NOISE * noise[a], a
        return choice

    @staticmethod
    def _pending(v: _View) -> int:
        """My playable cards in the colours I have started."""
        return sum([MASK_SIZE[hand >> WAGER_BITS & ABOVE[CODE_TOP[e]]] for hand, e, *_ in v.rows if e])


class _View:
    """One observation's facts for ``HeuristicAgent`` (set by ``_read``)."""

    __slots__ = ("rows", "scores", "deck", "draw_step", "early", "n_unseen", "p_get", "half_p", "turns_left")
