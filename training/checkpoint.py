"""Training checkpoints without pickle, and the bridge between torch policies and numpy weights.

A checkpoint is two files in ``runs/<name>/checkpoints/``:

* ``step_N.safetensors`` — a policy file (:mod:`tabletop_rl.training.policy`, format ``tabletop-rl-checkpoint``: it
  also loads as an agent) whose extra tensors are the training state: ``optimizer/<param>/<key>``
  (Adam's ``step``, ``exp_avg``, ``exp_avg_sq``), ``pool/<k>/<name>`` (the self-play snapshots) and
  ``rng/torch`` (torch's generator state, uint8).
* ``step_N.json`` — everything else, as plain JSON: step and update counts, the optimizer's
  hyperparameters, the Python and numpy generator states, the trainer's bookkeeping (evaluation history,
  when the pool / evaluation / checkpoint were last refreshed, minutes spent, whether the run finished)
  and SB3's recent-episode buffer. It is written last: a checkpoint exists once its JSON does.

Nothing is unpickled when a run resumes: it only reads tensors and JSON.
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

from .files import atomic_write
from .policy import (
    CHECKPOINT_FORMAT,
    CHECKPOINT_PREFIXES,
    FORMAT_VERSION,
    MLPPolicy,
    PolicyInfo,
    load_policy,
    policy_file_bytes,
)

Weights = dict[str, np.ndarray]


# ----------------------------------------------------------------------------- torch <-> numpy
def weights_of(policy: torch.nn.Module) -> Weights:
    """A copy of a torch policy's parameters as float32 numpy arrays, under their state_dict names."""
    return {k: v.detach().cpu().numpy().astype(np.float32, copy=True) for k, v in policy.state_dict().items()}


def load_weights(policy: torch.nn.Module, weights: Weights) -> None:
    """Copy numpy weights into a torch policy (names and shapes must match exactly)."""
    policy.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in weights.items()})


# ----------------------------------------------------------------------------- random states
def rng_state() -> dict[str, Any]:
    """The Python, numpy (legacy global) and torch generators' states."""
    version, internal, gauss = random.getstate()
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    return {"python": [version, list(internal), gauss],
            "numpy": [kind, keys.tolist(), int(pos), int(has_gauss), float(cached)],
            "torch": torch.get_rng_state().numpy().copy()}


def set_rng_state(state: dict[str, Any]) -> None:
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))
    kind, keys, pos, has_gauss, cached = state["numpy"]
    np.random.set_state((kind, np.array(keys, dtype=np.uint32), pos, has_gauss, cached))
    torch.set_rng_state(torch.from_numpy(np.array(state["torch"], dtype=np.uint8)))


# ----------------------------------------------------------------------------- checkpoints
@dataclass
class Checkpoint:
    """A checkpoint as read back: the policy, the optimizer state, the pool, the RNGs and the JSON."""

    step: int
    policy: MLPPolicy
    optimizer: dict[str, Any]  # torch optimizer state_dict
    pool: list[Weights]
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
    extra["rng/torch"] = np.asarray(rng["torch"], dtype=np.uint8)
    name = f"step_{step:012d}"
    atomic_write(folder / f"{name}.safetensors", policy_file_bytes(weights_of(model.policy), info, extra))
    doc = {"format": CHECKPOINT_FORMAT, "format_version": FORMAT_VERSION, "step": step,
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


def latest_checkpoint(run_dir: Path) -> Path | None:
    """The JSON of the newest complete checkpoint (its safetensors file was written before it)."""
    for path in sorted((run_dir / "checkpoints").glob("step_*.json"), reverse=True):
        if path.with_suffix(".safetensors").is_file():
            return path
    return None


def read_checkpoint(path: Path) -> Checkpoint:
    """Read a checkpoint written by :func:`save_checkpoint`: JSON and tensors only."""
    tensors_path = path.with_suffix(".safetensors")
    policy = load_policy(tensors_path)  # checks the format, the network and every policy tensor
    try:
        doc = json.loads(path.read_text())
        with safe_open(str(tensors_path), framework="np") as f:
            extra = {k: f.get_tensor(k) for k in f.keys() if k.startswith(CHECKPOINT_PREFIXES)}
        state: dict[int, dict[str, torch.Tensor]] = {}
        pool: list[Weights] = [{} for _ in range(int(doc["pool_size"]))]
        for key, value in extra.items():
            kind, _, rest = key.partition("/")
            index, _, name = rest.partition("/")
            if kind == "optimizer":
                state.setdefault(int(index), {})[name] = torch.from_numpy(value)
            elif kind == "pool":
                pool[int(index)][name] = value
        if not isinstance(doc["trainer"], dict):
            raise TypeError("'trainer' is not a JSON object")
        optimizer = {"state": state, "param_groups": doc["optimizer_param_groups"]}
        checkpoint = Checkpoint(int(doc["step"]), policy, optimizer, pool, {**doc["rng"], "torch": extra["rng/torch"]},
                                doc)
    except (OSError, ValueError, KeyError, IndexError, TypeError) as error:
        raise ValueError(f"checkpoint {path} is incomplete or damaged ({type(error).__name__}: {error})") from None
    return checkpoint
