"""Five Towers components (F2, F3, F9): five card types of 16 values, a card being the *kind*
``16·type + value``, and the five display slots."""

TYPE_NAMES = ("candy", "scary", "tree", "scrap", "sand")  # F2
NUM_TYPES, NUM_VALUES, NUM_KINDS, NUM_SLOTS = 5, 16, 80, 5
DUPLICATED_VALUES = (0, 2, 5, 7, 10, 12)  # F3: the "4+" cards
