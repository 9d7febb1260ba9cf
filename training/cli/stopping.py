"""Stopping a command cleanly: Ctrl-C, SIGTERM and SIGHUP all end it the way Ctrl-C does (docs/training.md,
"Stopping a command").

A command runs its work inside :func:`stoppable`, which turns a stop signal into :class:`Stopped` (a
``KeyboardInterrupt``), says in one line what was kept and exits with the shell's code (128 + the signal);
a loop that stops between steps uses :func:`stop_on_signals` instead. Worker processes
(:mod:`tabletop_rl.training.runtime.processes`) ignore the stop signals and are ended by the main process, which
alone decides.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, suppress
from typing import Any

from ..runtime.processes import SIGNALS


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
