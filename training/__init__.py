"""Training side of tabletop-rl: MaskablePPO against a mix of opponents, for any registered game.

This folder is the package ``tabletop_rl.training``; its commands run as ``python -m tabletop_rl.training.<name>``.

* :mod:`tabletop_rl.training.policy` — the policy file (safetensors + JSON, never code) and its numpy inference.
* :mod:`tabletop_rl.training.agents` — the one agent loader shared by training, evaluation and play (no torch).
* :mod:`tabletop_rl.training.single_seat` — the gymnasium env in which the learner plays one seat (also the Gymnasium
  ids ``tabletop/<game>-v0``).
* :mod:`tabletop_rl.training.opponents` — opponent mix and the self-play snapshot pool.
* :mod:`tabletop_rl.training.warm_start` — imitation of a teacher before PPO.
* :mod:`tabletop_rl.training.checkpoint` — checkpoints without pickle; torch weights to numpy and back.
* :mod:`tabletop_rl.training.files` — atomic writes and a fresh folder for every run.
* :mod:`tabletop_rl.training.cli` — what the commands' command lines share: one-line errors, seeds, counts, ``--set``.
* :mod:`tabletop_rl.training.config`, :mod:`tabletop_rl.training.train`, :mod:`tabletop_rl.training.report` —
  ``python -m tabletop_rl.training.train``.
* :mod:`tabletop_rl.training.evaluate`, :mod:`tabletop_rl.training.play` — tournaments and play in the terminal.
"""

if __name__ != "tabletop_rl.training":  # a second copy under another name would duplicate every module and class
    raise ImportError(f"import tabletop_rl.training, not {__name__}; the commands are python -m "
                      "tabletop_rl.training.<name> (e.g. python -m tabletop_rl.training.train)")
