"""A heuristic Palazzo player that sees only what the env gives its seat: (observation, action_mask).

It values its palaces as their score (P61) plus, while the game lasts, the points they can still grow into
(room above the top floor, discounted by how much of the stacks is left), and money at ``MONEY_WORTH``
points per unit of value, less as the game nears its end. Every decision maximises that value:

* D1: reconstruct when the best single move (REMOVE, INSERT, DISCARD) gains enough; take money when the
  hand cannot pay for much; otherwise draw tiles.
* D2: the card that raises BestPay (P24) most, then the card of the currency it holds most.
* D3, D4: buy the one or two supply tiles that gain most over their price, unless the next lot looks better.
* D5, D6: pay with the completion that keeps the most purchasing power (the largest BestPay left, then the
  least overpaid); bid up to what the lot is worth, else pass.
* D7, D8: take and place each tile where it adds most (on a palace with a lower top, new palace or discard).
* D9–D11: carry out the best reconstruct move, paying with the card that costs the least BestPay.

Speed: the bot answers at every opponent decision of training. A decision reads only the fields it needs, at
offsets fixed once per game (a 4-player observation has 4,746 values), and all it values is a memoised pure
function of small hashable arguments (palaces, tiles, stage, hand), shared by every agent and seat; decoded fields
are memoised on their raw bytes. Nothing is assumed about the previous call. Palaces are read from the seat's own
palace cells, a tile standing for its identical twin (6/7, 22/23, 38/39) where ids do not matter; D9 and D10,
which name tiles, take the twins' ids from ``tile_slot``. A choice compares worths, sums of palace values: a
move's gain is first found in short, from the palaces it changes, their values as lines in the stage that last
from turn to turn; the sums, palace by palace in the plain order, are taken only for options within
``ROUNDING`` of the best, so every choice and tie-break is the one the sums make. Whether a bid can still be
completed is Reach (P22, P23a), which is what the search would find.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache

import numpy as np

from ..core.agents import legal_actions
from ..core.game import Game
from .actions import (
    ACTION,
    AUCTION,
    BID,
    BUY,
    DEST,
    DEST_DISCARD,
    DEST_NEW,
    DISTRIBUTE,
    DONE,
    MODE,
    PASS,
    PAY,
    PICK,
    PLACE,
    RECON_DEST,
    RECON_PAY,
    RECON_TILE,
    RECONSTRUCT,
    TAKE_MONEY,
    TILE,
    TILES,
)
from .components import (
    FLOOR,
    MATERIAL,
    NUM_LOCATIONS,
    NUM_QUARRIES,
    NUM_SLOTS,
    NUM_TILES,
    QUARRY,
    SELECTED,
    STACK_SIZES,
    SUPPLY,
    WINDOWS,
)
from .game import palace_score
from .payments import (
    CARD,
    CARD_Z,
    COPIES,
    CURRENCY,
    GROUP_Z,
    NUM_KINDS,
    UNSET,
    Z,
    best_pay,
    reach,
    unit_kinds,
    unit_value,
)

MONEY_WORTH = 0.35  # points per unit of money value early in the game
GROWTH = {1: 5.0, 2: 6.0, 3: 5.0, 4: 5.0}  # points a palace of t tiles usually gains with one more tile
GROWTH_DECAY = 0.8  # each further floor is less likely to be filled
RECONSTRUCT_MARGIN = 2.5  # points a reconstruct must gain over its card
POOR = 14  # below this BestPay the bot takes money when it may
ITEMS = sum(STACK_SIZES)
# entries per memoised function: what depends on palaces alone recurs from game to game; what depends on the
# position (the stage, the hand) recurs within a turn or an auction, rarely later
TABLES = 1 << 15
RECENT = 1 << 12
FLOORS = 5
CELL = 4  # a palace floor's cell: material one-hot (3), windows / 3
SLOT_CELLS = FLOORS * CELL
ROUNDING = 1e-6  # far above the rounding error of a sum of palace values, far below any real difference

Palace = tuple[int, ...]  # tile ids bottom to top (a twin stands for its identical partner)
Palaces = tuple[Palace, ...]

# P51: tiles are placed in ascending (floor, id): a tile's rank in that order
PLACING_RANK = tuple(sorted(range(NUM_TILES), key=lambda t: (FLOOR[t], t)).index(t) for t in range(NUM_TILES))
# P4, P5: a tile by (material, floor, windows), the lower id of an identical pair; and that pair's other id
TILE_BY_LOOK = {(MATERIAL[t], FLOOR[t], WINDOWS[t]): t for t in reversed(range(NUM_TILES))}
TWIN = {t: u for t in range(NUM_TILES) for u in range(t + 1, NUM_TILES)
        if (MATERIAL[t], FLOOR[t], WINDOWS[t]) == (MATERIAL[u], FLOOR[u], WINDOWS[u])}


# ----------------------------------------------------------------- valuing palaces (pure, memoised)
# the growth terms of a palace by (tiles, top floor): one per free floor above its top (``palace_value``)
GROWTH_TERMS = {(t, top): tuple(GROWTH[t + j] for j in range(min(5 - top, 5 - t)))
                for t in range(1, 6) for top in range(1, 6)}
GROWTH_SUM = {key: sum(g * GROWTH_DECAY ** j for j, g in enumerate(terms)) for key, terms in GROWTH_TERMS.items()}


@lru_cache(maxsize=TABLES)
def _score(palace: Palace) -> int:
    return palace_score(list(palace))


@lru_cache(maxsize=RECENT)
def palace_value(palace: Palace, stage: float) -> float:
    """Score plus what the palace may still grow into: one more tile per free floor above its top, each less
    likely, all scaled by ``stage`` (the share of the stacks left)."""
    value = float(_score(palace))
    weight = stage
    for growth in GROWTH_TERMS[len(palace), FLOOR[palace[-1]]]:
        value += weight * growth
        weight *= GROWTH_DECAY
    return value


def money_worth(stage: float) -> float:
    """Points per unit of money value: less as the stacks run out."""
    return MONEY_WORTH * (0.25 + 0.75 * stage)


def worth(palaces: Palaces, stage: float) -> float:
    return sum([palace_value(p, stage) for p in palaces])


# ----------------------------------------------------------------- placing tiles: gains in short, then exactly
# A choice compares worths, sums of palace values. The gain of a move is found in short from the few palaces it
# changes, each value a line in the stage (``_palace_line``: the score, memoised per palace, and a table, so it
# lasts from turn to turn and game to game); it differs from the difference of the sums by rounding only
# (~1e-13). So the sums are taken only where options lie within ``ROUNDING`` of each other, and a choice is
# exactly that of comparing the sums everywhere.
def _palace_line(palace: Palace) -> tuple[int, float]:
    """``palace_value`` as a line in the stage: (score, growth), value = score + stage · growth up to rounding."""
    return _score(palace), GROWTH_SUM[len(palace), FLOOR[palace[-1]]]


def _line(new: tuple[Palace, ...], old: tuple[Palace, ...]) -> tuple[float, float]:
    """The gain of replacing palaces ``old`` by ``new``, as a line (a, b): a + stage · b."""
    lines = [_palace_line(p) for p in new]
    gone = [_palace_line(p) for p in old]
    return sum(a for a, _ in lines) - sum(a for a, _ in gone), sum(b for _, b in lines) - sum(b for _, b in gone)


@lru_cache(maxsize=TABLES)
def _placing_line(palace: Palace, t: int) -> tuple[float, float]:
    grown = palace + (t,)
    return _score(grown) - _score(palace), \
        GROWTH_SUM[len(grown), FLOOR[t]] - GROWTH_SUM[len(palace), FLOOR[palace[-1]]]


def _placements(palaces: Palaces, t: int, stage: float) -> list[tuple[float, int]]:
    """P51: every placement of tile t, in action order, as (gain up to rounding, slot): on a palace with a lower
    top, a new palace (slot ``len(palaces)``) or the discard (slot −1)."""
    out = []
    for s, p in enumerate(palaces):
        if FLOOR[p[-1]] < FLOOR[t]:
            a, b = _placing_line(p, t)
            out.append((a + stage * b, s))
    a, b = _palace_line((t,))
    return out + [(a + stage * b, len(palaces)), (0.0, -1)]


def _placed(palaces: Palaces, t: int, s: int) -> Palaces:
    if s < 0:
        return palaces
    if s == len(palaces):
        return palaces + ((t,),)
    return palaces[:s] + (palaces[s] + (t,),) + palaces[s + 1:]


def _near(options: list[tuple[float, int]]) -> list[int]:
    """The options within ``ROUNDING`` of the best, in their order."""
    top = max(g for g, _ in options)
    return [s for g, s in options if g >= top - ROUNDING]


@lru_cache(maxsize=RECENT)
def best_placement(palaces: Palaces, t: int, stage: float) -> tuple[int, Palaces]:
    """(action, palaces after) of the placement of tile t whose palaces are worth most, the first in action order
    on a tie."""
    near = _near(_placements(palaces, t, stage))
    s = near[0] if len(near) == 1 else max(near, key=lambda s: worth(_placed(palaces, t, s), stage))
    action = DEST_DISCARD if s < 0 else DEST_NEW if s == len(palaces) else DEST + s
    return action, _placed(palaces, t, s)


@lru_cache(maxsize=RECENT)
def tiles_gain(palaces: Palaces, tiles: tuple[int, ...], stage: float) -> float:
    """Points gained by placing ``tiles`` one by one in ascending floor order, each where it adds most."""
    after = palaces
    for t in sorted(tiles, key=PLACING_RANK.__getitem__):
        after = best_placement(after, t, stage)[1]
    return worth(after, stage) - worth(palaces, stage)


@lru_cache(maxsize=RECENT)
def _placing(palaces: Palaces, t: int, stage: float) -> tuple[float, int, bool]:
    """The best placement of tile t up to rounding: (gain, slot as in ``_placements``, whether it is the only one
    within ``ROUNDING`` of the best)."""
    options = _placements(palaces, t, stage)
    gain, s = max(options)
    return gain, s, sum(g >= gain - ROUNDING for g, _ in options) == 1


@lru_cache(maxsize=RECENT)
def rough_tiles_gain(palaces: Palaces, tiles: tuple[int, ...], stage: float) -> tuple[float, bool, Palaces | None]:
    """``tiles_gain`` up to rounding, whether that is sure and the palaces after: not sure if a tile but the last
    had placements within ``ROUNDING`` of each other (the exact sums might place it elsewhere, and the next tile
    differently); no palaces after if any tile had."""
    order = sorted(tiles, key=PLACING_RANK.__getitem__)
    gain, after = 0.0, palaces
    for i, t in enumerate(order):
        best, s, alone = _placing(after, t, stage)
        gain += best
        if not alone:
            return gain, i == len(order) - 1, None
        after = _placed(after, t, s)
    return gain, True, after


def exact_tiles_gain(palaces: Palaces, tiles: tuple[int, ...], stage: float, after: Palaces | None) -> float:
    """``tiles_gain``, from the palaces after the placements when ``rough_tiles_gain`` found them."""
    return tiles_gain(palaces, tiles, stage) if after is None else worth(after, stage) - worth(palaces, stage)


@lru_cache(maxsize=RECENT)
def buy_plan(palaces: Palaces, supply: tuple[int, ...], bp: int, price: int, stage: float
             ) -> tuple[float, tuple[int, ...]]:
    """The best one or two of the ``supply`` tiles to buy at ``price`` with BestPay ``bp``, with their gain over
    the cost (the larger tiles list on a tie); (−inf, ()) if none can be paid. Exactly evaluated are only the
    options whose rough gain is unsure or within ``ROUNDING`` of the best sure one; the others fall short."""
    mw = money_worth(stage)
    options = []
    for i, a in enumerate(supply):
        for tiles in [[a]] + ([[a, b] for b in supply[i + 1:]] if bp >= 2 * price else []):
            if bp >= len(tiles) * price:
                gain, sure, after = rough_tiles_gain(palaces, tuple(tiles), stage)
                options.append((gain - mw * len(tiles) * price, sure, tiles, after))
    if not options:
        return -np.inf, ()
    top = max((g for g, sure, _, _ in options if sure), default=-np.inf)
    gain, tiles = max((exact_tiles_gain(palaces, tuple(tiles), stage, after) - mw * len(tiles) * price, tiles)
                      for g, sure, tiles, after in options if not sure or g >= top - ROUNDING)
    return gain, tuple(tiles)


@lru_cache(maxsize=RECENT)
def auction_gain(palaces: Palaces, lot: tuple[int, ...], stage: float) -> float:
    """What the next lot looks worth: a distribution's best single tile (I pick first), else a share of the lot."""
    if len(lot) >= 4:
        return max(tiles_gain(palaces, (t,), stage) for t in lot)
    return 0.6 * tiles_gain(palaces, lot, stage) if lot else 0.0


@lru_cache(maxsize=RECENT)
def buys(palaces: Palaces, supply: tuple[int, ...], bp: int, price: int, stage: float, lot: tuple[int, ...]) -> bool:
    """D3: whether the best buy gains at least what the next lot looks worth."""
    plan = buy_plan(palaces, supply, bp, price, stage)[0]
    rough, sure = rough_auction_gain(palaces, lot, stage)
    if sure and abs(plan - rough) > ROUNDING:
        return plan > rough
    return plan >= auction_gain(palaces, lot, stage)


@lru_cache(maxsize=RECENT)
def distribution_pick(palaces: Palaces, legal: tuple[int, ...], stage: float) -> int:
    """D7: the tile that gains most, the first on a tie."""
    gains = {a: _placing(palaces, a - TILE, stage)[0] for a in legal}
    top = max(gains.values())
    return max((a for a in legal if gains[a] >= top - ROUNDING), key=lambda a: tiles_gain(palaces, (a - TILE,), stage))


def rough_auction_gain(palaces: Palaces, lot: tuple[int, ...], stage: float) -> tuple[float, bool]:
    """``auction_gain`` up to rounding, and whether that is sure (``rough_tiles_gain``)."""
    if len(lot) >= 4:
        return max(_placing(palaces, t, stage)[0] for t in lot), True
    gain, sure, _ = rough_tiles_gain(palaces, lot, stage)
    return 0.6 * gain, sure


Change = tuple[dict[int, Palace | None], tuple[Palace, ...]]  # palaces replaced (None: gone) and palaces added


@lru_cache(maxsize=TABLES)
def _leaving(palace: Palace) -> tuple[tuple[int, Palace | None], ...]:
    """P56, the moves that take a tile out of ``palace``: (tile, rest) to REMOVE it into a new palace, or
    (tile, None) for the tile of a single-tile palace, to DISCARD or INSERT elsewhere (``_grown``)."""
    if len(palace) == 1:
        return ((palace[0], None),)
    return tuple((t, tuple(x for x in palace if x != t)) for t in palace)


def _grown(target: Palace, t: int) -> Palace | None:
    """INSERT (P56): ``target`` with tile t on its floor, None if the floor is taken."""
    if any(FLOOR[x] == FLOOR[t] for x in target):
        return None
    return tuple(sorted(target + (t,), key=FLOOR.__getitem__))


def _reconstructions(palaces: Palaces) -> Iterator[tuple[int, int, Change]]:
    """Every REMOVE, INSERT and DISCARD: (tile, destination action, change of the palaces)."""
    for s, palace in enumerate(palaces):
        for t, rest in _leaving(palace):
            if rest is not None:
                yield t, DEST_NEW, ({s: rest}, ((t,),))
                continue
            yield t, DEST_DISCARD, ({s: None}, ())
            for i, target in enumerate(palaces):
                if i != s and (grown := _grown(target, t)) is not None:
                    yield t, DEST + i, ({s: None, i: grown}, ())


@lru_cache(maxsize=RECENT)
def reconstruct_moves(palaces: Palaces, stage: float) -> tuple[tuple[float, int, int], ...]:
    """Every reconstruct move as (gain in points, tile, destination action), the worths summed palace by palace
    in the order of the palaces after the move."""
    values = [palace_value(p, stage) for p in palaces]
    before = sum(values)
    out = []
    for t, dest, (replaced, added) in _reconstructions(palaces):
        kept = [values[j] if j not in replaced else None if replaced[j] is None else palace_value(replaced[j], stage)
                for j in range(len(palaces))]
        after = [v for v in kept if v is not None] + [palace_value(p, stage) for p in added]
        out.append((sum(after) - before, t, dest))
    return tuple(out)


# ----------------------------------------------------------------- D1 in short (lines, as above)
@lru_cache(maxsize=TABLES)
def _leaving_lines(palace: Palace) -> tuple[tuple[float, float], ...]:
    """The gain lines of REMOVE and DISCARD from ``palace``; they depend on it alone, so they last while it does."""
    return tuple(_line((rest, (t,)) if rest is not None else (), (palace,)) for t, rest in _leaving(palace))


@lru_cache(maxsize=TABLES)
def _insert_line(single: Palace, target: Palace) -> tuple[float, float] | None:
    """The gain line of INSERT of the single-tile palace ``single`` into ``target``, None if its floor is taken."""
    grown = _grown(target, single[0])
    return None if grown is None else _line((grown,), (single, target))


@lru_cache(maxsize=RECENT)
def best_reconstruct_gain(palaces: Palaces, stage: float) -> float:
    """The gain of the best reconstruct move up to rounding (``reconstruct_moves`` has it exactly); −inf if there
    is none."""
    lines = [line for p in palaces for line in _leaving_lines(p)]
    lines += [line for j, s in enumerate(palaces) if len(s) == 1 for i, p in enumerate(palaces) if i != j and
              (line := _insert_line(s, p)) is not None]
    return max((a + stage * b for a, b in lines), default=-np.inf)


def reconstruct_pays(palaces: Palaces, hand: tuple[int, ...], stage: float, rough: float) -> bool:
    """D1: whether the best reconstruct move gains ``RECONSTRUCT_MARGIN`` over its cheapest card, given its gain up
    to rounding: the exact sums are needed only within ``ROUNDING`` of the margin."""
    rough -= money_worth(stage) * cheapest_loss(hand)
    if abs(rough - RECONSTRUCT_MARGIN) > ROUNDING:
        return rough > RECONSTRUCT_MARGIN
    return max(reconstruct_moves(palaces, stage))[0] - money_worth(stage) * cheapest_loss(hand) >= \
        RECONSTRUCT_MARGIN


# ----------------------------------------------------------------- valuing money (pure, memoised)
def card_gain(hand: tuple[int, ...], k: int) -> float:
    """D2: BestPay gained by taking a card of kind k, a little of its value, and more for a currency held."""
    more = list(hand)
    more[k] += 1
    same = sum(hand[5 * CURRENCY[k]:5 * CURRENCY[k] + 5]) if k != Z else 0
    return best_pay(more) - best_pay(hand) + 0.1 * unit_value(CARD + k) + 0.2 * same


def card_loss(hand: tuple[int, ...], k: int) -> int:
    """BestPay lost by paying a card of kind k."""
    less = list(hand)
    less[k] -= 1
    return best_pay(hand) - best_pay(less)


@lru_cache(maxsize=RECENT)
def cheapest_loss(hand: tuple[int, ...]) -> int:
    """BestPay lost by paying the card that costs least of it (0 with no card)."""
    return min((card_loss(hand, k) for k in range(NUM_KINDS) if hand[k]), default=0)


@lru_cache(maxsize=RECENT)
def best_pick(hand: tuple[int, ...], legal: tuple[int, ...]) -> int:
    return max(legal, key=lambda a: card_gain(hand, a - CARD))


@lru_cache(maxsize=RECENT)
def cheapest_card(hand: tuple[int, ...], legal: tuple[int, ...]) -> int:
    return min(legal, key=lambda a: (card_loss(hand, a - CARD), a))


# P21: every payment unit as (action id, kinds it commits, three kinds whose counts must stay ≥ 0 after it,
# value, currency it sets or UNSET)
UNITS = tuple((b, unit_kinds(b), (unit_kinds(b) * 3)[:3], unit_value(b), CURRENCY[b - CARD] if b < CARD_Z else UNSET)
              for b in range(CARD, GROUP_Z + 1))


@lru_cache(maxsize=RECENT)
def _completion(hand: tuple[int, ...], need: int, c: int, low: int) -> tuple[float, tuple[int, ...]]:
    """The payment completion (units in ascending id, each ≥ ``low``) that leaves the largest BestPay, then
    overpays least, the first in ascending unit order on a tie: (−BestPay left + overpay / 100, units);
    (inf, ()) if ``need`` cannot be reached."""
    if need <= 0:
        return -best_pay(hand) - need / 100, ()
    # a unit of a kind the hand lacks, or of another currency, is of no use further down either
    units = [u for u in UNITS[max(low, CARD) - CARD:] if hand[u[2][0]] and hand[u[2][1]] and hand[u[2][2]] and
             (c == UNSET or u[4] == UNSET or u[4] == c)]
    rest, path = list(hand), []
    best: list = [np.inf, ()]

    def search(start: int, need: int, c: int) -> None:  # depth first over the units in ascending id
        for j in range(start, len(units)):
            b, kinds, (x, y, z), value, cur = units[j]
            if cur != c and cur != UNSET and c != UNSET:
                continue
            for k in kinds:
                rest[k] -= 1
            if rest[x] >= 0 and rest[y] >= 0 and rest[z] >= 0:
                path.append(b)
                left = need - value
                if left > 0:
                    search(j, left, c if cur == UNSET else cur)
                elif -best_pay(rest) - left / 100 < best[0]:
                    best[:] = -best_pay(rest) - left / 100, tuple(path)
                path.pop()
            for k in kinds:
                rest[k] += 1

    search(0, need, c)
    return best[0], best[1]


_reach = lru_cache(maxsize=RECENT)(reach)


# ----------------------------------------------------------------- decoding fields (pure, memoised on raw bytes)
@lru_cache(maxsize=RECENT)
def _decode_hand(raw: bytes, dtype: np.dtype) -> tuple[int, ...]:
    return tuple(round(x * c) for x, c in zip(np.frombuffer(raw, dtype).tolist(), COPIES, strict=True))


@lru_cache(maxsize=TABLES)
def _decode_stage(raw: bytes, dtype: np.dtype) -> float:
    """The share of the stacks' items left, from ``stack_items``."""
    return float(np.frombuffer(raw, dtype) @ np.array(STACK_SIZES)) / ITEMS


@lru_cache(maxsize=RECENT)
def _decode_palaces(raw: bytes, dtype: np.dtype) -> Palaces:
    """My palaces from my row of the palace field (slots below my palace count), a tile by its look."""
    cells = np.frombuffer(raw, dtype).tolist()
    palaces = []
    for s in range(0, len(cells), SLOT_CELLS):
        palace = []
        for i in range(s, s + SLOT_CELLS, CELL):
            material = 0 if cells[i] else 1 if cells[i + 1] else 2 if cells[i + 2] else -1
            if material >= 0:
                palace.append(TILE_BY_LOOK[material, (i - s) // CELL + 1, round(cells[i + 3] * 3)])
        palaces.append(tuple(palace))
    return tuple(palaces)


class HeuristicAgent:
    """Greedy one-decision planner over the fields of the observation it needs (see the module docstring)."""

    def __init__(self, game: Game, seed: int | None = None):
        """``seed`` is accepted like every built-in agent's; this one is deterministic and ignores it."""
        self.game = game
        self.canonical = game.options["canonical_order"]
        layout = game.layout
        self.size = layout.size
        self.at = {f.name: f.start for f in layout}
        # the open payment's fields, read together: (offset, size) each and the span of the four
        self.payment_fields = tuple((layout[name].start, layout[name].size) for name in
                                    ("payment_value", "payment_target", "payment_currency", "last_unit"))
        self.payment_span = (min(at for at, _ in self.payment_fields),
                             max(at + size for at, size in self.payment_fields))
        self.mine = slice(layout["palaces"].start, layout["palaces"].start + layout["palaces"].size
                          // game.num_players)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        # nonzero() is the cheap path; the core helper refuses an empty mask with the agents' common message
        legal = action_mask.nonzero()[0].tolist() or legal_actions(action_mask, "HeuristicAgent")
        if len(legal) == 1:
            return legal[0]
        if observation.shape != (self.size,):
            raise ValueError(f"expected an observation of shape ({self.size},), got {observation.shape}")
        self.obs = observation
        at = self.at["decision"]
        d = self.decision = int(observation[at:at + 11].argmax()) + 1
        if d == ACTION:
            return self._choose_action(legal)
        if d == PICK:
            return best_pick(self._hand(), tuple(legal))
        if d == MODE:
            return self._mode(legal)
        if d == BID:
            return self._bid(legal)
        if d == PAY:
            return self._pay(legal)
        if d == DISTRIBUTE:
            return distribution_pick(self._palaces(), tuple(legal), self._stage())
        if d == PLACE:
            action, _ = best_placement(self._palaces(), self._focus(), self._stage())
            return action if action in legal else DEST_DISCARD
        if d in (RECON_TILE, RECON_DEST):
            return self._reconstruct(legal)
        if d == RECON_PAY:  # D11: the card that costs the least purchasing power
            return cheapest_card(self._hand(), tuple(legal))
        return self._select(legal)  # D4

    # ----------------------------------------------------------------- reading the observation
    def _scalar(self, name: str, scale: float) -> int:
        return round(self.obs.item(self.at[name]) * scale)

    def _one_hot(self, name: str, size: int) -> int:
        """The index set in a one-hot field, −1 if none is."""
        at = self.at[name]
        i = int(self.obs[at:at + size].argmax())
        return i if self.obs.item(at + i) else -1

    def _hand(self) -> tuple[int, ...]:
        at = self.at["hand"]
        return _decode_hand(self.obs[at:at + NUM_KINDS].tobytes(), self.obs.dtype)

    def _stage(self) -> float:
        at = self.at["stack_items"]
        return _decode_stage(self.obs[at:at + 3].tobytes(), self.obs.dtype)

    def _palaces(self) -> Palaces:
        count = self._scalar("palace_count", NUM_SLOTS)
        start = self.mine.start
        return _decode_palaces(self.obs[start:start + SLOT_CELLS * count].tobytes(), self.obs.dtype)

    def _master_builder(self) -> int:
        at = self.at["master_builder"]
        return int(self.obs[at:at + NUM_QUARRIES].argmax())

    def _focus(self) -> int:
        return self._one_hot("tile_focus", NUM_TILES)

    def _tiles_at(self, code: int) -> list[int]:
        """The tiles at location ``code`` in ascending id: that column of the one-hot ``tile_location``."""
        at = self.at["tile_location"] + code
        return self.obs[at:at + NUM_LOCATIONS * NUM_TILES:NUM_LOCATIONS].nonzero()[0].tolist()

    def _slot(self, t: int) -> int | None:
        """The palace slot of tile t (any seat's), None if it is in none (``tile_slot``)."""
        s = round(self.obs.item(self.at["tile_slot"] + t) * NUM_SLOTS) - 1
        return s if s >= 0 else None

    def _named_palaces(self) -> Palaces:
        """My palaces with each tile's own id where D9, D10 need it: of a pair of twins, the lower id stands
        for the tile at its slot if it is in that slot (of any seat), else the higher."""
        return tuple(tuple(TWIN[t] if t in TWIN and self._slot(t) != s else t for t in palace)
                     for s, palace in enumerate(self._palaces()))

    def _next_lot(self) -> tuple[int, ...]:
        """P40: the tiles the next auction would offer."""
        mb = self._master_builder()
        for step in range(1, NUM_QUARRIES):
            tiles = self._tiles_at(QUARRY + (mb + step) % NUM_QUARRIES)
            if tiles:
                return tuple(tiles)
        return ()

    def _payment(self) -> tuple[int, int, int, int]:
        """The open payment or bidding step: (target T, missing T − V, currency c*, lowest unit allowed), from one
        read of its neighbouring fields."""
        start, stop = self.payment_span
        cells = self.obs[start:stop].tolist()
        value, target, currency, last = (cells[at - start:at - start + size] for at, size in self.payment_fields)
        scale = self.game.pay_scale
        target = round(target[0] * scale)
        c = max(currency)
        currency = currency.index(c) if c else UNSET
        hot = max(last)
        low = last.index(hot) + CARD if self.canonical and hot else 0  # P23a: no unit below the last one
        return target, target - round(value[0] * scale), currency, low

    # ----------------------------------------------------------------- decisions
    def _choose_action(self, legal: list[int]) -> int:
        if RECONSTRUCT in legal:
            palaces, stage = self._palaces(), self._stage()
            rough = best_reconstruct_gain(palaces, stage)
            # the card only costs more, so the hand matters only from the margin up
            if rough >= RECONSTRUCT_MARGIN - ROUNDING and reconstruct_pays(palaces, self._hand(), stage, rough):
                return RECONSTRUCT
        if TAKE_MONEY in legal and self._scalar("best_pay", self.game.pay_scale) < POOR:
            return TAKE_MONEY
        return TILES

    def _mode(self, legal: list[int]) -> int:
        if BUY not in legal:
            return AUCTION
        palaces, stage = self._palaces(), self._stage()
        return BUY if buys(palaces, *self._buy_terms(), stage, self._next_lot()) else AUCTION

    def _buy_terms(self) -> tuple[tuple[int, ...], int, int]:
        """What ``buy_plan`` needs besides palaces and stage: the supply, BestPay and the price."""
        supply = tuple(self._tiles_at(SUPPLY) + self._tiles_at(SELECTED))
        return supply, self._scalar("best_pay", self.game.pay_scale), self._scalar("price", self.game.max_price)

    def _select(self, legal: list[int]) -> int:
        _, tiles = buy_plan(self._palaces(), *self._buy_terms(), self._stage())
        selected = self._tiles_at(SELECTED)
        wanted = [t for t in sorted(tiles) if t not in selected]
        if wanted and TILE + wanted[0] in legal:
            return TILE + wanted[0]
        return DONE if DONE in legal else legal[0]

    def _pay(self, legal: list[int], payment: tuple[int, int, int, int] | None = None) -> int:
        """D5 / D6: the first unit of the best completion; DONE once the target is met. ``payment``: the
        ``_payment()`` already read."""
        if DONE in legal:
            return DONE
        _, missing, currency, low = payment or self._payment()
        _, units = _completion(self._hand(), missing, currency, low)
        if units and units[0] in legal:
            return units[0]
        return min(a for a in legal if a != PASS)  # keep the mask's promise: every legal unit can complete

    def _bid(self, legal: list[int]) -> int:
        payment = None
        if PASS in legal:
            payment = target, missing, currency, low = self._payment()
            if _reach(self._hand(), currency, low) < missing:  # no completion (P23a: what Reach promises)
                return PASS
            lot = tuple(self._tiles_at(QUARRY + self._master_builder()))
            palaces, stage = self._palaces(), self._stage()
            free = 3 if self.obs.item(self.at["active"]) else 0  # X3
            gain, sure, after = rough_tiles_gain(palaces, lot, stage)
            limit = gain / money_worth(stage) + free
            if not sure or abs(target - limit) <= ROUNDING:
                limit = exact_tiles_gain(palaces, lot, stage, after) / money_worth(stage) + free
            if target > limit:
                return PASS
        return self._pay(legal, payment)

    def _reconstruct(self, legal: list[int]) -> int:
        moves = reconstruct_moves(self._named_palaces(), self._stage())
        if self.decision == RECON_TILE:
            for _, t, _ in sorted(moves, reverse=True):  # the representative id, or its twin in the same slot
                for a in legal:
                    u = a - TILE
                    if FLOOR[u] == FLOOR[t] and MATERIAL[u] == MATERIAL[t] and WINDOWS[u] == WINDOWS[t] and \
                            self._slot(u) == self._slot(t):
                        return a
            return legal[0]
        t = self._focus()
        moves = [m for m in moves if self._slot(m[1]) == self._slot(t) and FLOOR[m[1]] == FLOOR[t] and m[2] in legal]
        return max(moves)[2] if moves else legal[-1]
