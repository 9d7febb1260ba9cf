"""Multi-agent PPO on Ray RLlib (the ``rllib`` extra; docs/rllib.md): the command (``python -m
tabletop_rl.training.rllib``, :mod:`.__main__`), its config (:mod:`.config`), the algorithm and its run
(:mod:`.trainer`), the game as an RLlib env (:mod:`.env`) and the RLModules (:mod:`.modules`)."""
