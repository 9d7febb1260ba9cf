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

Speed: the bot is asked at every opponent decision of training, so a decision reads only the fields it needs,
at offsets fixed once per game (a 4-player observation has 4,746 values), and every valuation is a memoised
pure function of small hashable arguments (palaces, tiles, stage, hand), shared by every agent and seat; the
decoded fields themselves are memoised on their raw bytes. Nothing is assumed about the previous call.
Palaces are read from the seat's own palace cells, a tile standing for its identical twin (6/7, 22/23, 38/39)
when its id does not matter; D9 and D10, which name tiles, correct the twins from ``tile_slot``. Worths are
summed palace by palace in the same order whatever is memoised, so ties break exactly as a plain evaluation's.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..core.agents import legal_actions
from ..core.game import Game
from .components import (
    ACTION,
    BID,
    DISTRIBUTE,
    FLOOR,
    MATERIAL,
    MODE,
    NUM_LOCATIONS,
    NUM_QUARRIES,
    NUM_SLOTS,
    NUM_TILES,
    PAY,
    PICK,
    PLACE,
    QUARRY,
    RECON_DEST,
    RECON_PAY,
    RECON_TILE,
    SELECTED,
    STACK_SIZES,
    SUPPLY,
    WINDOWS,
)
from .game import (
    AUCTION,
    BUY,
    CARD,
    DEST,
    DEST_DISCARD,
    DEST_NEW,
    DONE,
    PASS,
    RECONSTRUCT,
    TAKE_MONEY,
    TILE,
    TILES,
    palace_score,
)
from .payments import CARD_Z, COPIES, CURRENCY, GROUP_Z, NUM_KINDS, NUM_UNITS, UNSET, Z, best_pay, unit_kinds, unit_value

MONEY_WORTH = 0.35  # points per unit of money value early in the game
GROWTH = {1: 5.0, 2: 6.0, 3: 5.0, 4: 5.0}  # points a palace of t tiles usually gains with one more tile
GROWTH_DECAY = 0.8  # each further floor is less likely to be filled
RECONSTRUCT_MARGIN = 2.5  # points a reconstruct must gain over its card
POOR = 14  # below this BestPay the bot takes money when it may
ITEMS = sum(STACK_SIZES)
CACHE = 1 << 16  # entries per memoised function: positions recur within a game, rarely across games
FLOORS = 5
CELL = 4  # a palace floor's cell: material one-hot (3), windows / 3
SLOT_CELLS = FLOORS * CELL

Palace = tuple[int, ...]  # tile ids bottom to top (a twin stands for its identical partner)
Palaces = tuple[Palace, ...]

# P4, P5: a tile by (material, floor, windows), the lower id of an identical pair; and that pair's other id
TILE_BY_LOOK = {(MATERIAL[t], FLOOR[t], WINDOWS[t]): t for t in reversed(range(NUM_TILES))}
TWIN = {t: u for t in range(NUM_TILES) for u in range(t + 1, NUM_TILES)
        if (MATERIAL[t], FLOOR[t], WINDOWS[t]) == (MATERIAL[u], FLOOR[u], WINDOWS[u])}


# ----------------------------------------------------------------- valuing palaces (pure, memoised)
@lru_cache(maxsize=CACHE)
def palace_value(palace: Palace, stage: float) -> float:
    """Score plus what the palace may still grow into: one more tile per free floor above its top, each less
    likely, all scaled by ``stage`` (the share of the stacks left)."""
    value = float(palace_score(list(palace)))
    t, room = len(palace), 5 - FLOOR[palace[-1]]
    weight = stage
    for j in range(min(room, 5 - t)):
        value += weight * GROWTH[t + j]
        weight *= GROWTH_DECAY
    return value


def money_worth(stage: float) -> float:
    """Points per unit of money value: less as the stacks run out."""
    return MONEY_WORTH * (0.25 + 0.75 * stage)


def worth(palaces: Palaces, stage: float) -> float:
    return sum([palace_value(p, stage) for p in palaces])


@lru_cache(maxsize=CACHE)
def best_placement(palaces: Palaces, t: int, stage: float) -> tuple[int, Palaces]:
    """P51: (action, palaces after) of the placement of tile t worth most, the first in action order on a tie
    (on a palace with a lower top, new palace, discard). Each option's worth is the same sum, palace by palace,
    as a plain evaluation of the palaces after it."""
    values = [palace_value(p, stage) for p in palaces]
    best, action, slot = -np.inf, DEST_DISCARD, -1
    for s, p in enumerate(palaces):
        if FLOOR[p[-1]] < FLOOR[t]:
            total = sum(values[:s] + [palace_value(p + (t,), stage)] + values[s + 1:])
            if total > best:
                best, action, slot = total, DEST + s, s
    total = sum(values + [palace_value((t,), stage)])
    if total > best:
        best, action = total, DEST_NEW
    if sum(values) > best:
        action = DEST_DISCARD
    if action == DEST_NEW:
        return action, palaces + ((t,),)
    if action == DEST_DISCARD:
        return action, palaces
    return action, palaces[:slot] + (palaces[slot] + (t,),) + palaces[slot + 1:]


@lru_cache(maxsize=CACHE)
def tiles_gain(palaces: Palaces, tiles: tuple[int, ...], stage: float) -> float:
    """Points gained by placing ``tiles`` one by one in ascending floor order, each where it adds most."""
    after = palaces
    for t in sorted(tiles, key=lambda x: (FLOOR[x], x)):
        after = best_placement(after, t, stage)[1]
    return worth(after, stage) - worth(palaces, stage)


@lru_cache(maxsize=CACHE)
def buy_plan(palaces: Palaces, supply: tuple[int, ...], bp: int, price: int, stage: float
             ) -> tuple[float, tuple[int, ...]]:
    """The best one or two of the ``supply`` tiles to buy at ``price`` with BestPay ``bp``, with their gain over
    the cost; (−inf, ()) if none can be paid."""
    mw = money_worth(stage)
    best: tuple[float, list[int]] = (-np.inf, [])
    for i, a in enumerate(supply):
        options = [[a]] + ([[a, b] for b in supply[i + 1:]] if bp >= 2 * price else [])
        for tiles in options:
            if bp >= len(tiles) * price:
                gain = tiles_gain(palaces, tuple(tiles), stage) - mw * len(tiles) * price
                best = max(best, (gain, tiles))
    return best[0], tuple(best[1])


@lru_cache(maxsize=CACHE)
def auction_gain(palaces: Palaces, lot: tuple[int, ...], stage: float) -> float:
    """What the next lot looks worth: a distribution's best single tile (I pick first), else a share of the lot."""
    if len(lot) >= 4:
        return max(tiles_gain(palaces, (t,), stage) for t in lot)
    return 0.6 * tiles_gain(palaces, lot, stage) if lot else 0.0


@lru_cache(maxsize=CACHE)
def reconstruct_moves(palaces: Palaces, stage: float) -> tuple[tuple[float, int, int], ...]:
    """Every REMOVE, INSERT and DISCARD (P56): (gain in points, tile, destination action)."""
    values = [palace_value(p, stage) for p in palaces]
    before = sum(values)
    out = []
    for s, palace in enumerate(palaces):
        for t in palace:
            if len(palace) > 1:
                rest = tuple(x for x in palace if x != t)
                after = values[:s] + [palace_value(rest, stage)] + values[s + 1:] + [palace_value((t,), stage)]
                out.append((sum(after) - before, t, DEST_NEW))
                continue
            out.append((sum(values[:s] + values[s + 1:]) - before, t, DEST_DISCARD))
            for i, target in enumerate(palaces):
                if i != s and all(FLOOR[x] != FLOOR[t] for x in target):
                    grown = palace_value(tuple(sorted(target + (t,), key=FLOOR.__getitem__)), stage)
                    after = [grown if j == i else v for j, v in enumerate(values) if j != s]
                    out.append((sum(after) - before, t, DEST + i))
    return tuple(out)


@lru_cache(maxsize=CACHE)
def best_reconstruct_gain(palaces: Palaces, hand: tuple[int, ...], stage: float) -> float:
    """The best reconstruct move's gain less what its cheapest card is worth; −inf if there is none."""
    moves = reconstruct_moves(palaces, stage)
    if not moves:
        return -np.inf
    cheapest = min((card_loss(hand, k) for k in range(NUM_KINDS) if hand[k]), default=0)
    return max(moves)[0] - money_worth(stage) * cheapest


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


@lru_cache(maxsize=CACHE)
def best_pick(hand: tuple[int, ...], legal: tuple[int, ...]) -> int:
    return max(legal, key=lambda a: card_gain(hand, a - CARD))


@lru_cache(maxsize=CACHE)
def cheapest_card(hand: tuple[int, ...], legal: tuple[int, ...]) -> int:
    return min(legal, key=lambda a: (card_loss(hand, a - CARD), a))


# P21: every payment unit as (action id, kinds it commits, three kinds whose counts must stay ≥ 0 after it,
# value, currency it sets or UNSET)
UNITS = tuple((b, unit_kinds(b), (unit_kinds(b) * 3)[:3], unit_value(b), CURRENCY[b - CARD] if b < CARD_Z else UNSET)
              for b in range(CARD, GROUP_Z + 1))


@lru_cache(maxsize=CACHE)
def _completion(hand: tuple[int, ...], need: int, c: int, low: int) -> tuple[float, tuple[int, ...]]:
    """The payment completion (units in ascending id, each ≥ ``low``) that leaves the largest BestPay, then
    overpays least, the first in ascending unit order on a tie: (−BestPay left + overpay / 100, units);
    (inf, ()) if ``need`` cannot be reached."""
    if need <= 0:
        return -best_pay(hand) - need / 100, ()
    # a unit the hand cannot pay or of another currency now cannot be used further down either
    units = [u for u in UNITS[max(low, CARD) - CARD:] if hand[u[1][0]] and hand[u[1][-1]] and
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


# ----------------------------------------------------------------- decoding fields (pure, memoised on raw bytes)
@lru_cache(maxsize=CACHE)
def _decode_hand(raw: bytes, dtype: np.dtype) -> tuple[int, ...]:
    return tuple(round(x * c) for x, c in zip(np.frombuffer(raw, dtype).tolist(), COPIES, strict=True))


@lru_cache(maxsize=CACHE)
def _decode_stage(raw: bytes, dtype: np.dtype) -> float:
    """The share of the stacks' items left, from ``stack_items``."""
    return float(np.frombuffer(raw, dtype) @ np.array(STACK_SIZES)) / ITEMS


@lru_cache(maxsize=CACHE)
def _decode_palaces(raw: bytes, dtype: np.dtype) -> Palaces:
    """My palaces from my row of the palace field (slots below my palace count), a tile by its look."""
    cells = np.frombuffer(raw, dtype).tolist()
    palaces = []
    for s in range(0, len(cells), SLOT_CELLS):
        palace = []
        for f in range(FLOORS):
            cell = cells[s + CELL * f:s + CELL * f + CELL]
            for m in range(3):
                if cell[m]:
                    palace.append(TILE_BY_LOOK[m, f + 1, round(cell[3] * 3)])
                    break
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
            if BUY not in legal:
                return AUCTION
            palaces, stage = self._palaces(), self._stage()
            return BUY if self._buy_plan(palaces, stage)[0] >= auction_gain(palaces, self._next_lot(), stage) \
                else AUCTION
        if d == BID:
            return self._bid(legal)
        if d == PAY:
            return self._pay(legal)
        if d == DISTRIBUTE:
            palaces, stage = self._palaces(), self._stage()
            return max(legal, key=lambda a: tiles_gain(palaces, (a - TILE,), stage))
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
        hot = self.obs[at:at + size].nonzero()[0]
        return int(hot[0]) if len(hot) else -1

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
        """The open payment or bidding step: (target T, missing T − V, currency c*, lowest unit allowed)."""
        scale = self.game.pay_scale
        target = self._scalar("payment_target", scale)
        currency = self._one_hot("payment_currency", 3)
        last = self._one_hot("last_unit", NUM_UNITS)
        low = last + CARD if self.canonical and last >= 0 else 0  # P23a: no unit below the last one
        return target, target - self._scalar("payment_value", scale), UNSET if currency < 0 else currency, low

    # ----------------------------------------------------------------- decisions
    def _choose_action(self, legal: list[int]) -> int:
        if RECONSTRUCT in legal and \
                best_reconstruct_gain(self._palaces(), self._hand(), self._stage()) >= RECONSTRUCT_MARGIN:
            return RECONSTRUCT
        if TAKE_MONEY in legal and best_pay(self._hand()) < POOR:
            return TAKE_MONEY
        return TILES

    def _buy_plan(self, palaces: Palaces, stage: float) -> tuple[float, tuple[int, ...]]:
        supply = tuple(self._tiles_at(SUPPLY) + self._tiles_at(SELECTED))
        price = self._scalar("price", self.game.max_price)
        return buy_plan(palaces, supply, best_pay(self._hand()), price, stage)

    def _select(self, legal: list[int]) -> int:
        _, tiles = self._buy_plan(self._palaces(), self._stage())
        selected = self._tiles_at(SELECTED)
        wanted = [t for t in sorted(tiles) if t not in selected]
        if wanted and TILE + wanted[0] in legal:
            return TILE + wanted[0]
        return DONE if DONE in legal else legal[0]

    def _pay(self, legal: list[int]) -> int:
        """D5 / D6: the first unit of the best completion; DONE once the target is met."""
        if DONE in legal:
            return DONE
        _, missing, currency, low = self._payment()
        _, units = _completion(self._hand(), missing, currency, low)
        if units and units[0] in legal:
            return units[0]
        return min(a for a in legal if a != PASS)  # keep the mask's promise: every legal unit can complete

    def _bid(self, legal: list[int]) -> int:
        if PASS in legal:
            target, missing, currency, low = self._payment()
            cost, _ = _completion(self._hand(), missing, currency, low)
            if cost == np.inf:
                return PASS
            lot = tuple(self._tiles_at(QUARRY + self._master_builder()))
            active = self.obs.item(self.at["active"])
            limit = tiles_gain(self._palaces(), lot, self._stage()) / money_worth(self._stage()) + \
                (3 if active else 0)  # X3 is free
            if target > limit:
                return PASS
        return self._pay(legal)

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
