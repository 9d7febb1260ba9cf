"""Stopping a command cleanly: Ctrl-C, SIGTERM and SIGHUP all end it the way Ctrl-C does (docs/training.md,
"Stopping a command").

A command runs its work inside :func:`stoppable`, which turns a stop signal into :class:`Stopped` (a
``KeyboardInterrupt``), says in one line what was kept and exits with the shell's code (128 + the signal);
a loop that stops between steps uses :func:`stop_on_signals` instead. Worker processes (:func:`worker_pool`,
:func:`parallel_map`) ignore the stop signals and are ended by the main process, which alone decides.
"""

from __future__ import annotations

import multiprocessing
import signal
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from contextlib import AbstractContextManager, contextmanager, suppress
from typing import Any

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Stopped(KeyboardInterrupt):
    """A stop signal arrived: unwind as after Ctrl-C."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def exit_code(signal_name: str) -> int:
    """The shell's exit code of a command stopped by that signal."""
    return 128 + signal.Signals[signal_name].value


@contextmanager
def on_stop_signals(handler: Callable[[int, Any], None]) -> Iterator[None]:
    """``handler`` for each stop signal this process does not ignore; the previous handlers afterwards."""
    previous = {s: signal.signal(s, handler) for s in SIGNALS if signal.getsignal(s) is not signal.SIG_IGN}
    try:
        yield
    finally:
        for s, before in previous.items():
            signal.signal(s, before)


def _stop(signum: int, frame: Any) -> None:
    for s in SIGNALS:  # the clean-up takes well under a second: a second signal must not cut it short
        if signal.getsignal(s) is _stop:
            signal.signal(s, signal.SIG_IGN)
    raise Stopped(signum)


@contextmanager
def stoppable(prog: str, kept: Callable[[], str]) -> Iterator[None]:
    """Run a command's work; when a stop signal (or Ctrl-C) ends it, say ``<prog>: stopped by <SIGNAL>;
    <kept()>`` on stderr and exit with the shell's code."""
    with on_stop_signals(_stop):
        try:
            yield
        except KeyboardInterrupt as stop:
            name = signal.Signals(getattr(stop, "signum", signal.SIGINT)).name
            with suppress(OSError):  # after a hang-up there may be no terminal left to write to
                print(f"{prog}: stopped by {name}; {kept()}", file=sys.stderr, flush=True)
            raise SystemExit(exit_code(name)) from None


def stop_on_signals(loop: Any) -> AbstractContextManager[None]:
    """For a loop that stops by itself between steps: the first stop signal sets ``loop.stop_reason`` (the
    signal's name) and the loop finishes its step, saves and ends; a second Ctrl-C aborts at once."""
    def request_stop(signum: int, frame: Any) -> None:
        if loop.stop_reason is not None and signum == signal.SIGINT:
            raise KeyboardInterrupt
        loop.stop_reason = signal.Signals(signum).name

    return on_stop_signals(request_stop)


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
