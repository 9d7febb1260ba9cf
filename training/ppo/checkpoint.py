"""Training checkpoints without pickle: ``checkpoints/step_N.safetensors`` (a policy file of format
``tabletop-rl-checkpoint``, plus the optimizer state, the self-play pool and torch's RNG state as tensors) and
``checkpoints/step_N.json`` (everything else, written last: a checkpoint exists once its JSON does). Resuming
reads tensors and JSON only, checked before anything is changed (docs/training.md).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors import safe_open

from ...envs.core.files import atomic_write
from ..runtime.policy import (
    CHECKPOINT_FORMAT,
    CHECKPOINT_PREFIXES,
    MLPPolicy,
    PolicyInfo,
    Weights,
    format_version,
    load_policy,
    policy_file_bytes,
)


# ----------------------------------------------------------------------------- random states
def rng_state() -> dict[str, Any]:
    """The Python, numpy (legacy global) and torch generators' states."""
    version, internal, gauss = random.getstate()
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    return {"python": [version, list(internal), gauss],
            "numpy": [kind, keys.tolist(), int(pos), int(has_gauss), float(cached)],
            "torch": torch.get_rng_state().numpy().copy()}


def set_rng_state(state: dict[str, Any], python: Any = random, numpy: Any = np.random,
                  generator: torch.Generator | None = None) -> None:
    """Put ``state`` into the global generators (or into the given ones: a damaged state fails there)."""
    version, internal, gauss = state["python"]
    python.setstate((version, tuple(internal), gauss))
    kind, keys, pos, has_gauss, cached = state["numpy"]
    numpy.set_state((kind, np.array(keys, dtype=np.uint32), pos, has_gauss, cached))
    (generator or torch.default_generator).set_state(torch.from_numpy(np.array(state["torch"], dtype=np.uint8)))


# ----------------------------------------------------------------------------- checkpoints
@dataclass
class Checkpoint:
    """A checkpoint as read back: the policy, the optimizer state, the pool, the RNGs and the JSON."""

    step: int
    policy: MLPPolicy
    optimizer: dict[str, Any]  # torch optimizer state_dict
    pool: list[Weights]
    critic: Weights  # the global-state critic's tensors under their state_dict names (critic.…), if it has one
    rng: dict[str, Any]
    doc: dict[str, Any]  # the JSON document

    @property
    def trainer(self) -> dict[str, Any]:
        return self.doc["trainer"]


def save_checkpoint(folder: Path, step: int, model: Any, info: PolicyInfo, pool: list[Weights],
                    rng: dict[str, Any], trainer: dict[str, Any], keep: int) -> Path:
    """Write ``step_N.safetensors`` then ``step_N.json`` (atomically each), keep the newest ``keep``."""
    folder.mkdir(parents=True, exist_ok=True)
    optimizer = model.policy.optimizer.state_dict()
    extra = {f"optimizer/{index}/{key}": value.detach().cpu().numpy()
             for index, state in optimizer["state"].items() for key, value in state.items()}
    for k, weights in enumerate(pool):
        extra.update({f"pool/{k}/{name}": w for name, w in weights.items()})
    extra.update({f"critic/{name}": w for name, w in model.policy.critic_weights().items()})
    extra["rng/torch"] = np.asarray(rng["torch"], dtype=np.uint8)
    name = f"step_{step:012d}"
    atomic_write(folder / f"{name}.safetensors", policy_file_bytes(model.policy.file_weights(), info, extra))
    doc = {"format": CHECKPOINT_FORMAT, "format_version": format_version(info), "step": step,
           "n_updates": int(model._n_updates), "pool_size": len(pool),
           "optimizer_param_groups": optimizer["param_groups"],
           "rng": {"python": rng["python"], "numpy": rng["numpy"]},
           "episodes": [{k: float(v) for k, v in e.items()} for e in (model.ep_info_buffer or [])],
           "trainer": trainer}
    atomic_write(folder / f"{name}.json", json.dumps(doc, indent=1).encode())
    for old in sorted(folder.glob("step_*.json"))[:-keep]:
        old.unlink()  # the commit marker first: a half-deleted checkpoint is never taken for a whole one
        old.with_suffix(".safetensors").unlink(missing_ok=True)
    return folder / f"{name}.json"


# What a checkpoint's JSON must hold: every value a resumed run uses, with its type. A mapping: these keys at
# least; a list: every element; a tuple: one of these types. A damaged file fails when read, not mid-run.
NUMBER = (int, float)
RECORD = {"step": (int,), "opponent": (str,), "games": (int,), "win_rate": NUMBER, "ci": [NUMBER],
          "per_seat": [{"seat": (int,), "games": (int,), "win_rate": NUMBER, "ci": [NUMBER]}],
          "margin": (*NUMBER, type(None)), "margin_ci": (*NUMBER, type(None))}  # see training/ppo/report.py
DOCUMENT = {"step": (int,), "n_updates": (int,), "pool_size": (int,), "optimizer_param_groups": [{"params": [(int,)]}],
            "rng": {"python": (list,), "numpy": (list,)}, "episodes": [{"r": NUMBER, "l": NUMBER}],
            "trainer": {"eval_history": [RECORD], "minutes": NUMBER, "warm_start": (str,), "finished": (bool,),
                        "last": {"snapshot": (int, type(None)), "eval": (int, type(None)), "checkpoint": (int,)}}}
TYPE_NAMES = {int: "an integer", float: "a number", str: "a string", bool: "true or false", list: "a list",
              type(None): "null"}


def _check_shape(value: Any, shape: Any, where: str = "") -> None:
    """Raise ``KeyError`` / ``TypeError`` naming the first part of ``value`` that is not of ``shape`` (``DOCUMENT``)."""
    if isinstance(shape, dict):
        if not isinstance(value, dict):
            raise TypeError(f"{where or 'the document'} must be a JSON object, got {value!r:.40}")
        for key, inner in shape.items():
            inside = f"{where}.{key}" if where else key
            if key not in value:
                raise KeyError(inside)
            _check_shape(value[key], inner, inside)
    elif isinstance(shape, list):
        if not isinstance(value, list):
            raise TypeError(f"{where} must be a list, got {value!r:.40}")
        for i, item in enumerate(value):
            _check_shape(item, shape[0], f"{where}[{i}]")
    elif not isinstance(value, shape) or (isinstance(value, bool) and bool not in shape):
        expected = " or ".join(TYPE_NAMES[t] for t in shape if not (t is int and float in shape))  # a number
        raise TypeError(f"{where} must be {expected}, got {value!r:.40}")


def latest_checkpoint(run_dir: Path) -> Path | None:
    """The JSON of the newest complete checkpoint (its safetensors file was written before it)."""
    for path in sorted((run_dir / "checkpoints").glob("step_*.json"), reverse=True):
        if path.with_suffix(".safetensors").is_file():
            return path
    return None


def resume_point(run_dir: Path) -> tuple[Checkpoint | None, list[str]]:
    """The newest checkpoint of ``run_dir`` that reads back whole, and why each newer one does not.

    ``(None, [])`` if the run has no checkpoint; a ``ValueError`` (one line) if none of them reads back."""
    skipped = []
    for path in sorted((run_dir / "checkpoints").glob("step_*.json"), reverse=True):
        try:
            return read_checkpoint(path), skipped
        except ValueError as error:
            skipped.append(str(error))
    if skipped:
        raise ValueError(f"nothing to resume: none of the {len(skipped)} checkpoints of {run_dir} reads back; "
                         f"the newest: {skipped[0]}")
    return None, []


def read_checkpoint(path: Path) -> Checkpoint:
    """Read a checkpoint written by :func:`save_checkpoint`: JSON and tensors only. Everything resuming uses is
    checked here (``DOCUMENT``, the optimizer's and the pool's tensors, the random states): a damaged
    checkpoint is a ``ValueError`` naming it, before anything is changed."""
    tensors_path = path.with_suffix(".safetensors")
    policy = load_policy(tensors_path)  # checks the format, the network and every policy tensor
    try:
        doc = json.loads(path.read_bytes().decode("utf-8"))
        _check_shape(doc, DOCUMENT)
        with safe_open(str(tensors_path), framework="np") as f:
            extra = {k: f.get_tensor(k) for k in f.keys() if k.startswith(CHECKPOINT_PREFIXES)}
        state: dict[int, dict[str, torch.Tensor]] = {}
        snapshots: dict[int, Weights] = {}
        critic = {key.partition("/")[2]: value for key, value in extra.items() if key.startswith("critic/")}
        for key, value in extra.items():
            kind, _, rest = key.partition("/")
            index, _, name = rest.partition("/")
            if kind == "optimizer":
                state.setdefault(int(index), {})[name] = torch.from_numpy(value)
            elif kind == "pool":
                snapshots.setdefault(int(index), {})[name] = value
        if sorted(snapshots) != list(range(len(snapshots))) or len(snapshots) != doc["pool_size"]:
            raise ValueError(f"pool_size is {doc['pool_size']}, its tensors hold {len(snapshots)} snapshots")
        pool = [snapshots[k] for k in range(len(snapshots))]
        params = [i for group in doc["optimizer_param_groups"] for i in group["params"]]
        if sorted(params) != list(range(len(policy.weights) + len(critic))) or not state.keys() <= set(params):
            raise ValueError("its optimizer state does not fit its policy")
        shapes = {name: w.shape for name, w in policy.weights.items()}
        if any({name: w.shape for name, w in snapshot.items()} != shapes for snapshot in pool):
            raise ValueError("a snapshot of its pool is not a policy of its network")
        optimizer = {"state": state, "param_groups": doc["optimizer_param_groups"]}
        rng = {**doc["rng"], "torch": extra["rng/torch"]}
        set_rng_state(rng, random.Random(), np.random.RandomState(), torch.Generator())  # only to check them
        checkpoint = Checkpoint(doc["step"], policy, optimizer, pool, critic, rng, doc)
    except (OSError, ValueError, KeyError, IndexError, TypeError, OverflowError, RuntimeError, RecursionError
            ) as error:
        raise ValueError(f"checkpoint {path} is incomplete or damaged ({type(error).__name__}: {error})") from None
    return checkpoint
