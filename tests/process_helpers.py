"""Starting a script as from an interactive shell: a test run in a background job (`make test &`, CI runners)
inherits SIGINT ignored, and so would every script it starts, which then never sees the Ctrl-C a test sends."""

from __future__ import annotations

import signal

from tabletop_rl.training.runtime.processes import SIGNALS


def default_signals() -> None:
    """``preexec_fn`` of a ``subprocess.Popen``: the stop signals at their defaults in the script."""
    for s in SIGNALS:
        signal.signal(s, signal.SIG_DFL)
