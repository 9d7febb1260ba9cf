"""The agent loader shared by training, evaluation and play (numpy only: no torch needed).

``load_agent(spec, game)`` turns a spec — ``random``, ``heuristic``, ``pretrained`` (the policy shipped in
``training/pretrained/<game>_<n>p.safetensors`` that was trained for the game's options), the path of a policy
file, checkpoint or run folder, ``search`` or ``ismcts`` with options, or your own agent, ``module:callable`` or
``path/to/file.py:callable`` — into an :class:`~tabletop_rl.envs.core.agents.Agent` (docs/training.md, "Agents").
Policy files are read by :func:`tabletop_rl.training.runtime.policy.load_policy`: nothing in a file is ever run.
Your own agent is your code, named on your command line, and is imported and run (:func:`custom_factory`).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import numbers
import re
import reprlib
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from ...envs.core.agents import Agent, SeatView, builtin_agent, wants_view
from ...envs.core.files import file_kind
from ...envs.core.game import Game
from .ismcts import ismcts_factory
from .policy import PolicyAgent, PolicyFileError, load_policy
from .policy_paths import policy_path, train_command
from .search import search_factory

LISTED = 8  # callables named when a custom spec names none of its module's
SEARCHES = {"search": search_factory, "ismcts": ismcts_factory}  # spec prefix -> factory of agents that search


def agent_factory(spec: str, game: Game, deterministic: bool = True) -> Callable[[int | None], Agent]:
    """``seed -> agent`` for ``spec``: files are read once, however many agents (one per game, say) are made."""
    if spec in ("random", "heuristic"):
        return lambda seed: builtin_agent(spec, game, seed)
    searcher = SEARCHES.get(spec.partition(":")[0])
    if searcher is not None:
        return searcher(spec, game, load_agent)
    if custom_spec(spec) is not None:
        factory = custom_factory(spec)
        return lambda seed: CustomAgent(spec, _call(factory, spec, game, seed))
    try:
        policy = load_policy(policy_path(spec, game), game)
    except PolicyFileError as error:
        if spec != "pretrained":
            raise
        raise PolicyFileError(f"{error}; train one with: {train_command(game)}") from None
    return lambda seed: PolicyAgent(policy, deterministic=deterministic, seed=seed)


def load_agent(spec: str, game: Game, seed: int | None = None, deterministic: bool = True) -> Agent:
    """``"random"``, ``"heuristic"``, ``"pretrained"``, a policy path, a ``search`` or ``ismcts`` spec or
    ``module:callable`` / ``file.py:callable`` → an agent for ``game``."""
    return agent_factory(spec, game, deterministic)(seed)


# --------------------------------------------------------------------------- your own agent
class CustomAgentError(ValueError):
    """Your own agent could not be imported or made, or answered with an illegal action: one line that names it,
    ``agent <spec>: …``."""


def _failed(spec: str, problem: str) -> CustomAgentError:
    return CustomAgentError(f"agent {spec}: {problem}")


def custom_spec(spec: str) -> tuple[str, str] | None:
    """``(source, name)`` if ``spec`` names your own agent: ``package.module:callable`` or
    ``path/to/file.py:callable``, split at the last ``:`` (a path may hold one); else ``None``."""
    source, colon, name = spec.rpartition(":")
    dotted = all(part.isidentifier() for part in source.split("."))
    if colon and name.isidentifier() and (source.endswith(".py") or dotted):
        return source, name
    return None


def custom_factory(spec: str) -> Callable[..., Any]:
    """The factory a custom spec names, its module imported (a file is run once per process); every way it can
    fail is a :class:`CustomAgentError`."""
    source, name = custom_spec(spec)
    module = _load_file(Path(source), spec) if source.endswith(".py") else _import(source, spec)
    if not hasattr(module, name):
        own = sorted(k for k, v in vars(module).items()
                     if callable(v) and not k.startswith("_") and getattr(v, "__module__", None) == module.__name__)
        raise _failed(spec, f"{source} has no {name!r}; "
                            + (f"its callables: {_few(own)}" if own else "it defines no callables"))
    factory = getattr(module, name)
    if not callable(factory):
        raise _failed(spec, f"{name} is {_shown(factory)}, not callable: name a factory, called as "
                            f"{name}(game=..., seed=...)")
    return factory


def _import(source: str, spec: str) -> ModuleType:
    try:
        return importlib.import_module(source)
    except ModuleNotFoundError as error:
        if error.name is not None and (source == error.name or source.startswith(error.name + ".")):
            raise _failed(spec, f"no module named {error.name!r} (modules are found on the Python path: the "
                                "current folder, PYTHONPATH, installed packages); for a file, give its path: "
                                "path/to/file.py:callable") from None
        raise _import_failed(spec, source, error) from error  # one the module imports
    except Exception as error:  # the module itself failed: a syntax error, an exception at import
        raise _import_failed(spec, source, error) from error


def _load_file(path: Path, spec: str) -> ModuleType:
    """``path`` run as a module on its own (its folder is not put on the Python path), as importlib's recipe
    does: registered in ``sys.modules`` (pickle and dataclasses look there) under a name no real module has, so
    that every agent of one file shares it."""
    if not path.exists():
        raise _failed(spec, f"no such file: {path}")
    if not path.is_file():  # never opened: a FIFO would block
        raise _failed(spec, f"{path} is {file_kind(path.stat().st_mode)}, not a regular file")
    resolved = path.resolve()
    name = re.sub(r"\W", "_", path.stem) + "_" + hashlib.sha1(str(resolved).encode()).hexdigest()[:10]
    if name in sys.modules:
        return sys.modules[name]
    module = importlib.util.module_from_spec(importlib.util.spec_from_file_location(name, resolved))
    sys.modules[name] = module
    try:
        module.__spec__.loader.exec_module(module)
    except Exception as error:
        del sys.modules[name]
        raise _import_failed(spec, str(path), error) from error
    return module


def _import_failed(spec: str, source: str, error: Exception) -> CustomAgentError:
    return _failed(spec, f"importing {source} raised {_one_line(error)}")


def _one_line(error: BaseException) -> str:
    """``ZeroDivisionError: division by zero``: an exception's type and message, on one line."""
    message = " ".join(str(error).split())
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


def _few(items: list) -> str:
    return ", ".join(map(str, items[:LISTED])) + (", …" if len(items) > LISTED else "")


def _shown(value: Any) -> str:
    """``value`` in a few words: a function by its name and parameters, anything else by its short repr."""
    if callable(value):
        try:
            return f"{getattr(value, '__qualname__', type(value).__name__)}{inspect.signature(value)}"
        except (TypeError, ValueError):  # no signature to read
            pass
    if type(value).__repr__ is object.__repr__:  # an address says nothing
        return f"an object of type {type(value).__qualname__}"
    return f"{reprlib.repr(value)} (of type {type(value).__qualname__})"


def _call(factory: Callable[..., Any], spec: str, game: Game, seed: int | None) -> Any:
    try:
        return factory(game=game, seed=seed)
    except Exception as error:  # the user's code: named in one line, its traceback kept as the cause
        raise _failed(spec, f"the factory raised {_one_line(error)}") from error


def _takes_two(function: Any) -> bool:
    """Can ``function`` be called as ``function(observation, action_mask)``?"""
    if not callable(function):
        return False
    try:
        inspect.signature(function).bind(None, None)
    except TypeError:
        return False
    except ValueError:  # no signature to read (some built-ins): the first call will tell
        pass
    return True


class CustomAgent:
    """Your agent, driven as every other agent is: what its factory returned — an object with ``act`` or a plain
    function of ``(observation, action_mask)`` — whose every answer must be a legal action; an object that
    defines ``attach`` gets its seat's :class:`~tabletop_rl.envs.core.agents.SeatView`, as a search does."""

    def __init__(self, spec: str, made: Any):
        act = getattr(made, "act", made)
        if not _takes_two(act):
            whose = "" if act is made else f", whose act is {_shown(act)}"
            raise _failed(spec, f"the factory returned {_shown(made)}{whose}; expected an object with "
                                "act(observation, action_mask) -> int, or a function of those two")
        self.spec, self._act = spec, act
        if wants_view(made):  # only then: a driver refuses one agent with attach in two seats
            self.attach: Callable[[SeatView], None] = made.attach

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        action = self._act(observation, action_mask)
        if isinstance(action, numbers.Integral) and not isinstance(action, bool) \
                and 0 <= action < len(action_mask) and action_mask[action]:
            return int(action)
        raise _failed(self.spec, f"act returned {reprlib.repr(action)}, which is not a legal action: it must be one "
                                 "of the legal actions, the indices where action_mask is 1 (now "
                                 f"{_few(np.flatnonzero(action_mask).tolist())})")
