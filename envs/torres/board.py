"""Torres board geometry (T1–T4) and castle bookkeeping, shared by the engine and the heuristic bot.

Squares are indices ``i = 8r + c`` (T1). The neighbour tables are built once at import. A :class:`Board`
holds three 64-entry lists — block heights, castle ids and occupants — and keeps the castles incrementally:
every square knows its castle id (T2), every castle its squares, and every square which castles touch it
orthogonally (``touch``: none, exactly one id, or several), whether T31 allows a block there
(``allowed``, pieces ignored) and whether it also holds no piece (``free``). Placing or removing a block
updates these for the square, its neighbours and, when an area changes, that castle's squares; a piece
arriving or leaving updates its square. So the T31 question never scans the board; the T28 door exits
are cached per castle and dropped when that castle changes (pieces moving never touch them).
"""

from __future__ import annotations

from itertools import compress

SIZE = 8
SQUARES = 64
MAX_CASTLES = 16  # T2: 8 start castles + at most 8 created later
GROUND = -1  # castle id of a ground square
NONE, MANY = -1, -2  # touch[s]: no castle, or several castles orthogonally adjacent
EMPTY, KING = -1, 4  # occupants: EMPTY, a seat 0..3 (a knight), KING


def _on_board(r: int, c: int) -> bool:
    return 0 <= r < SIZE and 0 <= c < SIZE


def _squares_at(s: int, offsets: tuple[tuple[int, int], ...]) -> tuple[int, ...]:
    r, c = divmod(s, SIZE)
    return tuple(sorted(8 * (r + dr) + c + dc for dr, dc in offsets if _on_board(r + dr, c + dc)))


ORTHOGONAL = ((-1, 0), (0, -1), (0, 1), (1, 0))
DIAGONAL = ((-1, -1), (-1, 1), (1, -1), (1, 1))
NEIGH = tuple(_squares_at(s, ORTHOGONAL) for s in range(SQUARES))
"""Orthogonally adjacent squares, ascending (T1)."""
DIAG = tuple(_squares_at(s, DIAGONAL) for s in range(SQUARES))
"""Diagonally adjacent squares, ascending (T1, T44)."""
JUMPS = tuple(tuple((s + 8 * dr + dc, s + 16 * dr + 2 * dc) for dr, dc in ORTHOGONAL
                    if _on_board(s // 8 + 2 * dr, s % 8 + 2 * dc)) for s in range(SQUARES))
"""(square jumped over, landing square) per orthogonal direction (T48)."""
DIST = tuple(tuple(abs(a // 8 - b // 8) + abs(a % 8 - b % 8) for b in range(SQUARES)) for a in range(SQUARES))
"""Manhattan distance (T1)."""


def square_name(s: int) -> str:
    """``(r,c)`` as the spec writes squares."""
    return f"({s // 8},{s % 8})"


class Board:
    """Heights, castles and occupants of the 64 squares (T2, T4), with the rules' geometric questions.

    ``h``, ``cid`` and ``occ`` are read directly by the engine's hot paths; change blocks only through
    :meth:`add_block` / :meth:`remove_block` and pieces through :meth:`set_occupant`, which keep the
    castles, ``touch``, ``allowed``, ``free`` and the caches right.
    """

    __slots__ = ("h", "cid", "occ", "castles", "touch", "allowed", "free", "next_id", "_targets", "_exits")

    def __init__(self) -> None:
        self.h = [0] * SQUARES
        self.cid = [GROUND] * SQUARES
        self.occ = [EMPTY] * SQUARES
        self.castles: list[list[int] | None] = [None] * MAX_CASTLES  # id -> its squares, None if none
        self.touch = [NONE] * SQUARES
        self.allowed = [False] * SQUARES  # T31 without the pieces: raise within the area, or extend
        self.free = [False] * SQUARES  # T31: allowed, and no piece on the square
        self.next_id = 0  # T2: the smallest id never used
        self._targets: list[int] | None = None
        self._exits: dict[int, list[tuple[int, int]]] = {}

    @classmethod
    def from_arrays(cls, h: list[int], cid: list[int], occ: list[int], next_id: int | None = None) -> Board:
        """A board from its three square lists (castle squares listed per id in ascending order)."""
        b = cls()
        b.h, b.cid, b.occ = list(h), list(cid), list(occ)
        for s in range(SQUARES):
            if cid[s] >= 0:
                if b.castles[cid[s]] is None:
                    b.castles[cid[s]] = []
                b.castles[cid[s]].append(s)
        used = [c for c in range(MAX_CASTLES) if b.castles[c] is not None]
        b.next_id = (max(used) + 1 if used else 0) if next_id is None else next_id
        for s in range(SQUARES):
            b._retouch_one(s)
        b._recheck(range(SQUARES))
        return b

    def copy(self) -> Board:
        b = object.__new__(Board)
        b.h, b.cid, b.occ, b.touch = list(self.h), list(self.cid), list(self.occ), list(self.touch)
        b.allowed, b.free = list(self.allowed), list(self.free)
        b.castles = [None if sq is None else list(sq) for sq in self.castles]
        b.next_id = self.next_id
        b._targets = self._targets  # replaced, never mutated
        b._exits = dict(self._exits)  # its lists are replaced, never mutated
        return b

    # ----------------------------------------------------------------- castles (T2)
    def area(self, c: int) -> int:
        return len(self.castles[c])

    def castle_height(self, c: int) -> int:
        h = self.h
        return max(h[s] for s in self.castles[c])

    def castle_ids(self) -> list[int]:
        return [c for c, sq in enumerate(self.castles) if sq is not None]

    def castle_count(self) -> int:
        return sum(sq is not None for sq in self.castles)

    def add_block(self, t: int) -> int:
        """One block onto t: raises t's castle, extends the single castle touching a ground t, or founds a
        new castle (fresh id) on a ground t touching none. Returns t's castle id. Never merges (T31)."""
        cid = self.cid
        c = cid[t]
        if c >= 0:
            self.h[t] += 1
            self._recheck((t,))
        else:
            c = self.touch[t]
            if c == MANY:
                raise AssertionError(f"a block on {square_name(t)} would merge castles")
            if c == NONE:
                c = self.next_id
                self.next_id += 1
                self.castles[c] = []
            self.castles[c].append(t)
            self.castles[c].sort()
            cid[t] = c
            self.h[t] = 1
            self._retouch(t)
            self._recheck(self.castles[c])  # the area grew
            self._recheck(NEIGH[t])
        self._targets = None
        self._exits.pop(c, None)  # only c's doors changed: other castles never touch t or its neighbours
        return c

    def remove_block(self, s: int) -> None:
        """The top block of s leaves the board (T46); s's castle shrinks, or disappears, at height 0."""
        c = self.cid[s]
        self.h[s] -= 1
        if self.h[s] == 0:
            squares = self.castles[c]
            squares.remove(s)
            if not squares:
                self.castles[c] = None
            self.cid[s] = GROUND
            self._retouch(s)
            self._recheck(squares)  # the area shrank
            self._recheck(NEIGH[s])
        self._recheck((s,))
        self._targets = None
        self._exits.pop(c, None)

    def _recheck(self, squares) -> None:
        """Recompute ``allowed`` and ``free`` (T31) on ``squares``."""
        h, cid, touch, castles, allowed, free, occ = (self.h, self.cid, self.touch, self.castles, self.allowed,
                                                      self.free, self.occ)
        for s in squares:
            c = cid[s]
            allowed[s] = ok = h[s] < len(castles[c]) if c >= 0 else touch[s] >= 0
            free[s] = ok and occ[s] == EMPTY

    def set_occupant(self, s: int, occupant: int) -> None:
        """A piece (a seat's knight, or KING) arrives on s, or ``EMPTY``: the piece on s leaves."""
        self.occ[s] = occupant
        self.free[s] = self.allowed[s] and occupant == EMPTY
        self._targets = None

    def _retouch(self, s: int) -> None:
        self._retouch_one(s)
        for q in NEIGH[s]:
            self._retouch_one(q)

    def _retouch_one(self, q: int) -> None:
        self.touch[q] = touching_castle(self.cid, q)

    def connected_without(self, s: int) -> bool:
        """T46(b): the other squares of s's castle still form one orthogonally connected group."""
        c = self.cid[s]
        rest = [q for q in self.castles[c] if q != s]
        if not rest:
            return True
        cid, seen, todo = self.cid, {rest[0]}, [rest[0]]
        while todo:
            q = todo.pop()
            for x in NEIGH[q]:
                if x != s and cid[x] == c and x not in seen:
                    seen.add(x)
                    todo.append(x)
        return len(seen) == len(rest)

    # ----------------------------------------------------------------- blocks (T31)
    def block_targets(self) -> list[int]:
        """T31: the empty squares where a block may go — a castle square below its castle's area (raise),
        or a ground square touching exactly one castle (extend). Ascending; cached."""
        if self._targets is None:
            self._targets = list(compress(range(SQUARES), self.free))
        return self._targets

    def move_block_targets(self, s: int) -> list[int]:
        """T46: the targets t of MOVE_BLOCK from source s (empty if s is no legal source), judged on the
        board B′ with s's top block lifted off and on the final board."""
        if self.h[s] == 0 or self.occ[s] != EMPTY:
            return []
        c = self.cid[s]
        if self.h[s] == 1 and not self.connected_without(s):
            return []
        b = self.copy()
        b.remove_block(s)
        count = b.castle_count()
        # s's castle lost a square: a height above its new area makes every target but an extension of
        # that castle illegal on the final board (T46(d))
        bad = b.castles[c] is not None and b.castle_height(c) > b.area(c)
        occ, h, cid, touch, castles = self.occ, b.h, b.cid, b.touch, b.castles
        out = []
        for t in range(SQUARES):
            if t == s or occ[t] != EMPTY:
                continue
            ct = cid[t]
            if ct >= 0:  # raise
                ok = not bad and count >= 6 and h[t] < len(castles[ct])
            else:
                tc = touch[t]
                if tc == MANY:
                    ok = False
                elif tc == NONE:  # a new castle
                    ok = not bad and count + 1 >= 6
                else:  # extend
                    ok = (tc == c or not bad) and count >= 6
            if ok:
                out.append(t)
        return out

    def under_knight_ok(self, a: int) -> bool:
        """T41: a block may go under the piece on a: raise within the area, or a ground square touching at
        most one castle (it joins that castle or founds a new one)."""
        c = self.cid[a]
        if c >= 0:
            return self.h[a] < len(self.castles[c])
        return self.touch[a] != MANY

    def add_targets(self, knights: list[int]) -> list[int]:
        """T25 (and T47): empty squares next to one of ``knights`` at a level ≥ their height, ascending."""
        h, occ = self.h, self.occ
        out = set()
        for k in knights:
            level = h[k]
            for t in NEIGH[k]:
                if occ[t] == EMPTY and h[t] <= level:
                    out.add(t)
        return sorted(out)

    # ----------------------------------------------------------------- knight movement (T27–T29)
    def exits(self, c: int) -> list[tuple[int, int]]:
        """T28(c): (h(x), x) for every square x next to a square of castle c that is taller than x — the
        squares a door of c opens onto — sorted by height. Cached per castle."""
        e = self._exits.get(c)
        if e is None:
            h = self.h
            xs = set()
            for d in self.castles[c]:
                hd = h[d]
                for x in NEIGH[d]:
                    if h[x] < hd:
                        xs.add(x)
            e = self._exits[c] = sorted((h[x], x) for x in xs)
        return e

    def step_targets(self, a: int) -> list[int]:
        """T27: orthogonal, empty, at most one level up."""
        h, occ, top = self.h, self.occ, self.h[a] + 1
        return [c for c in NEIGH[a] if occ[c] == EMPTY and h[c] <= top]

    def door_targets(self, a: int, climb: bool = False) -> list[int]:
        """T28 (``any_door``) door targets of the piece on a; with ``climb`` the exit may lie above the
        knight (T43, DOOR_CLIMB). The piece itself stands on a, so a is never a target."""
        h, cid, occ = self.h, self.cid, self.occ
        level = h[a]
        out: list[int] = []
        seen: list[int] = []
        for b in NEIGH[a]:
            c = cid[b]
            if c >= 0 and h[b] > level and c not in seen:  # castle c is enterable from a
                seen.append(c)
                for hx, x in self.exits(c):
                    if hx > level and not climb:
                        break
                    if occ[x] == EMPTY:
                        out.append(x)
        return out

    def tunnel_targets(self, a: int) -> list[int]:
        """T29 (``monotone_tunnel``): :func:`tunnel_exits` of this board."""
        return list(tunnel_exits(self.h, self.cid, self.occ, a))

    def move_targets(self, a: int, tunnel: bool = False) -> list[int]:
        """T26: step and door targets of the knight on a, ascending, each once."""
        doors = self.tunnel_targets(a) if tunnel else self.door_targets(a)
        return sorted(set(self.step_targets(a)).union(doors))

    def movable(self, knights: list[int], tunnel: bool = False) -> list[int]:
        """T26: the squares of ``knights`` whose knight has at least one destination, in their order (steps
        checked first: they are the usual case; one call for all knights, as the action menu asks each turn)."""
        h, occ = self.h, self.occ
        out = []
        for a in knights:
            top = h[a] + 1
            for c in NEIGH[a]:
                if occ[c] == EMPTY and h[c] <= top:
                    out.append(a)
                    break
            else:
                if self.tunnel_targets(a) if tunnel else self.door_targets(a):
                    out.append(a)
        return out


def tunnel_exits(h: list[int], cid: list[int], occ: list[int], a: int) -> set[int]:
    """T29 (``monotone_tunnel``) on heights ``h``, castle ids ``cid`` and pieces ``occ`` (the board's, or a bot's
    view of them): where the knight on ``a`` may leave a castle it entered by a door. The knight never climbs inside
    the castle: T(s) is a widest-path value, min over the path of (L, h − 1), maximised over paths from the
    entries."""
    level = h[a]
    out: set[int] = set()
    for c in {cid[b] for b in NEIGH[a] if cid[b] >= 0 and h[b] > level}:
        tunnel: dict[int, int] = {}
        for b in NEIGH[a]:
            if cid[b] == c and h[b] > level:
                tunnel[b] = max(tunnel.get(b, -1), min(level, h[b] - 1))
        todo = list(tunnel)
        while todo:
            s = todo.pop()
            for x in NEIGH[s]:
                if cid[x] == c:
                    v = min(tunnel[s], h[x] - 1)
                    if v > tunnel.get(x, -1):
                        tunnel[x] = v
                        todo.append(x)
        for s, t in tunnel.items():
            for x in NEIGH[s]:
                if occ[x] == EMPTY and h[x] <= t:
                    out.add(x)
    return out


def touching_castle(cid: list[int], q: int) -> int:
    """The castle orthogonally next to square q under castle ids ``cid`` (the board's, or a bot's view of them): its
    id, ``NONE`` or ``MANY`` (T31)."""
    found = NONE
    for x in NEIGH[q]:
        c = cid[x]
        if c >= 0 and c != found:
            if found != NONE:
                return MANY
            found = c
    return found
