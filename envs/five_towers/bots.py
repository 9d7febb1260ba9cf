"""A heuristic Five Towers player that sees only what the env gives its seat: (observation, action_mask).

It values its own position as the score (F27) plus a bonus for the room left on each tower (a high top
takes many later cards, an 8 takes anything, a sealed or blocked tower takes nothing), and picks the
action whose best continuation this round maximises that value: it bids for the number of display cards
it can build well, tears down only when that pays for the rubble, takes the cards of its best plan and
places each type in the order that leaves the roomiest top.

How it stays fast (it is the training env's opponent at every decision). ``act`` gathers the few fields it
reads (the phase, the display, N, its own towers) with one ``take`` and finds their one-hots with one
``nonzero``; everything after that is pure Python on small tuples, through pure functions memoised on
those tuples, so an agent keeps nothing but caches between calls. Plans are built per type: types are
independent but for the tallest tower, and a type's height after a plan depends only on how many cards it
gets, so for each type and count only the placements of highest value can belong to a best plan; a plan is
one entry per type, and one product over the types covers every tear-down option. A bid skips the torn-down
placements that the kept tower beats whatever the other types do (most of them). Every plan's value is
computed as ``score + ROOM_WEIGHT * room`` from whole-number parts, as the card-by-card search this replaced
did, so the choices are the same to the last bit, ties included.
"""

from __future__ import annotations

from bisect import bisect_left
from functools import cache, lru_cache
from itertools import accumulate
from operator import sub

import numpy as np

from ..core.agents import legal_actions
from ..core.game import Game
from .actions import PASS, PLACE, TAKE, TEAR_NONE
from .cards import NUM_SLOTS, NUM_TYPES
from .game import BLOCKED, NO_TOWER, can_place
from .observation import SEAT_FIELDS

ROOM = [float(v) for v in range(16)] + [8.0, 0.0]  # by top code: the value, NO_TOWER 8, BLOCKED 0
ROOM[8] = 14.0  # an 8 accepts every value
ROOM_WEIGHT = 0.4  # points per unit of room
ROOM_UNITS = [int(room) for room in ROOM]  # (plans sum rooms as ints: see ``value``)

BID, TEARDOWN, TAKING = 0, 1, 2  # phases (the observation's phase one-hot)
IN_DISPLAY, TAKEN = 0, 1  # display slot status
VALUES = 16
# The fields act() reads (row 0, the seat's own, of the seat fields), gathered in this order into one vector
# with their sizes: the first NUMBERS cells are read as numbers, the rest as one-hots; *_AT index that vector.
GATHERED = (("tower_height", NUM_TYPES), ("tower_blocked", NUM_TYPES), ("rubble", 1), ("phase", 4),
            ("display_type", NUM_SLOTS * NUM_TYPES), ("display_value", NUM_SLOTS * VALUES),
            ("display_status", NUM_SLOTS * 3), ("take_count", 6), ("tower_top", NUM_TYPES * VALUES),
            ("tower_below", NUM_TYPES * VALUES))
_, _, NUMBERS, TYPE_AT, VALUE_AT, STATUS_AT, COUNT_AT, TOP_AT, BELOW_AT, GATHERED_SIZE = accumulate(
    size for _, size in GATHERED)
PHASE_AT = NUMBERS
# per one-hot cell of the vector, its (row, column): display (slot, type | value | status), towers (type, value)
CELL = [(0, 0)] * PHASE_AT + [divmod(i, width) for at, end, width in (
    (PHASE_AT, TYPE_AT, 4), (TYPE_AT, VALUE_AT, NUM_TYPES), (VALUE_AT, STATUS_AT, VALUES), (STATUS_AT, COUNT_AT, 3),
    (COUNT_AT, TOP_AT, 6), (TOP_AT, BELOW_AT, VALUES), (BELOW_AT, GATHERED_SIZE, VALUES)) for i in range(end - at)]
SLOTS_OF = tuple(tuple(s for s in range(NUM_SLOTS) if m >> s & 1) for m in range(1 << NUM_SLOTS))  # by bitmask
SLOT_COUNT = [len(slots) for slots in SLOTS_OF]
MEMO = 1 << 14  # entries per memoised function: a few rounds of hundreds of parallel games


@cache
def best_final_top(top: int, values: tuple[int, ...], zero_starts_tower: bool) -> int:
    """The roomiest top after placing all ``values`` (sorted, one type) on ``top``; −1 if they don't fit."""
    if not values:
        return top
    best = -1
    for i, v in enumerate(values):
        if (i and values[i - 1] == v) or not can_place(top, v, zero_starts_tower):
            continue
        end = best_final_top(v, values[:i] + values[i + 1:], zero_starts_tower)
        if end >= 0 and (best < 0 or ROOM[end] > ROOM[best]):
            best = end
    return best


# --------------------------------------------------------------------- reading the seat's view
@lru_cache(maxsize=MEMO)
def read_display(entries: tuple[int, ...]) -> tuple[tuple[tuple[int, int, int, int], ...],
                                                    tuple[tuple[int, ...], ...]]:
    """The displayed cards as (slot, type, value, status), and the sorted values per type of those still in
    the display, from the gathered indices of the display's one-hots (types, values, statuses, each in
    slot order)."""
    k = len(entries) // 3
    cards = []
    free: list[list[int]] = [[], [], [], [], []]
    for i in range(k):
        s, t = CELL[entries[i]]
        v, status = CELL[entries[k + i]][1], CELL[entries[2 * k + i]][1]
        cards.append((s, t, v, status))
        if status == IN_DISPLAY:
            free[t].append(v)
    return tuple(cards), tuple(tuple(sorted(vs)) if len(vs) > 1 else tuple(vs) for vs in free)


@lru_cache(maxsize=MEMO)
def read_towers(entries: tuple[int, ...], numbers: bytes, per_type: int,
                rebuild: bool) -> tuple[tuple[tuple[int, int, int], ...], int]:
    """(height, top code, code after a tear-down) per type, and the rubble size, from the gathered indices
    of the seat's top and below one-hots and its ``NUMBERS`` gathered cells (as float32 bytes)."""
    tops = [NO_TOWER] * NUM_TYPES
    belows = [NO_TOWER] * NUM_TYPES
    for i in entries:
        t, v = CELL[i]
        if i < BELOW_AT:
            tops[t] = v
        else:
            belows[t] = v
    numbers = np.frombuffer(numbers, np.float32).tolist()
    towers = []
    for t in range(NUM_TYPES):
        height = round(numbers[t] * per_type)
        if height:
            below = belows[t] if height > 1 else (NO_TOWER if rebuild else BLOCKED)
            towers.append((height, tops[t], below))
        else:
            empty = BLOCKED if numbers[NUM_TYPES + t] else NO_TOWER
            towers.append((0, empty, empty))
    return tuple(towers), round(numbers[2 * NUM_TYPES] * 10)


# --------------------------------------------------------------------- planning (pure, memoised)
# A plan gives every type some of the cards: per type an option (count, base, room, height, slot bitmask), and
# in sum a plan (count, base, room, tallest, slots) whose value is its score plus ROOM_WEIGHT per unit of room.
Option = tuple[int, int, int, int, int]
NOTHING = (0, 0, 0, 0, 0)  # the option that adds nothing
NO_WORTH = -1 << 30  # the worth of a count no subset fits (an int, so that worths subtract)


def _base(height: int, top: int) -> int:
    """A tower's points before the tallest bonus and the rubble (F27): its height, doubled if a 0 seals it."""
    return height * 2 if top == 0 else height


@lru_cache(maxsize=MEMO)
def type_fits(top: int, values: tuple[int, ...], zero_starts: bool) -> tuple[tuple[int, int, int], ...]:
    """(index bitmask into ``values``, count, roomiest final top) for every subset of one type's ``values``
    that fits on ``top``, the empty one included, by count. Subset by subset, the tops its cards can end on
    in some order grow from those of its subsets (any of equal room will do: ``best_final_top`` ties
    only 8 and 14)."""
    ends: list[set[int]] = [set() for _ in range(1 << len(values))]
    ends[0].add(top)
    out = []
    for placed, tops in enumerate(ends):
        if not tops:
            continue
        out.append((SLOT_COUNT[placed], placed, max(tops, key=ROOM.__getitem__)))
        for i, v in enumerate(values):
            if not placed >> i & 1 and any(can_place(e, v, zero_starts) for e in tops):
                ends[placed | 1 << i].add(v)
    return tuple((placed, c, end) for c, placed, end in sorted(out))


@lru_cache(maxsize=MEMO)
def type_ends(top: int, values: tuple[int, ...], zero_starts: bool) -> tuple[tuple[tuple[int, int], ...], ...]:
    """Per count, the (base per card of height, room) of the subsets of one type's ``values`` that fit on
    ``top`` and can make a best plan at any height: the roomiest top that is not a 0, and a 0 (sealed, F27)."""
    ends: list[dict[int, int]] = [{} for _ in range(len(values) + 1)]  # count -> {base factor: room}
    for _, c, end in type_fits(top, values, zero_starts):
        factor, room = (2, 0) if end == 0 else (1, int(ROOM[end]))
        if room >= ends[c].get(factor, -1):
            ends[c][factor] = room
    return tuple(tuple(sorted(by_factor.items())) for by_factor in ends)


@lru_cache(maxsize=MEMO)
def type_options(height: int, top: int, values: tuple[int, ...],
                 zero_starts: bool) -> tuple[tuple[Option, ...], tuple[int, ...]]:
    """The options of one type (no slots, not torn down) that can belong to a best plan: per count those of
    highest worth 5·base + 2·room, ties kept (they may round apart). A count fixes the height, so the other
    types being alike, a lower one always makes a lower plan. Also that worth per count (``NO_WORTH`` for
    none)."""
    options: list[Option] = []
    worth = [NO_WORTH] * (NUM_SLOTS + 1)
    for c, candidates in enumerate(type_ends(top, values, zero_starts)):
        h = height + c
        for factor, room in candidates:  # (at most two)
            w = 5 * factor * h + 2 * room
            if w > worth[c]:
                worth[c] = w
                kept = [(c, factor * h, room, h, 0)]
            elif w == worth[c]:
                kept.append((c, factor * h, room, h, 0))
        if candidates:
            options += kept
    return tuple(options), tuple(worth)


def tower_lists(towers: tuple[tuple[int, int, int], ...], free: tuple[tuple[int, ...], ...], zero_starts: bool,
                rubble: int | None = None) -> tuple[Option, list[tuple[Option, ...]]]:
    """Per type the options of its tower as it is (last field 0) and, where F22 allows, torn down (1 + type):
    the types with one option summed into a fixed part, and the option lists of the others.

    With ``rubble``, without the torn-down options that cannot make a best plan: those whose worth is less
    than the rubble's growth (F27) above that of the same count on the tower kept, since that option, with
    the tower one card taller and no rubble added, makes a better plan with any other types."""
    need = -(1 << 31) if rubble is None else 5 * (rubble + 1)
    base = room = tallest = 0
    varied = []
    for t in range(NUM_TYPES):
        h, top, below = towers[t]
        values = free[t]
        if values:
            options, worth = type_options(h, top, values, zero_starts)
            if h and top != 0:
                torn, torn_worth = type_options(h - 1, below, values, zero_starts)
                if max(map(sub, torn_worth, worth)) >= need:
                    options += tuple((c, b, r, nh, 1 + t) for c, b, r, nh, _ in torn
                                     if torn_worth[c] - worth[c] >= need)
            if len(options) > 1:
                varied.append(options)
                continue
            _, b, r, nh, _ = options[0]  # none of the cards fits
        else:  # no card of the type: the tower as it is, or torn down
            b, r, nh = _base(h, top), ROOM_UNITS[top], h
            if h and top != 0:
                torn_base, torn_room = _base(h - 1, below), ROOM_UNITS[below]
                if 5 * (torn_base - b) + 2 * (torn_room - r) >= need:
                    varied.append(((0, b, r, h, 0), (0, torn_base, torn_room, h - 1, 1 + t)))
                    continue
        base, room, tallest = base + b, room + r, nh if nh > tallest else tallest
    return (0, base, room, tallest, 0), varied


def value(base: int, tallest: int, penalty: int, room: int) -> float:
    """A plan's value: its score (F27, as ``tower_score``: ``penalty`` is the rubble's) plus ROOM_WEIGHT per unit
    of room, an int plus a float in that order as before, so that equal plans round alike."""
    return base + tallest - penalty + ROOM_WEIGHT * room


def _best_plans(fixed: Option, varied: list[tuple[Option, ...]], rubble: int) -> tuple[list[float], list[float]]:
    """The best value of a plan of the ``fixed`` part and one option of every ``varied`` list (``tower_lists``,
    at most one torn down), per tear-down option (0 none, 1 + t) and count c = 0…NUM_SLOTS at index
    6·option + c, and per count (−inf for none).

    The longest list comes last, combined and valued in one loop (``value`` inlined: this is the bot's
    innermost loop)."""
    *varied, last = sorted(varied, key=len) if varied else [(NOTHING,)]
    plans = [fixed]  # count, base, room, tallest, tear-down option
    for options in varied:
        plans = [(c + o[0], b + o[1], r + o[2], h if h > o[3] else o[3], x + o[4])
                 for c, b, r, h, x in plans for o in options if not (x and o[4])]
    untorn, torn = rubble * (rubble + 1) // 2, (rubble + 1) * (rubble + 2) // 2  # the rubble penalties
    rows = [-np.inf] * (6 * (NUM_TYPES + 1))
    best = [-np.inf] * (NUM_SLOTS + 1)
    for c, b, r, h, x in plans:
        for oc, ob, orr, oh, ox in last:
            if x and ox:
                continue
            tear = x or ox
            v = b + ob + (h if h > oh else oh) - (torn if tear else untorn) + ROOM_WEIGHT * (r + orr)
            if v > rows[6 * tear + c + oc]:
                rows[6 * tear + c + oc] = v
                if v > best[c + oc]:
                    best[c + oc] = v
    return tuple(rows), tuple(best)


@lru_cache(maxsize=MEMO)
def bid_values(towers: tuple[tuple[int, int, int], ...], rubble: int, free: tuple[tuple[int, ...], ...],
               zero_starts: bool) -> tuple[list[float], list[float]]:
    """``_best_plans`` without the torn-down options that cannot make a best plan (``tower_lists``): per count
    c the best value after any tear-down option and placing c of the ``free`` display values (per type) is
    exact, and so is each tear-down option's wherever it is not below that of no tear-down."""
    return _best_plans(*tower_lists(towers, free, zero_starts, rubble), rubble)


@lru_cache(maxsize=MEMO)
def take_plans(towers: tuple[tuple[int, int, int], ...], rubble: int, cards: tuple[tuple[int, int, int], ...],
               n: int, zero_starts: bool) -> tuple[tuple[int, float], ...]:
    """(slot bitmask, value) of every set of n of ``cards`` ((slot, type, value): the taken and the free
    ones) that fits on ``towers``; built as in ``_best_plans``, every subset kept for its slots."""
    count = base = room = tallest = slots = 0
    varied = []
    by_type: list[list[tuple[int, int]]] = [[] for _ in range(NUM_TYPES)]
    for s, t, v in cards:
        by_type[t].append((v, s))
    for (h, top, _), mine in zip(towers, by_type, strict=True):
        mine.sort()
        fits = type_fits(top, tuple(v for v, _ in mine), zero_starts)
        if len(fits) == 1:  # no card of the type, or none fits: the tower as it is
            base, room, tallest = base + _base(h, top), room + int(ROOM[top]), h if h > tallest else tallest
            continue
        bits = [0]  # slot bitmask per index bitmask into ``mine``
        for _, s in mine:
            bits += [b | 1 << s for b in bits]
        varied.append(tuple((c, _base(h + c, end), int(ROOM[end]), h + c, bits[m]) for m, c, end in fits))
    varied.sort(key=len)
    last = varied.pop() if varied else (NOTHING,)
    rest = sum(options[-1][0] for options in varied)  # the most cards the lists left can add
    plans = [(count, base, room, tallest, slots)]
    for options in varied:
        rest -= options[-1][0]
        plans = [(c + o[0], b + o[1], r + o[2], h if h > o[3] else o[3], m | o[4])
                 for c, b, r, h, m in plans for o in options if n - rest - last[-1][0] <= c + o[0] <= n]
    penalty = rubble * (rubble + 1) // 2
    return tuple((m | om, value(b + ob, h if h > oh else oh, penalty, r + orr))
                 for c, b, r, h, m in plans for oc, ob, orr, oh, om in last if c + oc == n)


# --------------------------------------------------------------------- the agent
class HeuristicAgent:
    """Greedy one-round planner over the seat's view (see the module docstring)."""

    def __init__(self, game: Game, seed: int | None = None):
        """``seed`` is accepted like every built-in agent's; this one is deterministic and ignores it."""
        self.game = game
        self.zero_starts = game.options["zero_starts_tower"]
        self.rebuild = game.options["rebuild_removed_tower"]
        self.per_type = game.deck_size // NUM_TYPES
        layout, n = game.layout, game.num_players
        self.shape = (layout.size,)
        rows = []
        for name, size in GATHERED:
            field = layout[name]
            index = field.rows([0], n) if name in SEAT_FIELDS else np.arange(field.start, field.stop)
            if len(index) != size:
                raise ValueError(f"HeuristicAgent: observation field {name!r} has {len(index)} cells per seat, "
                                 f"expected {size}")
            rows.append(index)
        self.gather = np.concatenate(rows)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = action_mask.nonzero()[0].tolist()
        if len(legal) <= 1:
            return legal[0] if legal else legal_actions(action_mask, "HeuristicAgent")[0]  # raises its error
        if observation.shape != self.shape:
            raise ValueError(f"HeuristicAgent.act: expected an observation of shape {self.shape}, "
                             f"got {observation.shape}")
        seen = observation.take(self.gather)
        hot = seen.nonzero()[0].tolist()
        first = bisect_left(hot, TYPE_AT)
        phase = hot[first - 1] - PHASE_AT if first and hot[first - 1] >= PHASE_AT else BID  # (none after the end)
        k = bisect_left(hot, VALUE_AT) - first
        count_at = first + 3 * k
        cards, free = read_display(tuple(hot[first:count_at]))
        n = hot[count_at] - COUNT_AT
        towers, rubble = read_towers(tuple(hot[count_at + 1:]), seen[:NUMBERS].tobytes(), self.per_type,
                                     self.rebuild)
        if phase == BID:  # the bid whose best take gains most, or PASS if none gains
            rows, best = bid_values(towers, rubble, free, self.zero_starts)
            now = rows[0]  # no tear-down, no card: the position as it is
            choice, most = PASS, 0.5  # a bid must beat passing by a margin: it may be outbid anyway
            for b in legal[1:]:  # (ascending: the lowest of equal gains)
                if best[b] - now > most:
                    choice, most = b, best[b] - now
            return choice
        if phase == TEARDOWN:  # (the winner's bid valued these already, exactly where they can beat no tear-down)
            rows = bid_values(towers, rubble, free, self.zero_starts)[0] if legal[0] == TEAR_NONE else \
                _best_plans(*tower_lists(towers, free, self.zero_starts), rubble)[0]
            return max(legal, key=lambda a: rows[6 * (a - TEAR_NONE) + n])
        if phase == TAKING:  # the slot that keeps the best plan open
            return self._take(legal, cards, towers, rubble, n)
        # PLACE: the card after which its type can end on the roomiest top
        by_slot = {s: (t, v) for s, t, v, status in cards if status == TAKEN}

        def room_after(a: int) -> float:
            t, v = by_slot[a - PLACE]
            rest = tuple(sorted(ov for s, (ot, ov) in by_slot.items() if s != a - PLACE and ot == t))
            return ROOM[best_final_top(v, rest, self.zero_starts)]
        return max(legal, key=room_after)

    def _take(self, legal: list[int], cards: tuple[tuple[int, int, int, int], ...],
              towers: tuple[tuple[int, int, int], ...], rubble: int, n: int) -> int:
        """The legal take whose best plan of n cards, with the cards already taken, has the highest value."""
        taken = 0
        for s, _, _, status in cards:
            if status == TAKEN:
                taken |= 1 << s
        plans = take_plans(towers, rubble, tuple((s, t, v) for s, t, v, status in cards if status <= TAKEN), n,
                           self.zero_starts)
        best = [-np.inf] * NUM_SLOTS
        for slots, v in plans:
            if slots & taken == taken:
                for s in SLOTS_OF[slots & ~taken]:
                    if v > best[s]:
                        best[s] = v
        return max(legal, key=lambda a: best[a - TAKE])
