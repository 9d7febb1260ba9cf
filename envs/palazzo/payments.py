"""Palazzo money and payments (``docs/rules/palazzo.md`` §4: P2, P3, P16–P24).

Every money location is a multiset over 16 kinds (P2): ``k = 5·c + (v − 3)`` for currency c (A, B, C)
and value v in 3..7, and ``k = 15`` for a certificate Z. Hands are lists of 16 counts.

A payment is built unit by unit (P21). The units and their action ids (P73) are ADD_CARD(k) = 53 + k and
ADD_GROUP(v) = 66 + v for v in 3..7, ADD_GROUP(Z) = 74. Which additions are legal depends only on the
hand, the payment's currency c*, the last unit id a (canonical order, P23a) and how much is still missing
(T − V), so :func:`additions` lists, once per (hand, c*, a), every available unit with what it adds and the
Reach after it; a mask is then one comparison per unit.
"""

from __future__ import annotations

from functools import lru_cache

NUM_KINDS = 16
Z = 15  # the certificate kind (P2)
CURRENCY_NAMES = "ABC"
COPIES = (3,) * 15 + (10,)  # P2: 3 copies of each currency card, 10 certificates
TOTAL_CARDS = sum(COPIES)  # 55
VALUE = tuple(3 + k % 5 for k in range(15)) + (2,)
CURRENCY = tuple(k // 5 for k in range(15)) + (-1,)
UNSET = -1  # c* before the first single currency card (P21)
GROUP_VALUE = 15  # P16, P18
X3_VALUE = 3  # P3, P42

CARD = 53  # ADD_CARD(k) / CARD(k) = 53 + k (P73)
CARD_Z = CARD + Z  # 68
GROUP = 69  # ADD_GROUP(v) = GROUP + v − 3
GROUP_Z = 74
NUM_UNITS = GROUP_Z - CARD + 1  # 22 unit actions, 53–74
# P24 / bounds: the largest payment of all 55 cards is 15 currency groups and 3 certificate groups plus one Z
MAX_PAYMENT = 15 * GROUP_VALUE + 3 * GROUP_VALUE + 2  # 272
MAX_BID = MAX_PAYMENT + X3_VALUE  # 275


def kind_name(k: int) -> str:
    """``A5``, ``C7``, ``Z`` (notation of §0)."""
    return "Z" if k == Z else f"{CURRENCY_NAMES[k // 5]}{3 + k % 5}"


def unit_name(unit: int) -> str:
    """A payment unit by its action id: ``A5``, ``Z``, ``[A4 B4 C4]``, ``[Z Z Z]``."""
    if unit < GROUP:
        return kind_name(unit - CARD)
    if unit == GROUP_Z:
        return "[Z Z Z]"
    v = unit - GROUP + 3
    return f"[A{v} B{v} C{v}]"


def unit_kinds(unit: int) -> tuple[int, ...]:
    """The card kinds a unit commits (P21)."""
    if unit < GROUP:
        return (unit - CARD,)
    if unit == GROUP_Z:
        return (Z, Z, Z)
    i = unit - GROUP
    return (i, 5 + i, 10 + i)


def unit_value(unit: int) -> int:
    """P16, P18: a single card is worth its face value, a group 15."""
    return VALUE[unit - CARD] if unit < GROUP else GROUP_VALUE


def reach(hand, c: int, a: int = 0) -> int:
    """R_a(H, c) of P22/P23a: the most ``hand`` can still add to a payment of currency ``c`` with units of id
    ≥ ``a`` (``a = 0``: any unit, R of P22); with ``c = UNSET`` the maximum over the three currencies."""
    z = hand[Z]
    total = GROUP_VALUE * (z // 3) + (2 * (z % 3) if a <= CARD_Z else 0)
    groups = [min(hand[i], hand[5 + i], hand[10 + i]) for i in range(5)]
    for i, g in enumerate(groups):
        if g and GROUP + i >= a:
            total += GROUP_VALUE * g
    best = 0
    for cur in ((0, 1, 2) if c == UNSET else (c,)):
        base = 5 * cur
        if CARD + base + 4 < a:  # every single of this currency is below a
            continue
        singles = 0
        for i in range(5):
            if CARD + base + i >= a:
                singles += (3 + i) * (hand[base + i] - groups[i])
        best = max(best, singles)
    return total + best


def best_pay(hand) -> int:
    """BestPay(H) of P24: the largest single payment the hand can form (X3 never counts)."""
    return _best_pay(tuple(hand))


@lru_cache(maxsize=1 << 16)
def _best_pay(hand: tuple[int, ...]) -> int:
    return reach(hand, UNSET, 0)


@lru_cache(maxsize=1 << 16)
def additions(hand: tuple[int, ...], c: int, a: int, canonical: bool) -> tuple[tuple[int, int, int, int], ...]:
    """Every unit the hand can add next (P21, P23, P23a), as ``(unit id, value added, new c*, Reach of the
    rest)``; the addition is legal iff ``value added + Reach of the rest ≥ T − V``.

    With ``canonical`` only units of id ≥ ``a`` are listed and the rest is measured by R_b (units of id ≥ b,
    the unit's own id); otherwise by R (any order). A single currency card must match c* once it is set
    (P17); groups and certificates fit any payment."""
    out = []
    lo = a if canonical else 0
    for k in range(15):
        b = CARD + k
        if not hand[k] or b < lo or (c != UNSET and c != k // 5):
            continue
        rest = list(hand)
        rest[k] -= 1
        out.append((b, VALUE[k], k // 5, reach(rest, k // 5, b if canonical else 0)))
    if hand[Z] and CARD_Z >= lo:
        rest = list(hand)
        rest[Z] -= 1
        out.append((CARD_Z, 2, c, reach(rest, c, CARD_Z if canonical else 0)))
    for i in range(5):
        b = GROUP + i
        if b >= lo and hand[i] and hand[5 + i] and hand[10 + i]:
            rest = list(hand)
            rest[i] -= 1
            rest[5 + i] -= 1
            rest[10 + i] -= 1
            out.append((b, GROUP_VALUE, c, reach(rest, c, b if canonical else 0)))
    if hand[Z] >= 3:  # GROUP_Z is the highest id, always ≥ a
        rest = list(hand)
        rest[Z] -= 3
        out.append((GROUP_Z, GROUP_VALUE, c, reach(rest, c, GROUP_Z if canonical else 0)))
    return tuple(out)


def legal_units(hand, c: int, a: int, canonical: bool, missing: int) -> list[int]:
    """The unit ids whose addition keeps Reach ≥ T, ``missing`` being T − V (P23, P23a)."""
    return [b for b, gain, _, rest in additions(tuple(hand), c, a, canonical) if gain + rest >= missing]
