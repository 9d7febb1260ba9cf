"""Torres action cards (T38) and master cards (T59, T63–T64).

Action-card effects are resolved by the engine (``game.py``); this module names them and scores the
master cards, which only need the knights' squares and the board.
"""

from __future__ import annotations

from .board import DIAG, EMPTY, JUMPS, KING, NEIGH, Board

CARD_NAMES = ("jump up two", "block under knight", "extra block", "door climb", "diagonal move", "ap 6", "ap 7",
              "move block", "relocate knight", "jump over")  # T38, ids 0–9
(JUMP_UP_TWO, BLOCK_UNDER_KNIGHT, EXTRA_BLOCK, DOOR_CLIMB, DIAGONAL_MOVE, AP_6, AP_7, MOVE_BLOCK,
 RELOCATE_KNIGHT, JUMP_OVER) = range(10)
NUM_CARD_TYPES = 10
KNIGHT_CARDS = (JUMP_UP_TWO, DOOR_CLIMB, DIAGONAL_MOVE, RELOCATE_KNIGHT, JUMP_OVER)
"""Cards resolved by SELECT own knight (D7), then SELECT destination (D8) (T70)."""

MASTER_NAMES = ("M1", "M2", "M3", "M4", "M5", "M6", "M7", "M8")
MASTER_TEXT = ("knights on border squares", "knights on the main diagonals", "knights on exactly 4/5/6 castles",
               "all knights neighbouring", "all knights on different levels", "all knights in a row",
               "four knights on the corners of a square", "all knights on the same level")
BORDER = frozenset(s for s in range(64) if s // 8 in (0, 7) or s % 8 in (0, 7))  # T63: 28 squares
MAIN_DIAGONALS = frozenset(s for s in range(64) if s // 8 == s % 8 or s // 8 + s % 8 == 7)  # T63: 16 squares
PER_KNIGHT = (2, 5, 10)  # T64 M1/M2 after phase 1, 2, 3 (the same again as the extra)
M3_CASTLES, M3_POINTS = (4, 5, 6), (5, 15, 30)
FINAL_POINTS = {3: 40, 4: 40, 5: 50, 6: 50, 7: 50}  # T64 M4–M8, phase 3 only (ids 0-based)


def card_targets(board: Board, card: int, a: int, own: list[int], exact_jump: bool = True) -> list[int]:
    """D8 (T39–T48): the destinations of ``card`` played from ``a`` (its knight, or the MOVE_BLOCK source) by
    the player whose knights are ``own``, ascending. Every destination is empty (T39)."""
    h, occ = board.h, board.occ
    if card == JUMP_UP_TWO:  # T40
        top = h[a] + 2
        return [c for c in NEIGH[a] if occ[c] == EMPTY and (h[c] == top if exact_jump else h[c] <= top)]
    if card == DOOR_CLIMB:  # T43
        return sorted(set(board.door_targets(a, climb=True)))
    if card == DIAGONAL_MOVE:  # T44
        return [c for c in DIAG[a] if occ[c] == EMPTY and h[c] <= h[a] + 1]
    if card == RELOCATE_KNIGHT:  # T47: next to another own knight, as if added there
        return board.add_targets([k for k in own if k != a])
    if card == JUMP_OVER:  # T48: over a knight, never the king
        return [c for mid, c in JUMPS[a] if 0 <= occ[mid] < KING and occ[c] == EMPTY and h[c] <= h[a] + 1]
    if card == EXTRA_BLOCK:  # T42
        return list(board.block_targets())
    if card == MOVE_BLOCK:  # T46
        return board.move_block_targets(a)
    raise ValueError(f"card {card} ({CARD_NAMES[card]}) has no destination decision")


def _connected(squares: list[int]) -> bool:
    """T63 'neighbouring': the squares form one orthogonally connected group."""
    group, todo = {squares[0]}, [squares[0]]
    wanted = set(squares)
    while todo:
        s = todo.pop()
        for x in NEIGH[s]:
            if x in wanted and x not in group:
                group.add(x)
                todo.append(x)
    return len(group) == len(wanted)


def _in_a_row(squares: list[int]) -> bool:
    """T63: one row, column or diagonal (r − c or r + c constant); gaps allowed."""
    return any(len({key(s) for s in squares}) == 1
               for key in (lambda s: s // 8, lambda s: s % 8, lambda s: s // 8 - s % 8, lambda s: s // 8 + s % 8))


def _square_corners(squares: list[int]) -> bool:
    """T63: four of the squares at (r,c), (r,c+k), (r+k,c), (r+k,c+k), k ≥ 1."""
    have = set(squares)
    for s in squares:
        r, c = divmod(s, 8)
        for k in range(1, 8 - max(r, c)):
            if {s + k, s + 8 * k, s + 9 * k} <= have:
                return True
    return False


def master_points(card: int, phase: int, knights: list[list[int]], board: Board, min_knights: int) -> list[int]:
    """T64: each player's master-card points after ``phase`` (1–3); ``knights[p]`` are p's squares."""
    n = len(knights)
    f = phase - 1
    if card in (0, 1):  # M1, M2: per qualifying knight, plus the extra for a strict majority
        zone = BORDER if card == 0 else MAIN_DIAGONALS
        counts = [sum(s in zone for s in ks) for ks in knights]
        points = [PER_KNIGHT[f] * k for k in counts]
        best = max(counts)
        if counts.count(best) == 1:
            points[counts.index(best)] += PER_KNIGHT[f]
        return points
    if card == 2:  # M3: exactly 4 / 5 / 6 castles
        cid = board.cid
        return [M3_POINTS[f] if len({cid[s] for s in ks if cid[s] >= 0}) == M3_CASTLES[f] else 0
                for ks in knights]
    if phase != 3:
        return [0] * n
    if card == 6:  # M7 needs four knights by its nature, not the "all your knights" minimum (T63)
        return [FINAL_POINTS[6] if _square_corners(ks) else 0 for ks in knights]
    h = board.h
    tests = {3: _connected, 4: lambda ks: len({h[s] for s in ks}) == len(ks), 5: _in_a_row,
             7: lambda ks: len({h[s] for s in ks}) == 1}
    return [FINAL_POINTS[card] if len(ks) >= min_knights and ks and tests[card](ks) else 0 for ks in knights]
