"""Training side of tabletop-rl: MaskablePPO against a mix of opponents, for any registered game.

* :mod:`training.agents` — the one agent loader shared by training, evaluation and play.
* :mod:`training.single_seat` — the gymnasium env in which the learner plays one seat.
* :mod:`training.opponents` — opponent mix and the self-play snapshot pool.
* :mod:`training.config`, :mod:`training.train`, :mod:`training.report` — ``python -m training.train``.
"""
