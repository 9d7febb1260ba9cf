"""Lost Cities' action vocabulary: the two decisions of a turn (L11) and their names, what the text and the bots
speak in. The action ids (L36) follow the game's K kinds and C colours: PLAY kind a is ``a``, DISCARD kind a is
``K + a``, DRAW_DECK is ``2K`` (``Game.draw_deck_action``) and DRAW_PILE colour c is ``2K + 1 + c``, tabled in the
package docstring; the rules that use them are in ``game.py``."""

CARD_STEP, DRAW_STEP = 0, 1  # State.step: play or discard a card, then draw one
STEP_NAMES = ("card", "draw")  # State.phase
