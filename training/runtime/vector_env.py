"""Many single-seat games in one Gymnasium vector env: ``gymnasium.make_vec("tabletop/<game>-v0", num_envs=64)``.

:class:`SeatVectorEnv` holds ``num_envs`` :class:`~tabletop_rl.training.runtime.table.Table` s — the learner's
seat, its opponents and the engine state of each game — and no env object per game. A step applies the learner's
actions, plays every game's opponents together (:func:`~tabletop_rl.training.runtime.table.play_opponents`: one
forward pass per network and round) and writes observations, masks, rewards and flags into arrays allocated once.

* Autoreset (``autoreset_mode``, in ``metadata["autoreset_mode"]``) is ``SAME_STEP`` by default: a game that ends
  is dealt anew in the same step, so every returned observation is one the learner must act on and every mask has a
  legal action; the last observation and info of the ended game are in ``info["final_obs"]`` /
  ``info["final_info"]`` (flagged by ``info["_final_obs"]``), as Gymnasium's ``SyncVectorEnv`` gives them.
  ``NEXT_STEP`` (what Gymnasium's vector observation wrappers need) returns the ended game's last observation, an
  all-zero mask and its end info in ``info`` (each key flagged by ``_key``), and deals it anew at the next step,
  whose action for that game is ignored; ``DISABLED`` leaves it ended until ``reset(options={"reset_mask": m})``.
  Each game plays the same episodes in every mode. ``info["seat"]`` holds every game's seat whenever a game was
  dealt anew (or, in ``NEXT_STEP``, ended), ``info["_seat"]`` flags those games.
* Masks: ``info["action_mask"]`` (num_envs × num_actions, int8) and ``action_masks()`` (bool), what sb3-contrib's
  MaskablePPO reads.
* Seeds: ``reset(seed=s)`` seeds game i with ``s + i`` (or a list, one seed per game): game i then plays exactly
  the episodes of ``gymnasium.make("tabletop/<game>-v0", ...)`` reset with ``seed=s + i`` and given the same
  actions, whatever the opponents. ``reset(options={"reset_mask": m})`` deals anew only the games where ``m`` (a
  bool array of shape (num_envs,)) is True, as ``SyncVectorEnv`` does.
* ``skip_forced=True``: the learner's decisions with one legal action are played for it (the same games in fewer
  steps); ``info["forced"]`` counts them per game since its last observation.
* ``global_state=True``: ``states()`` returns every game's global state (``State.global_state``, what PettingZoo's
  ``state()`` gives: hidden cards included) beside its observation, and an ended game's info has its last one in
  ``"state"``: for a critic that reads it in training only (the learner must act on its observation alone).
* Rewards, illegal actions (the episode ends with −1, nothing is played) and the end-of-episode info are those of
  the single env (docs/training.md, "Single-agent Gymnasium ids").
* A call that is interrupted (Ctrl-C) or fails half-way (an opponent that raises) may leave some games stepped and
  others not: the env then refuses every call but ``reset()`` and ``close()``, saying why, and a full ``reset``
  deals anew. Any call after ``close()`` is refused.
* ``num_workers=k`` (:class:`ShardedSeatVectorEnv`) splits the games across k worker processes, each a
  :class:`SeatVectorEnv` of its share writing into arrays in shared memory: per step a pipe carries one short
  command to each worker and, back, only the final observations and infos of the games that ended. The games and
  their opponents then run on other cores than the learner. Workers ignore stop signals (the main process alone
  decides); they are ended by ``close()``, when the env is garbage-collected, when the main process exits (before
  multiprocessing's own exit handler, which would wait for them for ever), or when it dies (their pipe breaks).
  A worker that dies or gives no answer within ``worker_timeout`` seconds is one line, never an OS error or a hang.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import pickle
import signal
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from multiprocessing.connection import Connection, wait
from multiprocessing.util import Finalize
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from ... import envs
from ...envs.core.game import check_seed
from .opponents import OpponentMix, Weights
from .policy import MLPPolicy, limit_blas_threads
from .processes import ignore_stop_signals, start_helpers
from .single_seat import opponent_mix, seat_spaces
from .table import Table, play_opponents, settle

# 65,536 games at the ~40-60 KiB each they take are 3-4 GiB: more is a typo, refused before any space is built
MAX_NUM_ENVS = 1 << 16
RESET_OPTIONS = ("reset_mask",)
NO_GAMES = np.zeros(0, np.int64)


def whole_number(name: str, value: Any, low: int, high: int, note: str = "") -> int:
    """``value`` as a plain int in ``low..high`` (numpy integers too, not bools); anything else is one line."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or not low <= value <= high:
        raise ValueError(f"{name}={value!r} is not allowed; expected a whole number from {low} to {high}{note}")
    return int(value)


def autoreset_mode_of(mode: Any) -> AutoresetMode:
    """``mode`` as an ``AutoresetMode`` (the enum or its value, as Gymnasium's vector envs take it)."""
    try:
        return AutoresetMode(mode)
    except (ValueError, TypeError):
        allowed = ", ".join(f"AutoresetMode.{m.name} ({m.value!r})" for m in AutoresetMode)
        raise ValueError(f"autoreset_mode={mode!r} is not allowed; expected one of {allowed}") from None


class SeatVectors(VectorEnv):
    """What every batched seat env shares: spaces, the arrays it returns, the checks of its arguments, and the
    refusal of calls after ``close()`` or after a call that stopped half-way."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, game: str, num_envs: int, game_options: Mapping[str, Any] | None,
                 autoreset_mode: AutoresetMode | str, copy: bool, skip_forced: bool = False,
                 global_state: bool = False):
        num_envs = whole_number("num_envs", num_envs, 1, MAX_NUM_ENVS)
        self.autoreset_mode = autoreset_mode_of(autoreset_mode)
        self.game = envs.game_class(game)(**dict(game_options or {}))
        self.num_envs = num_envs
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}
        self.single_observation_space, self.single_action_space = seat_spaces(self.game)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.render_mode = None
        self.copy = copy
        self.skip_forced = skip_forced
        if type(global_state) is not bool:
            raise ValueError(f"global_state={global_state!r} is not allowed; expected True or False")
        self.global_state = global_state
        self._started = False
        self._broken: str | None = None  # why every call but reset and close is refused
        self.ended: list[tuple[int, np.ndarray, dict[str, Any]]] = []  # the last step's (game, final obs, info)
        self.dealt = NO_GAMES  # the games the last call dealt anew

    def action_masks(self) -> np.ndarray:
        """Every game's legal actions for the learner, bool (num_envs × num_actions): what MaskablePPO reads."""
        self._usable("action_masks")
        if not self._started:
            raise ValueError("action_masks() was called before reset()")
        return self._masks.astype(bool)

    def states(self) -> np.ndarray:
        """Every game's global state, float32 (num_envs × ``game.state_layout.size``), for a centralized critic in
        training only: it holds what the learner's seat cannot see. Needs ``global_state=True``."""
        self._usable("states")
        if not self.global_state:
            raise ValueError("states() needs the env made with global_state=True")
        if not self._started:
            raise ValueError("states() was called before reset()")
        return self._out(self._states)

    def _usable(self, call: str) -> None:
        if self.closed:
            raise RuntimeError(f"{call}() was called after close(); make a new env")
        if self._broken is not None and call != "reset":
            raise RuntimeError(f"{call}() is refused: {self._broken}")

    @contextmanager
    def _running(self, call: str) -> Iterator[None]:
        """Marks the env out of step when ``call`` stops half-way (an exception, Ctrl-C)."""
        try:
            yield
        except BaseException as error:
            how = "was interrupted" if isinstance(error, KeyboardInterrupt) else "failed"
            self._broken = (f"{call}() {how} ({type(error).__name__}), so some games may be out of step with what "
                            "the env returned; call reset() to deal every game anew, or close()")
            raise

    def _reset_arguments(self, seed: Any, options: Any) -> tuple[list[int | None], np.ndarray]:
        """Every game's seed and the games to deal (``reset_mask``, all by default), checked before anything."""
        self._usable("reset")
        seeds = self._seeds(seed)
        n = self.num_envs
        if options is None:
            return seeds, np.ones(n, np.bool_)
        if not isinstance(options, Mapping):
            raise ValueError(f"reset(options={options!r}) is not allowed; expected None or a dict with "
                             f"{RESET_OPTIONS}")
        unknown = [key for key in options if key not in RESET_OPTIONS]
        if unknown:
            raise ValueError(f"reset() got the unknown option(s) {', '.join(map(repr, unknown))}; the only one is "
                             f"'reset_mask' (a numpy bool array of shape ({n},), True for the games to deal anew)")
        if "reset_mask" not in options:
            return seeds, np.ones(n, np.bool_)
        mask = options["reset_mask"]
        if not (isinstance(mask, np.ndarray) and mask.dtype == np.bool_ and mask.shape == (n,)):
            described = (f"array of shape {mask.shape} and dtype {mask.dtype}" if isinstance(mask, np.ndarray)
                         else type(mask).__name__)
            raise ValueError(f"reset_mask must be a numpy bool array of shape ({n},); got {described}")
        if not mask.any():
            raise ValueError("reset_mask is all False: it names no game to deal anew")
        if not mask.all() and (not self._started or self._broken is not None):
            raise ValueError("reset_mask deals some games anew, but " +
                             ("no game was dealt yet" if not self._started else "the env is out of step") +
                             ": call reset() without it first")
        return seeds, mask.copy()

    def _seeds(self, seed: Any) -> list[int | None]:
        n = self.num_envs
        if not isinstance(seed, list | tuple | np.ndarray):  # one seed; a set or a dict has no order
            try:
                first = check_seed(seed)
            except (TypeError, ValueError) as error:
                raise type(error)(f"seed={seed!r} is not allowed; expected None, a non-negative integer (game i "
                                  "gets seed + i) or a list of one per game") from None
            return [None if first is None else first + i for i in range(n)]
        seeds = list(seed)
        if len(seeds) != n:
            raise ValueError(f"reset(seed=...) got {len(seeds)} seeds for {n} games; give one seed "
                             "(game i gets seed + i), one per game (a list), or None")
        return [check_seed(s) for s in seeds]

    def _check(self, actions: Any) -> np.ndarray:
        """The learner's actions as an int array of shape (num_envs,); anything else is one line saying what is
        expected (an action outside the action space is a bug of the caller, not a move)."""
        self._usable("step")
        if not self._started:
            raise RuntimeError("step() was called before reset()")
        if self.autoreset_mode is AutoresetMode.DISABLED and self._done.any():
            ended = np.flatnonzero(self._done).tolist()
            raise RuntimeError(f"games {ended} ended and autoreset_mode is DISABLED: deal them anew first with "
                               "reset(options={'reset_mask': mask})")
        array = np.asarray(actions)
        n, limit = self.num_envs, self.game.num_actions
        if array.shape != (n,) or array.dtype.kind not in "iu":
            raise ValueError(f"actions must be an integer array of shape ({n},), one action per game; got "
                             f"{type(actions).__name__} of shape {array.shape} and dtype {array.dtype}")
        if array.min() < 0 or array.max() >= limit:
            bad = int(array[(array < 0) | (array >= limit)][0])
            raise ValueError(f"action {bad} is not in the action space {self.single_action_space} of "
                             f"{self.game.name}")
        return array

    def _check_pool(self, pool: Any, network: Any) -> None:
        if pool and not network:  # before any game takes it: refused, the env stays as it was
            raise ValueError("self-play snapshots need the network: make the env with network=...")

    def _allocate(self, allocate: Any = np.zeros) -> None:
        n, size, actions = self.num_envs, self.game.observation_size, self.game.num_actions
        self._observations = allocate((n, size), np.float32)
        self._masks = allocate((n, actions), np.int8)
        self._rewards = allocate((n,), np.float64)
        self._terminations = allocate((n,), np.bool_)
        self._truncations = allocate((n,), np.bool_)
        self._seats = allocate((n,), np.int64)
        self._done = allocate((n,), np.bool_)  # ended, not yet dealt anew (NEXT_STEP, DISABLED)
        self._forced = allocate((n,), np.int32)  # the learner's decisions played for it since its last observation
        self._states = allocate((n, self.game.state_layout.size if self.global_state else 0), np.float32)

    def _reset_results(self, mask: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
        self._started, self._broken, self.ended, self.dealt = True, None, [], np.flatnonzero(mask)
        return self._out(self._observations), {"seat": self._seats.copy(), "_seat": mask,
                                               "action_mask": self._out(self._masks), **self._forced_info()}

    def _step_results(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        infos: dict[str, Any] = {}
        same_step = self.autoreset_mode is AutoresetMode.SAME_STEP
        for i, observation, info in self.ended:
            if same_step:
                infos = self._add_info(infos, {"final_obs": observation, "final_info": info}, i)
            else:  # the ended game's own info, as the single env's last step gives it (its mask is in the array)
                infos = self._add_info(infos, {k: v for k, v in info.items() if k not in ("seat", "action_mask")},
                                       i)
        if len(self.dealt) or (self.ended and not same_step):  # most steps deal and end nothing
            flagged = np.zeros(self.num_envs, np.bool_)
            flagged[self.dealt] = True
            if not same_step:
                flagged[[i for i, _, _ in self.ended]] = True
            infos["seat"], infos["_seat"] = self._seats.copy(), flagged
        infos["action_mask"] = self._out(self._masks)
        infos.update(self._forced_info())
        return (self._out(self._observations), self._out(self._rewards), self._out(self._terminations),
                self._out(self._truncations), infos)

    def _forced_info(self) -> dict[str, np.ndarray]:
        return {"forced": self._out(self._forced)} if self.skip_forced else {}

    def _out(self, array: np.ndarray) -> np.ndarray:
        return array.copy() if self.copy else array


class SeatVectorEnv(SeatVectors):
    """``num_envs`` games of ``game``, the learner in one seat of each, opponents drawn per game from the mix,
    all in this process."""

    def __init__(self, game: str, num_envs: int, game_options: Mapping[str, Any] | None = None,
                 opponents: Mapping[str, float] | None = None, seat: int | str = "random",
                 network: Mapping[str, Any] | None = None, snapshot_deterministic: bool = False,
                 margin_reward: float = 0.0, skip_forced: bool = False, outcome_reward: float = 1.0,
                 outcome: str = "pairwise", autoreset_mode: AutoresetMode | str = AutoresetMode.SAME_STEP,
                 copy: bool = True, global_state: bool = False):
        super().__init__(game, num_envs, game_options, autoreset_mode, copy, skip_forced, global_state)
        mix = {"random": 1.0} if opponents is None else opponents
        first = OpponentMix(self.game, mix, network, snapshot_deterministic)  # checks the mix, reads each file once
        self.tables = [Table(self.game, first, seat, margin_reward, skip_forced, outcome_reward, outcome)] + [
            Table(self.game, OpponentMix(self.game, mix, network, snapshot_deterministic, first.factories), seat,
                  margin_reward, skip_forced, outcome_reward, outcome) for _ in range(self.num_envs - 1)]
        self._network = network
        self._allocate()
        self._index = np.arange(self.num_envs)

    def reset(self, *, seed: int | Sequence[int | None] | None = None,
              options: dict | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal every game anew (or those of ``options["reset_mask"]``); ``seed`` seeds game i with ``seed + i``,
        a list gives each game its seed."""
        seeds, mask = self._reset_arguments(seed, options)
        chosen = np.flatnonzero(mask)
        with self._running("reset"):
            for i in chosen:
                self.tables[i].seed(seeds[i])
                self.tables[i].deal()
            settle([self.tables[i] for i in chosen])
            self._done[chosen] = False
            for i in chosen:
                self._write(i)
                self._seats[i] = self.tables[i].seat
        return self._reset_results(mask)

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One decision of the learner in every game; opponents play until each game waits on the learner again.
        In ``NEXT_STEP`` mode a game that ended at the last step is dealt anew instead, its action ignored."""
        actions = self._check(actions)
        tables = self.tables
        with self._running("step"):
            if self._done.any():  # NEXT_STEP: the games that ended at the last step are dealt instead
                renewed, playing = np.flatnonzero(self._done), np.flatnonzero(~self._done)
            else:
                renewed, playing = self._index[:0], self._index
            reasons = {}
            for i in playing.tolist():
                reason = tables[i].play(int(actions[i]))
                if reason is not None:
                    reasons[i] = reason
            for i in renewed:
                tables[i].deal()
            play_opponents([tables[i] for i in playing])
            settle([tables[i] for i in renewed])
            self._rewards[:] = 0.0
            self._terminations[:] = False
            self._truncations[:] = False
            self.ended = []
            for i in playing.tolist():
                table = tables[i]
                if not table.over():
                    continue
                self._rewards[i], self._terminations[i], self._truncations[i] = table.outcome()
                info = table.end_info()
                if i in reasons:
                    info.update(illegal_action=True, reason=reasons[i])
                if self.global_state:
                    info["state"] = table.state.global_state()
                self.ended.append((i, table.observation(), info))
            ended = [i for i, _, _ in self.ended]
            if self.autoreset_mode is AutoresetMode.SAME_STEP:
                for i in ended:
                    tables[i].deal()
                settle([tables[i] for i in ended])
                dealt = ended
            else:  # each table draws the same numbers whenever it is dealt: the same games in every mode
                self._done[renewed] = False
                self._done[ended] = True
                dealt = renewed.tolist()
            for i in range(self.num_envs):
                self._write(i)
            if self.autoreset_mode is not AutoresetMode.SAME_STEP:
                self._masks[self._done] = 0  # an ended game's, as the single env's last step gives it
            for i in dealt:
                self._seats[i] = tables[i].seat
            self.dealt = np.array(dealt, np.int64) if dealt else NO_GAMES
        return self._step_results()

    def set_pool(self, pool: list[Weights]) -> None:
        """Refresh the self-play snapshots: each is made into a network once and shared by every game, so the games
        waiting on one snapshot are decided in one forward pass."""
        self._usable("set_pool")
        self._check_pool(pool, self._network)
        info = self.tables[0].mix.snapshot_info
        policies = [MLPPolicy(weights, info) for weights in pool] if info else pool
        with self._running("set_pool"):
            for table in self.tables:
                table.mix.set_pool(policies)

    def _write(self, i: int) -> None:
        table = self.tables[i]
        table.state.observation(table.seat, out=self._observations[i])
        self._masks[i] = table.state.action_mask()
        self._forced[i] = table.forced
        if self.global_state:
            self._states[i] = table.state.global_state()


START_METHOD = "forkserver"  # as SubprocVecEnv: no fork of a process that may hold threads (torch, BLAS)
ARRAYS = ("_observations", "_masks", "_rewards", "_terminations", "_truncations", "_seats", "_done", "_forced",
          "_states")
WORKER_TIMEOUT = 60.0  # seconds a worker may take to answer one call before it is taken for stuck
CLOSE_WAIT = 2.0  # seconds the workers get to end when asked, before they are killed


class ShardedSeatVectorEnv(SeatVectors):
    """``num_envs`` games in ``num_workers`` worker processes (the first ones get one game more when they do not
    divide evenly); the other arguments are those of :class:`SeatVectorEnv`. A worker that gives no answer within
    ``worker_timeout`` seconds is taken for stuck (one line, the env refuses every call but reset and close)."""

    def __init__(self, game: str, num_envs: int, num_workers: int, copy: bool = True,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.SAME_STEP,
                 worker_timeout: float = WORKER_TIMEOUT, **kwargs: Any):
        super().__init__(game, num_envs, kwargs.get("game_options"), autoreset_mode, copy,
                         kwargs.get("skip_forced", False), kwargs.get("global_state", False))
        self.num_workers = whole_number("num_workers", num_workers, 1, self.num_envs,
                                        f" (num_envs={self.num_envs}; 0 or None: the games in this process)")
        if isinstance(worker_timeout, bool) or not isinstance(worker_timeout, int | float | np.integer | np.floating) \
                or not 0 < worker_timeout < math.inf:
            raise ValueError(f"worker_timeout={worker_timeout!r} is not allowed; expected a number of seconds > 0")
        self.worker_timeout = float(worker_timeout)
        self._network = kwargs.get("network")
        self._shared = {}

        def allocate(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
            raw = multiprocessing.RawArray("b", max(1, int(np.prod(shape)) * np.dtype(dtype).itemsize))
            self._shared[len(self._shared)] = (raw, shape, np.dtype(dtype).str)
            return np.frombuffer(raw, dtype, int(np.prod(shape))).reshape(shape)

        self._allocate(allocate)
        self._actions = allocate((self.num_envs,), np.int64)
        buffers = list(self._shared.values())
        kwargs = {**kwargs, "autoreset_mode": self.autoreset_mode}
        bounds = np.linspace(0, self.num_envs, self.num_workers + 1).round().astype(int).tolist()
        self._shards = list(zip(bounds[:-1], bounds[1:], strict=True))
        self._pipes: list[Connection] = []
        self._processes: list[Any] = []
        # Each call is numbered and its answers carry the number: the answer to a call that Ctrl-C cut short is
        # dropped when it arrives later, never taken for the answer to the next call.
        self._calls = 0
        self._expected: list[int | None] = []  # per worker: the number of the call whose answer is awaited
        # Ends the workers on close(), when this env is collected, and at exit before multiprocessing's own exit
        # handler (exitpriority >= 0 runs first), which would wait for ever on workers that ignore SIGTERM.
        self._end = Finalize(self, _end_workers, args=(self._pipes, self._processes), exitpriority=10)
        start_helpers(START_METHOD)
        context = multiprocessing.get_context(START_METHOD)
        for lo, hi in self._shards:
            ours, theirs = context.Pipe()
            process = context.Process(target=_serve, args=(theirs, buffers, lo, hi, game, kwargs), daemon=True,
                                      name=f"tabletop-games-{lo}-{hi}")
            self._pipes.append(ours)
            self._processes.append(process)
            self._expected.append(0)  # call 0: each worker says whether it could build its games
            process.start()
            theirs.close()
        try:
            # building imports the game and loads the opponents: as long as a first step may take, at least
            errors = [answer for answer in self._gather("building the games", max(WORKER_TIMEOUT, self.worker_timeout))
                      if answer[0] == "error"]
        except BaseException:
            self.close()
            raise
        if errors:
            self.close()
            raise errors[0][1]  # the arguments were wrong: what the games in this process would raise

    def reset(self, *, seed: int | Sequence[int | None] | None = None,
              options: dict | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        seeds, mask = self._reset_arguments(seed, options)
        some = not mask.all()
        self._call("reset", [("reset", (seeds[lo:hi], mask[lo:hi] if some else None)) if mask[lo:hi].any() else None
                             for lo, hi in self._shards])
        return self._reset_results(mask)

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        self._actions[:] = self._check(actions)
        answers = self._call("step", [("step", None)] * self.num_workers)
        self.ended = [ended for shard, _ in answers for ended in shard]
        self.dealt = np.array([i for _, dealt in answers for i in dealt], np.int64)
        return self._step_results()

    def set_pool(self, pool: list[Weights]) -> None:
        """Send the self-play snapshots to every worker (once per refresh, not per step)."""
        self._usable("set_pool")
        self._check_pool(pool, self._network)
        self._call("set_pool", [("set_pool", pool)] * self.num_workers)

    def close_extras(self, **kwargs: Any) -> None:
        """End the workers: asked first, killed if they do not end within seconds."""
        self._end()

    def _call(self, call: str, commands: list[tuple[str, Any] | None]) -> list[Any]:
        """Send each worker its command (None: not this one) and return their answers; a worker's error is raised
        as one line naming it, and leaves the env out of step (its games may be half-way)."""
        with self._running(call):
            self._calls += 1
            self._expected = [None] * self.num_workers  # an interrupted call's answers are no longer awaited
            for w, command in enumerate(commands):
                if command is not None:
                    self._expected[w] = self._calls
                    try:
                        self._pipes[w].send((self._calls, *command))
                    except OSError:  # killed between two calls
                        raise self._lost(w) from None
            answers = self._gather(call)
            for w, answer in enumerate(answers):
                if answer is not None and answer[0] == "error":
                    kind, message = answer[1]
                    raise RuntimeError(f"worker {self._processes[w].name}: {kind}: {message}")
        return [answer[1] for answer in answers if answer is not None]

    def _gather(self, call: str, timeout: float | None = None) -> list[Any]:
        """The answer of every worker waited on (None for the others), in order; a worker that died is one line,
        and so is one that does not answer within ``timeout`` (``worker_timeout``) seconds."""
        answers: list[Any] = [None] * self.num_workers
        timeout = self.worker_timeout if timeout is None else timeout
        deadline = time.monotonic() + timeout
        busy = [w for w, expected in enumerate(self._expected) if expected is not None]
        while busy:
            ready = wait([self._pipes[w] for w in busy] + [self._processes[w].sentinel for w in busy],
                         timeout=max(0.0, deadline - time.monotonic()))
            if not ready:
                process = self._processes[busy[0]]
                raise RuntimeError(f"worker {process.name} (pid {process.pid}) gave no answer to {call} within "
                                   f"{timeout:g} s (stopped, or busy that long: worker_timeout sets it)")
            for w in list(busy):
                if self._pipes[w].poll():  # before the sentinel: a worker may answer and then end
                    try:
                        number, *answer = self._pipes[w].recv()
                    except (EOFError, OSError):
                        raise self._lost(w) from None
                    if number == self._expected[w]:  # else the answer to an interrupted call: dropped
                        answers[w] = answer
                        self._expected[w] = None
                        busy.remove(w)
                elif self._processes[w].sentinel in ready:
                    raise self._lost(w)
        return answers

    def _lost(self, w: int) -> RuntimeError:
        process = self._processes[w]
        process.join(CLOSE_WAIT)  # its exit code
        code = process.exitcode
        how = (f"was killed by {signal.Signals(-code).name}" if code is not None and code < 0
               else f"ended (exit code {code})")
        return RuntimeError(f"worker {process.name} (pid {process.pid}) {how}: its games are lost; close() this env "
                            "and make a new one")


def _end_workers(pipes: list[Connection], processes: list[Any]) -> None:
    """Ask every worker to end, kill those still there after ``CLOSE_WAIT`` seconds (stopped, or busy with the
    step an interrupt left), close the pipes."""
    try:
        for pipe in pipes:
            with suppress(OSError):  # already gone
                pipe.send((None, "close", None))
        deadline = time.monotonic() + CLOSE_WAIT
        for process in processes:
            if process.pid is not None:  # started
                process.join(max(0.0, deadline - time.monotonic()))
    finally:  # killed even when a Ctrl-C cuts the wait short: none may outlive the env
        for process in processes:
            if process.pid is not None and process.is_alive():
                process.kill()
                process.join()
        for pipe in pipes:
            pipe.close()
        pipes.clear()
        processes.clear()


def _serve(pipe: Connection, buffers: list, lo: int, hi: int, game: str, kwargs: Mapping[str, Any]) -> None:
    """A worker: games ``lo:hi`` of the batch, stepped on command, their results written into the shared arrays."""
    ignore_stop_signals()
    limit_blas_threads(1)  # one core per worker: BLAS threads would only spin against the others
    views = [np.frombuffer(raw, dtype, int(np.prod(shape))).reshape(shape)[lo:hi] for raw, shape, dtype in buffers]
    *arrays, actions = views
    try:
        env = SeatVectorEnv(game, hi - lo, copy=False, **kwargs)
        answer: tuple[str, Any] = ("ok", None)
    except Exception as error:  # raised in the main process: the same exception, when it can travel there
        try:
            pickle.loads(pickle.dumps(error))
        except Exception:
            error = RuntimeError(f"{type(error).__name__}: {error}")
        answer = ("error", error)
    try:
        pipe.send((0, *answer))
        if answer[0] == "error":
            return
        while True:
            number, command, argument = pipe.recv()
            if command == "close":
                return
            try:
                if command == "reset":
                    seeds, mask = argument
                    env.reset(seed=seeds, options=None if mask is None else {"reset_mask": mask})
                    answer = ("ok", None)
                elif command == "step":
                    env.step(actions)
                    answer = ("ok", ([(lo + i, observation, info) for i, observation, info in env.ended],
                                     (env.dealt + lo).tolist()))
                else:  # set_pool
                    env.set_pool(argument)
                    answer = ("ok", None)
                for name, view in zip(ARRAYS, arrays, strict=True):
                    view[:] = getattr(env, name)
            except Exception as error:  # the main process says it, and refuses all but reset
                answer = ("error", (type(error).__name__, str(error)))
            pipe.send((number, *answer))
    except (EOFError, OSError):  # the main process is gone: nobody to answer
        return


def seat_vector_env(game: str, num_envs: int, opponent: str | os.PathLike | Mapping[str, float] = "random",
                    seat: int | str = "random", num_workers: int | None = None, skip_forced: bool = False,
                    global_state: bool = False, render_mode: str | None = None,
                    autoreset_mode: AutoresetMode | str = AutoresetMode.SAME_STEP, worker_timeout: float | None = None,
                    **game_options: Any) -> SeatVectors:
    """What ``gymnasium.make_vec("tabletop/<game>-v0", num_envs=N, ...)`` builds (the ids' ``vector_entry_point``):
    ``opponent`` and ``seat`` as for ``gymnasium.make``
    (:func:`~tabletop_rl.training.runtime.single_seat.single_seat_env`), every other keyword an option of the game;
    ``num_workers`` processes share the games between them (none: all in this process), each given
    ``worker_timeout`` seconds per call (60 by default); ``skip_forced=True`` plays the learner's decisions that
    have one legal action for it (``info["forced"]``: how many, per game); ``global_state=True`` keeps every game's
    global state for a centralized critic (``states()``); ``autoreset_mode`` as in the module's docstring."""
    if render_mode is not None:
        raise ValueError(f"render_mode={render_mode!r}: the vector env does not render; render one game with "
                         "gymnasium.make(..., render_mode='ansi')")
    if worker_timeout is not None and not num_workers:
        raise ValueError(f"worker_timeout={worker_timeout!r} is for the workers of num_workers=k; without them the "
                         "games run in this process")
    timeout = {} if worker_timeout is None else {"worker_timeout": worker_timeout}
    return batched_env(game, num_envs, num_workers, game_options=game_options, opponents=opponent_mix(opponent),
                       seat=seat, skip_forced=skip_forced, global_state=global_state, autoreset_mode=autoreset_mode,
                       **timeout)


def batched_env(game: str, num_envs: int, num_workers: int | None = None, **kwargs: Any) -> SeatVectors:
    """:class:`SeatVectorEnv` (``num_workers`` 0 or None) or :class:`ShardedSeatVectorEnv`, with ``kwargs`` of
    :class:`SeatVectorEnv`."""
    if num_workers is None or (not isinstance(num_workers, bool) and num_workers == 0):
        return SeatVectorEnv(game, num_envs, **kwargs)
    return ShardedSeatVectorEnv(game, num_envs, num_workers, **kwargs)
