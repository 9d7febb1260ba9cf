"""Commands printed for the user to copy: they run as shown, with the Python running now.

A bare ``python`` on a fresh machine is not the project's ``.venv`` (``No module named 'gymnasium'``), so a
printed command names the interpreter that is running, unless ``python`` on the PATH is that one.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path


def interpreter() -> str:
    """``python`` when the PATH finds the running interpreter under that name, else the running one's path:
    relative to the current folder when inside it (``.venv/bin/python``), absolute otherwise. Paths are
    compared without resolving links: a venv's ``python`` links to the system's, which lacks the venv's
    packages."""
    running = Path(sys.executable).absolute()
    on_path = shutil.which("python")
    if on_path and Path(on_path).absolute() == running:
        return "python"
    try:
        shown = str(running.relative_to(Path.cwd()))
    except ValueError:
        shown = str(running)
    return shlex.quote(shown if os.sep in shown else os.path.join(".", shown))  # a bare name would search PATH


def command(module: str, *args: str | Path) -> str:
    """``<interpreter> -m <module> <args>`` as one shell line, each argument quoted where the shell needs it."""
    return " ".join([interpreter(), "-m", module, *(shlex.quote(str(a)) for a in args)])
