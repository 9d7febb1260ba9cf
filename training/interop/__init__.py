"""Every game for the outside libraries that do not read PettingZoo's AEC API themselves (docs/interop.md):

* :mod:`.openspiel` — every game as an OpenSpiel python game (extra ``openspiel``; ``import tabletop_rl.openspiel``
  registers them);
* :mod:`.rllib` — every game as an RLlib ``MultiAgentEnv`` (extra ``rllib``; trained by
  ``python -m tabletop_rl.training.rllib``);
* :mod:`.torchrl` — every game as a TorchRL env, TorchRL's ``PettingZooWrapper`` set up for turn-based games
  (extra ``torchrl``).

Gymnasium (``gymnasium.make`` / ``make_vec`` of ``tabletop/<game>-v0``) is :mod:`tabletop_rl.training.runtime`'s
single-seat and batched envs, part of the light install; Stable-Baselines3's vector env is in
:mod:`tabletop_rl.training.ppo.vec_env`. Each module here imports its library: import the one you use.
"""
