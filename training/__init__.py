"""Training side of tabletop-rl: MaskablePPO and RLlib training, evaluation and play, for any registered game.

This folder is the package ``tabletop_rl.training``. Here are the commands, ``python -m tabletop_rl.training.<name>``
(``train``, ``evaluate``, ``play``, ``replay``, ``expert_iteration``, ``rllib``), and what their command lines share
(``cli``, ``shell``, ``stopping``); the library below them:

* :mod:`.runtime` — play time, numpy only (the light install): policy files and their inference, the agent
  loader, search, opponents, the single-seat Gymnasium env, the terminal game.
* :mod:`.evaluation` — tournaments and the statistics of every evaluation.
* :mod:`.ppo` — MaskablePPO training (torch, SB3): config, trainer, checkpoints, report, the torch network, the
  imitation fitter of the warm start and of expert iteration.
* :mod:`.rllib` — multi-agent PPO on Ray RLlib.
* :mod:`.openspiel` — every game as an OpenSpiel game (``import tabletop_rl.openspiel``; extra ``openspiel``).
"""

if __name__ != "tabletop_rl.training":  # a second copy under another name would duplicate every module and class
    raise ImportError(f"import tabletop_rl.training, not {__name__}; the commands are python -m "
                      "tabletop_rl.training.<name> (e.g. python -m tabletop_rl.training.train)")
