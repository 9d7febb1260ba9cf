"""The RLlib run's config (``configs/rllib_<game>.yaml``): the keys every training config has
(:class:`tabletop_rl.training.ppo.config.Run`), PPO under RLlib's names, the opponent mix, and their checks."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

from ... import envs
from ..interop.rllib_env import fixed_agent_ids
from ..ppo.config import Network, Run, load_config, network_problems, run_problems
from ..runtime.agents import load_agent
from ..runtime.opponents import SELF, check_weights
from ..runtime.policy import PolicyInfo


@dataclass
class RllibPPO:
    """PPO hyperparameters under RLlib's names (``PPOConfig.training``); defaults as the SB3 pipeline's."""

    lr: float = 3e-4
    train_batch_size: int = 8192  # env steps per iteration, every seat's (the learner's share is about 1/n)
    minibatch_size: int = 256
    num_epochs: int = 4
    gamma: float = 1.0  # rewards are terminal only
    lambda_: float = 0.95
    clip_param: float = 0.2
    vf_clip_param: float = 10.0  # returns lie in [-1, 1]: effectively unclipped, as in SB3
    entropy_coeff: float = 0.01
    vf_loss_coeff: float = 0.5
    grad_clip: float | None = 0.5
    use_kl_loss: bool = False  # SB3's PPO has no KL penalty
    kl_coeff: float = 0.2


@dataclass
class RllibOpponents:
    # agent spec -> weight; "self" = snapshots of the learner; also random, heuristic, pretrained, a path
    mix: dict[str, float] = field(default_factory=lambda: {"random": 0.5, "heuristic": 0.2, "self": 0.3})
    snapshot_every: int = 5  # iterations between copies of the learner into the pool
    pool_size: int = 4


@dataclass
class RllibConfig(Run):
    iterations: int = 50  # total training iterations of the run (each samples ppo.train_batch_size steps)
    max_minutes: float | None = None  # wall-clock cap of one invocation; stops cleanly with a checkpoint
    num_env_runners: int | str = "auto"  # auto: one per CPU of the Ray cluster, less one for the learner
    num_envs_per_env_runner: int = 32  # envs stepped together in each runner: one batched forward per step
    torch_threads: int = 1  # of the learner (this process); more threads thrash on a shared, busy CPU
    checkpoint_every: int = 10  # iterations
    keep_checkpoints: int = 2
    progress_bar: bool = True
    runs_dir: str = "runs"
    ppo: RllibPPO = field(default_factory=RllibPPO)
    network: Network = field(default_factory=Network)
    opponents: RllibOpponents = field(default_factory=RllibOpponents)

    @property
    def snapshots(self) -> int:
        """Number of snapshot modules: the pool, if the mix uses it."""
        return self.opponents.pool_size if check_weights(self.opponents.mix).get(SELF) else 0


# keys that may change on --resume: they steer the run, not what is being learned
RESUMABLE_KEYS = {"iterations", "max_minutes", "num_env_runners", "num_envs_per_env_runner", "torch_threads",
                  "checkpoint_every", "keep_checkpoints", "progress_bar", "runs_dir"}


def check_config(c: RllibConfig) -> None:
    """Every value, the game and its options, and every agent of the mix, before anything is written."""
    problems = run_problems(c)
    positive = {"iterations": c.iterations, "num_envs_per_env_runner": c.num_envs_per_env_runner,
                "torch_threads": c.torch_threads,
                "checkpoint_every": c.checkpoint_every, "keep_checkpoints": c.keep_checkpoints,
                "ppo.train_batch_size": c.ppo.train_batch_size, "ppo.minibatch_size": c.ppo.minibatch_size,
                "ppo.num_epochs": c.ppo.num_epochs, "opponents.snapshot_every": c.opponents.snapshot_every,
                "opponents.pool_size": c.opponents.pool_size}
    problems += [f"{k} must be > 0 (got {v})" for k, v in positive.items() if v <= 0]
    problems += network_problems(c.network)
    if c.ppo.minibatch_size > c.ppo.train_batch_size:
        problems.append("ppo.minibatch_size must not exceed ppo.train_batch_size")
    if not (c.num_env_runners == "auto" or (isinstance(c.num_env_runners, int) and c.num_env_runners >= 0)):
        problems.append(f"num_env_runners must be 'auto' or an integer >= 0 (got {c.num_env_runners!r})")
    if c.max_minutes is not None and c.max_minutes <= 0:
        problems.append(f"max_minutes must be > 0 or null (got {c.max_minutes})")
    if not 0 < c.ppo.gamma <= 1 or not 0 <= c.ppo.lambda_ <= 1:
        problems.append("ppo.gamma must be in (0, 1] and ppo.lambda_ in [0, 1]")
    if problems:
        raise ValueError("bad config: " + "; ".join(problems))
    game = envs.make(c.game, wrapped=False, **c.game_options).game  # unknown game or bad options fail here
    PolicyInfo.for_game(game, asdict(c.network))  # a network too large for a policy file fails now, not at export
    mix = check_weights(c.opponents.mix, "opponents.mix")
    for spec in fixed_agent_ids(mix):  # a typo fails now, not inside an env runner
        load_agent(spec, game)


def read_config(path: str | Path | None, overrides: list[str]) -> RllibConfig:
    return load_config(path, overrides, schema=RllibConfig, check=check_config)
