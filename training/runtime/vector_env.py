"""Many single-seat games in one Gymnasium vector env: ``gymnasium.make_vec("tabletop/<game>-v0", num_envs=64)``.

:class:`SeatVectorEnv` holds ``num_envs`` :class:`~tabletop_rl.training.runtime.table.Table` s — the learner's
seat, its opponents and the engine state of each game — and no env object per game. A step applies the learner's
actions, plays every game's opponents together (:func:`~tabletop_rl.training.runtime.table.play_opponents`: one
forward pass per network and round) and writes observations, masks, rewards and flags into arrays allocated once.

* Autoreset is ``SAME_STEP`` (``metadata["autoreset_mode"]``): a game that ends is dealt anew in the same step, so
  every returned observation is one the learner must act on and every mask has a legal action; the last
  observation and info of the ended game are in ``info["final_obs"]`` / ``info["final_info"]`` (flagged by
  ``info["_final_obs"]``), as Gymnasium's ``SyncVectorEnv`` gives them.
* Masks: ``info["action_mask"]`` (num_envs × num_actions, int8) and ``action_masks()`` (bool), what sb3-contrib's
  MaskablePPO reads.
* Seeds: ``reset(seed=s)`` seeds game i with ``s + i`` (or a list, one seed per game): game i then plays exactly
  the episodes of ``gymnasium.make("tabletop/<game>-v0", ...)`` reset with ``seed=s + i`` and given the same
  actions, whatever the opponents.
* ``skip_forced=True``: the learner's decisions with one legal action are played for it (the same games in fewer
  steps); ``info["forced"]`` counts them per game since its last observation.
* Rewards, illegal actions (the episode ends with −1, nothing is played) and the end-of-episode info are those of
  the single env (docs/training.md, "Single-agent Gymnasium ids").
* ``num_workers=k`` (:class:`ShardedSeatVectorEnv`) splits the games across k worker processes, each a
  :class:`SeatVectorEnv` of its share writing into arrays in shared memory: per step a pipe carries one short
  command to each worker and, back, only the final observations and infos of the games that ended. The games and
  their opponents then run on other cores than the learner. Workers ignore stop signals (the main process alone
  decides) and end when the env is closed, when the main process ends, or when their pipe breaks.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Mapping, Sequence
from multiprocessing.connection import Connection
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from ... import envs
from ...envs.core.game import check_seed
from ..cli.stopping import ignore_stop_signals, start_helpers
from .opponents import OpponentMix, Weights
from .policy import MLPPolicy, limit_blas_threads
from .single_seat import opponent_mix, seat_spaces
from .table import Table, play_opponents, settle


class SeatVectors(VectorEnv):
    """What every batched seat env shares: spaces, the arrays it returns, and the checks of its arguments."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, game: str, num_envs: int, game_options: Mapping[str, Any] | None, copy: bool,
                 skip_forced: bool = False):
        if type(num_envs) is not int or num_envs < 1:
            raise ValueError(f"num_envs={num_envs!r} is not allowed; expected a whole number >= 1")
        self.game = envs.game_class(game)(**dict(game_options or {}))
        self.num_envs = num_envs
        self.single_observation_space, self.single_action_space = seat_spaces(self.game)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.render_mode = None
        self.copy = copy
        self.skip_forced = skip_forced
        self._started = False
        self.ended: list[tuple[int, np.ndarray, dict[str, Any]]] = []  # the last step's (game, final obs, info)

    def action_masks(self) -> np.ndarray:
        """Every game's legal actions for the learner, bool (num_envs × num_actions): what MaskablePPO reads."""
        if not self._started:
            raise ValueError("action_masks() was called before reset()")
        return self._masks.astype(bool)

    def _results(self, seats: np.ndarray | None = None) -> Any:
        """What ``reset`` (with the seats) or ``step`` returns, from the arrays and ``self.ended``."""
        forced = {"forced": self._out(self._forced)} if self.skip_forced else {}
        if seats is not None:
            return self._out(self._observations), {"seat": seats, "action_mask": self._out(self._masks), **forced}
        infos: dict[str, Any] = {}
        for i, observation, info in self.ended:
            infos = self._add_info(infos, {"final_obs": observation, "final_info": info}, i)
        infos["action_mask"] = self._out(self._masks)
        infos.update(forced)
        return (self._out(self._observations), self._out(self._rewards), self._out(self._terminations),
                self._out(self._truncations), infos)

    def _allocate(self, allocate: Any = np.zeros) -> None:
        n, size, actions = self.num_envs, self.game.observation_size, self.game.num_actions
        self._observations = allocate((n, size), np.float32)
        self._masks = allocate((n, actions), np.int8)
        self._rewards = allocate((n,), np.float64)
        self._terminations = allocate((n,), np.bool_)
        self._truncations = allocate((n,), np.bool_)
        self._forced = allocate((n,), np.int32)  # the learner's decisions played for it since its last observation

    def _seeds(self, seed: int | Sequence[int | None] | None) -> list[int | None]:
        if seed is None or isinstance(seed, int | np.integer) and not isinstance(seed, bool):
            seed = check_seed(seed)
            return [None if seed is None else seed + i for i in range(self.num_envs)]
        seeds = list(seed)
        if len(seeds) != self.num_envs:
            raise ValueError(f"reset(seed=...) got {len(seeds)} seeds for {self.num_envs} games; give one seed "
                             "(game i gets seed + i), one per game, or None")
        return [check_seed(s) for s in seeds]

    def _check(self, actions: Any) -> np.ndarray:
        """The learner's actions as an int array of shape (num_envs,); anything else is one line saying what is
        expected (an action outside the action space is a bug of the caller, not a move)."""
        if not self._started:
            raise RuntimeError("step() was called before reset()")
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

    def _out(self, array: np.ndarray) -> np.ndarray:
        return array.copy() if self.copy else array


class SeatVectorEnv(SeatVectors):
    """``num_envs`` games of ``game``, the learner in one seat of each, opponents drawn per game from the mix,
    all in this process."""

    def __init__(self, game: str, num_envs: int, game_options: Mapping[str, Any] | None = None,
                 opponents: Mapping[str, float] | None = None, seat: int | str = "random",
                 network: Mapping[str, Any] | None = None, snapshot_deterministic: bool = False,
                 margin_reward: float = 0.0, skip_forced: bool = False, outcome_reward: float = 1.0,
                 copy: bool = True):
        super().__init__(game, num_envs, game_options, copy, skip_forced)
        mix = {"random": 1.0} if opponents is None else opponents
        first = OpponentMix(self.game, mix, network, snapshot_deterministic)  # checks the mix, reads each file once
        self.tables = [Table(self.game, first, seat, margin_reward, skip_forced, outcome_reward)] + [
            Table(self.game, OpponentMix(self.game, mix, network, snapshot_deterministic, first.factories), seat,
                  margin_reward, skip_forced, outcome_reward) for _ in range(num_envs - 1)]
        self._allocate()

    def reset(self, *, seed: int | Sequence[int | None] | None = None,
              options: dict | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal every game anew; ``seed`` seeds game i with ``seed + i``, a list gives each game its seed."""
        for table, s in zip(self.tables, self._seeds(seed), strict=True):
            table.seed(s)
            table.deal()
        settle(self.tables)
        for i in range(self.num_envs):
            self._write(i)
        self._started = True
        self.ended = []
        return self._results(np.array([t.seat for t in self.tables]))

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One decision of the learner in every game; opponents play until each game waits on the learner again."""
        actions = self._check(actions)
        reasons = {}
        for i, table in enumerate(self.tables):
            reason = table.play(int(actions[i]))
            if reason is not None:
                reasons[i] = reason
        play_opponents(self.tables)
        self._rewards[:] = 0.0
        self._terminations[:] = False
        self._truncations[:] = False
        self.ended = []
        for i, table in enumerate(self.tables):
            if not table.over():
                continue
            self._rewards[i], self._terminations[i], self._truncations[i] = table.outcome()
            info = table.end_info()
            if i in reasons:
                info.update(illegal_action=True, reason=reasons[i])
            self.ended.append((i, table.observation(), info))
            table.deal()
        settle([self.tables[i] for i, _, _ in self.ended])
        for i in range(self.num_envs):
            self._write(i)
        return self._results()

    def set_pool(self, pool: list[Weights]) -> None:
        """Refresh the self-play snapshots: each is made into a network once and shared by every game, so the games
        waiting on one snapshot are decided in one forward pass."""
        info = self.tables[0].mix.snapshot_info  # None without a network: the mixes refuse the pool, saying so
        policies = [MLPPolicy(weights, info) for weights in pool] if info else pool
        for table in self.tables:
            table.mix.set_pool(policies)

    def _write(self, i: int) -> None:
        table = self.tables[i]
        table.state.observation(table.seat, out=self._observations[i])
        self._masks[i] = table.state.action_mask()
        self._forced[i] = table.forced


START_METHOD = "forkserver"  # as SubprocVecEnv: no fork of a process that may hold threads (torch, BLAS)
ARRAYS = ("_observations", "_masks", "_rewards", "_terminations", "_truncations", "_forced")


class ShardedSeatVectorEnv(SeatVectors):
    """``num_envs`` games in ``num_workers`` worker processes (the first ones get one game more when they do not
    divide evenly); the arguments are those of :class:`SeatVectorEnv`."""

    def __init__(self, game: str, num_envs: int, num_workers: int, copy: bool = True, **kwargs: Any):
        super().__init__(game, num_envs, kwargs.get("game_options"), copy, kwargs.get("skip_forced", False))
        if type(num_workers) is not int or not 1 <= num_workers <= num_envs:
            raise ValueError(f"num_workers={num_workers!r} is not allowed; expected a whole number from 1 to "
                             f"num_envs={num_envs} (0 or None: the games in this process)")
        SeatVectorEnv(game, 1, **kwargs)  # every argument and agent checks out here, with its own message
        self._shared = {}

        def allocate(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
            raw = multiprocessing.RawArray("b", max(1, int(np.prod(shape)) * np.dtype(dtype).itemsize))
            self._shared[len(self._shared)] = (raw, shape, np.dtype(dtype).str)
            return np.frombuffer(raw, dtype, int(np.prod(shape))).reshape(shape)

        self._allocate(allocate)
        self._actions = allocate((num_envs,), np.int64)
        buffers = list(self._shared.values())
        bounds = np.linspace(0, num_envs, num_workers + 1).round().astype(int).tolist()
        self._shards = list(zip(bounds[:-1], bounds[1:], strict=True))
        start_helpers(START_METHOD)
        context = multiprocessing.get_context(START_METHOD)
        self._pipes: list[Connection] = []
        self._processes = []
        for lo, hi in self._shards:
            ours, theirs = context.Pipe()
            process = context.Process(target=_serve, args=(theirs, buffers, lo, hi, game, kwargs), daemon=True,
                                      name=f"tabletop-games-{lo}-{hi}")
            process.start()
            theirs.close()
            self._pipes.append(ours)
            self._processes.append(process)
        self._gather()  # each worker has built its games

    def reset(self, *, seed: int | Sequence[int | None] | None = None,
              options: dict | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        seeds = self._seeds(seed)
        for pipe, (lo, hi) in zip(self._pipes, self._shards, strict=True):
            pipe.send(("reset", seeds[lo:hi]))
        seats = np.concatenate(self._gather())
        self._started = True
        self.ended = []
        return self._results(seats)

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        self._actions[:] = self._check(actions)
        for pipe in self._pipes:
            pipe.send(("step", None))
        self.ended = [ended for shard in self._gather() for ended in shard]
        return self._results()

    def set_pool(self, pool: list[Weights]) -> None:
        """Send the self-play snapshots to every worker (once per refresh, not per step)."""
        for pipe in self._pipes:
            pipe.send(("set_pool", pool))
        self._gather()

    def close_extras(self, **kwargs: Any) -> None:
        """End the workers: asked first, killed if they do not end within seconds."""
        for pipe in self._pipes:
            try:
                pipe.send(("close", None))
            except (BrokenPipeError, OSError):
                pass
        for process in self._processes:
            process.join(timeout=5)
            if process.is_alive():
                process.kill()
                process.join()
        for pipe in self._pipes:
            pipe.close()
        self._pipes, self._processes = [], []

    def _gather(self) -> list[Any]:
        """Every worker's answer, in order; a worker's error is raised here as one line."""
        answers = []
        for pipe, process in zip(self._pipes, self._processes, strict=True):
            try:
                kind, value = pipe.recv()
            except EOFError:
                raise RuntimeError(f"worker {process.name} ended unexpectedly (exit code {process.exitcode})") \
                    from None
            if kind == "error":
                raise RuntimeError(f"worker {process.name}: {value}")
            answers.append(value)
        return answers


def _serve(pipe: Connection, buffers: list, lo: int, hi: int, game: str, kwargs: Mapping[str, Any]) -> None:
    """A worker: games ``lo:hi`` of the batch, stepped on command, their results written into the shared arrays."""
    ignore_stop_signals()
    limit_blas_threads(1)  # one core per worker: BLAS threads would only spin against the others
    views = [np.frombuffer(raw, dtype, int(np.prod(shape))).reshape(shape)[lo:hi] for raw, shape, dtype in buffers]
    *arrays, actions = views
    try:
        env = SeatVectorEnv(game, hi - lo, copy=False, **kwargs)
    except Exception as error:  # checked in the main process first: this is a surprise
        pipe.send(("error", f"{type(error).__name__}: {error}"))
        return
    pipe.send(("ok", None))
    while True:
        try:
            command, argument = pipe.recv()
        except (EOFError, OSError):  # the main process is gone
            return
        if command == "close":
            return
        try:
            if command == "reset":
                _, info = env.reset(seed=argument)
                answer = info["seat"]
            elif command == "step":
                env.step(actions)
                answer = [(lo + i, observation, info) for i, observation, info in env.ended]
            else:  # set_pool
                env.set_pool(argument)
                answer = None
            for name, view in zip(ARRAYS, arrays, strict=True):
                view[:] = getattr(env, name)
            pipe.send(("ok", answer))
        except Exception as error:
            pipe.send(("error", f"{type(error).__name__}: {error}"))


def seat_vector_env(game: str, num_envs: int, opponent: str | os.PathLike | Mapping[str, float] = "random",
                    seat: int | str = "random", num_workers: int | None = None, skip_forced: bool = False,
                    render_mode: str | None = None, **game_options: Any) -> SeatVectors:
    """What ``gymnasium.make_vec("tabletop/<game>-v0", num_envs=N, ...)`` builds (the ids' ``vector_entry_point``):
    ``opponent`` and ``seat`` as for ``gymnasium.make``
    (:func:`~tabletop_rl.training.runtime.single_seat.single_seat_env`), every other keyword an option of the game;
    ``num_workers`` processes share the games between them (none: all in this process); ``skip_forced=True`` plays
    the learner's decisions that have one legal action for it (``info["forced"]``: how many, per game)."""
    if render_mode is not None:
        raise ValueError(f"render_mode={render_mode!r}: the vector env does not render; render one game with "
                         "gymnasium.make(..., render_mode='ansi')")
    return batched_env(game, num_envs, num_workers, game_options=game_options, opponents=opponent_mix(opponent),
                       seat=seat, skip_forced=skip_forced)


def batched_env(game: str, num_envs: int, num_workers: int | None = None, **kwargs: Any) -> SeatVectors:
    """:class:`SeatVectorEnv` (``num_workers`` 0 or None) or :class:`ShardedSeatVectorEnv`, with ``kwargs`` of
    :class:`SeatVectorEnv`."""
    if num_workers:
        return ShardedSeatVectorEnv(game, num_envs, num_workers, **kwargs)
    return SeatVectorEnv(game, num_envs, **kwargs)

