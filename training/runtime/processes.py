"""Worker processes that ignore the stop signals: the process that starts them alone decides when they end (a
stop of a command, docs/training.md "Stopping a command", ends them from there). :func:`worker_pool` and
:func:`parallel_map` for tasks, :func:`start_helpers` and :func:`ignore_stop_signals` for processes started
otherwise (the batched env's workers, SubprocVecEnv's).
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from contextlib import contextmanager
from typing import Any

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  # what stops a command: Ctrl-C, kill, a hang-up


def ignore_stop_signals() -> None:
    """In a worker process: the main process alone decides when to stop, and ends its workers."""
    for s in SIGNALS:
        signal.signal(s, signal.SIG_IGN)


def _start_worker(initializer: Callable[..., None] | None, initargs: tuple) -> None:
    ignore_stop_signals()
    if initializer is not None:
        initializer(*initargs)


def start_helpers(start_method: str) -> None:
    """Start multiprocessing's resource tracker (and forkserver) with the stop signals blocked, which they
    inherit: they end by themselves when this process and its workers have, and a hang-up reaching the whole
    process group must not end them first (the tracker ignores only SIGINT and SIGTERM)."""
    from multiprocessing import forkserver, resource_tracker

    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)  # one arriving meanwhile waits: not lost
    try:
        resource_tracker.ensure_running()
        if start_method == "forkserver":
            forkserver.ensure_running()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


@contextmanager
def worker_pool(workers: int, start_method: str, initializer: Callable[..., None] | None = None,
                initargs: tuple = ()) -> Iterator[ProcessPoolExecutor]:
    """A ``ProcessPoolExecutor`` whose workers ignore stop signals, and are killed — not waited for — when
    the block ends by an exception (a stop included): they write no files, their results come back here."""
    start_helpers(start_method)
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(start_method),
                               initializer=_start_worker, initargs=(initializer, initargs))
    try:
        yield pool
    except BaseException:
        processes = list(pool._processes.values())  # the executor has no public way to end its workers
        for process in processes:
            process.kill()
        for process in processes:
            process.join()
        pool.shutdown(cancel_futures=True)
        raise
    pool.shutdown()


def parallel_map(function: Callable[..., Any], tasks: list[tuple], workers: int, ordered: bool = True
                 ) -> Iterator[Any]:
    """``function(*task)`` for every task, in order (or, not ``ordered``, as each is done); in a pool of
    processes when there are several, which are ended if this process stops."""
    if workers < 2 or len(tasks) < 2:
        yield from (function(*task) for task in tasks)
        return
    # forkserver, as SubprocVecEnv: no fork of a threaded process
    with worker_pool(min(workers, len(tasks)), "forkserver") as pool:
        yield from results([pool.submit(function, *task) for task in tasks], ordered)


def results(futures: list[Future], ordered: bool = True) -> Iterator[Any]:
    """The futures' results, in order or (not ``ordered``) as each is done. Waits a fraction of a second
    at a time: Python runs a signal's handler in the main thread only, and a signal that another thread
    received does not wake it (a stop would wait for the task)."""
    pending = dict.fromkeys(futures)
    while pending:
        done, _ = wait([next(iter(pending))] if ordered else list(pending), timeout=0.2,
                       return_when=FIRST_COMPLETED)
        for future in done:
            del pending[future]
            yield future.result()
