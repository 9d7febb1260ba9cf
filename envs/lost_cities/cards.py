"""Lost Cities cards and fixed sizes (L2–L6, L27), shared by the rules (``game.py``), the observation
(``observation.py``) and the renderer. A card is a *kind* ``k = 10·colour + r``: ``r = 0`` for a wager, ``r = v − 1``
for the number card of value v (L4)."""

COLOUR_NAMES = ("yellow", "blue", "white", "green", "red", "purple")  # L2
HAND_SIZE = 8  # L6, L15
MAX_PILE = 12  # a discard pile holds at most the 12 cards of its colour (L34c)
MAX_EXTRA_ROUNDS = 5  # L27


def kind_value(kind: int) -> int:
    """Face value of a kind (L4); 0 for a wager."""
    r = kind % 10
    return 0 if r == 0 else r + 1
