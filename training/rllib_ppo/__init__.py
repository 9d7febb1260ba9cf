"""Multi-agent PPO on Ray RLlib (the ``rllib`` extra; docs/rllib.md), run by ``python -m tabletop_rl.training.rllib``:
its config (:mod:`.config`), the algorithm and its run (:mod:`.trainer`) and the RLModules (:mod:`.modules`). The
game as an RLlib env is :mod:`tabletop_rl.training.interop.rllib_env`."""
