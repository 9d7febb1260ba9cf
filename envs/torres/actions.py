"""Torres' action vocabulary: the action ids (T71) and the decision points with their names (T70), what the bots,
the text and the picture speak in; the rules that use them are in ``game.py``."""

# ----------------------------------------------------------------- action ids (T71)
MOVE_FROM, ADD_KNIGHT, PLACE_BLOCK, SELECT, STACK = 0, 64, 128, 192, 256
STACK_CURRENT, ACQUIRE, PLAY_CARD, KEEP, RETURN_TOP, RETURN_BOTTOM = 260, 261, 262, 272, 282, 292
SCORE_STEP, END_TURN, PASS = 302, 303, 304
NUM_ACTIONS = 305

# ----------------------------------------------------------------- decision points (T70)
(SETUP_BLOCK, SETUP_KNIGHT, SETUP_KING, CHOOSE_STACK, ACTION, MOVE_TO, KEEP_CARD, RETURN_CARD, CARD_SOURCE,
 CARD_TARGET, CARD_STACK, LEFTOVER, KING_MOVE) = range(13)
DECISION_IDS = ("D1", "D2", "D3", "D3a", "D4", "D4a", "D5", "D6", "D7", "D8", "D9", "D11", "D12")
DECISION_NAMES = tuple(f"{i} {name}" for i, name in zip(DECISION_IDS, (
    "start block", "setup knight", "setup king", "turn stack", "action", "move destination", "keep card",
    "return card", "card source", "card target", "card stack", "leftover", "king move"), strict=True))
PUBLIC_DECISIONS = frozenset((SETUP_BLOCK, SETUP_KNIGHT, SETUP_KING, CHOOSE_STACK, MOVE_TO, CARD_SOURCE,
                              CARD_TARGET, CARD_STACK, LEFTOVER, KING_MOVE))
"""T69: the decisions whose mask reads public state only, which auto_resolve_forced may apply."""
