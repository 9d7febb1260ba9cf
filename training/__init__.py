"""Training side of tabletop-rl: MaskablePPO and RLlib training, evaluation and play, for any registered game.

This folder is the package ``tabletop_rl.training``. Its top level holds the commands, each run as
``python -m tabletop_rl.training.<name>``: ``train``, ``evaluate``, ``play``, ``replay``, ``expert_iteration``,
``rllib`` and ``web`` (short form ``python -m tabletop_rl.web``). The library below them:

* :mod:`.cli` — what the commands' command lines share: flags, ``--set``, printed commands, signals and workers.
* :mod:`.runtime` — play time, numpy only (the light install): policy files and their inference, the agent
  loader, search, opponents, the single-seat and batched Gymnasium envs, the terminal game.
* :mod:`.evaluation` — tournaments and the statistics of every evaluation.
* :mod:`.ppo` — MaskablePPO training (torch, SB3): config, trainer, checkpoints, report, the torch network, the
  imitation fitter of the warm start and of expert iteration.
* :mod:`.rllib_ppo` — multi-agent PPO on Ray RLlib.
* :mod:`.interop` — every game for OpenSpiel, RLlib and TorchRL (``import tabletop_rl.openspiel``).
* :mod:`.webapp` — the browser app's server and page.
"""

if __name__ != "tabletop_rl.training":  # a second copy under another name would duplicate every module and class
    raise ImportError(f"import tabletop_rl.training, not {__name__}; the commands are python -m "
                      "tabletop_rl.training.<name> (e.g. python -m tabletop_rl.training.train)")
