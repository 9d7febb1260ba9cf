"""Five Towers' action vocabulary (docs/rules/five_towers.md, F33): the action ids and the decision points with
their names, what the bots, the text and the picture speak in; the rules that use them are in ``game.py``."""

# F33: PASS; TEAR_NONE (keep every tower) and TEAR + t (tear down tower t); TAKE + slot; PLACE + type (NUM_TYPES)
PASS, TEAR_NONE, TEAR, TAKE, PLACE = 0, 6, 7, 12, 17
# the decision points (State.phase_id), named by PHASE_NAMES (State.phase)
BID, TEARDOWN, TAKING, PLACING = 0, 1, 2, 3
PHASE_NAMES = ("bid", "teardown", "take", "place")
