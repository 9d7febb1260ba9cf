"""Policy files and their inference in numpy: what ``pretrained``, ``runs/<name>/policy.safetensors`` and every
checkpoint are, and how agents run them (no torch needed).

A policy file is one safetensors file (tensors and a JSON header, never code) holding SB3's actor-critic MLP
under its ``state_dict`` names, in float16 (a checkpoint's in float32, to resume exactly; float32 policy files
are read too); :func:`load_policy` checks all of it, within the limits below, before any tensor is read, and
otherwise raises :class:`PolicyFileError`, one line naming the file. The format, the tensors and the limits are
described in docs/training.md ("Policy files").
"""

from __future__ import annotations

import json
import math
import os
import reprlib
import stat
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from safetensors import SafetensorError, safe_open
from safetensors.numpy import save as safetensors_bytes
from threadpoolctl import ThreadpoolController

from ...envs.core.files import atomic_write, file_kind, parse_json
from ...envs.core.game import Game
from ...envs.core.registry import game_version
from ...envs.core.versions import FIRST_RELEASE, PACKAGE_VERSION, warn_if_other_version

POLICY_FORMAT, CHECKPOINT_FORMAT = "tabletop-rl-policy", "tabletop-rl-checkpoint"
# 1 held F32 weights only; 3 added the shared trunk (network.shared), and only a network with one is written as 3,
# so that a release that reads 2 reads every other file of this one (and says of a 3 that a newer release may).
FORMAT_VERSION, TRUNK_FORMAT_VERSION = "2", "3"
READ_VERSIONS = ("1", FORMAT_VERSION, TRUNK_FORMAT_VERSION)
WEIGHT_DTYPES = {"F16": np.float16, "F32": np.float32}  # safetensors' names; a policy file's weights are F16
CHECKPOINT_PREFIXES = ("optimizer/", "pool/", "rng/", "critic/")  # training state a checkpoint adds to the policy
MAX_LAYERS, MAX_WIDTH, MAX_PARAMETERS = 16, 4096, 50_000_000  # per path (shared + pi, shared + vf); in all
MAX_POOL, STATE_SLACK = 64, 2**16  # a checkpoint's snapshots; the bytes of its Adam steps and RNG state
MAX_HEADER_BYTES = 2**20  # a checkpoint of MAX_POOL snapshots of MAX_LAYERS layers needs about 600 KB
Weights = dict[str, np.ndarray]  # a network's tensors by name
EXPECTED = "a tabletop-rl policy (.safetensors written by tabletop_rl.training.train)"
TOP_MOVES = 5  # the likeliest moves a policy agent notes for a game record
# A first layer multiplies only the weight rows of the nonzero features when they are at most this share of all
# (one observation, or the union over a batch); above it the dense product is faster (measured: docs/performance.md).
SPARSE_SHARE = 0.25


_BLAS = ThreadpoolController()  # finds the BLAS libraries once: a limit then costs microseconds, not a millisecond


def limit_blas_threads(n: int = 1) -> Any:
    """Give numpy's BLAS ``n`` threads in this process, at once; as a ``with`` block, until the block ends. Its
    default (a thread per core) spins on a busy CPU: with two runs on two cores, one observation's forward pass
    of a 512-wide policy took 16 ms instead of 0.3."""
    return _BLAS.limit(limits=n, user_api="blas")


def _relu(x: np.ndarray, out: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0, out=out)


def _drawn(logits: np.ndarray, uniform: np.ndarray) -> np.ndarray:
    """Row by row, the action drawn from the softmax of ``logits`` (illegal actions at -inf: never drawn) by the
    uniform numbers ``uniform``: the first whose cumulative probability exceeds it."""
    cdf = np.cumsum(np.exp(logits - logits.max(-1, keepdims=True), dtype=np.float64), axis=-1)
    return (cdf <= (uniform * cdf[..., -1])[..., None]).sum(-1)  # searchsorted(cdf, target, side="right")


class Activation(NamedTuple):
    """A hidden layer's activation, as the numpy inference and the torch training build it."""

    numpy: Callable[..., np.ndarray]  # applied in place: f(x, out=x)
    torch: str  # the torch.nn module of the same function (training.ppo.network)


# network.activation: every name a policy file and a config may give, defined here only
ACTIVATIONS = {"relu": Activation(_relu, "ReLU"), "tanh": Activation(np.tanh, "Tanh")}


class PolicyFileError(ValueError):
    """A policy file that cannot be used; the message is one line naming the file."""


@dataclass(frozen=True)
class PolicyInfo:
    """The JSON document of a policy file: what the network is and what it was trained for."""

    game: str
    options: dict[str, Any]
    network: dict[str, Any]  # {"shared": [sizes] (optional), "pi": [sizes], "vf": [sizes], "activation": ...}
    observation_size: int
    num_actions: int
    num_timesteps: int = 0
    provenance: dict[str, Any] = field(default_factory=dict)  # free-form: run, config, conversion, …
    game_version: int = 0  # the version of the game it was trained on; a file without one: 0
    tabletop_rl: str = FIRST_RELEASE  # the tabletop-rl it was trained with; a file without one: the first release

    @classmethod
    def for_game(cls, game: Game, network: Mapping[str, Any], num_timesteps: int = 0,
                 **provenance: Any) -> PolicyInfo:
        net = {"pi": [int(n) for n in network["pi"]], "vf": [int(n) for n in network["vf"]],
               "activation": str(network["activation"])}
        if network.get("shared"):  # absent when empty: such a file is the format 2 it always was
            net = {"shared": [int(n) for n in network["shared"]], **net}
        info = cls(game.name, dict(game.options), net, game.observation_size, game.num_actions,
                   int(num_timesteps), provenance, game_version(game.name), PACKAGE_VERSION)
        problem = info.size_problem()
        if problem:  # refused before training, not when its first checkpoint is written
            raise ValueError(f"network {net} for {game.name}: {problem}")
        return info

    def size_problem(self) -> str | None:
        """Why the network is too large for a policy file (see the limits above), if it is."""
        shared = self.network.get("shared", [])
        sizes = shared + self.network["pi"] + self.network["vf"]
        depth = len(shared) + max(len(self.network["pi"]), len(self.network["vf"]))
        if depth > MAX_LAYERS:
            return f"{depth:,} hidden layers, more than the {MAX_LAYERS} a policy file may have"
        if max(sizes, default=0) > MAX_WIDTH:
            return f"a hidden layer of {max(sizes):,} units, more than the {MAX_WIDTH:,} a policy file may have"
        parameters = sum(math.prod(shape) for shape in self.tensor_shapes().values())
        if parameters > MAX_PARAMETERS:
            return f"{parameters:,} parameters, more than the {MAX_PARAMETERS:,} a policy file may have"
        return None

    def tensor_shapes(self) -> dict[str, tuple[int, ...]]:
        """Every tensor the network has, with its shape."""
        shapes: dict[str, tuple[int, ...]] = {}

        def layers(part: str, width: int, sizes: list[int]) -> int:
            for i, size in enumerate(sizes):
                shapes[f"mlp_extractor.{part}.{2 * i}.weight"] = (size, width)
                shapes[f"mlp_extractor.{part}.{2 * i}.bias"] = (size,)
                width = size
            return width

        trunk = layers("shared_net", self.observation_size, self.network.get("shared", []))
        for part, head, sizes, outputs in (("policy_net", "action_net", self.network["pi"], self.num_actions),
                                           ("value_net", "value_net", self.network["vf"], 1)):
            width = layers(part, trunk, sizes)
            shapes[f"{head}.weight"], shapes[f"{head}.bias"] = (outputs, width), (outputs,)
        return shapes

    def check_game(self, game: Game, path: str | Path) -> None:
        """Refuse a policy trained for another game, or for options that change its spaces; warn in one line if it
        was trained on another version of the game (``VersionWarning``)."""
        if self.game != game.name:
            raise PolicyFileError(f"{path} holds a policy for {self.game}; it cannot play {game.name}")
        if (self.observation_size, self.num_actions) != (game.observation_size, game.num_actions):
            changed = {k: v for k, v in game.options.items() if self.options.get(k) != v}
            which = f"{game.name} with {changed}" if changed else \
                f"{game.name} (whose observation layout changed since the policy was trained)"
            raise PolicyFileError(
                f"{path} holds a {self.game} policy for observations of size {self.observation_size} and "
                f"{self.num_actions} actions; {which} has {game.observation_size} and {game.num_actions}")
        warn_if_other_version(path, "trained", game.name, self.game_version, self.tabletop_rl)


class MLPPolicy:
    """The actor-critic MLP in numpy: action logits and state values, one observation or a batch.

    One observation (a 1-D array) runs through buffers allocated once, so an agent's decision allocates
    almost nothing (and one object must not be shared between threads); a batch (a 2-D array, one
    observation per row) is one matrix product per layer. A layer that reads the observation keeps its weights
    transposed (a row per feature) and multiplies only the rows of the nonzero features when they are few
    (``SPARSE_SHARE``): observations are mostly zeros, and this gives the dense product up to rounding.
    """

    def __init__(self, weights: Mapping[str, np.ndarray], info: PolicyInfo):
        self.info = info
        self.weights = {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in weights.items()}
        self._activation = ACTIVATIONS[info.network["activation"]].numpy
        shared = len(info.network.get("shared", []))
        self.trunk = self._layers("shared_net", None, shared, reads_observation=True)
        self.actor = self._layers("policy_net", "action_net", len(info.network["pi"]), reads_observation=not shared)
        self.critic = self._layers("value_net", "value_net", len(info.network["vf"]), reads_observation=not shared)

    def _layers(self, part: str, head: str | None, hidden: int, reads_observation: bool,
                ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, bool]]:
        """(weight, bias, buffer, sparse) per layer; a sparse layer's weight is transposed: (inputs, units)."""
        names = [f"mlp_extractor.{part}.{2 * i}" for i in range(hidden)] + ([head] if head else [])
        return [(np.ascontiguousarray(self.weights[f"{n}.weight"].T) if sparse else self.weights[f"{n}.weight"],
                 self.weights[f"{n}.bias"], np.empty(len(self.weights[f"{n}.bias"]), np.float32), sparse)
                for i, n in enumerate(names) for sparse in [reads_observation and i == 0]]

    def _run(self, layers: list, x: np.ndarray, activate_last: bool = False) -> np.ndarray:
        last, single = len(layers) - 1, x.ndim == 1
        for i, (weight, bias, buffer, sparse) in enumerate(layers):
            if sparse:
                x = self._sparse(x, weight, buffer if single else None)
            elif single:
                x = np.matmul(weight, x, out=buffer)
            else:
                x = x @ weight.T
            x += bias
            if i < last or activate_last:
                self._activation(x, out=x)
        return x

    @staticmethod
    def _sparse(x: np.ndarray, weight_t: np.ndarray, out: np.ndarray | None) -> np.ndarray:
        """``x @ weight_t`` from the rows of the features that are nonzero (in any row of a batch), when few."""
        columns = np.flatnonzero(x if x.ndim == 1 else x.any(axis=0))
        if len(columns) > SPARSE_SHARE * len(weight_t):
            return np.matmul(x, weight_t, out=out)
        return np.matmul(x[..., columns], weight_t[columns], out=out)

    def _forward(self, head: list, observation: np.ndarray) -> np.ndarray:
        x = np.asarray(observation, dtype=np.float32)
        if self.trunk:
            x = self._run(self.trunk, x, activate_last=True)
        return self._run(head, x)

    def logits(self, observation: np.ndarray, copy: bool = True) -> np.ndarray:
        """Unmasked action logits: shape (num_actions,) for one observation, (batch, num_actions) for a batch.

        ``copy=False`` returns one observation's logits in the policy's own buffer, which the next call
        overwrites (what agents use: no allocation per decision).
        """
        out = self._forward(self.actor, observation)
        return out.copy() if copy and out.ndim == 1 else out

    def value(self, observation: np.ndarray) -> np.ndarray:
        """The critic's value: shape () for one observation, (batch,) for a batch."""
        return self._forward(self.critic, observation)[..., 0].copy()


class PolicyAgent:
    """A policy as an agent: ``act(observation, action_mask) -> action``.

    Deterministic (arg-max over the legal actions) by default; with ``deterministic=False`` it samples
    from the masked softmax using its seeded generator (``seed`` may be a shared ``Generator``), so games
    stay reproducible.
    """

    def __init__(self, policy: MLPPolicy, deterministic: bool = True,
                 seed: int | np.random.Generator | None = None):
        self.policy = policy
        self.deterministic = deterministic
        self.rng = np.random.default_rng(seed)
        self._last: tuple[np.ndarray, np.ndarray] | None = None  # the last decision's observation and mask

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        mask = np.asarray(action_mask, dtype=bool)
        if not mask.any():
            raise ValueError("PolicyAgent.act: the action mask has no legal action")
        return self.choose(observation, mask, self.policy.logits(observation, copy=False))

    @property
    def batch_key(self) -> MLPPolicy:
        """Agents of one network are decided together (the agent protocol, ``envs/core/agents.py``)."""
        return self.policy

    @staticmethod
    def act_batch(agents: list[PolicyAgent], observations: np.ndarray, masks: np.ndarray) -> list[int]:
        """Each agent's decision, from one forward pass of their shared network over the stacked observations
        (:func:`tabletop_rl.training.runtime.table.play_opponents` decides many games so)."""
        masks = np.asarray(masks, dtype=bool)
        logits = np.where(masks, agents[0].policy.logits(observations), -np.inf)
        actions = logits.argmax(1)
        drawing = [i for i, agent in enumerate(agents) if not agent.deterministic]
        if drawing:  # choose's draw for all of them at once: the same numbers, row by row
            actions[drawing] = _drawn(logits[drawing], np.array([agents[i].rng.random() for i in drawing]))
        for agent, observation, mask in zip(agents, observations, masks, strict=True):
            agent._last = (observation, mask)
        return actions.tolist()

    def choose(self, observation: np.ndarray, mask: np.ndarray, logits: np.ndarray) -> int:
        """The decision given the policy's ``logits`` for ``observation`` (computed by ``act``, or by
        ``act_batch`` for many agents of this network at once)."""
        mask = np.asarray(mask, dtype=bool)
        self._last = (observation, mask)
        logits = np.where(mask, logits, -np.inf)
        if self.deterministic:
            return int(np.argmax(logits))
        return int(_drawn(logits, np.float64(self.rng.random())))

    def only(self, action: int) -> int:
        """The decision when ``action`` is the only legal one: ``choose``'s answer without the network, drawing from
        the generator as ``choose`` does, so that the games are the same (what play inside the envs uses)."""
        self._last = None
        if not self.deterministic:
            self.rng.random()
        return action

    def notes(self) -> dict[str, Any] | None:
        """Its last decision's notes for a game record: the policy's likeliest legal moves with their
        probabilities (at most ``TOP_MOVES``) and the critic's value of the position, in the scale of the reward
        it was trained on (computed when asked)."""
        if self._last is None:
            return None
        observation, mask = self._last
        legal = np.flatnonzero(mask)
        logits = self.policy.logits(observation)[legal].astype(np.float64)
        p = np.exp(logits - logits.max())
        p /= p.sum()
        top = np.argsort(-p, kind="stable")[:TOP_MOVES]
        return {"policy": {"top": [{"action": int(legal[i]), "probability": float(p[i])} for i in top],
                           "value": float(self.policy.value(observation))}}


# ----------------------------------------------------------------------------- writing
def policy_file_bytes(weights: Mapping[str, np.ndarray], info: PolicyInfo,
                      extra: Mapping[str, np.ndarray] | None = None) -> bytes:
    """A policy file's bytes, or with ``extra`` tensors (``optimizer/…``, ``pool/…``, ``rng/…``) a checkpoint's.

    The weights are checked against ``info`` first: a file that this module would refuse is never written.
    """
    if extra and any(not name.startswith(CHECKPOINT_PREFIXES) for name in extra):
        raise ValueError(f"checkpoint tensors must be named {' / '.join(CHECKPOINT_PREFIXES)}…")
    dtype = "F32" if extra else "F16"  # a checkpoint resumes training: its network as it was, not rounded
    with np.errstate(over="ignore"):  # a value beyond float16 becomes inf, refused below
        tensors = {name: np.ascontiguousarray(w, dtype=WEIGHT_DTYPES[dtype]) for name, w in weights.items()}
    extra = {name: np.ascontiguousarray(t) for name, t in (extra or {}).items()}
    problem = _tensors_problem(info, {name: (t.shape, dtype if name in tensors else str(t.dtype), t.nbytes)
                                      for name, t in {**tensors, **extra}.items()}, checkpoint=bool(extra))
    overflow = next((name for name, t in tensors.items() if not np.isfinite(t).all() and
                     np.isfinite(weights[name]).all()), None)  # rounded to ±inf, which the reader refuses
    if overflow and not problem:
        problem = f"tensor {overflow} holds values beyond {dtype}'s ±{np.finfo(WEIGHT_DTYPES[dtype]).max:,.6g}"
    if problem:
        raise ValueError(f"cannot write a policy: {problem}")
    metadata = {"format": CHECKPOINT_FORMAT if extra else POLICY_FORMAT, "format_version": format_version(info),
                "policy": json.dumps(asdict(info), default=_plain)}
    data = safetensors_bytes({**tensors, **extra}, metadata=metadata)
    if int.from_bytes(data[:8], "little") > MAX_HEADER_BYTES:  # a huge provenance
        raise ValueError(f"cannot write a policy: its header would be more than {MAX_HEADER_BYTES:,} bytes")
    return data


def format_version(info: PolicyInfo) -> str:
    """The format version a file of this network is written in: the oldest that can hold it."""
    return TRUNK_FORMAT_VERSION if info.network.get("shared") else FORMAT_VERSION


def save_policy(path: str | Path, weights: Mapping[str, np.ndarray], info: PolicyInfo) -> None:
    """Write a policy file (float16 weights) atomically (a killed process never leaves half a file)."""
    atomic_write(path, policy_file_bytes(weights, info))


def convert_policy(source: str | Path, target: str | Path) -> None:
    """Write the policy of ``source`` (a policy file, of any version, or a checkpoint) to ``target`` (which may be
    ``source``) as a policy file of this version: float16 weights and the same info, its provenance noting the
    rounding of float32 weights."""
    policy = load_policy(source)  # checks all of it
    found = _safetensors_header(Path(source))[1]
    rounded = any(found[name][1] != "F16" for name in policy.weights)
    provenance = {**policy.info.provenance, "converted": "F32 weights rounded to F16 (convert_policy)"} \
        if rounded else policy.info.provenance
    save_policy(target, policy.weights, PolicyInfo(**{**asdict(policy.info), "provenance": provenance}))


def _plain(value: Any) -> Any:
    """numpy scalars in options (``num_players=np.int64(4)``) as plain JSON numbers."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{value!r} ({type(value).__name__}) cannot be stored in a policy file's JSON")


# ----------------------------------------------------------------------------- reading
def load_policy(path: str | Path, game: Game | None = None) -> MLPPolicy:
    """The policy stored in ``path`` (a policy file or a checkpoint); with ``game``, refuse another game's.

    Raises :class:`PolicyFileError` (one line, naming the file and what was expected) for anything else.
    All but the weights' values is checked from the header, before any tensor is read.
    """
    path = Path(path)
    info, names = _read_header(path)
    if game is not None:
        info.check_game(game, path)
    try:
        with safe_open(str(path), framework="np") as f:
            # float16 weights become float32 here, once: inference runs in float32 (and checks finiteness 40x faster)
            weights = {name: f.get_tensor(name).astype(np.float32, copy=False) for name in names}
    except SafetensorError as error:
        raise PolicyFileError(f"{path} is not {EXPECTED}: {error}") from None
    bad = [name for name, w in weights.items() if not np.isfinite(w).all()]
    if bad:
        raise PolicyFileError(f"{path}: tensor {bad[0]} holds NaN or infinite values")
    return MLPPolicy(weights, info)


def read_policy_info(path: str | Path) -> PolicyInfo:
    """The checked JSON document of a policy file or checkpoint, without loading its tensors."""
    return _read_header(Path(path))[0]


def _read_header(path: Path) -> tuple[PolicyInfo, list[str]]:
    """The policy's info and tensor names, after checking the metadata and every tensor's dtype and shape."""
    metadata, found = _safetensors_header(path)
    kind = metadata.get("format")
    if kind not in (POLICY_FORMAT, CHECKPOINT_FORMAT):
        raise PolicyFileError(f"{path} is a safetensors file but not {EXPECTED}: its metadata has no "
                              f"'format': '{POLICY_FORMAT}'")
    if metadata.get("format_version") not in READ_VERSIONS:
        raise PolicyFileError(f"{path} has policy format_version {_short(metadata.get('format_version'))}; this "
                              f"tabletop-rl reads versions {', '.join(READ_VERSIONS)} (a newer release may "
                              "read it)")
    info = _parse_info(path, metadata.get("policy"))
    if metadata["format_version"] != format_version(info) and "shared" in info.network:
        raise PolicyFileError(f"{path}: a network with a shared trunk needs policy format_version "
                              f"{TRUNK_FORMAT_VERSION}, the file says {metadata['format_version']}")
    problem = _tensors_problem(info, found, checkpoint=kind == CHECKPOINT_FORMAT)
    if problem:
        raise PolicyFileError(f"{path}: {problem} (network {_short(info.network)}, observation "
                              f"{_short(info.observation_size)}, {_short(info.num_actions)} actions)")
    return info, list(info.tensor_shapes())


def _safetensors_header(path: Path) -> tuple[dict[str, str], dict[str, tuple[tuple[int, ...], str, int]]]:
    """A safetensors file's metadata and tensors (name -> (shape, dtype, bytes)), from its header alone.

    The header is read only if it is at most MAX_HEADER_BYTES long, and the file must be exactly as long as
    the header says; nothing else is read.
    """
    try:
        mode = path.stat().st_mode
        if not stat.S_ISREG(mode):  # never opened: a FIFO would block, /dev/zero never ends
            raise PolicyFileError(f"{path} is {file_kind(mode)}, not a regular file: expected {EXPECTED}")
        with open(path, "rb") as f:
            head = f.read(8)
            length = int.from_bytes(head, "little")
            text = f.read(length) if len(head) == 8 and length <= MAX_HEADER_BYTES else b""
            size = os.fstat(f.fileno()).st_size
    except FileNotFoundError:
        raise PolicyFileError(f"no such file: {path}") from None
    except OSError as error:
        raise PolicyFileError(f"{path} cannot be read: {error.strerror or error}") from None

    def refused(reason: str) -> PolicyFileError:
        return PolicyFileError(f"{path} is not {EXPECTED}: {_sniff(head) or reason}")

    if len(head) < 8:
        raise refused("the file is shorter than a safetensors header")
    if length > MAX_HEADER_BYTES:
        raise refused(f"its header would be {length:,} bytes, more than the {MAX_HEADER_BYTES:,} a policy file "
                      "may have")
    if len(text) < length:
        raise refused("the file ends inside its header")
    header = _json(path, text, "its safetensors header")
    metadata = header.pop("__metadata__", {}) if isinstance(header, dict) else None
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise refused("its header is not a JSON object with text metadata")
    found = {}
    for name, entry in header.items():
        shape, offsets = (entry.get("shape"), entry.get("data_offsets")) if isinstance(entry, dict) else (None, [])
        if not (_naturals(shape) and _naturals(offsets) and len(offsets) == 2 and offsets[0] <= offsets[1]
                and isinstance(entry.get("dtype"), str)):
            raise refused(f"its header's entry for tensor {_short(name)} is malformed")
        found[name] = (tuple(shape), entry["dtype"], offsets[1] - offsets[0])
    declared, held = max((entry["data_offsets"][1] for entry in header.values()), default=0), size - 8 - length
    if declared != held:
        raise refused(f"its header declares {declared:,} bytes of tensors but {held:,} follow it (a truncated or "
                      "damaged file?)")
    return metadata, found


def _naturals(value: Any) -> bool:
    return isinstance(value, list) and all(type(n) is int and n >= 0 for n in value)


def _tensors_problem(info: PolicyInfo, found: Mapping[str, tuple[tuple[int, ...], str, int]],
                     checkpoint: bool) -> str | None:
    """What is wrong with the tensors ``found`` (name -> (shape, dtype, bytes)) for the network of ``info``;
    a ``checkpoint`` may add training state, within the limit of the module docstring."""
    problem = info.size_problem()
    if problem:
        return problem
    shapes = info.tensor_shapes()
    missing = [n for n in shapes if n not in found]
    if missing:
        return f"tensor {missing[0]} is missing"
    state = {name: nbytes for name, (_, _, nbytes) in found.items() if name not in shapes}
    critic = sum(nbytes for name, nbytes in state.items() if name.startswith("critic/"))
    if critic > 4 * MAX_PARAMETERS:
        return f"its critic/ tensors declare {critic:,} bytes, more than {4 * MAX_PARAMETERS:,} (float32)"
    unexpected = sorted(n for n in state if not (checkpoint and n.startswith(CHECKPOINT_PREFIXES)))
    if unexpected:
        return f"unexpected tensor {_short(unexpected[0])}"
    for name, shape in shapes.items():
        got_shape, dtype, _ = found[name]
        if dtype not in WEIGHT_DTYPES:
            return f"tensor {name} is {_short(dtype)}, expected F16 (float16) or F32 (float32)"
        if tuple(got_shape) != shape:
            return f"tensor {name} has shape {_short(tuple(got_shape))}, the declared network needs {shape}"
    # a global-state critic (critic/) adds its own tensors and their two Adam moments
    limit = (MAX_POOL + 2) * 4 * sum(math.prod(shape) for shape in shapes.values()) + 3 * critic + STATE_SLACK
    if sum(state.values()) > limit:
        return (f"its training state (optimizer/, pool/, rng/, critic/) declares {sum(state.values()):,} bytes, more "
                f"than the {limit:,} a checkpoint of this network may have ({MAX_POOL} snapshots and Adam's two "
                f"moments, a critic and its moments, plus {STATE_SLACK:,})")
    return None


def _parse_info(path: Path, text: str | None) -> PolicyInfo:
    doc = _json(path, text, "its 'policy' metadata") if text is not None else None
    problem = _info_problem(doc)
    if problem:
        raise PolicyFileError(f"{path}: malformed 'policy' metadata: {problem}")
    return PolicyInfo(**doc)


def _json(path: Path, text: str | bytes, what: str) -> Any:
    """The JSON document ``text`` of the file ``path``, or one line naming the file if it is none."""
    try:
        return parse_json(text)
    except ValueError as reason:
        raise PolicyFileError(f"{path}: {what} is not valid JSON ({reason})") from None


def _info_problem(doc: Any) -> str | None:
    if not isinstance(doc, dict):
        return "expected a JSON object"
    required = {"game": str, "options": dict, "network": dict, "observation_size": int, "num_actions": int}
    optional = {"num_timesteps": int, "provenance": dict, "game_version": int, "tabletop_rl": str}
    unknown = sorted(doc.keys() - required.keys() - optional.keys())
    if unknown:
        return f"unknown key {_short(unknown[0])}"
    for key, kind in {**required, **optional}.items():
        if key not in doc:
            if key in required:
                return f"missing {key!r}"
        elif not isinstance(doc[key], kind) or isinstance(doc[key], bool):
            return f"{key!r} must be a JSON {kind.__name__}, got {_short(doc[key])}"
    if doc["observation_size"] < 1 or doc["num_actions"] < 1 or doc.get("num_timesteps", 0) < 0 \
            or doc.get("game_version", 0) < 0:
        return "observation_size and num_actions must be positive, num_timesteps and game_version >= 0"
    net = doc["network"]
    if not {"pi", "vf", "activation"} <= set(net) <= {"shared", "pi", "vf", "activation"}:
        return f"network must have pi, vf, activation and optionally shared, got {_short(sorted(net))}"
    for key in ("shared", "pi", "vf"):
        sizes = net.get(key, [1])
        if not isinstance(sizes, list) or not all(type(n) is int and n > 0 for n in sizes):
            return f"network.{key} must be a list of positive layer sizes, got {_short(sizes)}"
    if net["activation"] not in ACTIVATIONS:
        return f"network.activation must be one of {tuple(ACTIVATIONS)}, got {_short(net['activation'])}"
    return None


_SHORT = reprlib.Repr()  # values from a file, shown in one line of reasonable length
_SHORT.maxstring, _SHORT.maxother, _SHORT.maxlist = 100, 100, 2 * MAX_LAYERS
_short = _SHORT.repr

MAGIC = {b"PK\x03\x04": "it is a zip archive (a stable-baselines3 .zip or a torch.save file?)",
         b"\x80": "it is a Python pickle", b"\x1f\x8b": "it is gzip-compressed"}


def _sniff(head: bytes) -> str | None:
    """A readable guess at what a non-safetensors file is, from its first bytes."""
    if not head:
        return "the file is empty"
    return next((what for magic, what in MAGIC.items() if head.startswith(magic)), None)

