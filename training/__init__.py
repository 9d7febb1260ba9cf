"""Training side of tabletop-rl: MaskablePPO against a mix of opponents, for any registered game.

* :mod:`training.policy` — the policy file (safetensors + JSON, never code) and its numpy inference.
* :mod:`training.agents` — the one agent loader shared by training, evaluation and play (no torch).
* :mod:`training.single_seat` — the gymnasium env in which the learner plays one seat (also the Gymnasium
  ids ``tabletop/<game>-v0``).
* :mod:`training.opponents` — opponent mix and the self-play snapshot pool.
* :mod:`training.warm_start` — imitation of a teacher before PPO.
* :mod:`training.checkpoint` — checkpoints without pickle; torch weights to numpy and back.
* :mod:`training.files` — atomic writes and a fresh folder for every run.
* :mod:`training.config`, :mod:`training.train`, :mod:`training.report` — ``python -m training.train``.
* :mod:`training.evaluate`, :mod:`training.play` — tournaments and play in the terminal.
"""
