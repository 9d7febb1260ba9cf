"""MaskablePPO training (torch, stable-baselines3): the config (:mod:`.config`), the run (:mod:`.trainer`),
checkpoints (:mod:`.checkpoint`), the report (:mod:`.report`), the torch network (:mod:`.network`), the
imitation fitter (:mod:`.imitation`) of the warm start (:mod:`.warm_start`) and of expert iteration
(:mod:`.expert_iteration`). The config and the teacher games need numpy only."""
