"""Training configuration: YAML file + ``--set key=value`` overrides, checked against typed defaults.

Every key, its type and its default is declared once, in the dataclasses below. Unknown keys, and
values of the wrong type, fail with a message naming the key (and a close match when there is one).
``game_options`` and ``opponents.mix`` are free-form mappings (checked by the game / the opponent mix).
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import os
import stat
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..cli import apply_override, yaml_problem
from ..runtime.opponents import check_weights
from ..runtime.policy import ACTIVATIONS, MAX_POOL
from ..runtime.table import OUTCOMES


@dataclass
class PPO:
    """MaskablePPO hyperparameters (stable-baselines3 names)."""

    learning_rate: float = 3e-4
    anneal_lr: bool = False  # linear decay to 0 over total_timesteps
    n_steps: int = 1024  # steps per env per rollout
    batch_size: int = 256
    n_epochs: int = 4
    gamma: float = 1.0  # rewards are terminal only: no reason to discount
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    target_kl: float | None = None


@dataclass
class Network:
    shared: list[int] = field(default_factory=list)  # a trunk policy and value both read, before pi and vf
    pi: list[int] = field(default_factory=lambda: [256, 256])  # policy MLP hidden sizes
    vf: list[int] = field(default_factory=lambda: [256, 256])  # value MLP hidden sizes
    activation: str = "relu"  # relu or tanh

    def spec(self) -> dict[str, Any]:
        """The network as a policy file's header, the SB3 and RLlib builders and the opponents' snapshots name it."""
        shared = {"shared": list(self.shared)} if self.shared else {}
        return {**shared, "pi": list(self.pi), "vf": list(self.vf), "activation": self.activation}


@dataclass
class Opponents:
    # agent spec -> weight; "self" = snapshots of the learner; also random, heuristic, pretrained, a path
    mix: dict[str, float] = field(default_factory=lambda: {"random": 0.3, "heuristic": 0.3, "self": 0.4})
    snapshot_every: int = 50_000  # steps between copies of the learner into the pool
    pool_size: int = 8
    snapshot_deterministic: bool = False  # snapshots sample from their policy (more varied opponents)


@dataclass
class Eval:
    every: int = 50_000  # steps between evaluations (0: only at the end)
    games: int = 100  # per opponent, seat-balanced
    final_games: int = 1000  # per opponent, at the end, for the report
    opponents: list[str] = field(default_factory=lambda: ["random", "heuristic"])
    deterministic: bool = True  # the learner plays its arg-max action


@dataclass
class WarmStart:
    """Imitate a teacher before PPO (see training/ppo/warm_start.py); fresh runs only."""

    teacher: str | None = None  # an agent spec such as heuristic; null: start from scratch
    games: int = 2000  # teacher-vs-teacher games to imitate
    random_seats: float = 0.0  # share of the seats (drawn per seat and game) a random player takes instead
    workers: int | None = None  # processes playing them; None: one per CPU core (the data are the same)
    epochs: int = 5
    batch_size: int = 256
    learning_rate: float = 1e-3
    relabel: bool = False  # each decision under a random symmetry of the game (Game.relabellings: LC's colours)
    # DAgger after the imitation: each round, the imitation plays one seat of dagger_games games against the teacher,
    # the teacher's answers to its decisions join the data, and all of them are fitted once more (one pass)
    dagger_rounds: int = 0
    dagger_games: int = 4000


@dataclass
class Anchor:
    """A KL penalty towards the policy PPO starts from (the warm start's or ``init_from``'s), fading out, so that
    PPO may use a normal learning rate without first unlearning the imitation."""

    kl: float = 0.0  # weight of KL(policy || starting policy) in the loss; 0: none
    games: int = 20_000  # games of experience over which the weight falls linearly to 0


@dataclass
class Run:
    """What every training config starts with (this module's ``Config``; RLlib's ``rllib.config.RllibConfig``)."""

    game: str = ""
    name: str = ""  # run directory runs/<name>; defaults to the config file's stem
    game_options: dict[str, Any] = field(default_factory=dict)
    seed: int = 0


VEC_ENVS = ("auto", "subproc", "dummy", "batched")
CRITICS = ("observation", "global_state")


@dataclass
class Config(Run):
    total_timesteps: int = 200_000
    max_minutes: float | None = None  # wall-clock cap of one invocation; stops cleanly with a checkpoint
    max_games: int | None = None  # learner games of experience (episodes ended) after which PPO stops, as max_minutes
    n_envs: int | None = None  # None: one per CPU core
    vec_env: str = "auto"  # auto (subproc if n_envs > 1), subproc, dummy or batched (every game in one SeatVectorEnv)
    num_workers: int = 0  # batched: processes the games are shared between (0: in the training process)
    seat: int | str = "random"  # the learner's seat: random each episode, or a fixed seat
    margin_reward: float = 0.0  # adds this × (own score − mean of the others') to the terminal reward
    outcome_reward: float = 1.0  # the weight of the game's outcome in it (0: the margin alone is the objective)
    outcome: str = "pairwise"  # the outcome: pairwise (seats beaten - seats that beat it, / n - 1) or first_place
    skip_forced: bool = False  # the learner's decisions with one legal action are played for it: the same games
    # What PPO's critic reads: the learner's observation, or also the global state (env.state(), hidden cards
    # included) in training only; the actor and the policy file read the observation alone (vec_env: batched)
    critic: str = "observation"
    # Fine-tune: a fresh run starts from this policy's weights ("pretrained" or a checkpoint / run dir);
    # its network must have the sizes of `network`.
    init_from: str | None = None
    device: str = "cpu"
    torch_threads: int = 1  # torch's and numpy's BLAS threads of the training process; more thrash on a busy CPU
    # PPO's hidden layers (rollouts and update) in bfloat16 where the CPU multiplies it natively (AVX512-BF16,
    # AMX), elsewhere float32; the heads, the loss, the optimizer and the policy file stay float32
    bf16: bool = False
    checkpoint_every: int = 50_000
    keep_checkpoints: int = 2
    progress_bar: bool = True
    runs_dir: str = "runs"
    ppo: PPO = field(default_factory=PPO)
    network: Network = field(default_factory=Network)
    opponents: Opponents = field(default_factory=Opponents)
    eval: Eval = field(default_factory=Eval)
    warm_start: WarmStart = field(default_factory=WarmStart)
    anchor: Anchor = field(default_factory=Anchor)

    @property
    def run_dir(self) -> Path:
        return Path(self.runs_dir) / self.name

    @property
    def num_envs(self) -> int:
        return self.n_envs or os.cpu_count() or 1

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


# keys that may differ when a run is resumed: they steer the run, not what is being learned
RESUMABLE_KEYS = {"total_timesteps", "max_minutes", "max_games", "n_envs", "vec_env", "num_workers", "torch_threads",
                  "bf16", "checkpoint_every", "keep_checkpoints", "progress_bar", "runs_dir", "eval"}


def load_config(path: str | Path | None, overrides: Sequence[str] = (), schema: type[Run] = Config,
                check: Callable[[Any], None] | None = None) -> Any:
    """Read ``path`` (if any), apply ``key=value`` overrides, validate everything.

    ``schema`` is the config's dataclass (``Config``, or ``tabletop_rl.training.rllib``'s) and ``check`` its range
    checks (default: those of ``Config``).
    """
    raw: dict[str, Any] = {}
    if path is not None:
        raw = read_yaml(path) or {}
        if not isinstance(raw, dict):
            raise ValueError(f"{path}: a config must be a YAML mapping of keys to values")
        raw.setdefault("name", Path(path).stem)
    for item in overrides:
        apply_override(raw, item)
    config = _build(schema, raw, "")
    if not config.game:
        raise ValueError("the config names no game: set `game: <name>` (see tabletop_rl.envs.list_games())")
    if not config.name:
        config.name = config.game
    (check or _check_values)(config)
    return config


def saved_config(run_dir: Path, overrides: Sequence[str], resumable: set[str]) -> Path:
    """The config a run folder saved, for ``--resume``, which may change only the ``resumable`` keys: they steer
    a run (how long, how fast), the others define what is being learned."""
    saved = run_dir / "config.yaml"
    if not saved.is_file():
        raise ValueError(f"nothing to resume: {saved} does not exist")
    changed = {item.partition("=")[0].strip().split(".")[0] for item in overrides}
    if changed - resumable:
        raise ValueError(f"--resume cannot change {sorted(changed - resumable)}; only "
                         f"{sorted(resumable)} (the rest defines what is being learned)")
    return saved


def read_yaml(path: str | Path) -> Any:
    """A YAML file's content; a file that is not UTF-8 or not YAML is a ``ValueError`` in one line naming it."""
    data = Path(path).read_bytes()
    try:
        return yaml.safe_load(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise ValueError(f"{path} is not UTF-8 text (byte 0x{data[error.start]:02x} at offset {error.start})"
                         ) from None
    except yaml.YAMLError as error:
        raise ValueError(f"{path} is not valid YAML: {yaml_problem(error)}") from None


def _build(cls: type, raw: Any, prefix: str) -> Any:
    if not isinstance(raw, dict):
        raise ValueError(f"config section {prefix.rstrip('.') or '<top>'!r} must be a mapping, got {raw!r}")
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    values = {}
    for key, value in raw.items():
        if key not in names:
            close = difflib.get_close_matches(str(key), names, n=1)
            hint = f"; did you mean '{prefix}{close[0]}'?" if close else ""
            raise ValueError(f"unknown config key '{prefix}{key}'{hint} (known here: {', '.join(names)})")
        hint_type = hints[key]
        if dataclasses.is_dataclass(hint_type):
            values[key] = _build(hint_type, value, f"{prefix}{key}.")
        else:
            values[key] = _coerce(value, hint_type, f"{prefix}{key}")
    return cls(**values)


def _coerce(value: Any, hint: Any, key: str) -> Any:
    """``value`` as type ``hint``, or ``ValueError`` naming the key and the expected type."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return value
    if origin in (typing.Union, types.UnionType):
        for arm in args:
            try:
                return _coerce(value, arm, key)
            except ValueError:
                pass
    elif hint is type(None):
        if value is None:
            return None
    elif hint is bool:
        if isinstance(value, bool):
            return value
    elif hint is int:
        number = _number(value)
        if number is not None and float(number).is_integer():
            return int(number)
    elif hint is float:
        number = _number(value)
        if number is not None:
            return float(number)
    elif hint is str:
        if isinstance(value, str):
            return value
    elif origin is list:
        if isinstance(value, list):
            return [_coerce(v, args[0], f"{key}[{i}]") for i, v in enumerate(value)]
    elif origin is dict:
        if isinstance(value, dict):
            return {str(k): _coerce(v, args[1], f"{key}.{k}") for k, v in value.items()}
    raise ValueError(f"config key {key!r}: expected {_describe(hint)}, got {value!r}")


def _number(value: Any) -> float | int | None:
    """Ints, floats and numeric strings (PyYAML reads ``1e-4`` as a string)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value
    if isinstance(value, str):
        try:
            return float(value.replace("_", ""))
        except ValueError:
            return None
    return None


def _describe(hint: Any) -> str:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_describe(a) for a in args)
    if hint is type(None):
        return "null"
    if origin is list:
        return f"a list of {_describe(args[0])}"
    if origin is dict:
        return f"a mapping of names to {_describe(args[1])}"
    return {bool: "true/false", int: "integer", float: "number", str: "string"}.get(hint, str(hint))


def _check_values(c: Config) -> None:
    """Ranges and choices the types alone cannot express: every bad value is reported before a run starts."""
    problems = run_problems(c)
    positive = {"total_timesteps": c.total_timesteps, "ppo.learning_rate": c.ppo.learning_rate,
                "ppo.n_steps": c.ppo.n_steps, "ppo.n_epochs": c.ppo.n_epochs, "ppo.clip_range": c.ppo.clip_range,
                "ppo.max_grad_norm": c.ppo.max_grad_norm,
                "opponents.snapshot_every": c.opponents.snapshot_every,
                "opponents.pool_size": c.opponents.pool_size,
                "checkpoint_every": c.checkpoint_every, "keep_checkpoints": c.keep_checkpoints,
                "torch_threads": c.torch_threads,
                "eval.games": c.eval.games, "eval.final_games": c.eval.final_games,
                "warm_start.games": c.warm_start.games, "warm_start.epochs": c.warm_start.epochs,
                "warm_start.batch_size": c.warm_start.batch_size,
                "warm_start.learning_rate": c.warm_start.learning_rate,
                "warm_start.dagger_games": c.warm_start.dagger_games, "anchor.games": c.anchor.games}
    problems += [f"{k} must be > 0 (got {v})" for k, v in positive.items() if v <= 0]
    problems += network_problems(c.network)
    if c.opponents.pool_size > MAX_POOL:  # a checkpoint holds the pool: its reader refuses more
        problems.append(f"opponents.pool_size must be <= {MAX_POOL} (got {c.opponents.pool_size})")
    try:
        check_weights(c.opponents.mix, "opponents.mix")  # an empty or all-zero mix: trained against nobody
    except ValueError as error:
        problems.append(str(error))
    non_negative = {"eval.every": c.eval.every, "ppo.ent_coef": c.ppo.ent_coef, "ppo.vf_coef": c.ppo.vf_coef,
                    "margin_reward": c.margin_reward, "outcome_reward": c.outcome_reward, "anchor.kl": c.anchor.kl,
                    "warm_start.dagger_rounds": c.warm_start.dagger_rounds}
    problems += [f"{k} must be >= 0 (got {v})" for k, v in non_negative.items() if v < 0]
    if c.outcome not in OUTCOMES:
        problems.append(f"outcome must be one of {OUTCOMES} (got {c.outcome!r})")
    if c.outcome_reward == 0 == c.margin_reward:
        problems.append("outcome_reward and margin_reward are both 0: the learner would get no reward")
    if c.ppo.batch_size < 2:
        problems.append(f"ppo.batch_size must be >= 2 (got {c.ppo.batch_size})")
    if c.ppo.target_kl is not None and c.ppo.target_kl <= 0:
        problems.append(f"ppo.target_kl must be > 0 or null (got {c.ppo.target_kl})")
    if not 0 <= c.warm_start.random_seats < 1:
        problems.append(f"warm_start.random_seats must be >= 0 and < 1 (got {c.warm_start.random_seats})")
    if c.warm_start.workers is not None and c.warm_start.workers < 1:
        problems.append(f"warm_start.workers must be >= 1 or null (got {c.warm_start.workers})")
    if c.n_envs is not None and c.n_envs < 1:
        problems.append(f"n_envs must be >= 1 or null (got {c.n_envs})")
    if c.max_games is not None and c.max_games <= 0:
        problems.append(f"max_games must be > 0 or null (got {c.max_games})")
    if c.max_minutes is not None and c.max_minutes <= 0:
        problems.append(f"max_minutes must be > 0 or null (got {c.max_minutes})")
    if not 0 <= c.num_workers <= c.num_envs:
        problems.append(f"num_workers must be from 0 to n_envs={c.num_envs} (got {c.num_workers})")
    if c.num_workers and c.vec_env != "batched":
        problems.append(f"num_workers={c.num_workers} shares the games of vec_env: batched between processes; "
                        f"vec_env is {c.vec_env!r}")
    if c.critic not in CRITICS:
        problems.append(f"critic must be one of {CRITICS} (got {c.critic!r})")
    elif c.critic == "global_state" and c.vec_env != "batched":
        problems.append(f"critic: global_state reads the states of vec_env: batched; vec_env is {c.vec_env!r}")
    elif c.critic == "global_state" and c.ppo.ent_coef == 0:  # the value head learns from it through that term
        problems.append("critic: global_state needs ppo.ent_coef > 0 (e.g. 0.001)")
    if c.vec_env not in VEC_ENVS:
        problems.append(f"vec_env must be one of {VEC_ENVS} (got {c.vec_env!r})")
    if isinstance(c.seat, str) and c.seat != "random":
        problems.append(f"seat must be 'random' or a seat number (got {c.seat!r})")
    if c.anchor.kl > 0 and not (c.init_from or c.warm_start.teacher):
        problems.append("anchor.kl holds PPO near the policy it starts from: set warm_start.teacher or init_from")
    if c.anchor.kl > 0 and c.ppo.ent_coef == 0:  # the penalty is added through SB3's entropy term (sb3_policy.py)
        problems.append("anchor.kl needs ppo.ent_coef > 0 (e.g. 0.001)")
    if c.init_from and c.warm_start.teacher:
        problems.append("init_from and warm_start.teacher both set the initial policy: choose one")
    if not 0 < c.ppo.gamma <= 1 or not 0 <= c.ppo.gae_lambda <= 1:
        problems.append("ppo.gamma must be in (0, 1] and ppo.gae_lambda in [0, 1]")
    if problems:
        raise ValueError("bad config: " + "; ".join(problems))


def network_problems(n: Network) -> list[str]:
    """Hidden sizes > 0 and a known activation (the SB3 and the RLlib pipeline build the same network)."""
    problems = [f"network.{part}[{i}] must be > 0 (got {size})" for part in ("shared", "pi", "vf")
                for i, size in enumerate(getattr(n, part)) if size <= 0]
    if n.activation not in ACTIVATIONS:
        problems.append(f"network.activation must be one of {tuple(ACTIVATIONS)} (got {n.activation!r})")
    return problems


def run_problems(c: Run) -> list[str]:
    """What every training config must satisfy: finite numbers, a 32-bit seed, a run folder that can be made."""
    problems = [f"{key} must be a finite number (got {value})" for key, value in _numbers_in(dataclasses.asdict(c))
                if not math.isfinite(value)]
    if not 0 <= c.seed < 2**32:
        problems.append(f"seed must be in 0 .. 2**32 - 1 (got {c.seed})")
    return problems + _folder_problems(c)


MAX_NAME_BYTES = 240  # a folder name may have 255 bytes: room for the "-2", "-3", … of a taken one (files.new_folder)


def _folder_problems(c: Run) -> list[str]:
    """``runs_dir/name`` can be made: a name that is one folder name, and no file where a folder must be."""
    problems = []
    if not c.name or "/" in c.name or "\0" in c.name or c.name in (".", ".."):
        problems.append(f"name must be a folder name, without '/' or NUL (got {c.name!r})")
    elif len(c.name.encode()) > MAX_NAME_BYTES:
        problems.append(f"name must be at most {MAX_NAME_BYTES} bytes long (got {len(c.name.encode())})")
    if "\0" in c.runs_dir:
        return [*problems, f"runs_dir must not contain a NUL byte (got {c.runs_dir!r})"]
    runs_dir = Path(c.runs_dir)
    for folder in (runs_dir, *runs_dir.parents):  # the nearest one that exists must be a folder
        try:
            mode = folder.stat().st_mode
        except (FileNotFoundError, NotADirectoryError):  # missing, or below a file: look further up
            continue
        except OSError as error:  # a name too long, no permission, …
            problems.append(f"runs_dir {c.runs_dir!r} cannot be made: {error.strerror}")
        else:
            if not stat.S_ISDIR(mode):
                problems.append(f"runs_dir {c.runs_dir!r} cannot be made: {folder} is a file, not a folder")
        break
    return problems


def _numbers_in(tree: Any, prefix: str = "") -> list[tuple[str, float]]:
    """Every float in the config (game options and the opponent mix included), with its key."""
    if isinstance(tree, dict):
        return [item for k, v in tree.items() for item in _numbers_in(v, f"{prefix}{k}.")]
    if isinstance(tree, list):
        return [item for i, v in enumerate(tree) for item in _numbers_in(v, f"{prefix.rstrip('.')}[{i}].")]
    return [(prefix.rstrip("."), tree)] if isinstance(tree, float) else []


def dump(config: Any, path: str | Path) -> None:
    Path(path).write_text(yaml.safe_dump(dataclasses.asdict(config), sort_keys=False))
