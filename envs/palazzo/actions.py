"""Palazzo's action vocabulary: the action ids (P73) and the decision points with their names (P72), what the
bots, the text and the picture speak in; the rules that use them are in ``game.py``."""

# ----------------------------------------------------------------- actions (P73)
TAKE_MONEY, TILES, RECONSTRUCT = 0, 1, 2
BUY, AUCTION = 3, 4
TILE = 5  # TILE(id) = 5 + id
DONE, PASS = 75, 76
DEST = 77  # DEST(slot) = 77 + slot
DEST_NEW, DEST_DISCARD = 125, 126
NUM_ACTIONS = 127

# ----------------------------------------------------------------- decisions (P72)
(ACTION, PICK, MODE, SELECT, PAY, BID, DISTRIBUTE, PLACE, RECON_TILE, RECON_DEST, RECON_PAY) = range(1, 12)
DECISION_NAMES = ("terminal", "D1 action", "D2 money pick", "D3 buy or auction", "D4 select tile", "D5 buy payment",
                  "D6 bidding step", "D7 distribution pick", "D8 place tile", "D9 reconstruct tile",
                  "D10 reconstruct destination", "D11 reconstruct payment")
# P74: decisions whose mask reads public state only (D4 only for its first selection)
AUTO_DECISIONS = frozenset((ACTION, PICK, SELECT, DISTRIBUTE, PLACE, RECON_TILE, RECON_DEST))
