"""Palazzo's components and codes: the tiles and stacks (P4–P9) and where a tile is (P6, I3), shared by the rules
(``game.py``), the observation (``observation.py``), the renderer and the bots; the decisions are in
``actions.py``."""

# ----------------------------------------------------------------- tiles (P4, P5)
_J_TABLE = ((1, 1), (1, 2), (1, 3), (2, 1), (2, 2), (2, 3), (3, 1), (3, 1), (3, 2), (3, 3), (4, 1), (4, 2), (4, 3),
            (5, 1), (5, 2), (5, 3))
NUM_TILES = 48
RIDER = 48
NUM_RIDERS = 5
MATERIAL = tuple(t // 16 for t in range(NUM_TILES))
FLOOR = tuple(_J_TABLE[t % 16][0] for t in range(NUM_TILES))
WINDOWS = tuple(_J_TABLE[t % 16][1] for t in range(NUM_TILES))
STACK_NAMES = ("I", "II", "III")
STACK_SIZES = (16, 16, 16 + NUM_RIDERS)  # P7, P8
# P7, A1 by_floor: the 48 tiles sorted by (floor, id), cut into 16/16/16
BY_FLOOR = tuple(sorted(range(NUM_TILES), key=lambda t: (FLOOR[t], t)).index(t) // 16 for t in range(NUM_TILES))
NUM_SLOTS = 48  # P50: no player needs more palace slots
NUM_QUARRIES = 4

# ----------------------------------------------------------------- where a tile is (P6, I3)
IN_STACK, SUPPLY, SELECTED, QUARRY, PENDING, REMOVED, PALACE = 0, 1, 2, 3, 7, 8, 9
NUM_LOCATIONS = 10  # the quarries take codes 3–6
