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
    NUM_QUARRIES,
    NUM_SLOTS,
    NUM_TILES,
    PALACE,
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
from .payments import COPIES, CURRENCY, GROUP_Z, NUM_KINDS, UNSET, Z, best_pay, unit_kinds, unit_value

MONEY_WORTH = 0.35  # points per unit of money value early in the game
GROWTH = {1: 5.0, 2: 6.0, 3: 5.0, 4: 5.0}  # points a palace of t tiles usually gains with one more tile
GROWTH_DECAY = 0.8  # each further floor is less likely to be filled
RECONSTRUCT_MARGIN = 2.5  # points a reconstruct must gain over its card
POOR = 14  # below this BestPay the bot takes money when it may
ITEMS = sum(STACK_SIZES)

Palace = tuple[int, ...]  # tile ids bottom to top (a twin stands for its identical partner)


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


def placements(palaces: list[Palace], t: int) -> list[tuple[int, list[Palace]]]:
    """P51: (action, palaces after) for every way to place tile t."""
    out = [(DEST + s, palaces[:s] + [p + (t,)] + palaces[s + 1:])
           for s, p in enumerate(palaces) if FLOOR[p[-1]] < FLOOR[t]]
    return out + [(DEST_NEW, palaces + [(t,)]), (DEST_DISCARD, palaces)]


@lru_cache(maxsize=1 << 16)
def _completion(hand: tuple[int, ...], need: int, c: int, low: int) -> tuple[float, tuple[int, ...]]:
    """The payment completion (units in ascending id, each ≥ ``low``) that leaves the largest BestPay, then
    overpays least: (−BestPay left + overpay / 100, units); (inf, ()) if ``need`` cannot be reached."""
    if need <= 0:
        return -best_pay(hand) - need / 100, ()
    best: tuple[float, tuple[int, ...]] = (np.inf, ())
    for b in range(max(low, CARD), GROUP_Z + 1):
        kinds = unit_kinds(b)
        if b < CARD + Z and c != UNSET and CURRENCY[b - CARD] != c:
            continue
        rest = list(hand)
        for k in kinds:
            rest[k] -= 1
        if min(rest[k] for k in kinds) < 0:
            continue
        new_c = CURRENCY[b - CARD] if b < CARD + Z else c
        cost, units = _completion(tuple(rest), need - unit_value(b), new_c, b)
        if cost < best[0]:
            best = (cost, (b, *units))
    return best


class HeuristicAgent:
    """Greedy one-decision planner over the decoded observation (see the module docstring)."""

    def __init__(self, game: Game, seed: int | None = None):
        """``seed`` is accepted like every built-in agent's; this one is deterministic and ignores it."""
        self.game = game
        self.canonical = game.options["canonical_order"]

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = legal_actions(action_mask, "HeuristicAgent")
        if len(legal) == 1:
            return legal[0]
        self._read(observation)
        d = self.decision
        if d == ACTION:
            return self._choose_action(legal)
        if d == PICK:
            return max(legal, key=lambda a: self._card_gain(a - CARD))
        if d == MODE:
            return BUY if BUY in legal and self._buy_plan()[0] >= self._auction_gain() else AUCTION
        if d == BID:
            return self._bid(legal)
        if d == PAY:
            return self._pay(legal, self.target)
        if d == DISTRIBUTE:
            return max(legal, key=lambda a: self._tiles_gain([a - TILE]))
        if d == PLACE:
            return self._place(legal)
        if d in (RECON_TILE, RECON_DEST):
            return self._reconstruct(legal)
        if d == RECON_PAY:  # D11: the card that costs the least purchasing power
            return min(legal, key=lambda a: (self._card_loss(a - CARD), a))
        return self._select(legal)  # D4

    # ----------------------------------------------------------------- reading the observation
    def _read(self, obs: np.ndarray) -> None:
        f = self.game.layout.unpack(obs)
        self.decision = int(f["decision"].argmax()) + 1
        self.hand = [round(float(x) * c) for x, c in zip(f["hand"], COPIES, strict=True)]
        where = f["tile_location"].argmax(axis=1)
        self.where = where
        slots = np.rint(f["tile_slot"] * NUM_SLOTS).astype(int) - 1
        self.focus = int(f["tile_focus"].argmax()) if f["tile_focus"].any() else -1
        # my palaces (row 0), one representative id per tile: the slot's tile ids from tile_slot, checked
        # against my row of the palace field (another seat may hold a twin at the same slot number)
        mine = f["palaces"][0]
        count = round(float(f["palace_count"][0]) * NUM_SLOTS)
        palaces: list[list[int]] = [[] for _ in range(count)]
        for t in range(NUM_TILES):
            s = slots[t]
            if 0 <= s < count and where[t] == PALACE:
                cell = mine[s, FLOOR[t] - 1]
                if cell[MATERIAL[t]] and round(float(cell[3]) * 3) == WINDOWS[t] and \
                        all(FLOOR[x] != FLOOR[t] for x in palaces[s]):
                    palaces[s].append(t)
        self.palaces = [tuple(sorted(p, key=FLOOR.__getitem__)) for p in palaces]
        self.ids = {t: int(s) for t, s in enumerate(slots) if s >= 0}
        self.stage = float(f["stack_items"] @ np.array(STACK_SIZES)) / ITEMS
        self.money_worth = MONEY_WORTH * (0.25 + 0.75 * self.stage)
        scale = self.game.pay_scale
        self.price = round(float(f["price"][0]) * self.game.max_price)
        self.value = round(float(f["payment_value"][0]) * scale)
        self.target = round(float(f["payment_target"][0]) * scale)
        self.currency = int(f["payment_currency"].argmax()) if f["payment_currency"].any() else UNSET
        self.last = int(f["last_unit"].argmax()) + CARD if f["last_unit"].any() else 0
        self.mb = int(f["master_builder"].argmax())
        self.i_am_active = bool(f["active"][0])

    def _tiles_at(self, code: int) -> list[int]:
        return [t for t in range(NUM_TILES) if self.where[t] == code]

    # ----------------------------------------------------------------- valuing tiles and money
    def _worth(self, palaces: list[Palace]) -> float:
        return sum(palace_value(p, self.stage) for p in palaces)

    def _best_placement(self, palaces: list[Palace], t: int) -> tuple[int, list[Palace]]:
        return max(placements(palaces, t), key=lambda option: self._worth(option[1]))

    def _tiles_gain(self, tiles: list[int]) -> float:
        """Points gained by placing ``tiles`` one by one in ascending floor order, each where it adds most."""
        palaces = self.palaces
        for t in sorted(tiles, key=lambda x: (FLOOR[x], x)):
            palaces = self._best_placement(palaces, t)[1]
        return self._worth(palaces) - self._worth(self.palaces)

    def _card_gain(self, k: int) -> float:
        hand = list(self.hand)
        before = best_pay(hand)
        hand[k] += 1
        same = sum(self.hand[5 * CURRENCY[k]:5 * CURRENCY[k] + 5]) if k != Z else 0
        return best_pay(hand) - before + 0.1 * unit_value(CARD + k) + 0.2 * same

    def _card_loss(self, k: int) -> int:
        hand = list(self.hand)
        before = best_pay(hand)
        hand[k] -= 1
        return before - best_pay(hand)

    # ----------------------------------------------------------------- decisions
    def _choose_action(self, legal: list[int]) -> int:
        if RECONSTRUCT in legal and self._best_reconstruct()[0] >= RECONSTRUCT_MARGIN:
            return RECONSTRUCT
        if TAKE_MONEY in legal and best_pay(self.hand) < POOR:
            return TAKE_MONEY
        return TILES

    def _buy_plan(self) -> tuple[float, list[int]]:
        """The best one or two supply tiles to buy at the current price, with their gain over the cost."""
        supply = self._tiles_at(SUPPLY) + self._tiles_at(SELECTED)
        bp = best_pay(self.hand)
        best: tuple[float, list[int]] = (-np.inf, [])
        for i, a in enumerate(supply):
            options = [[a]] + ([[a, b] for b in supply[i + 1:]] if bp >= 2 * self.price else [])
            for tiles in options:
                if bp >= len(tiles) * self.price:
                    gain = self._tiles_gain(tiles) - self.money_worth * len(tiles) * self.price
                    best = max(best, (gain, tiles))
        return best

    def _next_lot(self) -> list[int]:
        """P40: the tiles the next auction would offer."""
        for step in range(1, NUM_QUARRIES):
            tiles = self._tiles_at(QUARRY + (self.mb + step) % NUM_QUARRIES)
            if tiles:
                return tiles
        return []

    def _auction_gain(self) -> float:
        lot = self._next_lot()
        if len(lot) >= 4:  # a distribution: I pick first
            return max(self._tiles_gain([t]) for t in lot)
        return 0.6 * self._tiles_gain(lot) if lot else 0.0

    def _select(self, legal: list[int]) -> int:
        _, tiles = self._buy_plan()
        selected = self._tiles_at(SELECTED)
        wanted = [t for t in sorted(tiles) if t not in selected]
        if wanted and TILE + wanted[0] in legal:
            return TILE + wanted[0]
        return DONE if DONE in legal else legal[0]

    def _pay(self, legal: list[int], target: int) -> int:
        """D5 / D6: the first unit of the best completion; DONE once the target is met."""
        if DONE in legal:
            return DONE
        low = self.last if self.canonical else 0
        _, units = _completion(tuple(self.hand), target - self.value, self.currency, low)
        if units and units[0] in legal:
            return units[0]
        return min(a for a in legal if a != PASS)  # keep the mask's promise: every legal unit can complete

    def _bid(self, legal: list[int]) -> int:
        lot = self._tiles_at(QUARRY + self.mb)
        limit = self._tiles_gain(lot) / self.money_worth + (3 if self.i_am_active else 0)  # X3 is free
        if PASS in legal:
            low = self.last if self.canonical else 0
            cost, _ = _completion(tuple(self.hand), self.target - self.value, self.currency, low)
            if self.target > limit or cost == np.inf:
                return PASS
        return self._pay(legal, self.target)

    def _place(self, legal: list[int]) -> int:
        action, _ = self._best_placement(self.palaces, self.focus)
        return action if action in legal else DEST_DISCARD

    def _reconstruct_moves(self) -> list[tuple[float, int, int]]:
        """Every REMOVE, INSERT and DISCARD (P56): (gain in points, tile, destination action)."""
        before = self._worth(self.palaces)
        out = []
        for s, palace in enumerate(self.palaces):
            for t in palace:
                if len(palace) > 1:
                    rest = tuple(x for x in palace if x != t)
                    after = self.palaces[:s] + [rest] + self.palaces[s + 1:] + [(t,)]
                    out.append((self._worth(after) - before, t, DEST_NEW))
                    continue
                others = self.palaces[:s] + self.palaces[s + 1:]
                out.append((self._worth(others) - before, t, DEST_DISCARD))
                for i, target in enumerate(self.palaces):
                    if i != s and all(FLOOR[x] != FLOOR[t] for x in target):
                        grown = tuple(sorted(target + (t,), key=FLOOR.__getitem__))
                        after = [grown if j == i else p for j, p in enumerate(self.palaces) if j != s]
                        out.append((self._worth(after) - before, t, DEST + i))
        return out

    def _best_reconstruct(self) -> tuple[float, int, int]:
        cheapest = min((self._card_loss(k) for k in range(NUM_KINDS) if self.hand[k]), default=0)
        moves = self._reconstruct_moves()
        if not moves:
            return -np.inf, -1, -1
        gain, t, dest = max(moves)
        return gain - self.money_worth * cheapest, t, dest

    def _reconstruct(self, legal: list[int]) -> int:
        if self.decision == RECON_TILE:
            moves = sorted(self._reconstruct_moves(), reverse=True)
            for _, t, _ in moves:  # the representative id, or its twin in the same slot
                for a in legal:
                    u = a - TILE
                    if FLOOR[u] == FLOOR[t] and MATERIAL[u] == MATERIAL[t] and WINDOWS[u] == WINDOWS[t] and \
                            self.ids.get(u) == self.ids.get(t):
                        return a
            return legal[0]
        t = self.focus
        moves = [m for m in self._reconstruct_moves() if self.ids.get(m[1]) == self.ids.get(t) and
                 FLOOR[m[1]] == FLOOR[t] and m[2] in legal]
        return max(moves)[2] if moves else legal[-1]
